// Compiled with `tsc --noEmit` by `make types`: the React hooks' usage,
// typed against web/react.d.ts (docs/JSAPI.md, "The npm package and
// React"). A rename in react.d.ts breaks this file.
import { models } from "../../web/mcp.js";
import { useCatalog, useAgent, askUser, type AgentMessage, type AgentPart, type UseAgentResult } from "../../web/react.js";

function describe(p: AgentPart): string {
  switch (p.type) {
    case "text":
    case "reasoning":
    case "notice":
      return p.text;
    case "tool":
      return `${p.name}(${p.arguments}) ${p.state}${p.result ? `: ${p.result.text}` : ""}`;
    case "authrequired":
      return `sign in to ${p.serverId}`;
  }
}

export function chat(modelURL: string): string {
  const cat = useCatalog({ servers: { notes: { url: "https://notes.example.com/mcp" } }, approve: askUser });
  const a: UseAgentResult = useAgent(cat, {
    model: models.openai({ baseURL: modelURL, model: "m" }),
    system: "Be brief.",
    maxSteps: 4,
    onEvent: (ev) => void ev.type,
  });
  const busy: boolean = a.status === "running" || a.status === "awaiting-approval" || a.status === "awaiting-input";
  const onSend = (): void => { a.send("add 2 and 40").catch((e: Error) => console.warn(e.message)); };
  const onStop = (): void => { a.stop(); };
  for (const q of a.pending) {
    if (q.kind === "approval") a.approve(q.request.tool === "add", q.id);
    else a.answerElicitation({ action: "decline" }, q.id);
  }
  void [onSend, onStop, useAgent(cat.catalog, { model: async () => ({ role: "assistant", content: "hi" }) })];
  const lines = a.messages.map((m: AgentMessage) => m.role === "user" ? m.text : m.parts.map(describe).join(" "));
  return [String(busy), a.usage ? `${a.usage.inputTokens}/${a.usage.outputTokens}` : "", a.error?.message ?? "", ...lines].join("\n");
}
