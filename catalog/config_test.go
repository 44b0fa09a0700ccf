package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func boolp(b bool) *bool { return &b }

func TestParseServers(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		want     map[string]ServerConfig
		warnings []string
	}{{
		name: "own form",
		doc: `{"servers": {
			"github": {"url": "https://api.example.com/mcp", "title": "GitHub", "description": "Code", "enabled": false,
			           "allowTools": ["search_*"], "denyTools": ["delete_*"], "clientId": "abc", "headers": {"X-Key": "k"}},
			"plain": {"url": "http://127.0.0.1:8080/mcp", "transport": "sse"}
		}, "maxServers": 4}`,
		want: map[string]ServerConfig{
			"github": {URL: "https://api.example.com/mcp", Title: "GitHub", Description: "Code", Enabled: boolp(false),
				AllowTools: []string{"search_*"}, DenyTools: []string{"delete_*"}, Client: json.RawMessage(`{"clientId":"abc","headers":{"X-Key":"k"}}`)},
			"plain": {URL: "http://127.0.0.1:8080/mcp", Client: json.RawMessage(`{"transport":"sse"}`)},
		},
	}, {
		name: "mcpServers form",
		doc: `{"mcpServers": {
			"remote": {"url": "https://a.example.com/mcp", "type": "http", "headers": {"Authorization": "Bearer t"}},
			"windsurf": {"serverUrl": "https://b.example.com/sse", "transport": "sse"},
			"vscode": {"type": "streamable-http", "url": "https://c.example.com/mcp", "disabled": true},
			"odd id/é": {"url": "https://d.example.com/mcp"}
		}}`,
		want: map[string]ServerConfig{
			"remote":   {URL: "https://a.example.com/mcp", Client: json.RawMessage(`{"headers":{"Authorization":"Bearer t"},"transport":"streamable"}`)},
			"windsurf": {URL: "https://b.example.com/sse", Client: json.RawMessage(`{"transport":"sse"}`)},
			"vscode":   {URL: "https://c.example.com/mcp", Enabled: boolp(false), Client: json.RawMessage(`{"transport":"streamable"}`)},
			"odd id/é": {URL: "https://d.example.com/mcp", Client: json.RawMessage(`{}`)},
		},
	}, {
		name: "stdio and bad entries are refused, the rest loads",
		doc: `{"mcpServers": {
			"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
			"local": {"type": "stdio", "url": "http://127.0.0.1/x"},
			"nourl": {"title": "x"},
			"relative": {"url": "/mcp"},
			"ftp": {"url": "ftp://example.com/mcp"},
			"badglob": {"url": "https://e.example.com/mcp", "allowTools": ["[a-"]},
			"notobject": 7,
			"badtype": {"url": "https://f.example.com/mcp", "type": "websocket"},
			"": {"url": "https://g.example.com/mcp"},
			"ok": {"url": "https://ok.example.com/mcp"}
		}}`,
		want: map[string]ServerConfig{"ok": {URL: "https://ok.example.com/mcp", Client: json.RawMessage(`{}`)}},
		warnings: []string{
			`catalog: a server has an empty id; give it a name`,
			`catalog: server "badglob": allowTools entry "[a-" is not a valid glob pattern`,
			`catalog: server "badtype": transport "websocket" is not one of "http", "streamable-http", "sse"`,
			`server "fs" is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url`,
			`catalog: server "ftp": url "ftp://example.com/mcp" is not an absolute http(s) URL`,
			`server "local" is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url`,
			`catalog: server "notobject": the entry must be a JSON object`,
			`catalog: server "nourl": it has no url; give it the http(s) URL of its MCP endpoint`,
			`catalog: server "relative": url "/mcp" is not an absolute http(s) URL`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := ParseServers([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			var msgs []string
			for _, w := range warnings {
				msgs = append(msgs, w.Error())
				wantCode(t, w, mcperr.InvalidArgument)
			}
			if diff := cmp.Diff(tt.warnings, msgs); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEntry(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  ServerConfig
		err   string // "" for none
		local bool   // the error matches ErrLocalServer
	}{{
		name:  "valid",
		entry: `{"url": "https://a.example.com/mcp", "title": "A", "allowTools": ["search_*"], "clientId": "abc"}`,
		want:  ServerConfig{URL: "https://a.example.com/mcp", Title: "A", AllowTools: []string{"search_*"}, Client: json.RawMessage(`{"clientId":"abc"}`)},
	}, {
		name:  "serverUrl alias",
		entry: `{"serverUrl": "https://b.example.com/sse", "type": "sse", "disabled": true}`,
		want:  ServerConfig{URL: "https://b.example.com/sse", Enabled: boolp(false), Client: json.RawMessage(`{"transport":"sse"}`)},
	}, {
		name:  "command",
		entry: `{"command": "npx", "args": ["-y", "server"]}`,
		err:   `server "x" is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url`,
		local: true,
	}, {
		name:  "stdio type",
		entry: `{"type": "stdio", "url": "http://127.0.0.1/x"}`,
		err:   `server "x" is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url`,
		local: true,
	}, {
		name:  "bad glob",
		entry: `{"url": "https://c.example.com/mcp", "denyTools": ["[a-"]}`,
		err:   `catalog: server "x": denyTools entry "[a-" is not a valid glob pattern`,
	}, {
		name:  "webmcp",
		entry: `{"webmcp": true, "title": "This page", "allowTools": ["notes_*"]}`,
		want:  ServerConfig{WebMCP: true, Title: "This page", AllowTools: []string{"notes_*"}, Client: json.RawMessage(`{}`)},
	}, {
		name:  "webmcp with url",
		entry: `{"webmcp": true, "url": "https://e.example.com/mcp"}`,
		err:   `catalog: server "x": a webmcp server is the page's own WebMCP tools and has no url; leave out url or webmcp`,
	}, {
		name:  "webmcp false needs url",
		entry: `{"webmcp": false}`,
		err:   `catalog: server "x": it has no url; give it the http(s) URL of its MCP endpoint`,
	}, {
		name:  "webmcp not boolean",
		entry: `{"webmcp": "yes"}`,
		err:   `catalog: server "x": webmcp must be true or false`,
	}, {
		name:  "bad transport",
		entry: `{"url": "https://d.example.com/mcp", "transport": "websocket"}`,
		err:   `catalog: server "x": transport "websocket" is not one of "http", "streamable-http", "sse"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEntry("x", json.RawMessage(tt.entry))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseEntry (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || err.Error() != tt.err {
				t.Fatalf("ParseEntry: %v; want %q", err, tt.err)
			}
			wantCode(t, err, mcperr.InvalidArgument)
			if local := errors.Is(err, ErrLocalServer); local != tt.local {
				t.Errorf("errors.Is(err, ErrLocalServer) = %v; want %v", local, tt.local)
			}
		})
	}
}

func TestParseServersDocumentErrors(t *testing.T) {
	for _, doc := range []string{
		`not json`,
		`[1, 2]`,
		`{"github": {"url": "https://x.example.com/mcp"}}`,
		`{"servers": [1]}`,
		`{"servers": {}, "mcpServers": {}}`,
	} {
		_, _, err := ParseServers([]byte(doc))
		if err == nil {
			t.Errorf("ParseServers(%s) succeeded; want an error", doc)
			continue
		}
		wantCode(t, err, mcperr.InvalidArgument)
	}
}

func TestNewValidates(t *testing.T) {
	fs := clientFactory(t)
	many := map[string]ServerConfig{}
	for _, id := range strings.Fields("a b c d") {
		many[id] = ServerConfig{URL: "https://" + id + ".example.com/mcp"}
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no factory", Config{}, "catalog: Config.Factory is required"},
		{"too many", Config{Factory: fs, Servers: many, MaxServers: 3}, "catalog: 4 servers configured; at most 3 (maxServers) are allowed"},
		{"bad url", Config{Factory: fs, Servers: servers("x", "mcp.example.com")}, `catalog: server "x": url "mcp.example.com" is not an absolute http(s) URL`},
		{"bad deny", Config{Factory: fs, Servers: map[string]ServerConfig{"x": {URL: "https://x.example.com", DenyTools: []string{"\\"}}}}, `catalog: server "x": denyTools entry "\\" is not a valid glob pattern`},
		{"negative call timeout", Config{Factory: fs, CallTimeout: -time.Second}, "catalog: Config.CallTimeout must not be negative; use 0 for the default (1m0s)"},
		{"negative cooldown", Config{Factory: fs, Breaker: BreakerConfig{Cooldown: -time.Second}}, "catalog: Config.Breaker.Cooldown must not be negative; use 0 for the default (30s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("New: %v; want %q", err, tt.want)
			}
			wantCode(t, err, mcperr.InvalidArgument)
		})
	}
	cat, _ := newCatalog(t, Config{Factory: fs, Servers: many})
	if cat.cfg.MaxServers != 32 || cat.cfg.MaxToolsPerServer != 128 || cat.cfg.CallTimeout != DefaultCallTimeout ||
		cat.cfg.Breaker != (BreakerConfig{Failures: 3, Cooldown: DefaultBreakerCooldown}) {
		t.Errorf("defaults = %+v", cat.cfg)
	}
	if err := cat.Add("e", ServerConfig{URL: "https://e.example.com/mcp"}); err != nil {
		t.Fatal(err)
	}
	if err := cat.Add("e", ServerConfig{URL: "https://e.example.com/mcp"}); err == nil {
		t.Error("Add of an existing id succeeded")
	}
	small, _ := newCatalog(t, Config{Factory: fs, MaxServers: 1, Servers: servers("a", "https://a.example.com/mcp")})
	err := small.Add("b", ServerConfig{URL: "https://b.example.com/mcp"})
	if err == nil || !strings.Contains(err.Error(), "maxServers") {
		t.Errorf("Add beyond the cap: %v; want an error naming maxServers", err)
	}
}

// A negative call timeout is refused rather than taken for the default.
func TestNegativeCallTimeout(t *testing.T) {
	srv := &fakeServer{tools: []*mcp.Tool{tool("t", true)}}
	cat, _ := newCatalog(t, Config{Servers: servers("s", "https://s.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"s": srv})})
	ctx := ctxT(t)
	opts := CallOptions{Timeout: -time.Second}
	const want = "catalog: CallOptions.Timeout must not be negative; use 0 for Config.CallTimeout (1m0s)"
	_, err := cat.CallTool(ctx, "s_t", nil, opts)
	if err == nil || err.Error() != want {
		t.Fatalf("CallTool: %v; want %q", err, want)
	}
	wantCode(t, err, mcperr.InvalidArgument)
	_, err = cat.ModelCall(ctx, "s_t", "{}", opts)
	wantCode(t, err, mcperr.InvalidArgument)
	_, err = cat.HandleToolCalls(ctx, FormatOpenAI, json.RawMessage(`[]`), opts)
	wantCode(t, err, mcperr.InvalidArgument)
	if n := srv.calls.Load(); n != 0 {
		t.Errorf("server calls = %d; want 0", n)
	}
	if r, err := cat.ModelCall(ctx, "s_t", "{}", CallOptions{}); err != nil || r.IsError {
		t.Errorf("ModelCall with default options = %+v, %v; want a result", r, err)
	}
}
