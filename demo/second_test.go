package demo

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSecondServer(t *testing.T) {
	srv := httptest.NewServer(SecondHandler(Options{}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + StreamablePath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 8 {
		t.Errorf("%d tools; want 8", len(res.Tools))
	}
	call := func(name string, args map[string]any) string {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		return r.Content[0].(*mcp.TextContent).Text
	}
	if got := call(ToolReverse, map[string]any{"text": "abc"}); got != "cba" {
		t.Errorf("reverse = %q", got)
	}
	if got := call(ToolWordCount, map[string]any{"text": "two words"}); got != "2 words, 9 characters" {
		t.Errorf("word_count = %q", got)
	}
	if a, b := call(ToolWeather, map[string]any{"city": "Paris"}), call(ToolWeather, map[string]any{"city": " paris "}); !strings.HasPrefix(a, "Paris: ") || a[5:] != b[5:] {
		t.Errorf("weather %q and %q; want the same made-up weather", a, b)
	}
	call(ToolNoteAdd, map[string]any{"note": "milk"})
	if got := call(ToolNoteList, map[string]any{}); got != "1. milk" {
		t.Errorf("notes = %q", got)
	}
	if got := call(ToolLongB, map[string]any{"text": "q3 went well"}); got != "Summary (two): q3 went well" {
		t.Errorf("long tool = %q", got)
	}
}
