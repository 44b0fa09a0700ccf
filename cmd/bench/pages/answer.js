// The runtime scenario's "navigation → first agent answer" (runtime.html
// with ?model=URL): one agent turn against the scripted stand-in model
// (an OpenAI-compatible Chat Completions server), from a page that has
// just loaded its client. The model calls a tool, then answers with text
// quoting the result; the answer is complete when its last text arrived.

import { readStream } from "./chatstream.js";

// goAnswer runs the turn with mcpwasm: a catalog of the demo server and
// its agent with mcp.models.openai (connect and tool listing happen
// inside the turn, as an app's first question would make them).
export async function goAnswer(mcp, cfg) {
  const cat = mcp.catalog({ servers: { demo: { url: cfg.mcpURL } } });
  const agent = cat.agent({ model: mcp.models.openai({ baseURL: cfg.modelURL, model: cfg.model, apiKey: "x" }), maxSteps: 4 });
  const r = await agent.run(cfg.ask).done;
  return { text: r.text, steps: r.steps, close: () => cat.close() };
}

// tsAnswer runs the same turn with the TS SDK: its client connects and
// lists the tools, and a small loop asks the model (stream: true, the SSE
// deltas parsed here), makes the model's tool calls with callTool and
// asks again with the results.
export async function tsAnswer(sdk, cfg) {
  const c = new sdk.Client({ name: "bench-ts", version: "1.0.0" });
  await c.connect(new sdk.StreamableHTTPClientTransport(new URL(cfg.mcpURL)));
  const { tools } = await c.listTools();
  const fns = tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description || "", parameters: t.inputSchema } }));
  const messages = [{ role: "user", content: cfg.ask }];
  for (let step = 1; step <= 4; step++) {
    const m = await ask(cfg, messages, fns);
    messages.push(m);
    if (!m.tool_calls) return { text: m.content || "", steps: step, close: () => c.close() };
    for (const tc of m.tool_calls) {
      const r = await c.callTool({ name: tc.function.name, arguments: JSON.parse(tc.function.arguments || "{}") });
      const text = (r.content || []).filter((x) => x.type === "text").map((x) => x.text).join("\n");
      messages.push({ role: "tool", tool_call_id: tc.id, content: text });
    }
  }
  throw new Error("the TS SDK loop reached 4 steps without an answer");
}

async function ask(cfg, messages, tools) {
  const res = await fetch(cfg.modelURL + "/chat/completions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", Authorization: "Bearer x" },
    body: JSON.stringify({ model: cfg.model, messages, tools, tool_choice: "auto", stream: true }),
  });
  if (!res.ok) throw new Error("model answered HTTP " + res.status + ": " + (await res.text()));
  return readStream(res.body);
}
