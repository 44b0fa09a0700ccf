// Better Auth with its MCP plugin as one app (authorization server and MCP
// endpoint) for the e2e stacks, set up as Better Auth's docs show it:
//
//   - "MCP" plugin page: jwt() beside mcp({ loginPage, consentPage,
//     resource }), the "Optional DCR fallback" (allowDynamicClientRegistration
//     and allowUnauthenticatedClientRegistration), and the MCP route made with
//     @modelcontextprotocol/server's createMcpHandler (legacy: "reject") behind
//     requireMcpAuth, POST only; requiredScopes ["mcp"], and admin_add throws
//     createInsufficientScopeError(["admin"]) from the handler ("when the
//     required scopes depend on the request");
//   - "OAuth 2.1 Provider" plugin page: disabledPaths ["/token"], scopes,
//     accessTokenExpiresIn, custom login and consent pages that send the
//     page's signed query as oauth_query ("Redirect Screens");
//   - "Hono Integration" page: auth.handler on /api/auth/*, Hono's cors()
//     with credentials for the page origin, which is also in trustedOrigins;
//     the issuer metadata and protected-resource well-known URLs at the root
//     reach auth.handler too ("Confirm /.well-known endpoints").
// The database is Better Auth's in-memory adapter (better-auth/adapters/memory),
// with the tables Better Auth itself creates when no database is given.
//
// Environment: PORT (required; both the auth server and /mcp on 127.0.0.1),
// PAGE_ORIGIN (required; the browser page allowed by CORS and trustedOrigins),
// USERNAME, PASSWORD (default alice / wonderland; the one email/password
// account, email USERNAME, or USERNAME@example.com when it has no "@"),
// ACCESS_TOKEN_TTL seconds (default 3600, Better Auth's default).
// It prints "better-auth listening <origin>" on stdout once it accepts
// requests, "better-auth saw <METHOD> <path>" for each request but the MCP
// endpoint's, and "better-auth mcp <METHOD> <path> <status>" for those.
import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { serve } from "@hono/node-server";
import { betterAuth } from "better-auth";
import { jwt } from "better-auth/plugins";
import { memoryAdapter } from "better-auth/adapters/memory";
import { createInsufficientScopeError } from "better-auth/oauth2";
import { getAuthTables } from "@better-auth/core/db";
import { mcp, requireMcpAuth } from "@better-auth/mcp";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`better-auth stack: set ${name}`);
  return v;
};
const port = Number(env("PORT"));
const pageOrigin = env("PAGE_ORIGIN");
const username = env("USERNAME", "alice");
const password = env("PASSWORD", "wonderland");
const accessTokenTTL = Number(env("ACCESS_TOKEN_TTL", "3600"));
const email = username.includes("@") ? username : `${username}@example.com`;

const origin = `http://127.0.0.1:${port}`;
const resource = `${origin}/mcp`;

const options = {
  baseURL: origin,
  secret: randomBytes(32).toString("base64url"),
  trustedOrigins: [pageOrigin],
  disabledPaths: ["/token"],
  emailAndPassword: { enabled: true },
  plugins: [
    jwt(),
    mcp({
      loginPage: "/sign-in",
      consentPage: "/consent",
      resource,
      scopes: ["openid", "profile", "email", "offline_access", "mcp", "admin"],
      accessTokenExpiresIn: accessTokenTTL,
      allowDynamicClientRegistration: true,
      allowUnauthenticatedClientRegistration: true,
    }),
  ],
};
// The in-memory database starts with every table of this configuration, as
// Better Auth builds it when no database is given.
const db = Object.fromEntries(Object.values(getAuthTables(options)).map((t) => [t.modelName, []]));
const auth = betterAuth({ ...options, database: memoryAdapter(db) });

await auth.api.signUpEmail({ body: { email, password, name: username } });

const mcpHandler = createMcpHandler(
  () => {
    const server = new McpServer({ name: "mcpwasm-stack-better-auth", version: "1.0.0" });
    server.registerTool(
      "add",
      {
        description: "Adds two numbers.",
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ sum: z.number() }),
      },
      async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
    );
    server.registerTool(
      "admin_add",
      {
        description: "Adds two numbers; needs the scope admin.",
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ sum: z.number() }),
      },
      async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
    );
    return server;
  },
  { legacy: "reject" },
);

const scopesOf = (claims) => (typeof claims.scope === "string" ? [...new Set(claims.scope.split(" ").filter(Boolean))] : []);

async function callsAdminTool(request) {
  let body;
  try {
    body = await request.clone().json();
  } catch {
    return false;
  }
  return [body].flat().some((m) => m?.method === "tools/call" && m?.params?.name === "admin_add");
}

const mcpPost = requireMcpAuth(
  auth,
  async (request, accessTokenClaims) => {
    const scopes = scopesOf(accessTokenClaims);
    if ((await callsAdminTool(request)) && !scopes.includes("admin")) {
      throw createInsufficientScopeError(["admin"]);
    }
    const authInfo = {
      token: request.headers.get("authorization")?.replace(/^\S+\s+/, "") ?? "",
      clientId: String(accessTokenClaims.client_id ?? accessTokenClaims.azp ?? ""),
      scopes,
      expiresAt: accessTokenClaims.exp,
      resource: new URL(resource),
      extra: { accessTokenClaims },
    };
    return mcpHandler.fetch(request, { authInfo });
  },
  { resource, requiredScopes: ["mcp"] },
);

const page = (title, body, script) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}<script>${script}</script></body></html>`;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The signed part of this page's query, sent as oauth_query as the docs ask
// of custom pages (what oauthProviderClient's buildSignedOAuthQuery does).
const signedQueryScript = `
function oauthQuery() {
  const params = new URLSearchParams(location.search);
  if (!params.has("sig")) return undefined;
  const names = new Set(params.getAll("ba_param"));
  const out = new URLSearchParams();
  for (const [k, v] of params) if (k === "sig" || k === "ba_param" || names.has(k)) out.append(k, v);
  return out.toString();
}
async function post(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, oauth_query: oauthQuery() }),
  });
  const json = await res.json().catch(() => ({}));
  const to = json.url ?? json.redirect_uri;
  if (res.ok && to) { location.href = to; return; }
  document.getElementById("error").textContent = json.message ?? json.error_description ?? json.error ?? ("HTTP " + res.status);
}`;

const loginPage = () =>
  page(
    "Sign in",
    `<p id="error"></p>
<form id="form">
<label>User <input id="username" name="username" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="login" type="submit">Sign in</button>
</form>`,
    `${signedQueryScript}
document.getElementById("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const u = document.getElementById("username").value;
  post("/api/auth/sign-in/email", {
    email: u.includes("@") ? u : u + "@example.com",
    password: document.getElementById("password").value,
  });
});`,
  );

const consentPage = (clientId, scope) =>
  page(
    "Authorize",
    `<p id="error"></p>
<p><span id="client">${esc(clientId)}</span> asks for: <span id="scopes">${esc(scope)}</span></p>
<button id="approve" type="button">Allow</button>
<button id="deny" type="button">Deny</button>`,
    `${signedQueryScript}
document.getElementById("approve").addEventListener("click", () => post("/api/auth/oauth2/consent", { accept: true }));
document.getElementById("deny").addEventListener("click", () => post("/api/auth/oauth2/consent", { accept: false }));`,
  );

const app = new Hono();
app.use("*", async (c, next) => {
  const path = new URL(c.req.url).pathname;
  if (path !== "/mcp") console.log(`better-auth saw ${c.req.method} ${path}`);
  await next();
  if (path === "/mcp") console.log(`better-auth mcp ${c.req.method} ${path} ${c.res.status}`);
});
const authCors = cors({ origin: pageOrigin, credentials: true });
app.use("/api/auth/*", authCors);
app.use("/.well-known/*", authCors);
app.use(
  "/mcp",
  cors({
    origin: pageOrigin,
    allowMethods: ["POST"],
    allowHeaders: ["Content-Type", "Authorization", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "DPoP", "Last-Event-ID"],
    exposeHeaders: ["WWW-Authenticate"],
  }),
);
app.all("/api/auth/*", (c) => auth.handler(c.req.raw));
app.get("/.well-known/*", (c) => auth.handler(c.req.raw));
app.get("/sign-in", (c) => c.html(loginPage()));
app.get("/consent", (c) => c.html(consentPage(c.req.query("client_id") ?? "", c.req.query("scope") ?? "")));
app.post("/mcp", (c) => mcpPost(c.req.raw));
app.on(["GET", "DELETE"], "/mcp", (c) => c.body(null, 405, { Allow: "POST" }));

serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => console.log(`better-auth listening ${origin}`));
