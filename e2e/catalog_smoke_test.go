package e2e

import (
	"fmt"
	"testing"
)

func TestCatalogSmoke(t *testing.T) {
	e := newEnv(t)
	var got any
	e.eval(fmt.Sprintf(`(async () => {
		const cat = mcp.catalog({ servers: { demo: { url: %q }, local: { command: "npx" } } });
		const tools = await cat.tools();
		const r = await cat.callTool("demo_add", { a: 2, b: 40 });
		const oa = await cat.toolsFor("openai");
		const h = await cat.handleToolCalls({ role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "demo_echo", arguments: "{\"text\":\"hi\"}" } }] });
		const ag = cat.agent({ model: async ({ messages, tools }) => messages.some((m) => m.role === "tool") ? { role: "assistant", content: "done: " + messages.at(-1).content } : { role: "assistant", content: "", tool_calls: [{ id: "x", type: "function", function: { name: "demo_add", arguments: "{\"a\":1,\"b\":2}" } }] } });
		const ev = [];
		const res = await ag.run("add 1 2", { onEvent: (e) => ev.push(e.type) }).done;
		return { n: tools.length, names: tools.map((t) => t.name), r, oa: oa.length, h, status: cat.status(), warnings: cat.warnings, res: res.text, ev };
	})()`, e.MCPURL), &got)
	t.Logf("%v", got)
}
