// panva's oidc-provider as the authorization server of an e2e stack
// (e2e/xengine/stack_oidc_test.go), configured as an MCP deployment would be:
//
//   - dynamic client registration, open (no initial access token), for
//     public clients (token_endpoint_auth_method "none") with PKCE S256,
//     which oidc-provider requires of every public client;
//   - resource indicators (RFC 8707): the one resource it knows is
//     RESOURCE (the MCP server), whose access tokens are JWTs (typ at+jwt)
//     with that audience, the scopes "mcp admin" and ACCESS_TOKEN_TTL;
//   - a refresh token for every client registered with the refresh_token
//     grant (oidc-provider's default also wants offline_access, which it
//     drops from any request without prompt=consent);
//   - revocation; DPoP is off, since the MCP server in front accepts Bearer
//     tokens only;
//   - CORS for PAGE_ORIGIN on the token, revocation and registration
//     endpoints (oidc-provider serves none on registration, so this server
//     adds it there);
//   - its own login and consent interactions: a login form (#username,
//     #password, #login; the only account is USERNAME/PASSWORD) and a
//     consent form with #approve and #deny.
//
// Environment: PORT, PAGE_ORIGIN, RESOURCE (required); ACCESS_TOKEN_TTL
// seconds (default 10); USERNAME, PASSWORD (default alice / wonderland).
// It prints "oidc-provider listening <issuer>" on stdout when it accepts
// requests, and "oidc-provider saw <METHOD> <path>" for each request.
import http from "node:http";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import Provider, { errors } from "oidc-provider";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`oidc-provider stack: set ${name}`);
  return v;
};
const port = Number(env("PORT"));
const pageOrigin = env("PAGE_ORIGIN");
const resource = env("RESOURCE");
const accessTokenTTL = Number(env("ACCESS_TOKEN_TTL", "10"));
const username = env("USERNAME", "alice");
const password = env("PASSWORD", "wonderland");
const issuer = `http://127.0.0.1:${port}`;

// Fresh signing keys for each run: RS256 for ID tokens (the OIDC default),
// ES256 for the access tokens.
const jwk = (type, opts, alg, kid) => ({
  ...generateKeyPairSync(type, opts).privateKey.export({ format: "jwk" }),
  alg,
  kid,
  use: "sig",
});

const provider = new Provider(issuer, {
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
    registration: { enabled: true, initialAccessToken: false },
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: "mcp admin",
          audience: resource,
          accessTokenTTL,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        };
      },
    },
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  clientBasedCORS: (_ctx, origin) => origin === pageOrigin,
  ttl: { AccessToken: accessTokenTTL },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});
provider.on("server_error", (_ctx, err) => console.error("oidc-provider server_error", err));

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
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new errors.InvalidRequest("interaction mismatch");
  const { prompt, params, session, grantId } = details;
  const html = (s) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(s);
  };
  if (req.method === "GET" && !action) {
    if (prompt.name === "login") return html(loginForm(uid));
    const client = await provider.Client.find(params.client_id);
    return html(consentForm(uid, client?.clientName ?? params.client_id, prompt.details));
  }
  if (req.method !== "POST") throw new errors.InvalidRequest("unexpected interaction request");
  const form = await formBody(req);
  if (action === "login" && prompt.name === "login") {
    if (form.get("username") !== username || form.get("password") !== password) {
      return html(loginForm(uid, "Wrong user name or password."));
    }
    return provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
  }
  if (action === "consent" && prompt.name === "consent") {
    if (form.get("decision") !== "approve") {
      return provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The user denied the request." },
        { mergeWithLastSubmission: false },
      );
    }
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(" "));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }
  throw new errors.InvalidRequest(`unexpected ${action} step for the ${prompt.name} prompt`);
}

const callback = provider.callback();
http
  .createServer(async (req, res) => {
    const path = new URL(req.url, issuer).pathname;
    console.log(`oidc-provider saw ${req.method} ${path}`);
    // oidc-provider answers no CORS on registration; a page registers
    // itself there, so this server does for the page's origin.
    if (path === "/reg" && req.headers.origin === pageOrigin) {
      res.setHeader("access-control-allow-origin", pageOrigin);
      res.setHeader("vary", "origin");
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": "content-type",
          "access-control-max-age": "600",
        });
        return res.end();
      }
    }
    const m = path.match(/^\/interaction\/([\w-]+)(?:\/(login|consent))?$/);
    if (!m) return callback(req, res);
    try {
      await interaction(req, res, m[1], m[2]);
    } catch (err) {
      console.error("oidc-provider interaction error:", err.message);
      if (!res.headersSent) {
        res.writeHead(400, { "content-type": "text/plain; charset=utf-8" });
        res.end(`interaction failed: ${err.message}`);
      }
    }
  })
  .listen(port, "127.0.0.1", () => console.log(`oidc-provider listening ${issuer}`));
