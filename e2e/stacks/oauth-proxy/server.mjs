// An OAuth proxy in front of an upstream provider without dynamic client
// registration: the production pattern of the TypeScript SDK's
// ProxyOAuthServerProvider, one Node process on two ports.
//
// The upstream (UPSTREAM_PORT) is panva's oidc-provider as a provider
// people put behind such a proxy is configured:
//
//   - dynamic client registration off: the one client is CLIENT_ID, static,
//     public (token_endpoint_auth_method "none"), with the redirect URI
//     PAGE_ORIGIN/oauth/callback.html and the grants authorization_code and
//     refresh_token; oidc-provider requires PKCE (S256) of public clients;
//   - resource indicators (RFC 8707): the one resource is the MCP URL, whose
//     access tokens are JWTs (typ at+jwt, ES256) with that audience, the
//     scope "mcp" and ACCESS_TOKEN_TTL;
//   - refresh tokens for public web clients doing the code flow (the
//     issueRefreshToken example of oidc-provider's documentation: the proxy
//     forwards no prompt, so offline_access could not survive);
//   - revocation; DPoP off;
//   - its own login form (#username, #password, #login; the only account is
//     USERNAME/PASSWORD) and consent form (#approve, #deny).
//
// The proxy and MCP server (PORT) is one Express app as the SDK documents
// it: mcpAuthRouter with a ProxyOAuthServerProvider (authorize, token and
// revocation forwarded upstream; no registrationUrl, so no registration
// endpoint; getClient answers the upstream client's information for
// CLIENT_ID) beside the Streamable HTTP endpoint /mcp behind
// requireBearerAuth, whose verifier is the proxy provider: its
// verifyAccessToken checks the upstream's JWT access tokens with the
// upstream's JWKS (issuer, typ at+jwt, audience the MCP URL). The router
// serves the authorization server metadata (issuer: this proxy) and the
// protected resource metadata of /mcp. Tool: add(a, b).
//
// Environment: PORT, UPSTREAM_PORT, PAGE_ORIGIN, CLIENT_ID (required);
// ACCESS_TOKEN_TTL seconds (default 60); USERNAME, PASSWORD (default
// alice / wonderland).
// It prints "oauth-proxy listening <MCP URL>" on stdout when both ports
// accept requests, "oauth-proxy saw <METHOD> <path>" for each request to
// the proxy other than /mcp, and "upstream saw <METHOD> <path>" for each
// request to the upstream; /mcp requests go to stderr (method, path,
// status, JSON-RPC methods). Never a query string or a token.
import http from "node:http";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import express from "express";
import cors from "cors";
import * as jose from "jose";
import { z } from "zod";
import Provider, { errors } from "oidc-provider";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { ProxyOAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/providers/proxyProvider.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`oauth-proxy stack: set ${name}`);
  return v;
};
const port = Number(env("PORT"));
const upstreamPort = Number(env("UPSTREAM_PORT"));
const pageOrigin = env("PAGE_ORIGIN");
const clientId = env("CLIENT_ID");
const accessTokenTTL = Number(env("ACCESS_TOKEN_TTL", "60"));
const username = env("USERNAME", "alice");
const password = env("PASSWORD", "wonderland");

const origin = `http://127.0.0.1:${port}`;
const mcpURL = `${origin}/mcp`;
const upstreamIssuer = `http://127.0.0.1:${upstreamPort}`;
const redirectURI = `${pageOrigin}/oauth/callback.html`;
const scope = "mcp";

// ---- The upstream provider ------------------------------------------------

// Fresh signing keys for each run: RS256 for ID tokens (the OIDC default),
// ES256 for the access tokens.
const jwk = (type, opts, alg, kid) => ({
  ...generateKeyPairSync(type, opts).privateKey.export({ format: "jwk" }),
  alg,
  kid,
  use: "sig",
});

const upstream = new Provider(upstreamIssuer, {
  clients: [
    {
      client_id: clientId,
      client_name: "mcpwasm e2e page",
      token_endpoint_auth_method: "none",
      redirect_uris: [redirectURI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    },
  ],
  jwks: {
    keys: [
      jwk("rsa", { modulusLength: 2048 }, "RS256", "rs256"),
      jwk("ec", { namedCurve: "P-256" }, "ES256", "es256"),
    ],
  },
  cookies: { keys: [randomBytes(32).toString("base64url")] },
  findAccount: async (_ctx, sub) => (sub === username ? { accountId: sub, claims: async () => ({ sub }) } : undefined),
  features: {
    devInteractions: { enabled: false },
    dPoP: { enabled: false },
    registration: { enabled: false },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator !== mcpURL) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope,
          audience: mcpURL,
          accessTokenTTL,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        };
      },
    },
  },
  // oidc-provider's documented example "to always issue a refresh token".
  issueRefreshToken: async (_ctx, client, code) => {
    if (!client.grantTypeAllowed("refresh_token")) return false;
    return code.scopes.has("offline_access") || (client.applicationType === "web" && client.tokenEndpointAuthMethod === "none");
  },
  ttl: { AccessToken: accessTokenTTL },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});
upstream.on("server_error", (_ctx, err) => console.error("upstream server_error", err));

const page = (title, body) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginForm(uid, error) {
  return page(
    "Sign in",
    `${error ? `<p id="error">${esc(error)}</p>` : ""}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>User <input id="username" name="username" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="login" type="submit">Sign in</button>
</form>`,
  );
}

function consentForm(uid, clientName, details) {
  const scopes = [...(details.missingOIDCScope ?? []), ...Object.values(details.missingResourceScopes ?? {}).flat()];
  return page(
    "Authorize",
    `<p><span id="client">${esc(clientName)}</span> asks for: <span id="scopes">${esc(scopes.join(" "))}</span></p>
<form method="post" action="/interaction/${esc(uid)}/consent">
<button id="approve" name="decision" value="approve" type="submit">Allow</button>
<button id="deny" name="decision" value="deny" type="submit">Deny</button>
</form>`,
  );
}

async function formBody(req) {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 10000) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

async function interaction(req, res, uid, action) {
  const details = await upstream.interactionDetails(req, res);
  if (details.uid !== uid) throw new errors.InvalidRequest("interaction mismatch");
  const { prompt, params, session, grantId } = details;
  const html = (s) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(s);
  };
  if (req.method === "GET" && !action) {
    if (prompt.name === "login") return html(loginForm(uid));
    const client = await upstream.Client.find(params.client_id);
    return html(consentForm(uid, client?.clientName ?? params.client_id, prompt.details));
  }
  if (req.method !== "POST") throw new errors.InvalidRequest("unexpected interaction request");
  const form = await formBody(req);
  if (action === "login" && prompt.name === "login") {
    if (form.get("username") !== username || form.get("password") !== password) {
      return html(loginForm(uid, "Wrong user name or password."));
    }
    return upstream.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
  }
  if (action === "consent" && prompt.name === "consent") {
    if (form.get("decision") !== "approve") {
      return upstream.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The user denied the request." },
        { mergeWithLastSubmission: false },
      );
    }
    const grant = grantId
      ? await upstream.Grant.find(grantId)
      : new upstream.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(" "));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    return upstream.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }
  throw new errors.InvalidRequest(`unexpected ${action} step for the ${prompt.name} prompt`);
}

const upstreamCallback = upstream.callback();
const upstreamServer = http.createServer(async (req, res) => {
  const path = new URL(req.url, upstreamIssuer).pathname;
  console.log(`upstream saw ${req.method} ${path}`);
  const m = path.match(/^\/interaction\/([\w-]+)(?:\/(login|consent))?$/);
  if (!m) return upstreamCallback(req, res);
  try {
    await interaction(req, res, m[1], m[2]);
  } catch (err) {
    console.error("upstream interaction error:", err.message);
    if (!res.headersSent) {
      res.writeHead(400, { "content-type": "text/plain; charset=utf-8" });
      res.end(`interaction failed: ${err.message}`);
    }
  }
});

// ---- The proxy and MCP server ---------------------------------------------

const upstreamJWKS = jose.createRemoteJWKSet(new URL(`${upstreamIssuer}/jwks`));

const proxyProvider = new ProxyOAuthServerProvider({
  endpoints: {
    authorizationUrl: `${upstreamIssuer}/auth`,
    tokenUrl: `${upstreamIssuer}/token`,
    revocationUrl: `${upstreamIssuer}/token/revocation`,
  },
  verifyAccessToken: async (token) => {
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(token, upstreamJWKS, { issuer: upstreamIssuer, typ: "at+jwt", audience: mcpURL }));
    } catch (e) {
      throw new InvalidTokenError(`access token rejected: ${e.code ?? e.message}`);
    }
    return {
      token,
      clientId: String(payload.client_id ?? ""),
      scopes: typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [],
      expiresAt: payload.exp,
      resource: new URL(mcpURL),
    };
  },
  getClient: async (id) =>
    id === clientId
      ? {
          client_id: clientId,
          client_name: "mcpwasm e2e page",
          token_endpoint_auth_method: "none",
          redirect_uris: [redirectURI],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
        }
      : undefined,
});

function newServer() {
  const server = new McpServer({ name: "mcpwasm-stack-oauth-proxy", version: "1.0.0" });
  server.registerTool(
    "add",
    {
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  return server;
}

const app = express();
app.use((req, res, next) => {
  if (req.path !== "/mcp") {
    console.log(`oauth-proxy saw ${req.method} ${req.path}`);
    return next();
  }
  res.on("finish", () => {
    const rpc = [req.body ?? []].flat().map((m) => m?.method ?? (m?.id !== undefined ? "response" : "?"));
    console.error(`oauth-proxy ${req.method} ${req.path} ${res.statusCode} ${rpc.join(",")}`.trimEnd());
  });
  next();
});
// The authorization server: metadata (RFC 8414) and protected resource
// metadata (RFC 9728) for /mcp, /authorize, /token and /revoke. The SDK's
// handlers answer CORS themselves on the metadata, token and revocation
// endpoints (any origin).
app.use(
  mcpAuthRouter({
    provider: proxyProvider,
    issuerUrl: new URL(origin),
    baseUrl: new URL(origin),
    resourceServerUrl: new URL(mcpURL),
    scopesSupported: [scope],
    resourceName: "mcpwasm e2e oauth-proxy stack",
  }),
);

const bearer = requireBearerAuth({
  verifier: proxyProvider,
  requiredScopes: [scope],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(mcpURL)),
});
const mcpCORS = cors({
  origin: pageOrigin,
  methods: ["GET", "POST", "DELETE"],
  allowedHeaders: ["Content-Type", "Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"],
  exposedHeaders: ["Mcp-Session-Id", "WWW-Authenticate"],
});
app.options("/mcp", mcpCORS);

const transports = new Map();
app.post("/mcp", mcpCORS, express.json(), bearer, async (req, res) => {
  const sid = req.headers["mcp-session-id"];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (sid || !isInitializeRequest(req.body)) {
      res.status(sid ? 404 : 400).json({ jsonrpc: "2.0", error: { code: -32000, message: sid ? "unknown session" : "initialize first" }, id: null });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});
const bySession = async (req, res) => {
  const transport = transports.get(req.headers["mcp-session-id"]);
  if (!transport) {
    res.status(404).json({ jsonrpc: "2.0", error: { code: -32000, message: "unknown session" }, id: null });
    return;
  }
  await transport.handleRequest(req, res);
};
app.get("/mcp", mcpCORS, bearer, bySession);
app.delete("/mcp", mcpCORS, bearer, bySession);

const listen = (server, p) =>
  new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(p, "127.0.0.1", resolve);
  });
await listen(upstreamServer, upstreamPort);
await listen(http.createServer(app), port);
console.log(`oauth-proxy listening ${mcpURL}`);
