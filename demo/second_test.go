package demo

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
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

// TestNotesView: note_list names its view (MCP Apps), the view reads back
// as an MCP Apps document, self-contained, with the field and button the
// issue names, and note_list's structured content lists the notes, which
// the view shows.
func TestNotesView(t *testing.T) {
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

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var withView []string
	for _, tool := range tools.Tools {
		ui, _ := tool.Meta["ui"].(map[string]any)
		if ui == nil {
			continue
		}
		withView = append(withView, tool.Name)
		if got := ui["resourceUri"]; got != NotesViewURI {
			t.Errorf("%s: _meta.ui.resourceUri = %v; want %s", tool.Name, got, NotesViewURI)
		}
	}
	if !reflect.DeepEqual(withView, []string{ToolNoteList}) {
		t.Errorf("tools with a view: %v; want only %s", withView, ToolNoteList)
	}

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: NotesViewURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != NotesViewURI || res.Contents[0].MIMEType != "text/html;profile=mcp-app" {
		t.Fatalf("resources/read %s = %+v; want one text/html;profile=mcp-app content", NotesViewURI, res.Contents)
	}
	html := res.Contents[0].Text
	for _, want := range []string{`id="note-text"`, `id="note-add"`, "ui/initialize", "ui/notifications/initialized", "ui/notifications/tool-result", "ui/notifications/size-changed", `"note_add"`, `"note_list"`, "structuredContent"} {
		if !strings.Contains(html, want) {
			t.Errorf("the view's HTML lacks %s", want)
		}
	}
	for _, external := range []string{"<script src", "<link", "http://", "https://", "@import", "url("} {
		if strings.Contains(html, external) {
			t.Errorf("the view's HTML has %q: it must be self-contained", external)
		}
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != NotesViewURI || list.Resources[0].MIMEType != AppMIMEType {
		t.Errorf("resources/list = %+v; want the view", list.Resources)
	}

	notes := func() (string, any) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolNoteList, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("note_list: %v %+v", err, r)
		}
		b, _ := json.Marshal(r.StructuredContent)
		var sc any
		json.Unmarshal(b, &sc)
		return r.Content[0].(*mcp.TextContent).Text, sc
	}
	if text, sc := notes(); text != "No notes yet." || !reflect.DeepEqual(sc, map[string]any{"notes": []any{}}) {
		t.Errorf("note_list with no notes: %q, structuredContent %v; want No notes yet. and {notes: []}", text, sc)
	}
	for _, n := range []string{"milk", "eggs <b>"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolNoteAdd, Arguments: map[string]any{"note": n}}); err != nil {
			t.Fatal(err)
		}
	}
	if text, sc := notes(); text != "1. milk\n2. eggs <b>" || !reflect.DeepEqual(sc, map[string]any{"notes": []any{"milk", "eggs <b>"}}) {
		t.Errorf("note_list: %q, structuredContent %v; want both notes in the text and in structuredContent.notes", text, sc)
	}
}
