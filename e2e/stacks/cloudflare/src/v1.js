// The SDK 1.x worker: @cloudflare/workers-oauth-provider in front of an
// agents McpAgent (a Durable Object per session) serving an
// @modelcontextprotocol/sdk 1.x McpServer over Streamable HTTP at /mcp.
import { OAuthProvider, insufficientScope } from "@cloudflare/workers-oauth-provider";
import { McpAgent } from "agents/mcp";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { consentHandler } from "./consent.js";
import { providerOptions, registerTools, stepUp } from "./tools.js";

export class AddMCP extends McpAgent {
  server = new McpServer({ name: "cloudflare-mcpagent", version: "1.0.0" });
  async init() {
    registerTools(this.server);
  }
}

const api = stepUp(AddMCP.serve("/mcp"), insufficientScope);

let provider;

export default {
  fetch(request, env, ctx) {
    provider ??= new OAuthProvider({ ...providerOptions(env, api, new URL(request.url).origin), defaultHandler: consentHandler });
    return provider.fetch(request, env, ctx);
  },
};
