// The consent page both workers serve as the OAuthProvider's defaultHandler:
// a fixed test user, one Approve button (#approve) and a Deny button (#deny).
// GET /authorize shows it; the form posts the authorization request's query
// back, and POST /authorize parses it again (the provider checks the client
// and its redirect URI each time) and either completes the authorization or
// returns access_denied to the client.

const USER = "test-user";

function escape(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(client, scopes, query) {
  return `<!doctype html><meta charset="utf-8"><title>Sign in</title>
<h1>Sign in as ${USER}</h1>
<p>${escape(client)} asks for: ${escape(scopes.join(" ") || "(no scope)")}</p>
<form method="post" action="/authorize">
<input type="hidden" name="q" value="${escape(query)}">
<button id="approve" name="decision" value="approve">Approve</button>
<button id="deny" name="decision" value="deny">Deny</button>
</form>`;
}

function html(body, status = 200) {
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'", // no form-action: the form's answer redirects to the client
      "cache-control": "no-store",
    },
  });
}

/** The default handler: the consent page and a health check. */
export const consentHandler = {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname !== "/authorize") return new Response("not found", { status: 404 });
    let query = url.search.slice(1);
    let decision = "";
    if (request.method === "POST") {
      const form = await request.formData();
      query = String(form.get("q") ?? "");
      decision = String(form.get("decision") ?? "");
    }
    const authURL = new URL(request.url);
    authURL.search = query;
    let req;
    try {
      req = await env.OAUTH_PROVIDER.parseAuthRequest(new Request(authURL));
    } catch (e) {
      return html(`<p>Invalid authorization request: ${escape(e.message)}</p>`, 400);
    }
    const client = await env.OAUTH_PROVIDER.lookupClient(req.clientId);
    if (!client) return html("<p>Unknown client</p>", 400);
    if (request.method !== "POST") return html(page(client.clientName || req.clientId, req.scope, query));
    if (decision !== "approve") {
      const to = new URL(req.redirectUri);
      to.searchParams.set("error", "access_denied");
      if (req.state) to.searchParams.set("state", req.state);
      to.searchParams.set("iss", url.origin);
      return Response.redirect(to.toString(), 302);
    }
    const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
      request: req,
      userId: USER,
      metadata: {},
      scope: req.scope,
      props: { user: USER },
    });
    return Response.redirect(redirectTo, 302);
  },
};
