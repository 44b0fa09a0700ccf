package xengine

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestCatalogAgentToolSearch: an agent turn over a catalog of 10 servers
// of 40 tools each (over the default tool budget): the model is offered
// the search tools, searches, and calls the tool it found through
// catalog_call_tool; the page's approval hook and its events name the
// real server and tool.
func TestCatalogAgentToolSearch(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	servers := map[string]map[string]string{}
	for i := range 10 {
		srv := serve(t, demo.ManyHandler(demo.ManyOptions{Index: i, Reverse: i == 7, Shuffle: true}))
		servers[fmt.Sprintf("s%02d", i)] = map[string]string{"url": srv.URL + demo.StreamablePath}
	}
	cfg, _ := json.Marshal(servers)
	var got struct {
		Text   string   `json:"text"`
		Asked  []string `json:"asked"`
		Events []string `json:"events"`
		Tools  int      `json:"tools"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const asked = [];
		const cat = mcp.catalog({
			servers: %s,
			approve: async (req) => { asked.push(req.id + " " + req.tool + " " + req.name); return true; },
		});
		const events = [];
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
		const res = await agent.run("reverse hello", { onEvent: (ev) => {
			if (ev.type === "toolcall" || ev.type === "toolresult" || ev.type === "approval") {
				events.push([ev.type, ev.name, ev.serverId || "", ev.tool || ""].join(" "));
			}
		} }).done;
		const tools = (await cat.tools()).length;
		await cat.close();
		return { text: res.text, asked, events, tools };
	})()`, cfg, w.ModelURL), &got)
	if got.Text != "Results: olleh" {
		t.Errorf("the turn answered %q; want %q", got.Text, "Results: olleh")
	}
	if got.Tools != 400 {
		t.Errorf("cat.tools() lists %d tools; want 400", got.Tools)
	}
	if !slices.Equal(got.Asked, []string{"s07 reverse s07_reverse"}) {
		t.Errorf("approval asked for %v; want s07's reverse once", got.Asked)
	}
	want := []string{
		"toolcall catalog_search_tools  ",
		"toolresult catalog_search_tools  catalog_search_tools",
		"toolcall catalog_call_tool s07 reverse",
		"approval s07_reverse s07 reverse",
		"toolresult catalog_call_tool s07 reverse",
	}
	if !slices.Equal(got.Events, want) {
		t.Errorf("events:\n%q\nwant:\n%q", got.Events, want)
	}
}
