//go:build js && wasm && !mcpwasm_client

package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/anthropic"
	"github.com/mcpwasm/mcpwasm/agent/gemini"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/agent/openairesponses"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// defaultAuthWait is how long a tool call of an agent's turn waits for the
// person to sign in to a server that needs it (the page shows a Sign in
// prompt on the authrequired event) before the model is told the sign-in
// did not happen.
const defaultAuthWait = 5 * time.Minute

// runKey carries a run's id to a custom model (host.model's target).
type runKey struct{}

func (a *app) opNewAgent(_ context.Context, args jsapi.NewAgent, _ jsCall) (any, error) {
	var o jsapi.AgentOptions
	if err := jsapi.Decode("agent()", args.Options, &o); err != nil {
		return nil, err
	}
	ce, err := a.catalogEntry(args.Catalog)
	if err != nil {
		return nil, err
	}
	model, err := a.model(o.Model)
	if err != nil {
		return nil, err
	}
	wait := defaultAuthWait
	if o.AuthWaitMs != nil {
		wait = ms(o.AuthWaitMs)
	}
	secrets := []agent.Secret{agent.NewSecret(o.Model.APIKey)}
	for k, v := range o.Model.Headers {
		if credentialHeader(k) {
			secrets = append(secrets, agent.NewSecret(v))
		}
	}
	var prices *agent.Prices
	if p := o.Prices; p != nil {
		prices = &agent.Prices{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput}
	}
	ag, err := agent.New(agent.Config{Model: model, Tools: ce.cat, System: o.System, MaxSteps: o.MaxSteps, AuthWait: wait,
		Conversations: a.idb, Locker: webLocks{host: a.host}, Compact: a.compact(args.ID, o.Compact), Secrets: secrets,
		ContextLimit: o.ContextLimit, Prices: prices})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	_, used := a.agents[args.ID]
	if !used {
		a.agents[args.ID] = ag
	}
	a.mu.Unlock()
	if err := checkID("agent", args.ID, used); err != nil {
		return nil, err
	}
	ce.mu.Lock()
	ce.agents[args.ID] = ag
	ce.mu.Unlock()
	return nil, nil
}

// credentialHeader reports whether a model header carries a credential
// (its value is kept out of stored conversations); other headers, such
// as a version or an app title, are ordinary words.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, part := range []string{"key", "token", "secret", "auth", "session", "password"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// compact makes the agent's compaction: the summary by its model, or by
// the page's function (host.summarize).
func (a *app) compact(id string, o *jsapi.CompactOptions) *agent.Compact {
	if o == nil {
		return nil
	}
	c := &agent.Compact{MaxTokens: o.MaxTokens}
	if o.Summarize == "page" {
		c.Summarize = func(ctx context.Context, previous string, turns []agent.Message) (string, error) {
			b, err := json.Marshal(map[string]any{"previous": previous, "messages": turns})
			if err != nil {
				return "", err
			}
			v, err := a.host.await(ctx, "summarize", jsapi.Target("agent", id), string(b))
			if err != nil {
				return "", err
			}
			return jsbridge.String(v, "the summarize function's answer")
		}
	}
	return c
}

// model makes the agent's model: an adapter over fetch, or the page's
// function.
func (a *app) model(o jsapi.ModelOptions) (agent.Model, error) {
	switch o.Kind {
	case "openai":
		return openai.New(openai.Config{BaseURL: o.BaseURL, APIKey: agent.NewSecret(o.APIKey), Model: o.Model, HTTPClient: a.http, Headers: o.Headers})
	case "anthropic":
		return anthropic.New(anthropic.Config{BaseURL: o.BaseURL, APIKey: agent.NewSecret(o.APIKey), Model: o.Model, HTTPClient: a.http, Headers: o.Headers, MaxTokens: o.MaxTokens, ThinkingBudget: o.ThinkingBudget})
	case "openai-responses":
		return openairesponses.New(openairesponses.Config{BaseURL: o.BaseURL, APIKey: agent.NewSecret(o.APIKey), Model: o.Model, HTTPClient: a.http, Headers: o.Headers,
			ReasoningEffort: o.ReasoningEffort, ReasoningSummary: o.ReasoningSummary})
	case "gemini":
		return gemini.New(gemini.Config{BaseURL: o.BaseURL, APIKey: agent.NewSecret(o.APIKey), Model: o.Model, HTTPClient: a.http, Headers: o.Headers, IncludeThoughts: o.IncludeThoughts})
	case "custom":
		return agent.ModelFunc(a.customModel), nil
	}
	return nil, mcperr.New(mcperr.InvalidArgument, `agent(): model must be mcp.models.openai(…), mcp.models.anthropic(…), mcp.models.openaiResponses(…), mcp.models.gemini(…) or an async function`)
}

// customModel asks the page's model function of the run in ctx.
func (a *app) customModel(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	run, _ := ctx.Value(runKey{}).(string)
	b, err := json.Marshal(req)
	if err != nil {
		return agent.Message{}, err
	}
	v, err := a.host.await(ctx, "model", jsapi.Target("run", run), string(b))
	if err != nil {
		return agent.Message{}, err
	}
	s, err := jsbridge.String(v, "the model function's answer")
	if err != nil {
		return agent.Message{}, err
	}
	var m agent.Message
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return agent.Message{}, mcperr.New(mcperr.InvalidArgument, "mcp: the model function must resolve to an assistant message {role, content, tool_calls?}: %v", err)
	}
	if m.Role == "" {
		m.Role = "assistant"
	}
	if m.Content != "" && onText != nil {
		onText(m.Content)
	}
	return m, nil
}

func (a *app) agent(id string) (*agent.Agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ag, ok := a.agents[id]
	if !ok {
		return nil, mcperr.New(mcperr.Closed, "mcp: this agent is closed")
	}
	return ag, nil
}

func (a *app) opAgentRun(ctx context.Context, args jsapi.AgentRun, c jsCall) (any, error) {
	ag, err := a.agent(args.ID)
	if err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, runKey{}, args.Run)
	onEvent := func(ev agent.Event) {
		if !jsbridge.IsFunction(c.onProgress) {
			return
		}
		// MarshalJSON itself: json.Marshal would scan and copy its
		// (already compact) output once more.
		if b, err := ev.MarshalJSON(); err == nil {
			_, _ = jsbridge.Call(c.onProgress, string(b))
		}
	}
	var input []agent.Message
	if in := strings.TrimSpace(string(args.Input)); strings.HasPrefix(in, `"`) {
		var text string
		if err := json.Unmarshal(args.Input, &text); err != nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "agent.run(): input must be a string or a list of messages")
		}
		input = []agent.Message{{Role: agent.RoleUser, Content: text}}
	} else if err := json.Unmarshal(args.Input, &input); err != nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent.run(): input must be a string or a list of messages {role, content}: %v", err)
	}
	if args.Conversation != "" {
		res, err := ag.RunConversation(ctx, args.Conversation, input, onEvent)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	res, err := ag.Run(ctx, input, onEvent)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (a *app) opConversation(ctx context.Context, args jsapi.ConversationRef, _ jsCall) (any, error) {
	ag, err := a.agent(args.ID)
	if err != nil {
		return nil, err
	}
	return ag.Conversation(ctx, args.Conversation)
}

func (a *app) opConversations(ctx context.Context, args jsapi.AgentRef, _ jsCall) (any, error) {
	ag, err := a.agent(args.ID)
	if err != nil {
		return nil, err
	}
	return ag.Conversations(ctx)
}

func (a *app) opRenameConversation(ctx context.Context, args jsapi.RenameConversation, _ jsCall) (any, error) {
	ag, err := a.agent(args.ID)
	if err != nil {
		return nil, err
	}
	return ag.RenameConversation(ctx, args.Conversation, args.Title)
}

func (a *app) opDeleteConversation(ctx context.Context, args jsapi.ConversationRef, _ jsCall) (any, error) {
	ag, err := a.agent(args.ID)
	if err != nil {
		return nil, err
	}
	if err := ag.DeleteConversation(ctx, args.Conversation); err != nil {
		return nil, err
	}
	// What its views kept (their stateKeys begin with its prefix) goes too.
	_, err = a.idb.DeleteViewStates(ctx, agent.ViewStatePrefix(args.Conversation))
	return nil, err
}

func (a *app) opAgentClose(_ context.Context, args jsapi.AgentRef, _ jsCall) (any, error) {
	a.mu.Lock()
	delete(a.agents, args.ID)
	cats := make([]*catalogEntry, 0, len(a.catalogs))
	for _, ce := range a.catalogs {
		cats = append(cats, ce)
	}
	a.mu.Unlock()
	for _, ce := range cats {
		ce.mu.Lock()
		delete(ce.agents, args.ID)
		ce.mu.Unlock()
	}
	return nil, nil
}
