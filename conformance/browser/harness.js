// harness.js — the page the conformance suite's browser client drives
// (cmd/conformance-browser). It uses only the public JavaScript API of
// mcp.js (docs/JSAPI.md): load(), mcp.client(url, options), connect(),
// authorize() (from a user gesture: the driver evaluates those calls with
// user activation, as a click would), listTools(), callTool(),
// listResources(), readResource(), listPrompts(), getPrompt(), onElicitation.
//
// NOTE: the browser running this page was started with --disable-web-security
// because the suite's servers send no CORS headers. Conformance runs only.
import { load } from "/mcp.js";

const logEl = document.getElementById("log");
function log(...parts) {
  const line = parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ");
  console.log(`harness: ${line}`);
  logEl.textContent += line + "\n";
}

// A rejection as a plain, JSON-able object for the driver.
function fail(e) {
  return {
    ok: false,
    error: {
      name: e?.name ?? "Error",
      code: e?.code ?? "",
      status: e?.status ?? 0,
      message: e?.message ?? String(e),
      cause: e?.cause?.message ?? undefined,
    },
  };
}

let mcp = null;
let client = null;
const elicitations = [];
let listed = []; // the tools of the last listTools()

async function step(name, fn) {
  log(`${name}: start (state ${client?.state ?? "none"})`);
  try {
    const value = await fn();
    log(`${name}: ok (state ${client?.state ?? "none"})`);
    return { ok: true, value: value ?? null, state: client?.state ?? "" };
  } catch (e) {
    const r = fail(e);
    log(`${name}: failed (state ${client?.state ?? "none"})`, r.error);
    return { ...r, state: client?.state ?? "" };
  }
}

window.harness = {
  /**
   * Loads the wasm module and creates the client: cfg = { url, options }.
   * options.idToken, when present, becomes identityAssertion (a function,
   * which JSON cannot carry): the page's SSO holds that ID token.
   */
  setup: (cfg) => step("setup", async () => {
    mcp = await load();
    const { idToken, ...options } = cfg.options;
    if (idToken !== undefined) options.identityAssertion = async () => idToken;
    client = mcp.client(cfg.url, options);
    client.addEventListener("statechange", (ev) => {
      const d = ev.detail;
      log(`statechange ${d.state}${d.error ? ` (${d.error.code}: ${d.error.message})` : ""}`);
    });
    client.addEventListener("log", (ev) => log("server log", ev.detail));
    // Accept every elicitation without filling anything in: the client
    // (go-sdk under mcp.js) must apply the schema's defaults (SEP-1034).
    client.onElicitation = async (params) => {
      elicitations.push(params);
      log("elicitation", params);
      return { action: "accept", content: {} };
    };
    return { version: mcp.version };
  }),
  /** connect(): a page load; with interactive: true it may need a gesture. */
  connect: () => step("connect", () => client.connect().then(() => ({
    serverInfo: client.serverInfo, protocolVersion: client.protocolVersion,
  }))),
  /** authorize(): call in a user gesture (the "Sign in" click). */
  authorize: () => step("authorize", () => client.authorize().then(() => ({ state: client.state }))),
  listTools: () => step("listTools", async () => {
    const tools = await client.listTools();
    listed = Array.isArray(tools) ? tools : tools?.tools ?? [];
    return { names: listed.map((t) => t.name) };
  }),
  callTool: (name, args) => step(`callTool ${name}`, () => client.callTool(name, args ?? {}, { timeoutMs: 20000 })),
  /** One step of devkit/confsteps: { op, name, args, schemaOf, fails }. */
  do: (s) => {
    switch (s.op) {
      case "listTools":
        return window.harness.listTools();
      case "callTool":
        if (s.schemaOf) {
          // Pass the listed tool's inputSchema through exactly as received.
          const tool = listed.find((t) => t.name === s.schemaOf);
          return step(`callTool ${s.name}`, () => {
            if (!tool) throw new Error(`tool ${s.schemaOf} was not listed`);
            return client.callTool(s.name, { schema: tool.inputSchema }, { timeoutMs: 20000 });
          });
        }
        return window.harness.callTool(s.name, s.args);
      case "listResources":
        return step("listResources", () => client.listResources());
      case "readResource":
        return step(`readResource ${s.name}`, () => client.readResource(s.name));
      case "listPrompts":
        return step("listPrompts", () => client.listPrompts());
      case "getPrompt":
        return step(`getPrompt ${s.name}`, () => client.getPrompt(s.name, s.args ?? {}));
      case "listSkills":
        return step("listSkills", async () => (await client.skills()).map((k) => k.uri));
      case "loadSkill":
        return step(`loadSkill ${s.name}`, async () => (await client.loadSkill(s.name)).uri);
      case "readSkillFile":
        return step(`readSkillFile ${s.name} ${s.args?.file}`, () => client.readSkillFile(s.name, s.args?.file));
      default:
        return step(s.op, () => { throw new Error(`unknown step ${s.op}`); });
    }
  },
  close: () => step("close", () => client?.close()),
  elicitations: () => elicitations,
  state: () => client?.state ?? "",
};
window.harnessReady = true;
log("ready");
