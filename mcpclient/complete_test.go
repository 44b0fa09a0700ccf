package mcpclient

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// complete() reaches the server's completion handler for a prompt's
// argument and a resource template's, with the other arguments as context.
func TestCompleteOffersTheServersValues(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	for _, path := range []string{demo.StreamablePath, demo.SSEPath} {
		t.Run(path, func(t *testing.T) {
			c := newClient(t, srv.URL+path, Options{})
			ctx := ctxT(t)
			if err := c.Connect(ctx, ConnectOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := c.Complete(ctx, CompleteRef{Type: "ref/prompt", Name: demo.PromptExplain}, "audience", "A C", map[string]string{"topic": "wasm"})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a curious beginner", "a child"}; !reflect.DeepEqual(got.Values, want) || got.Total != 2 {
				t.Errorf("audience completions of %q = %+v; want %q, total 2", "A C", got, want)
			}
			got, err = c.Complete(ctx, CompleteRef{Type: "ref/resource", URI: demo.GreetingTemplate}, "name", "gr", nil)
			if err != nil || !reflect.DeepEqual(got.Values, []string{"Grace"}) {
				t.Errorf("name completions of %q = %+v, %v; want [Grace]", "gr", got, err)
			}
			got, err = c.Complete(ctx, CompleteRef{Type: "ref/prompt", Name: demo.PromptExplain}, "topic", "x", nil)
			if err != nil || got.Values == nil || len(got.Values) != 0 {
				t.Errorf("completions of an argument the server has none for = %+v, %v; want an empty list", got, err)
			}
		})
	}
}

// A bad reference is the caller's mistake, said before anything is sent;
// a server without completions is a protocol error that says so.
func TestCompleteRefusals(t *testing.T) {
	ts := startServer(t)
	c := newClient(t, ts.URL+"/mcp", Options{})
	ctx := ctxT(t)
	for _, tc := range []struct {
		ref CompleteRef
		arg string
	}{
		{CompleteRef{Type: "ref/prompt"}, "a"},
		{CompleteRef{Type: "ref/resource"}, "a"},
		{CompleteRef{Type: "ref/tool", Name: "x"}, "a"},
		{CompleteRef{Type: "ref/prompt", Name: "p"}, ""},
	} {
		if _, err := c.Complete(ctx, tc.ref, tc.arg, "", nil); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
			t.Errorf("Complete(%+v, %q) = %v; want invalid_argument", tc.ref, tc.arg, err)
		}
	}
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Complete(ctx, CompleteRef{Type: "ref/prompt", Name: "p"}, "a", "", nil)
	wantCode(t, err, mcperr.Protocol)
}
