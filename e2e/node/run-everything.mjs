// Starts @modelcontextprotocol/server-everything (pinned in package.json)
// on 127.0.0.1 and a free port, and prints "LISTENING <port>" once it
// accepts connections. The package itself listens on every interface;
// this wrapper pins it to loopback.
//
//   node run-everything.mjs [streamableHttp|sse]
//
// It also prints "STATS <port>": GET there serves {sessions, cancelled}:
// the live sessions (Streamable HTTP from initialize to DELETE, legacy SSE
// while its stream is open) and the notifications/cancelled received.
import http from "node:http";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";

const transport = process.argv[2] ?? "streamableHttp";
const live = new Set();
let cancelled = 0;

const T = WebStandardStreamableHTTPServerTransport.prototype;
const handle = T.handleRequest;
T.handleRequest = async function (...args) {
  const r = await handle.apply(this, args);
  if (this.sessionId && !this.__closed) live.add(this);
  return r;
};
const close = T.close;
T.close = async function (...args) {
  live.delete(this);
  this.__closed = true;
  return close.apply(this, args);
};
const start = SSEServerTransport.prototype.start;
SSEServerTransport.prototype.start = async function (...args) {
  live.add(this);
  this.res.on("close", () => live.delete(this));
  return start.apply(this, args);
};
const oncancel = Protocol.prototype._oncancel;
Protocol.prototype._oncancel = function (...args) {
  cancelled++;
  return oncancel.apply(this, args);
};

const listen = http.Server.prototype.listen;
let first = true;
http.Server.prototype.listen = function (port, ...rest) {
  if (!first) return listen.call(this, port, ...rest);
  first = false;
  const cb = rest.find((a) => typeof a === "function");
  this.once("listening", () => console.log(`LISTENING ${this.address().port}`));
  return listen.call(this, 0, "127.0.0.1", cb);
};
process.argv = [process.argv[0], "server-everything", transport];
await import("@modelcontextprotocol/server-everything/dist/index.js");

const stats = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ sessions: live.size, cancelled }));
});
listen.call(stats, 0, "127.0.0.1", () => console.log(`STATS ${stats.address().port}`));
