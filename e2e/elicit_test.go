package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestElicitationServerEverything: the reference TypeScript server, which
// offers its elicitation tools only to a client that advertises them,
// offers both modes to a catalog with onElicitation (and neither without);
// its form request (which names no mode: the handler sees "form") and its
// URL-mode request reach the handler with the server's id, the form's
// answer and the URL's decline reach the server.
func TestElicitationServerEverything(t *testing.T) {
	url := startEverything(t)
	e := newEnv(t)
	var got struct {
		With    []string            `json:"with"`
		Without []string            `json:"without"`
		Form    string              `json:"form"`
		Link    string              `json:"link"`
		Asked   []map[string]string `json:"asked"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const asked = [];
		const cat = mcp.catalog({
			servers: { everything: { url: %[1]q } },
			onElicitation: async (request, context) => {
				asked.push({ mode: request.mode, url: request.url ?? "", serverId: context.serverId });
				return request.mode === "url" ? { action: "decline" } : { action: "accept", content: { name: "Ada", check: true } };
			},
		});
		const with_ = (await cat.tools()).map((t) => t.tool.name);
		const text = (r) => r.content.map((c) => c.text).join("\n");
		const form = text(await cat.callTool("everything_trigger-elicitation-request", {}));
		const link = text(await cat.callTool("everything_trigger-url-elicitation", { url: "https://example.com/consent" }));
		await cat.close();
		const bare = mcp.catalog({ servers: { everything: { url: %[1]q } } });
		const without = (await bare.tools()).map((t) => t.tool.name);
		await bare.close();
		return { with: with_, without, form, link, asked };
	})()`, url), &got)
	for _, tool := range []string{"trigger-elicitation-request", "trigger-url-elicitation"} {
		if !slices.Contains(got.With, tool) {
			t.Errorf("tools with onElicitation = %v; want %s (the server saw the capability)", got.With, tool)
		}
		if slices.Contains(got.Without, tool) {
			t.Errorf("tools without onElicitation include %s; want it left out (no capability advertised)", tool)
		}
	}
	if !strings.Contains(got.Form, "User provided the requested information") || !strings.Contains(got.Form, "- Name: Ada") {
		t.Errorf("form elicitation result = %q; want the accepted answer at the server", got.Form)
	}
	if !strings.Contains(got.Link, "User declined to open the URL") {
		t.Errorf("URL elicitation result = %q; want the decline at the server", got.Link)
	}
	want := []map[string]string{{"mode": "form", "url": "", "serverId": "everything"}, {"mode": "url", "url": "https://example.com/consent", "serverId": "everything"}}
	if fmt.Sprint(got.Asked) != fmt.Sprint(want) {
		t.Errorf("onElicitation asked %v; want %v", got.Asked, want)
	}
}
