// The bench pages' reader of an OpenAI Chat Completions event stream
// (the loops written in JS: agentloop.js and answer.js).

// readStream reads an OpenAI Chat Completions SSE stream into the
// assistant message, up to [DONE] (as agent/openai does).
export async function readStream(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "", content = "";
  const calls = [];
  const onData = (data) => {
    const c = JSON.parse(data);
    if (c.error) throw new Error("model error: " + JSON.stringify(c.error));
    const d = c.choices && c.choices[0] && c.choices[0].delta;
    if (!d) return;
    if (d.content) content += d.content;
    for (const tc of d.tool_calls || []) {
      const t = calls[tc.index] || (calls[tc.index] = { id: "", type: "function", function: { name: "", arguments: "" } });
      if (tc.id) t.id = tc.id;
      if (tc.function && tc.function.name) t.function.name += tc.function.name;
      if (tc.function && tc.function.arguments) t.function.arguments += tc.function.arguments;
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = ev.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n").trim();
      if (data === "[DONE]") {
        reader.cancel().catch(() => {});
        return message(content, calls);
      }
      if (data) onData(data);
    }
  }
  return message(content, calls);
}

function message(content, calls) {
  const m = { role: "assistant", content: content || null };
  if (calls.length) m.tool_calls = calls;
  return m;
}
