package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startElicitServer serves a go-sdk server whose tool "visit" asks the
// client to open its url argument (URL-mode elicitation) and "ask" asks a
// form, and "wait" does not answer while the call runs (a server that is
// slow itself), on /mcp (2025-11-25: elicitation/create requests) and /modern
// (2026-07-28: input_required results). Each tool's text is what it
// learned: the action, or the error of asking.
func startElicitServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "elicit", Version: "1"}, nil)
	type visitArgs struct {
		URL string `json:"url"`
	}
	textOf := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	ask := func(ctx context.Context, r *mcp.CallToolRequest, key string, p *mcp.ElicitParams) *mcp.CallToolResult {
		modern := r.Session.InitializeParams() == nil || r.Session.InitializeParams().ProtocolVersion >= protocol20260728
		if !modern {
			res, err := r.Session.Elicit(ctx, p)
			if err != nil {
				return textOf("error: " + err.Error())
			}
			return textOf(res.Action + ":" + fmt.Sprint(res.Content["name"]))
		}
		resp, ok := r.Params.InputResponses[key]
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: p}}
		}
		res := resp.(*mcp.ElicitResult)
		return textOf(res.Action + ":" + fmt.Sprint(res.Content["name"]))
	}
	mcp.AddTool(s, &mcp.Tool{Name: "visit"}, func(ctx context.Context, r *mcp.CallToolRequest, a visitArgs) (*mcp.CallToolResult, any, error) {
		return ask(ctx, r, "visit", &mcp.ElicitParams{Mode: "url", Message: "open it", URL: a.URL, ElicitationID: "e1"}), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, r *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return ask(ctx, r, "ask", &mcp.ElicitParams{Mode: "form", Message: "name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}), nil, nil
	})
	// A stateless server may not hear that a call was cancelled: "wait"
	// also ends when the test does, before the server closes.
	released := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-released:
		}
		return textOf("waited"), nil, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.Handle("/modern", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) })
	return srv.URL
}

// TestElicitationModes: a client with a handler advertises form and URL
// mode and answers both, in either protocol era; a URL-mode request with
// a URL that is not https (or http on loopback) is declined without
// reaching the handler, with a warning event; the handler's decline and
// cancel reach the server as such.
func TestElicitationModes(t *testing.T) {
	base := startElicitServer(t)
	for _, path := range []string{"/mcp", "/modern"} {
		tests := []struct {
			name, tool, url, answer string
			want                    string
			asked                   bool
			warn                    string
		}{
			{name: "form accept", tool: "ask", answer: "accept", want: "accept:Ada", asked: true},
			{name: "form decline", tool: "ask", answer: "decline", want: "decline:<nil>", asked: true},
			{name: "url https", tool: "visit", url: "https://example.com/consent?x=1", answer: "accept", want: "accept:<nil>", asked: true},
			{name: "url loopback http", tool: "visit", url: "http://127.0.0.1:9/ok", answer: "cancel", want: "cancel:<nil>", asked: true},
			{name: "url plain http", tool: "visit", url: "http://example.com/x?token=secret", want: "decline:<nil>", warn: `"http://example.com/x" must use https`},
			{name: "url javascript", tool: "visit", url: "javascript:alert(1)", want: "decline:<nil>", warn: "not an absolute https URL"},
			{name: "url relative", tool: "visit", url: "/consent", want: "decline:<nil>", warn: "not an absolute https URL"},
			{name: "url user info", tool: "visit", url: "https://a:b@example.com/", want: "decline:<nil>", warn: "user info"},
		}
		for _, tt := range tests {
			t.Run(strings.TrimPrefix(path, "/")+"/"+tt.name, func(t *testing.T) {
				var mu sync.Mutex
				var warnings []string
				c := newClient(t, base+path, Options{OnEvent: func(ev Event) {
					if w, ok := ev.Data.(Warning); ok && ev.Type == "warning" {
						mu.Lock()
						warnings = append(warnings, w.Message)
						mu.Unlock()
					}
				}})
				var asked *mcp.ElicitParams
				err := c.Connect(ctxT(t), ConnectOptions{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked = p
					r := &mcp.ElicitResult{Action: tt.answer}
					if tt.answer == "accept" && tt.tool == "ask" {
						r.Content = map[string]any{"name": "Ada"}
					}
					return r, nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				var args []byte
				if tt.tool == "visit" {
					args = []byte(fmt.Sprintf(`{"url":%q}`, tt.url))
				}
				res, err := c.CallTool(ctxT(t), tt.tool, args, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tt.want {
					t.Errorf("%s answered %q; want %q", tt.tool, got, tt.want)
				}
				if (asked != nil) != tt.asked {
					t.Errorf("handler asked = %v; want %v", asked != nil, tt.asked)
				}
				if asked != nil && tt.tool == "visit" && (asked.Mode != "url" || asked.URL != tt.url || asked.ElicitationID != "e1") {
					t.Errorf("handler got %+v; want the URL-mode request as sent", asked)
				}
				mu.Lock()
				defer mu.Unlock()
				if tt.warn == "" && len(warnings) > 0 || tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn)) {
					t.Errorf("warnings = %q; want one containing %q", warnings, tt.warn)
				}
				for _, w := range warnings {
					if strings.Contains(w, "secret") {
						t.Errorf("warning %q shows the URL's query", w)
					}
				}
			})
		}
	}
}

// TestNoElicitationHandler: without a handler the client advertises no
// elicitation, so a 2025-11-25 server's request fails at the server and a
// 2026-07-28 server's input request fails the call, at once.
func TestNoElicitationHandler(t *testing.T) {
	base := startElicitServer(t)
	c := newClient(t, base+"/mcp", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctxT(t), "ask", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "client does not support elicitation") {
		t.Errorf("ask without a handler = %q; want the server told elicitation is not supported", got)
	}
	m := newClient(t, base+"/modern", Options{})
	if err := m.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CallTool(ctxT(t), "ask", nil, nil); err == nil || !strings.Contains(err.Error(), "does not support elicitation") {
		t.Errorf("an input request without a handler: err = %v; want the call to fail saying elicitation is not supported", err)
	}
}

// TestElicitationAdvertised: the capability of each mode is advertised
// when there is a handler, none without.
func TestElicitationAdvertised(t *testing.T) {
	with := advertised(&mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }})
	if fmt.Sprint(with["elicitation"]) != "map[form:map[] url:map[]]" {
		t.Errorf("advertised with a handler = %v; want form and url", with)
	}
	if without := advertised(&mcp.ClientOptions{}); len(without) != 0 {
		t.Errorf("advertised without handlers = %v; want nothing", without)
	}
}

func TestCheckElicitationURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://example.com/a?b=c": true, "http://localhost:8080/x": true, "http://[::1]/": true, "http://127.0.0.2/": true,
		"http://example.com/": false, "ftp://example.com/": false, "data:text/html,hi": false, "javascript:alert(1)": false,
		"//example.com/": false, "https:///path": false, "https://u@example.com/": false, "%zz": false, "": false,
	} {
		if err := CheckElicitationURL(raw); (err == nil) != ok {
			t.Errorf("CheckElicitationURL(%q) = %v; want ok %v", raw, err, ok)
		}
	}
}

// TestURLElicitationRequired: a tool call refused with -32042 (URL
// elicitation required) shows the host each URL; once the user accepted
// and the server said the elicitation completed, the call is sent again
// and answers (the host hears elicitationcomplete). A decline leaves the
// server's error, without a second call; an unsafe URL is declined
// without asking the host.
func TestURLElicitationRequired(t *testing.T) {
	for _, tt := range []struct {
		name, url, answer string
		wantCalls         int
		wantAsked         bool
		wantText          string // the second call's answer; "" for an error
	}{
		{name: "accept", url: "https://example.com/link", answer: "accept", wantCalls: 2, wantAsked: true, wantText: "linked"},
		{name: "decline", url: "https://example.com/link", answer: "decline", wantCalls: 1, wantAsked: true},
		{name: "unsafe url", url: "javascript:alert(1)", answer: "accept", wantCalls: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "linker", Version: "1"}, nil)
			var (
				mu      sync.Mutex
				calls   int
				session *mcp.ServerSession
				linked  bool
			)
			mcp.AddTool(s, &mcp.Tool{Name: "account"}, func(ctx context.Context, r *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				session = r.Session
				if linked {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "linked"}}}, nil, nil
				}
				return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: "link-1", URL: tt.url, Message: "Link your account"}})
			})
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(srv.Close)

			var completed []string
			c := newClient(t, srv.URL, Options{OnEvent: func(ev Event) {
				if e, ok := ev.Data.(ElicitationComplete); ok {
					mu.Lock()
					completed = append(completed, e.ElicitationID)
					mu.Unlock()
				}
			}})
			var asked *mcp.ElicitParams
			err := c.Connect(ctxT(t), ConnectOptions{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				asked = p
				if tt.answer == "accept" {
					// The user finishes on the page; the server hears of it
					// and says so.
					go func() {
						mu.Lock()
						linked = true
						ss := session
						mu.Unlock()
						_ = ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: p.ElicitationID})
					}()
				}
				return &mcp.ElicitResult{Action: tt.answer}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(ctxT(t), "account", nil, nil)
			mu.Lock()
			defer mu.Unlock()
			if calls != tt.wantCalls {
				t.Errorf("the tool was called %d times; want %d", calls, tt.wantCalls)
			}
			if (asked != nil) != tt.wantAsked || asked != nil && (asked.URL != tt.url || asked.Mode != "url" || asked.ElicitationID != "link-1") {
				t.Errorf("the host was asked %+v; want asked %v with the URL", asked, tt.wantAsked)
			}
			if tt.wantText != "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tt.wantText || len(completed) != 1 || completed[0] != "link-1" {
					t.Errorf("answer %q, completions %q; want %q after link-1 completed", got, completed, tt.wantText)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "-32042") && !strings.Contains(strings.ToLower(err.Error()), "elicitation") {
				t.Errorf("the call answered %v, %v; want the server's URL-elicitation error", res, err)
			}
		})
	}
}
