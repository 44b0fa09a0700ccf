// The TypeScript SDK v1 server (@modelcontextprotocol/sdk 1.32, pinned in
// package.json; protocol 2025-11-25 and older) on 127.0.0.1 and a free
// port: stateful Streamable HTTP at /mcp (Mcp-Session-Id, DELETE) and the
// legacy HTTP+SSE transport at GET /sse + POST /messages. Prints
// "LISTENING <port>"; GET /stats serves the counters of interop-common.mjs.
//
//   node interop-v1.mjs [--python]
//
// --python answers a POST without a session the way the Python SDK 1.x
// does: 400 "Missing session ID" with a fresh Mcp-Session-Id that lives
// until a DELETE (stats.orphans).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/v4";
import { cors, readJSON, register, registerReadables, stats } from "./interop-common.mjs";

const python = process.argv.includes("--python");

function build() {
  const server = new McpServer({ name: "interop-v1", version: "1.32.2" }, { capabilities: { logging: {} } });
  register(
    server,
    z,
    (shape) => shape,
    (extra) => extra._meta?.progressToken,
    (extra, n) => extra.sendNotification(n),
  );
  registerReadables(server, z, (shape) => shape, ResourceTemplate);
  return server;
}

const sessions = new Map(); // Streamable HTTP sessions by id
const orphans = new Set(); // python mode: sessions of non-initialize POSTs
const sse = new Map(); // legacy SSE sessions by id

function json(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function count() {
  stats.sessions = sessions.size + sse.size;
  stats.orphans = orphans.size;
}

const srv = createServer(async (req, res) => {
  if (process.env.INTEROP_DEBUG) console.error(`[v1] ${req.method} ${req.url} ${req.headers["mcp-protocol-version"] ?? "-"} ${req.headers["mcp-method"] ?? ""}`);
  if (cors(req, res)) return;
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/stats") return json(res, 200, stats);
  if (url.pathname === "/sse" && req.method === "GET") {
    const t = new SSEServerTransport("/messages", res);
    sse.set(t.sessionId, t);
    count();
    res.on("close", () => {
      sse.delete(t.sessionId);
      count();
    });
    await build().connect(t);
    return;
  }
  if (url.pathname === "/messages" && req.method === "POST") {
    const t = sse.get(url.searchParams.get("sessionId"));
    if (!t) return json(res, 404, { error: "Session not found" });
    const body = await readJSON(req);
    if (body?.method === "notifications/cancelled") stats.cancelled++;
    return t.handlePostMessage(req, res, body);
  }
  if (url.pathname === "/sse" && req.method === "POST") stats.ssePosts++;
  if (url.pathname !== "/mcp") return json(res, 404, { error: "not found" });

  const sid = req.headers["mcp-session-id"];
  if (req.method === "DELETE" && sid && orphans.has(sid)) {
    orphans.delete(sid);
    count();
    res.writeHead(200);
    return res.end();
  }
  const body = req.method === "POST" ? await readJSON(req) : undefined;
  if (body?.method === "notifications/cancelled") stats.cancelled++;
  if (sid && sessions.has(sid)) return sessions.get(sid).handleRequest(req, res, body);
  if (sid) return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
  if (req.method === "POST" && isInitializeRequest(body)) {
    const t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, t);
        count();
      },
    });
    t.onclose = () => {
      if (t.sessionId) sessions.delete(t.sessionId);
      count();
    };
    await build().connect(t);
    return t.handleRequest(req, res, body);
  }
  if (python && req.method === "POST") {
    const id = randomUUID().replaceAll("-", "");
    orphans.add(id);
    count();
    return json(res, 400, { jsonrpc: "2.0", id: "server-error", error: { code: -32600, message: "Bad Request: Missing session ID" } }, { "mcp-session-id": id });
  }
  return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: No valid session ID provided" } });
});
srv.listen(0, "127.0.0.1", () => console.log(`LISTENING ${srv.address().port}`));
