// An official MCP Apps example server (@modelcontextprotocol/server-basic-
// vanillajs or -react, or another of the packages below, pinned in
// package.json), a server nobody here
// wrote, on 127.0.0.1 and a free port, over Streamable HTTP at /mcp:
// stateless, a new server and transport per request, as the package's own
// main does (which binds 0.0.0.0, so it is not run). The package bundles
// its own SDK copy: its McpServer connects to a transport of the pinned
// @modelcontextprotocol/node, as in its main. Prints "LISTENING <port>";
// GET /stats serves {"calls": {tool: n}, "reads": {uri: n}}, the
// tools/call and resources/read requests received.
//
// The pdf server may show testdata/fixture.pdf (one page, "mcpwasm
// fixture page"), as its own main allows the files named on its command
// line.
//
//   node apps-server.mjs vanillajs|react|threejs|pdf|map|system-monitor|…
import { createServer as createHTTPServer } from "node:http";
import { fileURLToPath } from "node:url";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import { cors, readJSON } from "./interop-common.mjs";

const packages = {
  vanillajs: "@modelcontextprotocol/server-basic-vanillajs",
  react: "@modelcontextprotocol/server-basic-react",
  threejs: "@modelcontextprotocol/server-threejs",
  pdf: "@modelcontextprotocol/server-pdf",
};
for (const name of ["budget-allocator", "cohort-heatmap", "customer-segmentation", "map", "scenario-modeler", "shadertoy", "sheet-music", "system-monitor", "transcript"]) {
  packages[name] = `@modelcontextprotocol/server-${name}`;
}
const which = process.argv[2];
if (!Object.hasOwn(packages, which)) {
  console.error(`usage: node apps-server.mjs ${Object.keys(packages).join("|")}`);
  process.exit(2);
}
const pkg = await import(packages[which]);
const { createServer } = pkg;
if (which === "pdf") pkg.allowedLocalFiles.add(fileURLToPath(new URL("testdata/fixture.pdf", import.meta.url)));

const stats = { calls: {}, reads: {} };

function count(msg) {
  if (msg?.method === "tools/call" && typeof msg.params?.name === "string") {
    stats.calls[msg.params.name] = (stats.calls[msg.params.name] ?? 0) + 1;
  } else if (msg?.method === "resources/read" && typeof msg.params?.uri === "string") {
    stats.reads[msg.params.uri] = (stats.reads[msg.params.uri] ?? 0) + 1;
  }
}

const srv = createHTTPServer(async (req, res) => {
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
  let body;
  if (req.method === "POST") {
    body = await readJSON(req);
    for (const m of Array.isArray(body) ? body : [body]) count(m);
  }
  const server = createServer();
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    console.error("apps-server:", e);
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null }));
    }
  }
});
srv.listen(0, "127.0.0.1", () => console.log(`LISTENING ${srv.address().port}`));
