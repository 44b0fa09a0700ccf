// Compiled with `tsc --noEmit` by `make types`: the README's usage, typed
// against web/mcp.d.ts. A rename in mcp.d.ts breaks this file.
import {
  load, preload, MCPError, type Client, type CallToolResult, type MCPErrorCode, type ClientState,
  type Catalog, type CatalogTool, type ServerStatus, type ApprovalRequest, type ApprovalAnswer, type ApprovalPolicy,
  type Agent, type AgentEvent, type AgentResult, type ChatMessage, type Completion, type Skill, type LoadedSkill,
} from "../../web/mcp.js";

async function demo(): Promise<void> {
  preload({ runtime: "auto" });
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
  // Enterprise-managed authorization: the app's SSO ID token, no popup.
  const sso: Client = mcp.client("https://mcp.example.com/mcp", {
    clientId: "mcp-app",
    identityAssertion: async () => "id-token",
    idpTokenEndpoint: "https://idp.example.com/token",
    idpClientId: "corp-app",
    grant: "authorization_code",
  });
  void sso;
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
  const state: "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "declined" | "failed" | "closed" | "reconnecting" = client.state;
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
  const done: Completion = await client.complete({ type: "ref/prompt", name: "explain" }, { name: "audience", value: "a" }, { context: { topic: "x" } });
  const firstValue: string | undefined = done.values[0];
  await client.complete({ type: "ref/resource", uri: "demo://greeting/{name}" }, { name: "name", value: "" });
  // @ts-expect-error a prompt reference needs its name
  await client.complete({ type: "ref/prompt" }, { name: "a", value: "" });
  client.addEventListener("resourceupdated", (ev) => void ev.detail.uri.length);
  await client.subscribe("demo://readme");
  await client.unsubscribe("demo://readme");
  const skills: Skill[] = await client.skills();
  const firstFile: string | undefined = skills[0].files?.[0].digest;
  const loaded: LoadedSkill = await client.loadSkill(skills[0].uri);
  const skillText: string = loaded.text + loaded.frontmatter.description;
  const forms: string = await client.readSkillFile(loaded.uri, "references/FORMS.md");
  await client.getSkill("skill://demo/SKILL.md");
  await client.ping();
  await client.logout();
  await client.close();
  const taken: boolean = await mcp.handleCallback(location.href);
  await mcp.clearStorage();
  const st = await mcp.storageStatus();
  if (!st.persistent) console.warn(st.error?.code, "sign-ins will not be kept after this tab closes");
  void taken;
  try {
    await client.ping();
  } catch (e) {
    if (e instanceof MCPError && e.code === "closed") console.log(e.status, v, state, isError, text);
  }
}
void demo;

// The catalog and the agent (docs/JSAPI.md, "Catalog" and "Agent").
async function catalogAndAgent(): Promise<void> {
  const mcp = await load();
  const cat: Catalog = mcp.catalog({
    servers: {
      github: { url: "https://mcp.example.com/mcp", title: "GitHub", enabled: true, allowTools: ["search_*"], denyTools: ["delete_*"], storage: "memory" },
    },
    maxServers: 32, maxToolsPerServer: 128, callTimeoutMs: 60000,
    breaker: { failures: 3, cooldownMs: 30000 },
    approve: async (req: ApprovalRequest) => req.tool !== "delete" && req.id === "github",
    serverTools: false,
    skills: true,
    onElicitation: async (request, { serverId, elicitationId }) =>
      request.mode === "url" ? { action: "decline" } : { action: "accept", content: { name: `${serverId}:${elicitationId}` } },
  });
  const answer: ApprovalAnswer = "always";
  const policy: ApprovalPolicy = { readOnly: "ask", destructive: "deny", servers: { github: "ask", scratch: "allow", legacy: "deny" } };
  mcp.catalog({ servers: {}, approve: (req) => (req.tool === "search" ? "server" : answer), approvalPolicy: policy });
  mcp.catalog({ mcpServers: { local: { command: "npx", args: ["x"] }, remote: { serverUrl: "https://x.example/mcp" } } });
  const warnings: readonly string[] = cat.warnings;
  const all: Record<string, ServerStatus> = cat.status();
  const one: ServerStatus = cat.status("github");
  const st: ClientState | "disabled" = one.state;
  const breaker: "closed" | "open" | "half_open" = one.breaker;
  const c: Client = cat.server("github");
  cat.add("notes", { url: "https://notes.example/mcp" });
  await cat.enable("notes");
  await cat.disable("notes");
  await cat.authorize("github", { signal: new AbortController().signal });
  const tools: CatalogTool[] = await cat.tools();
  const first: string = tools[0].name + tools[0].serverId + tools[0].tool.name;
  await cat.toolsFor("anthropic");
  const r: CallToolResult = await cat.callTool("github_search", { q: "x" }, { timeoutMs: 1000, onProgress: (p) => void p.progress });
  await cat.handleToolCalls([], { format: "openai" });
  cat.addEventListener("statuschange", (e) => void (e.detail.id + e.detail.status.state));
  cat.addEventListener("toolschanged", (e) => void e.detail.ids.length);
  cat.addEventListener("authrequired", (e) => void (e.detail.id + (e.detail.declined === true ? " again" : "")));
  await cat.remove("notes");

  const agent: Agent = cat.agent({ model: mcp.models.openai({ baseURL: "http://127.0.0.1:1/v1", apiKey: "k", model: "m" }), system: "be brief", maxSteps: 8, authWaitMs: 300000 });
  cat.agent({ model: mcp.models.anthropic({ apiKey: "k", model: "m", maxTokens: 1024 }) });
  cat.agent({ model: mcp.models.anthropic({ apiKey: "k", model: "m", maxTokens: 8192, thinkingBudget: 4096 }) });
  cat.agent({ model: mcp.models.openaiResponses({ apiKey: "k", model: "gpt-5-mini", reasoningEffort: "low", reasoningSummary: "auto" }) });
  cat.agent({ model: mcp.models.gemini({ apiKey: "k", model: "gemini-2.5-flash", includeThoughts: true }) });
  // @ts-expect-error: not a reasoning.summary value
  mcp.models.openaiResponses({ model: "m", reasoningSummary: "long" });
  cat.agent({ model: async ({ messages }) => ({ role: "assistant", content: `${messages.length} messages` }) });
  const run = agent.run("add 2 and 40", {
    signal: new AbortController().signal,
    onEvent: (ev: AgentEvent) => {
      if (ev.type === "toolcall") void (ev.name + ev.serverId);
      if (ev.type === "authrequired" && !ev.declined) void cat.authorize(ev.serverId);
      if (ev.type === "approval" && ev.decidedBy === "remembered") void (ev.scope === "server" ? ev.serverId : ev.tool);
      if (ev.type === "approval" && ev.decidedBy === "policy") void ev.policy;
      if (ev.type === "text") void ev.delta;
      if (ev.type === "reasoning") void ev.delta;
      if (ev.type === "toolcalldelta") void (ev.id + ev.name + ev.argumentsDelta);
      if (ev.type === "usage") void (ev.inputTokens + ev.outputTokens + (ev.cachedInputTokens ?? 0) + (ev.reasoningTokens ?? 0));
      if (ev.type === "done" && ev.usage) void (ev.usage.inputTokens + ev.usage.outputTokens);
      if (ev.type === "elicitation") void (ev.elicitationId + ev.serverId + ev.mode + ev.message + (ev.url ?? ""));
    },
  });
  const res: AgentResult = await run.done;
  const more: ChatMessage[] = [...res.messages, { role: "user", content: "and again" }];
  await agent.run(more).done;
  const finish: string = res.finishReason;
  const spent: number | undefined = res.usage?.outputTokens;
  agent.close();
  await cat.close();
  console.log(warnings, all, st, breaker, c.state, first, r.isError, finish, res.text, res.steps, spent);
}
void catalogAndAgent;

// The relay (docs/JSAPI.md, "Relay").
async function relayed(): Promise<void> {
  const mcp = await load({ relay: "/mcp-relay", relayMode: "fallback" });
  mcp.client("https://mcp.example.com/mcp", { relay: "https://app.example/mcp-relay", relayMode: "always" });
  mcp.catalog({ servers: { tickets: { url: "https://tickets.example/mcp", relay: "/mcp-relay" } } });
}
void relayed;

// A view's own tools (docs/JSAPI.md, MCP Apps).
async function viewTools(): Promise<void> {
  const mcp = await load();
  const client = mcp.client("https://mcp.example.com/mcp");
  const div = document.createElement("div");
  const view = await mcp.apps.render(div, { client, tool: "show_scene", sandboxUrl: "https://sandbox.example/sandbox.html" });
  view.addEventListener("toolschanged", () => void view.listTools());
  if (view.offersTools) {
    const names: string[] = (await view.listTools({ timeoutMs: 5000 })).map((t) => t.name);
    const r: CallToolResult = await view.callTool(names[0], {}, { signal: new AbortController().signal });
    void r.content;
  }
  const cat = mcp.catalog({ servers: { scene: { url: "https://mcp.example.com/mcp" } }, apps: true });
  const offered = await mcp.apps.render(div, { catalog: cat, serverId: "scene", tool: "show_scene", sandboxUrl: "https://sandbox.example/sandbox.html", offerTools: true });
  const id: string | null = offered.offeredAs;
  void id;
}
void viewTools;
