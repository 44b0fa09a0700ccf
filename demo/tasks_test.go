package demo_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
)

// TestTaskMethodsRefuse: the Tasks extension's methods refuse a client
// that does not declare the extension (-32021, naming it) and a task id
// the server does not hold (-32602); a research call declaring the
// extension gets a task handle; arguments outside research's schema are
// refused as go-sdk refuses them.
func TestTaskMethodsRefuse(t *testing.T) {
	srv := startServer(t, demo.Options{})
	post := func(body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+demo.StatelessPath, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	const declares = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	if got := post(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`); code(got) != -32021 {
		t.Errorf("tasks/get without the extension: %v; want -32021", got)
	}
	if got := post(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"nope",` + declares + `}}`); code(got) != -32602 {
		t.Errorf("tasks/get of an unknown task: %v; want -32602", got)
	}
	got := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"research","arguments":{"topic":"x","steps":1,"delayMs":0},` + declares + `}}`)
	r, _ := got["result"].(map[string]any)
	if r["resultType"] != "task" || r["taskId"] == "" || r["status"] != "working" {
		t.Errorf("a research call declaring the extension: %v; want a task handle", got)
	}
	if got := post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"research","arguments":{"topic":"x","extra":1},` + declares + `}}`); code(got) != -32602 {
		t.Errorf("a research call with an argument the schema does not have: %v; want -32602, as go-sdk refuses it", got)
	}
}
