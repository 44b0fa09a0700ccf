// The tools both workers serve, registered on an SDK McpServer (v1's or
// v2's: registerTool has one shape in both), with zod schemas.
import * as z from "zod/v4";

/** The scope the step-up tool needs beyond the basic "mcp". */
export const ADMIN_SCOPE = "admin";
/** The tool that needs ADMIN_SCOPE (see stepUp). */
export const ADMIN_TOOL = "admin_add";

export function registerTools(server) {
  const add = async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
    structuredContent: { sum: a + b },
  });
  const schema = {
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    outputSchema: z.object({ sum: z.number() }),
  };
  server.registerTool("add", { description: "Adds two numbers", ...schema }, add);
  server.registerTool(ADMIN_TOOL, { description: `Adds two numbers; needs the ${ADMIN_SCOPE} scope`, ...schema }, add);
}

// stepUp wraps an MCP handler: a tools/call of ADMIN_TOOL with a token
// without ADMIN_SCOPE is answered 403 insufficient_scope (the provider's
// insufficientScope challenge), which is how a client is asked to step up.
export function stepUp(handler, insufficientScope) {
  return {
    async fetch(request, env, ctx) {
      if (request.method === "POST" && !ctx.auth.scope.includes(ADMIN_SCOPE)) {
        const msg = await request.clone().json().catch(() => null);
        const msgs = Array.isArray(msg) ? msg : [msg];
        if (msgs.some((m) => m?.method === "tools/call" && m.params?.name === ADMIN_TOOL)) {
          return insufficientScope(ctx.auth, ["mcp", ADMIN_SCOPE]);
        }
      }
      return handler.fetch(request, env, ctx);
    },
  };
}

// providerOptions are the OAuthProvider options both workers share, for
// the worker's origin (the provider wants the resource named, and the port
// is the one the tests chose); the access token lifetime comes from the
// ACCESS_TOKEN_TTL variable (seconds), so the tests can make it short enough
// to see a refresh.
export function providerOptions(env, apiHandler, origin) {
  return {
    resourceMetadata: { resource: `${origin}/mcp`, resource_name: "mcpwasm e2e stack" },
    requiredScopes: ["mcp"],
    apiRoute: "/mcp",
    apiHandler,
    authorizeEndpoint: "/authorize",
    tokenEndpoint: "/token",
    clientRegistrationEndpoint: "/register",
    scopesSupported: ["mcp", ADMIN_SCOPE],
    accessTokenTTL: Number(env.ACCESS_TOKEN_TTL || 3600),
  };
}
