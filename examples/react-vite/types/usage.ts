// Type-checked by the e2e test TestNpmTypes (tsc --noEmit) against the
// mcpwasm package installed from its tarball: the three entry points and
// their types, as an app written in TypeScript uses them.
import { load, models, MCPError, type Client, type Catalog, type Tool } from "mcpwasm";
import { useMcpClient, useCatalog, useAgent, askUser, type UseMcpClientResult } from "mcpwasm/react";
import "mcpwasm/callback";
import wasmURL from "mcpwasm/mcp.wasm";

export async function plain(): Promise<string> {
  const mcp = await load({ wasmURL, onProgress: (loaded, total) => void (loaded + total) });
  const client: Client = mcp.client("https://mcp.example.com/mcp", { redirectUri: "/oauth/callback" });
  try {
    await client.connect();
  } catch (e) {
    if (e instanceof MCPError && e.code === "auth_required") await client.authorize();
  }
  const tools: Tool[] = await client.listTools();
  const cat: Catalog = mcp.catalog({ servers: { demo: { url: "https://mcp.example.com/mcp" } } });
  const agent = cat.agent({ model: mcp.models.openai({ baseURL: "http://127.0.0.1:11434/v1", model: "m" }) });
  const { text } = await agent.run("hello").done;
  return tools.map((t) => t.name).join(",") + text;
}

// What a component's body does with the hooks.
export function component(url: string): string {
  const r: UseMcpClientResult = useMcpClient(url, { redirectUri: "/oauth/callback", autoConnect: true, onLoadProgress: (n) => void n });
  const onClick = (): void => { r.authorize().catch((e: MCPError) => console.warn(e.code)); };
  void onClick;
  if (r.state === "connected") void r.callTool("add", { a: 1, b: 2 }).then((res) => res.isError);
  const names: string[] = r.tools.map((t) => t.name);
  const c = useCatalog({ servers: { demo: { url } }, approve: async (req) => req.tool === "add" });
  const states: string[] = Object.values(c.status).map((s) => s.state);
  if (c.catalog) void c.agent({ model: async () => ({ role: "assistant", content: "hi" }) });
  return [r.state, r.client?.url ?? "", r.error?.message ?? "", ...names, ...states, String(c.loading)].join(" ");
}

// A chat over a catalog: approvals asked in the chat (askUser).
export function chat(url: string, baseURL: string): string {
  const cat = useCatalog({ servers: { demo: { url } }, approve: askUser, onElicitation: askUser });
  const { messages, status, usage, pending, send, stop, approve, answerElicitation } = useAgent(cat, { model: models.openai({ baseURL, model: "m" }) });
  if (status === "idle") void send("add 2 and 40").catch((e: MCPError) => console.warn(e.code));
  if (status === "running") stop();
  for (const q of pending) if (q.kind === "approval") approve(true, q.id);
  for (const q of pending) {
    if (q.kind !== "elicitation") continue;
    if (q.request.mode === "url") answerElicitation({ action: "cancel" }, q.id);
    else answerElicitation({ action: "accept", content: { name: "Ada", age: 36, subscribe: true } }, q.id);
  }
  return messages.map((m) => m.role === "user" ? m.text : m.parts.map((p) => p.type === "tool" ? p.state : "").join("")).join("") + (usage?.outputTokens ?? 0);
}
