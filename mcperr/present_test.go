package mcperr_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TestMessagesMatchTheDocs: the message of each code is what
// docs/JSAPI.md's error table says, for a server at mcp.example.com.
func TestMessagesMatchTheDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/JSAPI.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\| [^|]* \\| ([^|]*) \\|$").FindAllStringSubmatch(string(b), -1) {
		doc[m[1]] = strings.TrimSpace(m[2])
	}
	for _, c := range jsapi.Codes {
		want := mcperr.Message(c, "mcp.example.com", 502)
		if want == "" {
			want = "(the error's own message: it names the argument or what to create)"
		}
		if got := doc[string(c)]; got != want {
			t.Errorf("docs/JSAPI.md says %s is %q; the code says %q", c, got, want)
		}
	}
}

func TestPresent(t *testing.T) {
	for _, tc := range []struct {
		err          error
		msg, inDetai string
	}{
		{mcperr.AtServer(mcperr.Wrap(mcperr.AuthRequired, errors.New("oauth: authorization required"), "mcp: calling initialize"), "mcp.example.com"),
			"Sign-in required for the server at mcp.example.com. Call authorize() from a click.", "oauth: authorization required"},
		{mcperr.AtServer(&mcperr.Error{Code: mcperr.HTTP, Status: 503, Msg: "mcp: the server answered HTTP 503"}, "127.0.0.1:8081"),
			"The server at 127.0.0.1:8081 answered HTTP 503. The detail has its answer.", "HTTP 503"},
		{mcperr.AtServer(fmt.Errorf("calling: %w", &mcperr.RPCError{Code: -32002, Message: "Resource not found"}), "mcp.example.com"),
			"The server at mcp.example.com refused the request: Resource not found.", "-32002"},
		{mcperr.New(mcperr.InvalidArgument, "mcp: client(): storage must be \"indexeddb\" or \"memory\""),
			`client(): storage must be "indexeddb" or "memory".`, "storage"},
		{fmt.Errorf("x: %w", context.Canceled), "The request to the server was aborted.", "canceled"},
		{mcperr.AtServer(&mcperr.Error{Code: mcperr.Timeout, Msg: "oauth: login not finished", Err: &mcperr.SignInUnfinished{Within: 5 * time.Minute}}, "127.0.0.1:38081"),
			"The sign-in to the server at 127.0.0.1:38081 was not finished within 5 minutes. Call authorize() from a click to try again, or allow more time with authTimeoutMs.", "nobody finished the sign-in within 5m0s"},
		{mcperr.AtServer(fmt.Errorf("x: %w", &mcperr.SignInUnfinished{Within: 1500 * time.Millisecond}), "h"),
			"The sign-in to the server at h was not finished within 1.5 seconds. Call authorize() from a click to try again, or allow more time with authTimeoutMs.", "1.5s"},
		{mcperr.AtServer(fmt.Errorf("x: %w", &mcperr.SignInUnfinished{Within: 90 * time.Second}), "h"),
			"The sign-in to the server at h was not finished within 90 seconds. Call authorize() from a click to try again, or allow more time with authTimeoutMs.", "1m30s"},
		{mcperr.AtServer(fmt.Errorf("oauth: %w", &mcperr.UnhandledRedirect{URL: "http://127.0.0.1:5173/assets/oauth/callback.html"}), "mcp.example.com"),
			"The sign-in to the server at mcp.example.com came back to http://127.0.0.1:5173/assets/oauth/callback.html, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does.", "no callback receiver"},
		{mcperr.AtServer(&mcperr.Error{Code: mcperr.Network, Msg: "mcp: calling tools/call", Err: &mcperr.Cut{Err: errors.New("TypeError: network error")}}, "mcp.example.com"),
			"The connection to the server at mcp.example.com ended in the middle of its answer (the network or the server failed). The request reached the server and may have run there; check before repeating anything that changes data.", "TypeError: network error"},
		{mcperr.AtServer(&mcperr.Unoffered{Feature: "completions", Next: "let the person type the value"}, "mcp.example.com"),
			"The server at mcp.example.com does not offer completions. Let the person type the value.", "its capabilities do not declare them"},
	} {
		msg, detail := mcperr.Present(tc.err)
		if msg != tc.msg || !strings.Contains(detail, tc.inDetai) {
			t.Errorf("Present(%v) = %q, %q; want %q and a detail with %q", tc.err, msg, detail, tc.msg, tc.inDetai)
		}
	}
	if c, ok := mcperr.RPCCodeOf(fmt.Errorf("x: %w", &mcperr.RPCError{Code: -32602})); !ok || c != -32602 {
		t.Errorf("RPCCodeOf = %d, %v", c, ok)
	}
}
