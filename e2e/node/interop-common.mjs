// Shared by the interop servers (interop-v1.mjs, interop-v2.mjs): the
// tools, resources and prompts both SDK versions serve, the counters the
// Go tests read from GET /stats, and the CORS the page's origin needs.
export const stats = {
  sessions: 0, // live sessions (Streamable HTTP and legacy SSE)
  orphans: 0, // sessions a sessionless non-initialize POST created (python mode)
  started: 0, // slow or counting tool runs that began
  ended: 0, // of those, the ones the server saw end before they finished (cancel or stream close)
  cancelled: 0, // notifications/cancelled received
  ssePosts: 0, // POSTs to the legacy SSE endpoint (what a Streamable HTTP probe costs there)
};

// cors answers preflights and lets the page's origin read what MCP needs.
/** The JSON body of a request, or undefined when it is not JSON. */
export async function readJSON(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

export function cors(req, res) {
  res.setHeader("Access-Control-Allow-Origin", req.headers.origin ?? "*");
  res.setHeader("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
  res.setHeader(
    "Access-Control-Allow-Headers",
    "content-type, accept, authorization, last-event-id, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name",
  );
  res.setHeader("Access-Control-Expose-Headers", "mcp-session-id, mcp-protocol-version, www-authenticate");
  if (req.method === "OPTIONS") {
    res.writeHead(204);
    res.end();
    return true;
  }
  return false;
}

// waitOrEnd waits ms unless signal ends the request first; it reports
// whether the request ended.
export async function waitOrEnd(ms, signal) {
  for (const t0 = Date.now(); Date.now() - t0 < ms; ) {
    if (signal?.aborted) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return signal?.aborted ?? false;
}

// register adds the common features to an McpServer of either SDK:
// z is the zod the SDK takes; object(shape) wraps a raw shape as the
// version expects (v2 a z.object, v1 the raw shape).
export function register(server, z, object, progressToken, notify) {
  server.registerTool(
    "add",
    {
      description: "Adds two numbers (structured output)",
      inputSchema: object({ a: z.number(), b: z.number() }),
      outputSchema: object({ sum: z.number() }),
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    "count",
    {
      description: "Counts to n, a progress notification per step, delayMs apart",
      inputSchema: object({ n: z.number().int(), delayMs: z.number().int().optional() }),
    },
    async ({ n, delayMs }, extra) => {
      stats.started++;
      const token = progressToken(extra);
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) {
          await notify(extra, { method: "notifications/progress", params: { progressToken: token, progress: i, total: n, message: `step ${i}` } });
        }
        if (await waitOrEnd(delayMs ?? 10, extra.signal ?? extra.mcpReq?.signal)) {
          stats.ended++;
          return { content: [{ type: "text", text: "ended" }] };
        }
      }
      return { content: [{ type: "text", text: `counted to ${n}` }] };
    },
  );
  server.registerTool("fail", { description: "Always fails", inputSchema: object({}) }, async () => ({
    isError: true,
    content: [{ type: "text", text: "this tool always fails" }],
  }));
  server.registerTool(
    "slow",
    { description: "Waits ms (default 30000); stops when the request ends", inputSchema: object({ ms: z.number().int().optional() }) },
    async ({ ms }, extra) => {
      stats.started++;
      if (await waitOrEnd(ms ?? 30000, extra.signal ?? extra.mcpReq?.signal)) {
        stats.ended++;
        return { content: [{ type: "text", text: "ended" }] };
      }
      return { content: [{ type: "text", text: "done" }] };
    },
  );
  return server;
}

// registerReadables registers the resource, the resource template and the
// prompt both SDK versions serve (object turns a zod shape into what that
// version's argsSchema takes; ResourceTemplate is that version's class).
export function registerReadables(server, z, object, ResourceTemplate) {
  server.registerResource("greeting", "greeting://hello", { description: "A static text resource", mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello" }],
  }));
  server.registerResource(
    "user",
    new ResourceTemplate("users://{id}/profile", { list: undefined }),
    { description: "One user profile", mimeType: "application/json" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id }) }] }),
  );
  server.registerPrompt("greet", { description: "Greets someone", argsSchema: object({ name: z.string() }) }, ({ name }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say hello to ${name}` } }],
  }));
}
