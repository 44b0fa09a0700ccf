//go:build js && wasm && !mcpwasm_client

package main

import (
	"encoding/json"
	"testing"
)

// TestWebMCPResult: what a page's WebMCP tool answered (executeTool's
// string) becomes the catalog's result: a CallToolResult's JSON as one,
// anything else as the tool's text, nothing as no content.
func TestWebMCPResult(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		in   *string
		want string // the result's JSON
	}{
		{"call tool result", str(`{"content":[{"type":"text","text":"hi"}],"isError":true}`), `{"content":[{"type":"text","text":"hi"}],"isError":true}`},
		{"plain string", str("plain string"), `{"content":[{"type":"text","text":"plain string"}]}`},
		{"JSON without content", str(`{"temp":21}`), `{"content":[{"type":"text","text":"{\"temp\":21}"}]}`},
		{"content not a list", str(`{"content":"x"}`), `{"content":[{"type":"text","text":"{\"content\":\"x\"}"}]}`},
		{"unknown content type", str(`{"content":[{"type":"hologram"}]}`), `{"content":[{"type":"text","text":"{\"content\":[{\"type\":\"hologram\"}]}"}]}`},
		{"undefined", nil, `{"content":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(webmcpResult(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got %s; want %s", b, tc.want)
			}
		})
	}
}
