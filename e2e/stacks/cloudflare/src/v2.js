// The SDK 2.x worker: @cloudflare/workers-oauth-provider in front of the
// agents package's createMcpHandler with an @modelcontextprotocol/server
// 2.x McpServer factory (stateless, a server per request) at /mcp.
import { OAuthProvider, insufficientScope } from "@cloudflare/workers-oauth-provider";
import { createMcpHandler } from "agents/mcp";
import { McpServer } from "@modelcontextprotocol/server";
import { consentHandler } from "./consent.js";
import { providerOptions, registerTools, stepUp } from "./tools.js";

const mcp = createMcpHandler(() => {
  const server = new McpServer({ name: "cloudflare-v2", version: "2.0.0" });
  registerTools(server);
  return server;
});

const api = stepUp({ fetch: mcp }, insufficientScope);

let provider;

export default {
  fetch(request, env, ctx) {
    provider ??= new OAuthProvider({ ...providerOptions(env, api, new URL(request.url).origin), defaultHandler: consentHandler });
    return provider.fetch(request, env, ctx);
  },
};
