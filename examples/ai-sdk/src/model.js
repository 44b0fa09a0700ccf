// The AI SDK's own mock language model (ai/test) with a script, so the
// chat runs without a model provider: "reverse <text>" calls
// notes_reverse, "note <text>" calls notes_note_add (which asks first),
// "list notes" calls notes_note_list, "reverse without text" and "reverse
// a list" call notes_reverse with bad arguments; after a tool result it
// says what the tool answered, as a model would.
import { MockLanguageModelV4 } from "ai/test";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function stream(parts) {
  return {
    stream: new ReadableStream({
      start(c) {
        c.enqueue({ type: "stream-start", warnings: [] });
        for (const p of parts) c.enqueue(p);
        c.close();
      },
    }),
  };
}

function say(text) {
  return stream([
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
  ]);
}

let calls = 0;
function call(toolName, input) {
  calls++;
  return stream([
    { type: "tool-call", toolCallId: `call-${calls}`, toolName, input: JSON.stringify(input) },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
  ]);
}

export function mockModel() {
  return new MockLanguageModelV4({
    provider: "mock",
    modelId: "scripted",
    doStream: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last?.role === "tool") {
        const result = last.content.find((p) => p.type === "tool-result");
        const out = result?.output ?? {};
        const text = typeof out.value === "string" ? out.value : JSON.stringify(out.value ?? out.reason ?? "");
        return say(out.type === "error-text" ? `The tool did not run: ${text}` : `The tool answered: ${text}`);
      }
      const asked = (last?.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join(" ").trim();
      let m;
      // A model's mistakes, which the tools answer honestly.
      if (/^reverse without text$/i.test(asked)) return call("notes_reverse", {});
      if (/^reverse a list$/i.test(asked)) return call("notes_reverse", ["hello"]);
      if ((m = /^reverse (.+)$/i.exec(asked))) return call("notes_reverse", { text: m[1] });
      if ((m = /^note (.+)$/i.exec(asked))) return call("notes_note_add", { note: m[1] });
      if (/^list notes$/i.test(asked)) return call("notes_note_list", {});
      return say('Try "reverse hello", "note buy milk" or "list notes".');
    },
  });
}
