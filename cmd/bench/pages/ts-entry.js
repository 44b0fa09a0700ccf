// Entry point esbuild bundles into ts-client.js: the official TypeScript SDK
// client and its Streamable HTTP transport, as a browser app would import them.
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
