// The TypeScript SDK v2 server (@modelcontextprotocol/server, pinned in
// package.json), protocol 2026-07-28, on 127.0.0.1 and a free port, over
// Streamable HTTP at /mcp (createMcpHandler: stateless, no sessions; it
// also answers 2025-era clients). Prints "LISTENING <port>"; GET /stats
// serves the counters of interop-common.mjs.
//
//   node interop-v2.mjs [--strict-notifications]
//
// --strict-notifications answers a POST of a notification the way the
// Python SDK v2 does on protocol 2026-07-28, which has no client
// notifications over Streamable HTTP: 400 with a body that is not a
// JSON-RPC message.
import { createServer } from "node:http";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { cors, readJSON, register, registerReadables, stats } from "./interop-common.mjs";

function build() {
  const server = new McpServer({ name: "interop-v2", version: "2.4.0" }, { capabilities: { logging: {} } });
  register(
    server,
    z,
    (shape) => z.object(shape),
    (ctx) => ctx.mcpReq._meta?.progressToken,
    (ctx, n) => ctx.mcpReq.notify(n),
  );
  registerReadables(server, z, (shape) => z.object(shape), ResourceTemplate);
  return server;
}

const handler = toNodeHandler(createMcpHandler(() => build()));

const strict = process.argv.includes("--strict-notifications");

const srv = createServer(async (req, res) => {
  if (cors(req, res)) return;
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(stats));
  }
  if (url.pathname !== "/mcp") {
    res.writeHead(404);
    return res.end();
  }
  if (req.method !== "POST") return handler(req, res);
  const body = await readJSON(req);
  if (body?.method === "notifications/cancelled") stats.cancelled++;
  if (strict && body && body.id === undefined && body.method) {
    res.writeHead(400, { "content-type": "application/json" });
    return res.end(JSON.stringify({ code: -32600, message: "Body must be a single JSON-RPC request object" }));
  }
  return handler(req, res, body);
});
srv.listen(0, "127.0.0.1", () => console.log(`LISTENING ${srv.address().port}`));
