// react-messages.js — useAgent's messages made from a stored conversation,
// and its token totals.

/** Text of a stored message's content (a string, or parts). */
const textOf = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("") : "");

/**
 * A stored conversation's messages (Chat Completions shapes) as useAgent
 * shows them: each user message, then one assistant message per turn with
 * its text and tool parts (a stored tool result does not say whether it
 * was an error: it shows as done). A tool part whose call the
 * conversation kept a view of (views, by call id) carries `app` and
 * `callResult`, as it did when the call ran.
 */
export function fromStored(messages, nextId, views = {}) {
  const out = [];
  let reply = null;
  const close = () => {
    if (!reply) return;
    out[out.length - 1] = Object.freeze({ ...reply, parts: Object.freeze(reply.parts.map((p) => Object.freeze(p))) });
    reply = null;
  };
  for (const m of messages) {
    if (m.role === "system") continue;
    if (m.role === "user") {
      close();
      out.push(Object.freeze({ id: nextId("u"), role: "user", text: textOf(m.content) }));
      continue;
    }
    if (!reply) {
      reply = { id: nextId("a"), role: "assistant", parts: [], state: "done" };
      out.push(reply);
    }
    if (m.role === "assistant") {
      const text = textOf(m.content);
      if (text) reply.parts.push({ type: "text", text });
      for (const tc of m.tool_calls ?? []) {
        const part = { type: "tool", id: tc.id, name: tc.function?.name ?? "", arguments: tc.function?.arguments ?? "", state: "done" };
        const v = views?.[tc.id];
        if (v?.app && v.result) Object.assign(part, { serverId: v.app.serverId, tool: v.app.tool, app: Object.freeze({ ...v.app }), callResult: v.result });
        reply.parts.push(part);
      }
    } else if (m.role === "tool") {
      const p = reply.parts.find((x) => x.type === "tool" && x.id === m.tool_call_id);
      if (!p) continue;
      p.result = Object.freeze({ isError: p.callResult?.isError === true, text: textOf(m.content) });
      if (p.callResult?.isError) p.state = "error";
    }
  }
  close();
  return Object.freeze(out);
}

/** a + b of two usages, b the later (a may be null): counts and costs sum, the context is b's. */
export function addUsage(a, b) {
  const sum = { inputTokens: (a?.inputTokens ?? 0) + (b.inputTokens ?? 0), outputTokens: (a?.outputTokens ?? 0) + (b.outputTokens ?? 0) };
  const cached = (a?.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  const reasoning = (a?.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  if (cached) sum.cachedInputTokens = cached;
  if (reasoning) sum.reasoningTokens = reasoning;
  if (b.contextTokens !== undefined) sum.contextTokens = b.contextTokens;
  if (b.contextLimit !== undefined) sum.contextLimit = b.contextLimit;
  if (a?.cost !== undefined || b.cost !== undefined) sum.cost = (a?.cost ?? 0) + (b.cost ?? 0);
  return Object.freeze(sum);
}
