package catalog

// EntryForm is how [ParseEntry] reads a server entry, as data: the page's
// mcp.js reads entries the same way from it (the Go package jsapi carries
// it to web/jsapi.js), so that catalog.add() refuses at once, in every
// runtime, with the same message.
var EntryForm = entryForm{
	LocalKey: "command",
	Aliases:  [][2]string{{"serverUrl", "url"}},
	Negations: []negation{
		{Key: "disabled", Of: "enabled", Message: "disabled must be true or false"},
	},
	TransportKeys: []string{"type", "transport"},
	Transports: map[string]string{
		"stdio": "", // a local server
		"http":  "streamable", "streamable-http": "streamable", "streamable_http": "streamable", "streamablehttp": "streamable", "streamable": "streamable",
		"sse":  "sse",
		"auto": "auto", "": "auto",
	},
	Fields: []entryField{
		{Name: "url", Kind: "string", Message: "url has the wrong type"},
		{Name: "title", Kind: "string", Message: "title has the wrong type"},
		{Name: "description", Kind: "string", Message: "description has the wrong type"},
		{Name: "enabled", Kind: "boolean", Message: "enabled must be true or false"},
		{Name: "required", Kind: "boolean", Message: "required must be true or false"},
		{Name: "allowTools", Kind: "array", Message: "allowTools has the wrong type", Globs: true},
		{Name: "denyTools", Kind: "array", Message: "denyTools has the wrong type", Globs: true},
		{Name: "webmcp", Kind: "boolean", Message: "webmcp must be true or false"},
	},
	Messages: entryMessages{
		EmptyID:         "catalog: a server has an empty id; give it a name",
		Entry:           "catalog: server %q: %s",
		NotObject:       "the entry must be a JSON object",
		Local:           "server %q is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url",
		TransportString: "%s must be a string",
		Transport:       `transport %q is not one of "http", "streamable-http", "sse"`,
		NoURL:           "it has no url; give it the http(s) URL of its MCP endpoint",
		BadURL:          "url %q is not an absolute http(s) URL",
		WebMCPURL:       "a webmcp server is the page's own WebMCP tools and has no url; leave out url or webmcp",
		BadGlob:         "%s entry %q is not a valid glob pattern",
		RequiredOff:     "a required server cannot be disabled; leave out enabled: false (or disabled: true) or required",
		Exists:          "catalog: server %q exists; remove it first",
		Full:            "catalog: the catalog holds %d servers already, the most allowed (maxServers)",
	},
}

// entryForm is the shape of EntryForm; its JSON is what jsapi.js carries.
type entryForm struct {
	// LocalKey marks an entry for a local command (stdio) server.
	LocalKey string `json:"localKey"`
	// Aliases are other hosts' names of a key, {theirs, ours}; ours wins
	// when an entry has both.
	Aliases [][2]string `json:"aliases"`
	// Negations are boolean keys that say the opposite of one of ours.
	Negations []negation `json:"negations"`
	// TransportKeys name the transport, in the order they are read.
	TransportKeys []string `json:"transportKeys"`
	// Transports map a transport's name (lower-cased) to the client option
	// transport; "" is a local server's.
	Transports map[string]string `json:"transports"`
	// Fields are the keys of ServerConfig; every other key of an entry is
	// one of the server's client options.
	Fields   []entryField  `json:"fields"`
	Messages entryMessages `json:"messages"`
}

type negation struct {
	Key     string `json:"key"`
	Of      string `json:"of"`
	Message string `json:"message"`
}

type entryField struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // "string", "boolean" or "array" (of strings)
	Message string `json:"message"`
	Globs   bool   `json:"globs,omitempty"` // each is a path.Match pattern
}

// entryMessages are fmt formats (%q, %s, %d only: the page formats them too).
type entryMessages struct {
	EmptyID         string `json:"emptyId"`
	Entry           string `json:"entry"` // the server's id, then one of the rest
	NotObject       string `json:"notObject"`
	Local           string `json:"local"` // the server's id
	TransportString string `json:"transportString"`
	Transport       string `json:"transport"`
	NoURL           string `json:"noUrl"`
	BadURL          string `json:"badUrl"`
	WebMCPURL       string `json:"webmcpUrl"`
	BadGlob         string `json:"badGlob"`
	RequiredOff     string `json:"requiredOff"`
	Exists          string `json:"exists"`
	Full            string `json:"full"`
}
