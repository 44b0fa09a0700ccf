// The MCP server in front of an e2e authorization stack (e2e/xengine/stack_oidc_test.go).
//
// The TypeScript SDK's Streamable HTTP server (stateful sessions) behind the
// SDK's requireBearerAuth middleware, as a resource server people deploy
// would be: a request without a valid token is answered 401 with
// `WWW-Authenticate: Bearer ..., resource_metadata="..."`, and the RFC 9728
// protected-resource metadata names the stack's authorization server.
// Tools: add(a, b), and admin_add, which needs the scope STEPUP_SCOPE: a
// call without it is answered 403 insufficient_scope naming the scopes to
// ask for (the MCP step-up).
//
// Environment:
//   PORT            port on 127.0.0.1 (required)
//   PAGE_ORIGIN     the browser page's origin, allowed by CORS (required)
//   ISSUER          the authorization server's issuer (required)
//   TOKEN_CHECK     "jwt": verify JWT access tokens with JWKS_URL (issuer,
//                   typ at+jwt, audience = this server's MCP URL);
//                   "introspect": RFC 7662 at INTROSPECTION_URL (with
//                   INTROSPECTION_AUTH as its Authorization header when set)
//   CHECK_AUDIENCE  "0" to accept tokens without this server as audience
//                   (for an AS that does not implement RFC 8707); default on
//   SCOPE           scope every request needs (default "mcp")
//   STEPUP_SCOPE    scope admin_add needs besides SCOPE (default "admin")
//   METADATA        "0" to publish no protected-resource metadata and name
//                   none in challenges, as some gateways do (a client is
//                   then given the authorization server by hand); default on
//
// It prints "mcp-front listening <url>" on stdout once it accepts requests,
// and one line per request on stderr (method, path, status, JSON-RPC
// methods; never a token).
import express from "express";
import cors from "cors";
import { randomUUID } from "node:crypto";
import * as jose from "jose";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`mcp-front: set ${name}`);
  return v;
};
const port = Number(env("PORT"));
const pageOrigin = env("PAGE_ORIGIN");
const issuer = env("ISSUER");
const check = env("TOKEN_CHECK", "jwt");
const checkAudience = env("CHECK_AUDIENCE", "1") !== "0";
const scope = env("SCOPE", "mcp");
const stepUpScope = env("STEPUP_SCOPE", "admin");
const metadata = env("METADATA", "1") !== "0";

const origin = `http://127.0.0.1:${port}`;
const mcpURL = `${origin}/mcp`;
const prmPath = "/.well-known/oauth-protected-resource/mcp";
const prmURL = metadata ? origin + prmPath : undefined;

const scopesOf = (s) => (typeof s === "string" ? s.split(" ").filter(Boolean) : []);
const audienceOf = (aud) => (Array.isArray(aud) ? aud : aud ? [aud] : []);

let verifyAccessToken;
if (check === "jwt") {
  const jwks = jose.createRemoteJWKSet(new URL(env("JWKS_URL")));
  verifyAccessToken = async (token) => {
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(token, jwks, {
        issuer,
        typ: "at+jwt",
        audience: checkAudience ? mcpURL : undefined,
      }));
    } catch (e) {
      throw new InvalidTokenError(`access token rejected: ${e.code ?? e.message}`);
    }
    return {
      token,
      clientId: String(payload.client_id ?? ""),
      scopes: scopesOf(payload.scope),
      expiresAt: payload.exp,
      resource: checkAudience ? new URL(mcpURL) : undefined,
    };
  };
} else if (check === "introspect") {
  const introspectionURL = env("INTROSPECTION_URL");
  const auth = process.env.INTROSPECTION_AUTH;
  verifyAccessToken = async (token) => {
    const res = await fetch(introspectionURL, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(auth ? { authorization: auth } : {}) },
      body: new URLSearchParams({ token }),
    });
    if (!res.ok) throw new Error(`introspection answered ${res.status}`);
    const info = await res.json();
    if (!info.active) throw new InvalidTokenError("access token is not active");
    if (checkAudience && !audienceOf(info.aud).includes(mcpURL)) {
      throw new InvalidTokenError("access token was not issued for this server");
    }
    return {
      token,
      clientId: String(info.client_id ?? ""),
      scopes: scopesOf(info.scope),
      expiresAt: info.exp,
      resource: checkAudience ? new URL(mcpURL) : undefined,
    };
  };
} else {
  throw new Error(`mcp-front: TOKEN_CHECK must be jwt or introspect, not ${check}`);
}

function newServer() {
  const server = new McpServer({ name: "mcpwasm-stack-front", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "admin_add",
    {
      description: `Adds two numbers; needs the scope ${stepUpScope}.`,
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  return server;
}

const app = express();
app.use((req, res, next) => {
  res.on("finish", () => {
    const rpc = [req.body ?? []].flat().map((m) => m?.method ?? (m?.id !== undefined ? "response" : "?"));
    console.error(`mcp-front ${req.method} ${req.path} ${res.statusCode} ${rpc.join(",")}`.trimEnd());
  });
  next();
});
// The request headers of protocol 2025-11-25, which this server speaks,
// and no more, as a deployed 2025 server allows them: a client's first
// connect must not send a 2026-07-28 header it cannot know is allowed.
app.use(
  cors({
    origin: pageOrigin,
    allowedHeaders: ["content-type", "authorization", "mcp-session-id", "mcp-protocol-version", "last-event-id"],
    exposedHeaders: ["www-authenticate", "mcp-session-id"],
  }),
);
if (metadata) app.get(prmPath, (req, res) => {
  res.json({
    resource: mcpURL,
    authorization_servers: [issuer],
    // Only the base scope: a client asks for what this lists at sign-in
    // (MCP authorization, scope selection), and stepUpScope is for the
    // step-up to ask for.
    scopes_supported: [scope],
    bearer_methods_supported: ["header"],
    resource_name: "mcpwasm e2e stack",
  });
});

const bearer = requireBearerAuth({
  verifier: { verifyAccessToken },
  requiredScopes: [scope],
  resourceMetadataUrl: prmURL,
  expectedResource: checkAudience ? new URL(mcpURL) : undefined,
});

// stepUp answers a call of admin_add without stepUpScope 403
// insufficient_scope, naming every scope the call needs.
function stepUp(req, res, next) {
  const msgs = Array.isArray(req.body) ? req.body : [req.body];
  const wantsAdmin = msgs.some((m) => m?.method === "tools/call" && m?.params?.name === "admin_add");
  if (wantsAdmin && !req.auth.scopes.includes(stepUpScope)) {
    res.set(
      "WWW-Authenticate",
      `Bearer error="insufficient_scope", scope="${scope} ${stepUpScope}"` +
        (prmURL ? `, resource_metadata="${prmURL}"` : "") +
        `, error_description="admin_add needs the scope ${stepUpScope}"`,
    );
    res.status(403).json({ error: "insufficient_scope", error_description: `admin_add needs the scope ${stepUpScope}` });
    return;
  }
  next();
}

const transports = new Map();
app.post("/mcp", express.json(), bearer, stepUp, async (req, res) => {
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
app.get("/mcp", bearer, bySession);
app.delete("/mcp", bearer, bySession);

app.listen(port, "127.0.0.1", () => console.log(`mcp-front listening ${mcpURL}`));
