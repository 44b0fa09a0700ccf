package xengine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// TestWebMCPBridge: the page's own WebMCP tools (document.modelContext)
// are a catalog server, and catalog tools are offered back to the
// browser's agent. In Chromium, started with --enable-features=WebMCP, an
// agent turn calls a tool the page registered (approved like any other,
// its answer reaching the model), a tool the page registers later comes
// in through toolchange, and a catalog tool exposed with exposeToPage
// runs when the browser's executeTool calls it, until its signal aborts; a
// tool an iframe registered is not the page's.
// Firefox and WebKit have no WebMCP: the catalog warns, exposes nothing,
// and its remote server still works.
func TestWebMCPBridge(t *testing.T) {
	eitherRuntime(t)
	b := browser
	if browser.Name() == "chromium" {
		var err error
		b, err = engine.StartWith(context.Background(), "chromium", engine.Options{ChromiumFeatures: []string{"WebMCP"}})
		if err != nil {
			t.Fatalf("starting Chromium with WebMCP: %v", err)
		}
		t.Cleanup(func() { b.Close() })
	}
	w := newWorldIn(t, devserver.AuthConfig{}, b)
	var got struct {
		API        bool     `json:"api"`
		FrameTool  bool     `json:"frameListed"`
		Warnings   []string `json:"warnings"`
		Text       string   `json:"text"`
		Asked      []string `json:"asked"`
		PageCalls  []string `json:"pageCalls"`
		Later      []string `json:"later"`
		BadArgs    string   `json:"badArgs"`
		Threw      string   `json:"threw"`
		Exposed    []string `json:"exposed"`
		Listed     []string `json:"listed"`
		Untrusted  []string `json:"untrusted"`
		ViaBrowser string   `json:"viaBrowser"`
		After      []string `json:"after"`
		Direct     string   `json:"direct"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const mc = document.modelContext;
		const pageCalls = [];
		let frameListed = false;
		if (mc) {
			await mc.registerTool({
				name: "weather",
				description: "The weather in a city",
				inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
				annotations: { readOnlyHint: true },
				execute: async ({ city }) => {
					pageCalls.push(city);
					return { content: [{ type: "text", text: "Sunny in " + city + " (the page's own tool)" }] };
				},
			});
			// A frame's tools are the frame's, not the page's.
			const framed = new Promise((resolve) => addEventListener("message", (e) => { if (e.data === "registered") resolve(); }));
			const frame = document.createElement("iframe");
			frame.srcdoc = '<script>document.modelContext.registerTool({ name: "from_frame", description: "a frame\'s tool", execute: () => "framed" }).then(() => parent.postMessage("registered", "*"));<\/script>';
			document.body.append(frame);
			await framed;
			// The browser lists the frame's tool before the catalog reads
			// the page's, so that leaving it out is the catalog's doing.
			for (let i = 0; i < 500 && !frameListed; i++) {
				frameListed = (await mc.getTools()).some((t) => t.name === "from_frame");
				if (!frameListed) await new Promise((r) => setTimeout(r, 20));
			}
		}
		const asked = [];
		const cat = mcp.catalog({
			servers: { page: { webmcp: true }, demo: { url: %[1]q } },
			// A policy governs remote servers; it leaves the page's own tools in.
			policy: { servers: [new URL(%[1]q).origin] },
			approvalPolicy: { readOnly: "ask" },
			approve: async (req) => { asked.push(req.id + " " + req.tool); return true; },
		});
		const warnings = [];
		cat.addEventListener("warning", (e) => warnings.push(e.detail.id + ": " + e.detail.message));
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %[2]q, model: "mcpwasm-standin" }) });
		const res = await agent.run("weather in Paris").done;

		// A tool the page registers now reaches the catalog (toolchange).
		let later = [], badArgs = "", threw = "";
		if (mc) {
			const listed = async (name) => {
				for (;;) {
					const next = new Promise((resolve) => cat.addEventListener("toolschanged", resolve, { once: true }));
					if ((await cat.tools()).some((t) => t.name === name)) return;
					await next;
				}
			};
			await mc.registerTool({ name: "page_title", description: "The page's title", execute: () => document.title });
			await listed("page_page_title");
			later = (await cat.tools()).map((t) => t.name).filter((n) => n.startsWith("page_"));
			// The catalog checks arguments (the browser does not), and a
			// tool that throws is an honest error result.
			const bad = await cat.callTool("page_weather", { city: 5 });
			badArgs = bad.isError + " " + bad.content.map((c) => c.text).join(" ");
			await mc.registerTool({ name: "broken", description: "Always fails", execute: () => { throw new Error("no forecast"); } });
			await listed("page_broken");
			const broken = await cat.callTool("page_broken", {});
			threw = broken.isError + " " + broken.content.map((c) => c.text).join(" ");
		}

		// The other way: demo's tools offered to the browser's agent.
		const ac = new AbortController();
		const exposed = await cat.exposeToPage({ tools: ["demo_echo", "demo_ad?"], signal: ac.signal });
		let listed = [], untrusted = [], viaBrowser = "", after = [];
		if (mc) {
			const tools = await mc.getTools();
			listed = tools.map((t) => t.name).sort();
			untrusted = tools.filter((t) => t.annotations?.untrustedContentHint).map((t) => t.name).sort();
			viaBrowser = await mc.executeTool(tools.find((t) => t.name === "demo_echo"), { text: "from the browser's agent" });
			ac.abort();
			after = (await mc.getTools()).map((t) => t.name).sort();
		}
		const direct = await cat.callTool("demo_echo", { text: "still here" });
		await cat.close();
		return { api: !!mc, frameListed, warnings, text: res.text, asked, pageCalls, later, badArgs, threw, exposed, listed, untrusted, viaBrowser, after,
			direct: direct.content.map((c) => c.text).join(" ") };
	})()`, w.OpenURL, w.ModelURL), &got)

	if !strings.Contains(got.Direct, "still here") {
		t.Errorf("the catalog's remote server answered %q; want its echo of %q", got.Direct, "still here")
	}
	if b.Name() != "chromium" {
		// No WebMCP in this engine: a warning, not an error.
		if got.API {
			t.Fatalf("%s has document.modelContext; this test expects it only in Chromium", b.Name())
		}
		wantWarn := []string{
			`page: this browser has no WebMCP (document.modelContext; Chromium: --enable-features=WebMCP or the origin trial): server "page" has no tools`,
			`: this browser has no WebMCP (document.modelContext; Chromium: --enable-features=WebMCP or the origin trial): exposeToPage() registered no tools`,
		}
		if !slices.Equal(got.Warnings, wantWarn) {
			t.Errorf("warnings:\n%q\nwant:\n%q", got.Warnings, wantWarn)
		}
		if want := []string{"demo echo"}; !slices.Equal(got.Asked, want) {
			t.Errorf("approve() was asked %q; want %q", got.Asked, want)
		}
		if len(got.Exposed) != 0 {
			t.Errorf("exposeToPage() registered %q without WebMCP", got.Exposed)
		}
		if !strings.Contains(got.Text, "none is offered to me") {
			t.Errorf("the turn answered %q; want the model to say it has no weather tool", got.Text)
		}
		return
	}
	if !got.API {
		t.Fatal("Chromium started with --enable-features=WebMCP has no document.modelContext")
	}
	if !got.FrameTool {
		t.Errorf("the browser did not list the tool the frame registered within 10s of its registration: the check that the catalog leaves it out would prove nothing")
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings %q; want none", got.Warnings)
	}
	if !strings.Contains(got.Text, "Sunny in Paris (the page's own tool)") {
		t.Errorf("the turn answered %q; want the page's tool's answer", got.Text)
	}
	if !slices.Equal(got.PageCalls, []string{"Paris"}) {
		t.Errorf("the page's tool ran for %q; want once for Paris", got.PageCalls)
	}
	// Not page_weather with bad arguments (refused before asking); demo
	// echo twice: the browser's call, then the page's.
	if want := []string{"page weather", "page broken", "demo echo", "demo echo"}; !slices.Equal(got.Asked, want) {
		t.Errorf("approve() was asked %q; want %q", got.Asked, want)
	}
	if want := []string{"page_page_title", "page_weather"}; !slices.Equal(got.Later, want) {
		t.Errorf("after toolchange the catalog's page tools are %q; want %q", got.Later, want)
	}
	if !strings.HasPrefix(got.BadArgs, "true ") || !strings.Contains(got.BadArgs, "city") {
		t.Errorf("page_weather with a number for city answered %q; want an isError result naming city", got.BadArgs)
	}
	if want := "true the page's tool broken failed: UnknownError: "; !strings.HasPrefix(got.Threw, want) {
		t.Errorf("the page's throwing tool answered %q; want it to start %q", got.Threw, want)
	}
	if want := []string{"demo_add", "demo_echo"}; !slices.Equal(got.Exposed, want) {
		t.Errorf("exposeToPage() registered %q; want %q", got.Exposed, want)
	}
	// The frame's tool was listed before the catalog started (the script
	// waits for it); whether the browser still lists it later is the
	// browser's business: the lists below are compared without it.
	withoutFrame := func(names []string) []string {
		if !slices.Contains(names, "from_frame") {
			t.Logf("the browser no longer lists the frame's tool: %q", names)
		}
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "from_frame" })
	}
	if want := []string{"broken", "demo_add", "demo_echo", "page_title", "weather"}; !slices.Equal(withoutFrame(got.Listed), want) {
		t.Errorf("the browser lists %q; want %q besides the frame's tool", got.Listed, want)
	}
	if want := []string{"demo_add", "demo_echo"}; !slices.Equal(got.Untrusted, want) {
		t.Errorf("the browser marks %q untrustedContentHint; want the exposed tools %q", got.Untrusted, want)
	}
	if !strings.Contains(got.ViaBrowser, "from the browser's agent") {
		t.Errorf("the browser's executeTool of demo_echo answered %q; want the demo server's echo", got.ViaBrowser)
	}
	if want := []string{"broken", "page_title", "weather"}; !slices.Equal(withoutFrame(got.After), want) {
		t.Errorf("after the signal aborted the browser lists %q; want %q besides the frame's tool", got.After, want)
	}
}
