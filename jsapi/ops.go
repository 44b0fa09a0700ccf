package jsapi

import (
	"encoding/json"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Codes are the MCPError codes, in the order the docs list them.
var Codes = []mcperr.Code{
	mcperr.AuthRequired, mcperr.Declined, mcperr.PopupBlocked, mcperr.RedirectUnhandled, mcperr.StateMismatch,
	mcperr.DiscoveryFailed, mcperr.RegistrationFailed, mcperr.TokenFailed, mcperr.InsufficientScope,
	mcperr.Aborted, mcperr.Timeout, mcperr.Network, mcperr.HTTP, mcperr.Protocol,
	mcperr.InvalidArgument, mcperr.Storage, mcperr.Closed, mcperr.Policy,
}

// States are the states of a client (client.state).
var States = []string{"idle", "connecting", "needs_auth", "authorizing", "connected", "declined", "failed", "closed", "reconnecting"}

// Op is one operation the wasm module exports: mcp.js calls
// invoke(name, argsJSON, signal?, onProgress?) and gets a Promise of the
// result's JSON (or undefined when Result is nil).
type Op struct {
	Name   string
	Args   any // the zero value of the arguments' type
	Result any // the zero value of the result's type; nil for none
	Doc    string
	// Sync operations run at once and return the result's JSON (or throw),
	// not a Promise: they never wait for anything.
	Sync bool
}

// Host is one callback the wasm module calls on mcp.js's host object.
type Host struct {
	Name   string
	Args   []string // the arguments, in order
	Result string   // what it returns (a Promise's value, when async)
	Doc    string
}

// The arguments of the operations.
type (
	// NetworkChanged is the browser's online or offline event: offline
	// moves connected clients to reconnecting at once, online makes
	// reconnecting ones probe now.
	NetworkChanged struct {
		Online bool `json:"online"`
	}
	// NewClient creates a client with the id the page chose (unique among
	// the runtime's clients; a worker prefixes each tab's ids).
	NewClient struct {
		ID      string          `json:"id" page:"id"`
		URL     string          `json:"url"`
		Options json.RawMessage `json:"options"` // ClientOptions, checked by Decode
		// Policy is the page's mcp.policy(), when set.
		Policy *PolicyOptions `json:"policy,omitempty"`
	}
	// ClientRef names a client.
	ClientRef struct {
		ID string `json:"id" page:"id"`
	}
	// Connect connects a client; the flags say which page handlers exist.
	Connect struct {
		ID          string `json:"id" page:"id"`
		Elicitation bool   `json:"elicitation,omitempty"`
		Sampling    bool   `json:"sampling,omitempty"`
	}
	// Authorize signs a client in; Popup says whether mcp.js could open
	// the sign-in window in the user's gesture: "open", "blocked",
	// "redirect" (the page itself goes) or "none" (no window: the client
	// signs in with identityAssertion).
	Authorize struct {
		ID          string `json:"id" page:"id"`
		Popup       string `json:"popup"`
		Elicitation bool   `json:"elicitation,omitempty"`
		Sampling    bool   `json:"sampling,omitempty"`
	}
	// ReadResource reads a resource.
	ReadResource struct {
		ID  string `json:"id" page:"id"`
		URI string `json:"uri"`
	}
	// GetPrompt renders a prompt.
	GetPrompt struct {
		ID        string            `json:"id" page:"id"`
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments,omitempty"`
	}
	// Complete asks for an argument's completions (completion/complete).
	Complete struct {
		ID       string            `json:"id" page:"id"`
		Ref      CompleteRef       `json:"ref"`
		Argument CompleteArgument  `json:"argument"`
		Context  map[string]string `json:"context,omitempty"`
	}
	// CompleteRef is a completion's prompt or resource template.
	CompleteRef struct {
		Type string `json:"type"`
		Name string `json:"name,omitempty"`
		URI  string `json:"uri,omitempty"`
	}
	// CompleteArgument is the argument being completed and what was typed.
	CompleteArgument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	// SkillRef names a skill by the URI of its SKILL.md.
	SkillRef struct {
		ID  string `json:"id" page:"id"`
		URI string `json:"uri"`
	}
	// SkillFile names a file of a loaded skill: its URI or its path in
	// the skill.
	SkillFile struct {
		ID    string `json:"id" page:"id"`
		Skill string `json:"skill"`
		File  string `json:"file"`
	}
	// Subscribe names a resource to subscribe to or unsubscribe from.
	Subscribe struct {
		ID  string `json:"id" page:"id"`
		URI string `json:"uri"`
	}
	// CallTool calls a tool.
	CallTool struct {
		ID        string          `json:"id" page:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		TimeoutMs *float64        `json:"timeoutMs,omitempty"`
	}
	// CloseClient ends a client; Gone says the page went away without
	// abandoning its calls (the tasks they follow are kept).
	CloseClient struct {
		ID   string `json:"id" page:"id"`
		Gone bool   `json:"gone,omitempty"`
	}
	// CloseCatalog closes a catalog; Gone as for CloseClient.
	CloseCatalog struct {
		ID   string `json:"id" page:"id"`
		Gone bool   `json:"gone,omitempty"`
	}
	// ViewStateRef names the storage a view keeps: the page's stateKey
	// and the view's server (apps.render's stateKey).
	ViewStateRef struct {
		Key string `json:"key"`
	}
	// KeepViewState keeps a view's storage (its localStorage, as names
	// and values) under Key.
	KeepViewState struct {
		Key     string            `json:"key"`
		Storage map[string]string `json:"storage"`
	}
	// ForgetViewStates deletes the views' storage kept under keys that
	// start with Prefix ("" for every one).
	ForgetViewStates struct {
		Prefix string `json:"prefix"`
	}
	// TaskRef names a kept task of a client.
	TaskRef struct {
		ID     string `json:"id" page:"id"`
		TaskID string `json:"taskId"`
	}
	// ResumeTask follows a kept task to its result.
	ResumeTask struct {
		ID        string   `json:"id" page:"id"`
		TaskID    string   `json:"taskId"`
		TimeoutMs *float64 `json:"timeoutMs,omitempty"`
	}
	// Deliver hands a callback URL to the sign-in waiting on its state.
	Deliver struct {
		URL string `json:"url"`
	}
	// GrantChange is a grant change another page announced.
	GrantChange struct {
		Kind     string `json:"kind"`
		Resource string `json:"resource,omitempty"`
	}
)

// The results of the operations.
type (
	// Delivered says whether a sign-in took a callback URL, whose server it
	// was for, and how it ended when it was finished from storage.
	Delivered struct {
		Taken    bool   `json:"taken"`
		Resource string `json:"resource,omitempty"`
		Error    *Error `json:"error,omitempty"`
	}
	// StorageStatus is where the sign-ins of storage "indexeddb" are
	// kept: Persistent, in IndexedDB; else in memory until the page
	// closes, for Error's reason (code "storage").
	StorageStatus struct {
		Persistent bool   `json:"persistent"`
		Error      *Error `json:"error,omitempty"`
	}
	// Error is an MCPError as JSON.
	Error struct {
		Code    mcperr.Code `json:"code"`
		Status  int         `json:"status,omitempty"`
		RPCCode *int64      `json:"rpcCode,omitempty"`
		Message string      `json:"message"`
		Detail  string      `json:"detail,omitempty"`
	}
	// Session is what a connect resolves with.
	Session struct {
		ServerInfo      any    `json:"serverInfo"`
		Capabilities    any    `json:"capabilities"`
		Instructions    string `json:"instructions,omitempty"`
		ProtocolVersion string `json:"protocolVersion"`
	}
	// Progress is one progress notification of a call, for its
	// onProgress.
	Progress struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total,omitempty"`
		Message  string  `json:"message,omitempty"`
	}
	// Any is a result passed through as the server sent it (tool lists,
	// tool results, resources, prompts).
	Any = json.RawMessage
)

// The catalog's and the agent's arguments and results.
type (
	// NewCatalog makes a catalog from the options of mcp.catalog(),
	// checked by Decode as CatalogOptions.
	// The id is the page's; the client of its server s is "<id>/<s>".
	NewCatalog struct {
		ID      string          `json:"id" page:"id"`
		Options json.RawMessage `json:"options"`
		// Policy is the page's mcp.policy(), when set; the catalog's own
		// (the option policy) narrows it.
		Policy *PolicyOptions `json:"policy,omitempty"`
	}
	// CatalogCreated is the warnings of the new catalog's configuration
	// (entries that were left out) and the status of each server.
	CatalogCreated struct {
		Warnings []string `json:"warnings,omitempty"`
		Statuses any      `json:"statuses"`
	}
	// CatalogRef names a catalog.
	CatalogRef struct {
		ID string `json:"id" page:"id"`
	}
	// CatalogServer names one server of a catalog.
	CatalogServer struct {
		ID     string `json:"id" page:"id"`
		Server string `json:"server"`
	}
	// CatalogAdd adds a server with its configuration (as in servers);
	// its client's id is "<id>/<server>".
	CatalogAdd struct {
		ID     string          `json:"id" page:"id"`
		Server string          `json:"server"`
		Config json.RawMessage `json:"config"`
	}
	// CatalogAddView offers an MCP Apps view's own tools as server Server
	// of the catalog (render()'s offerTools), titled Title for the model.
	CatalogAddView struct {
		ID     string `json:"id" page:"id"`
		Server string `json:"server"`
		Title  string `json:"title,omitempty"`
	}
	// CatalogAuthorize signs in to one server (see Authorize for Popup).
	CatalogAuthorize struct {
		ID     string `json:"id" page:"id"`
		Server string `json:"server"`
		Popup  string `json:"popup"`
	}
	// CatalogFormat names a tool format.
	CatalogFormat struct {
		ID     string `json:"id" page:"id"`
		Format string `json:"format"`
		// Used names the tools the conversation already called (their
		// definitions are kept when the catalog is over its toolBudget).
		Used []string `json:"used,omitempty"`
	}
	// CatalogCallTool calls a tool by its exported name.
	CatalogCallTool struct {
		ID        string          `json:"id" page:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		TimeoutMs *float64        `json:"timeoutMs,omitempty"`
	}
	// CatalogViewCall calls a tool of one server for that server's view
	// (MCP Apps), by the server's own tool name.
	CatalogViewCall struct {
		ID        string          `json:"id" page:"id"`
		Server    string          `json:"server"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	// CatalogToolCalls runs a model's tool calls of a format.
	CatalogToolCalls struct {
		ID     string          `json:"id" page:"id"`
		Format string          `json:"format"`
		Calls  json.RawMessage `json:"calls"`
	}
	// NewAgent makes an agent over a catalog, with the options of
	// cat.agent(), checked by Decode as AgentOptions.
	NewAgent struct {
		ID      string          `json:"id" page:"id"`
		Catalog string          `json:"catalog" page:"id"`
		Options json.RawMessage `json:"options"`
	}
	// AgentRun runs one turn: input is a string or a list of messages
	// (the OpenAI Chat Completions shapes); Run names the run for the
	// host's model callback (a custom model). Events arrive through the
	// call's callback.
	AgentRun struct {
		ID    string          `json:"id" page:"id"`
		Run   string          `json:"run" page:"id"`
		Input json.RawMessage `json:"input"`
		// Conversation, when set, runs a turn of that stored
		// conversation: it is loaded, compacted, run and saved.
		Conversation string `json:"conversation,omitempty"`
	}
	// ConversationRef names a stored conversation of an agent.
	ConversationRef struct {
		ID           string `json:"id" page:"id"`
		Conversation string `json:"conversation"`
	}
	// RenameConversation sets a stored conversation's title.
	RenameConversation struct {
		ID           string `json:"id" page:"id"`
		Conversation string `json:"conversation"`
		Title        string `json:"title"`
	}
	// AgentRef names an agent.
	AgentRef struct {
		ID string `json:"id" page:"id"`
	}
)

// CatalogOptions are the options of mcp.catalog(config).
type CatalogOptions struct {
	Servers           json.RawMessage `json:"servers,omitempty" js:"object"`
	MCPServers        json.RawMessage `json:"mcpServers,omitempty" js:"object"`
	MaxServers        int             `json:"maxServers,omitempty"`
	MaxToolsPerServer int             `json:"maxToolsPerServer,omitempty"`
	CallTimeoutMs     *float64        `json:"callTimeoutMs,omitempty"`
	// TaskWaitMs bounds a call's wait for a tool that runs as a task
	// (catalog.Config.TaskWait); unset, 30 seconds.
	TaskWaitMs *float64 `json:"taskWaitMs,omitempty"`
	// IdleTimeoutMs closes a server's session after this long unused
	// (catalog.Config.IdleTimeout); 0 never does; unset, 10 minutes.
	IdleTimeoutMs *float64        `json:"idleTimeoutMs,omitempty"`
	Breaker       *BreakerOptions `json:"breaker,omitempty"`
	Approve       bool            `json:"approve,omitempty" js:"function"`
	ServerTools   bool            `json:"serverTools,omitempty"`
	// Skills: the model gets the servers' skills through the meta tools
	// catalog_list_skills, catalog_load_skill and catalog_read_skill_file.
	Skills         bool            `json:"skills,omitempty"`
	ApprovalPolicy *ApprovalPolicy `json:"approvalPolicy,omitempty"`
	OnElicitation  bool            `json:"onElicitation,omitempty" js:"function"`
	ToolBudget     int             `json:"toolBudget,omitempty"`
	// Apps: the page renders the servers' views (MCP Apps); every
	// server's client says so, as with the client option apps.
	Apps bool `json:"apps,omitempty"`
	// Policy narrows the page's mcp.policy() for this catalog's servers.
	Policy *PolicyOptions `json:"policy,omitempty"`
	// Relay and RelayMode are the relay of every server whose entry names
	// none (the page fills in load()'s page-wide relay). A relay a
	// server's entry names itself must be on the page's own origin
	// (EntryRelayMessage): entries may come from a pasted configuration,
	// and a relay sees the server's tokens.
	Relay     string `json:"relay,omitempty"`
	RelayMode string `json:"relayMode,omitempty"`
}

// ApprovalPolicy is the catalog's approvalPolicy: which calls run without
// asking, are asked about (approve) or never run (catalog.ApprovalPolicy).
type ApprovalPolicy struct {
	ReadOnly    string            `json:"readOnly,omitempty"`
	Destructive string            `json:"destructive,omitempty"`
	Servers     map[string]string `json:"servers,omitempty"`
}

// Rules are CatalogRules.
func (*CatalogOptions) Rules() []Rule { return CatalogRules }

// BreakerOptions configure each server's circuit breaker.
type BreakerOptions struct {
	Failures   int      `json:"failures,omitempty"`
	CooldownMs *float64 `json:"cooldownMs,omitempty"`
}

// AgentOptions are the options of cat.agent(options).
type AgentOptions struct {
	Model      ModelOptions    `json:"model"`
	System     string          `json:"system,omitempty"`
	MaxSteps   int             `json:"maxSteps,omitempty"`
	AuthWaitMs *float64        `json:"authWaitMs,omitempty"`
	Compact    *CompactOptions `json:"compact,omitempty"`
	// ContextLimit and Prices are agent.Config's: every usage then says
	// how full the model's context is against its limit, and what the
	// tokens cost.
	ContextLimit int           `json:"contextLimit,omitempty"`
	Prices       *PriceOptions `json:"prices,omitempty"`
}

// PriceOptions are a model's prices per million tokens (agent.Prices).
type PriceOptions struct {
	Input       float64  `json:"input"`
	Output      float64  `json:"output"`
	CachedInput *float64 `json:"cachedInput,omitempty"`
}

// CompactOptions bound the agent's stored conversations (agent.Compact):
// summarize is "model" (the agent's model writes the summary) or "page"
// (the page's function, which mcp.js sends as "page").
type CompactOptions struct {
	MaxTokens int    `json:"maxTokens"`
	Summarize string `json:"summarize,omitempty"`
}

// Rules are AgentRules.
func (*AgentOptions) Rules() []Rule { return AgentRules }

// ModelOptions describe the agent's model: mcp.models.openai(…),
// mcp.models.anthropic(…), mcp.models.openaiResponses(…) (kind
// "openai-responses"), mcp.models.gemini(…), or a JavaScript function
// (kind "custom").
type ModelOptions struct {
	Kind      string            `json:"kind"`
	BaseURL   string            `json:"baseURL,omitempty"`
	APIKey    string            `json:"apiKey,omitempty"`
	Model     string            `json:"model,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	MaxTokens int               `json:"maxTokens,omitempty"`
	// ThinkingBudget turns on Anthropic's extended thinking (tokens).
	ThinkingBudget int `json:"thinkingBudget,omitempty"`
	// ReasoningEffort and ReasoningSummary are the Responses API's
	// reasoning.effort and reasoning.summary.
	ReasoningEffort  string `json:"reasoningEffort,omitempty"`
	ReasoningSummary string `json:"reasoningSummary,omitempty"`
	// IncludeThoughts asks Gemini for its thought summaries.
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

// CheckOptions checks the call's options against CallRules.
func (c *CallTool) CheckOptions() error { return checkCall(c.TimeoutMs) }

// CheckOptions checks the call's options against CallRules.
func (c *CatalogCallTool) CheckOptions() error { return checkCall(c.TimeoutMs) }

func checkCall(timeoutMs *float64) error {
	o := map[string]any{}
	if timeoutMs != nil {
		o["timeoutMs"] = *timeoutMs
	}
	return CheckDecoded("callTool()", CallRules, o)
}

// Ops is the table of operations.
var Ops = []Op{
	{"client.new", NewClient{}, nil, "creates a client for an MCP server", true},
	{"client.connect", Connect{}, Session{}, "connects and initializes", false},
	{"client.authorize", Authorize{}, Session{}, "signs in (from a user action), then connects", false},
	{"client.logout", ClientRef{}, nil, "revokes and deletes the grant; the session ends", false},
	{"client.close", CloseClient{}, nil, "ends the session and the client", false},
	{"client.listTools", ClientRef{}, Any{}, "every tool", false},
	{"client.listResources", ClientRef{}, Any{}, "every resource", false},
	{"client.listResourceTemplates", ClientRef{}, Any{}, "every resource template", false},
	{"client.listPrompts", ClientRef{}, Any{}, "every prompt", false},
	{"client.readResource", ReadResource{}, Any{}, "reads a resource", false},
	{"client.getPrompt", GetPrompt{}, Any{}, "renders a prompt", false},
	{"client.complete", Complete{}, Any{}, "completions for a prompt's or resource template's argument", false},
	{"client.subscribe", Subscribe{}, nil, "a resourceupdated event per change of a resource, across reconnects", false},
	{"client.unsubscribe", Subscribe{}, nil, "ends a subscription", false},
	{"client.skills", ClientRef{}, Any{}, "the server's skills (Skills extension), none of their files read", false},
	{"client.getSkill", SkillRef{}, Any{}, "the server's current entry for one skill", false},
	{"client.loadSkill", SkillRef{}, Any{}, "reads a skill's SKILL.md, verified against its entry", false},
	{"client.readSkillFile", SkillFile{}, Any{}, "reads a file of a loaded skill, verified against its entry", false},
	{"client.ping", ClientRef{}, nil, "checks that the server answers", false},
	{"client.callTool", CallTool{}, Any{}, "calls a tool (signal, onProgress)", false},
	{"client.tasks", ClientRef{}, Any{}, "the tasks of this server kept until their results are delivered", false},
	{"client.resumeTask", ResumeTask{}, Any{}, "follows a kept task to its result (signal, onProgress)", false},
	{"client.cancelTask", TaskRef{}, nil, "cancels a kept task at the server and forgets it", false},
	{"callback.deliver", Deliver{}, Delivered{}, "a sign-in result from any courier", false},
	{"grants.apply", GrantChange{}, nil, "a grant change another tab announced", false},
	{"views.state", ViewStateRef{}, Any{}, "the storage a view kept under a key ({storage}, or null)", false},
	{"views.keep", KeepViewState{}, nil, "keeps a view's storage under a key (sealed, in IndexedDB)", false},
	{"views.forget", ForgetViewStates{}, Any{}, "deletes the views' storage kept under keys with a prefix; resolves how many", false},
	{"storage.clear", struct{}{}, nil, "deletes every stored grant, registration and metadata", false},
	{"storage.status", struct{}{}, StorageStatus{}, "where sign-ins are kept: IndexedDB, or memory and why", false},
	{"network.changed", NetworkChanged{}, nil, "the browser went online or offline (its online/offline events)", false},
	{"catalog.new", NewCatalog{}, CatalogCreated{}, "makes a catalog of servers; nothing connects yet", true},
	{"catalog.add", CatalogAdd{}, nil, "adds a server", true},
	{"catalog.remove", CatalogServer{}, nil, "removes a server (its session ends)", false},
	{"catalog.enable", CatalogServer{}, nil, "enables a server (a user action: clears its decline)", false},
	{"catalog.disable", CatalogServer{}, nil, "disables a server (its session ends)", false},
	{"catalog.authorize", CatalogAuthorize{}, nil, "signs in to a server (from a user action)", false},
	{"catalog.tools", CatalogRef{}, Any{}, "the aggregated tool list; connects enabled servers", false},
	{"catalog.toolsFor", CatalogFormat{}, Any{}, "the tool list in a provider's format", false},
	{"catalog.callTool", CatalogCallTool{}, Any{}, "calls a tool by its exported name", false},
	{"catalog.viewTools", CatalogServer{}, Any{}, "the tools of a server its views may call", false},
	{"catalog.viewCall", CatalogViewCall{}, Any{}, "calls a tool for a server's view (approval via \"app\")", false},
	{"catalog.handleToolCalls", CatalogToolCalls{}, Any{}, "a model's tool calls in, tool-result messages out", false},
	{"catalog.close", CloseCatalog{}, nil, "closes every server", false},
	{"catalog.webmcpChanged", CatalogRef{}, nil, "the page's WebMCP tools changed (toolchange): its webmcp servers list them again", true},
	{"catalog.addView", CatalogAddView{}, nil, "offers a view's own tools as a server of the catalog (render()'s offerTools)", true},
	{"catalog.viewChanged", CatalogServer{}, nil, "a view's own tools changed (tools/list_changed): its server lists them again", true},
	{"agent.new", NewAgent{}, nil, "makes an agent over a catalog", true},
	{"agent.run", AgentRun{}, Any{}, "runs one turn (signal, onEvent)", false},
	{"agent.close", AgentRef{}, nil, "forgets an agent", true},
	{"agent.conversation", ConversationRef{}, Any{}, "reads a stored conversation (a new one when none)", false},
	{"agent.conversations", AgentRef{}, Any{}, "lists the stored conversations", false},
	{"agent.renameConversation", RenameConversation{}, Any{}, "sets a stored conversation's title", false},
	{"agent.deleteConversation", ConversationRef{}, nil, "deletes a stored conversation", false},
}

// Hosts is the table of callbacks on mcp.js's host object. target is
// a Target ("client:<id>", "catalog:<id>", …) for a Targeted one.
var Hosts = []Host{
	{"event", []string{"target", "type", "detailJSON"}, "", "an event for a client (statechange, toolschanged, …)"},
	{"accessToken", []string{"target"}, "Promise<string>", "the page's token, for a client with accessToken"},
	{"identityAssertion", []string{"target"}, "Promise<string>", "the user's ID token from SSO, for a client with identityAssertion"},
	{"elicit", []string{"target", "paramsJSON"}, "Promise<resultJSON>", "the page's onElicitation"},
	{"sample", []string{"target", "paramsJSON"}, "Promise<resultJSON>", "the page's onSampling"},
	{"openAuth", []string{"target", "url"}, "Promise<void>", "shows the authorization URL (the popup, or the page in redirect mode)"},
	{"authDismissed", []string{"target"}, "Promise<string | undefined>", "resolves when the person closes the sign-in window (undefined), or with the redirect URI the window reached when no callback receiver ran there"},
	{"closeAuth", []string{"target", "state"}, "", "the sign-in whose authorization URL carried state ended: close its window (not a later sign-in's)"},
	{"lock", []string{"name"}, "Promise<release function>", "a Web Lock across the tabs of the origin"},
	{"announce", []string{"changeJSON"}, "", "tells the other tabs about a grant change"},
	{"saveHints", []string{"json"}, "", "what each server negotiated (no secrets), for the next page"},
	{"approve", []string{"target", "requestJSON"}, `Promise<boolean | "always" | "server">`, "the catalog's approve: may this tool call run (and later ones of the tool, or of the server)?"},
	{"model", []string{"target", "requestJSON"}, "Promise<messageJSON>", "a custom model function answers (target run:<id>)"},
	{"summarize", []string{"target", "requestJSON"}, "Promise<string>", "the agent's compact.summarize function writes a summary (target agent:<id>; request {previous, messages})"},
	{"catalogElicit", []string{"target", "paramsJSON", "contextJSON"}, "Promise<resultJSON>", "the catalog's onElicitation (target catalog:<id>); context {serverId, elicitationId}"},
	{"webmcpTools", []string{"target"}, "Promise<toolsJSON>", "the page's own WebMCP tools (document.modelContext.getTools), for a catalog's webmcp server (target catalog:<id>); [] without the API"},
	{"viewTools", []string{"target", "server"}, "Promise<toolsJSON>", "the own tools of the view behind a catalog's view server (target catalog:<id>; the view's tools/list)"},
	{"viewCall", []string{"target", "server", "name", "argsJSON"}, "Promise<resultJSON>", "calls one of the own tools of the view behind a catalog's view server (the view's tools/call); resolves {result} (the view's result as JSON) or {error}"},
	{"webmcpCall", []string{"target", "name", "argsJSON"}, "Promise<resultJSON>", "runs one of the page's WebMCP tools (document.modelContext.executeTool) for a catalog's webmcp server; resolves {result} (the tool's answer as the browser gives it) or {error}"},
}

// OpNamed returns the operation called name.
func OpNamed(name string) (Op, bool) {
	for _, o := range Ops {
		if o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}
