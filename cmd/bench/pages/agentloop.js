// Injected into wasm.html once it is ready: the "agent step overhead"
// scenario. One catalog over the demo MCP server serves two loops against
// the scripted stand-in model: the Go agent (cat.agent with
// mcp.models.openai, every event delivered to an onEvent) and a baseline written directly here: fetch with
// stream: true, SSE deltas and tool calls parsed in JS, the tools run with
// cat.handleToolCalls (the same catalog, the same tool path), the results
// appended, the model asked again. The servers time the gaps; the page
// times each turn.
(() => {
  let cat, agent, tools, cfg, readStream;

  async function ask(messages) {
    const res = await fetch(cfg.baseURL + "/chat/completions", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", Authorization: "Bearer x" },
      body: JSON.stringify({ model: cfg.model, messages, tools, tool_choice: "auto", stream: true, stream_options: { include_usage: true } }),
    });
    if (!res.ok) throw new Error("model answered HTTP " + res.status + ": " + (await res.text()));
    return readStream(res.body);
  }

  window.AB = {
    async setup(c) {
      cfg = c;
      ({ readStream } = await import("./chatstream.js"));
      cat = window.__mcp.catalog({ servers: { demo: { url: c.mcpURL } } });
      agent = cat.agent({ model: window.__mcp.models.openai({ baseURL: c.baseURL, model: c.model, apiKey: "x" }), maxSteps: 8 });
      tools = await cat.toolsFor("openai"); // once, outside the timed part
      return true;
    },
    // goTurn: one turn of the Go agent, its events delivered to the page
    // (text, reasoning, toolcalldelta, usage, …) and counted.
    async goTurn(text) {
      const events = {};
      const onEvent = (ev) => { events[ev.type] = (events[ev.type] || 0) + 1; };
      const t0 = performance.now();
      const r = await agent.run(text, { onEvent }).done;
      return { ms: performance.now() - t0, text: r.text, steps: r.steps, events };
    },
    // jsTurn: the same turn, the loop written here.
    async jsTurn(text) {
      const t0 = performance.now();
      const messages = [{ role: "user", content: text }];
      for (let step = 1; step <= 8; step++) {
        const m = await ask(messages);
        messages.push(m);
        if (!m.tool_calls) return { ms: performance.now() - t0, text: m.content || "", steps: step };
        messages.push(...(await cat.handleToolCalls(m.tool_calls, { format: "openai" })));
      }
      throw new Error("the JS loop reached 8 steps");
    },
  };
  return true;
})()
