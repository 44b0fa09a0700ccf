// Compiled with `tsc --noEmit` by `make types`: the README's usage, typed
// against web/mcp.d.ts. A rename in mcp.d.ts breaks this file.
import { load, MCPError, type Client, type CallToolResult, type MCPErrorCode } from "../../web/mcp.js";

async function demo(): Promise<void> {
  const mcp = await load({ wasmURL: "mcp.wasm", onProgress: (loaded: number, total: number) => void (loaded + total) });
  const v: string = mcp.version;
  const client: Client = mcp.client("https://mcp.example.com/mcp", {
    clientName: "My App",
    headers: { "X-Api-Key": "k" },
    accessToken: async () => "token",
    transport: "auto",
    scopes: ["read"],
    storage: "indexeddb",
    interactive: false,
    authMode: "popup",
    authTimeoutMs: 300000,
  });
  client.addEventListener("statechange", (e) => {
    const s: string = e.detail.state;
    const code: MCPErrorCode | undefined = e.detail.error?.code;
    void s, code;
  });
  client.addEventListener("toolschanged", () => {});
  client.onElicitation = async (p) => ({ action: "accept", content: { name: p.message } });
  client.onSampling = async () => ({ role: "assistant", content: { type: "text", text: "hi" }, model: "m", stopReason: "endTurn" });
  client.addEventListener("storagefallback", (e) => console.warn(e.detail.reason));
  await client.authorize();
  await client.connect({ signal: new AbortController().signal });
  const state: "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "declined" | "failed" | "closed" = client.state;
  const tools = await client.listTools();
  const r: CallToolResult = await client.callTool(tools[0].name, { a: 1 }, {
    onProgress: (p) => void (p.progress + (p.total ?? 0)),
    timeoutMs: 1000,
  });
  const isError: boolean = r.isError;
  await client.listResources();
  await client.listResourceTemplates();
  const read = await client.readResource("demo://readme");
  const text: string | undefined = read.contents[0].text;
  await client.listPrompts();
  await client.getPrompt("explain", { topic: "x" });
  await client.ping();
  await client.logout();
  await client.close();
  const taken: boolean = await mcp.handleCallback(location.href);
  await mcp.clearStorage();
  void taken;
  try {
    await client.ping();
  } catch (e) {
    if (e instanceof MCPError && e.code === "closed") console.log(e.status, v, state, isError, text);
  }
}
void demo;
