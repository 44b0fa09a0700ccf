// Injected into a bench page after it is ready: the same measurements for
// every browser client, run inside the page so no CDP round trip is timed.
(() => {
  const text = (r) => r && r.content && r.content[0] && r.content[0].text;
  const A = window.__kind === "wasm" ? {
    async open(url) { const c = window.__mcp.client(url); await c.connect(); return c; },
    call: (c, i) => c.callTool("echo", { text: "hello " + i }),
    close: (c) => c.close(),
  } : {
    async open(url) {
      const c = new window.__sdk.Client({ name: "bench-ts", version: "1.0.0" });
      await c.connect(new window.__sdk.StreamableHTTPClientTransport(new URL(url)));
      return c;
    },
    call: (c, i) => c.callTool({ name: "echo", arguments: { text: "hello " + i } }),
    close: (c) => c.close(),
  };
  let clients = [];
  let current = null;
  window.B = {
    async connect(url) {
      const t0 = performance.now();
      const c = await A.open(url);
      const ms = performance.now() - t0;
      clients.push(c);
      current = c;
      return ms;
    },
    async closeAll() {
      for (const c of clients) { try { await A.close(c); } catch (e) {} }
      clients = []; current = null;
    },
    async seq(n, warm) {
      for (let i = 0; i < warm; i++) await A.call(current, i);
      const d = new Array(n);
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const r = await A.call(current, i);
        d[i] = performance.now() - t0;
        if (i === n - 1 && text(r) !== "hello " + i) throw new Error("unexpected echo result: " + JSON.stringify(r));
      }
      return d;
    },
    async conc(workers, total) {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: workers }, async () => {
        while (next < total) { const i = next++; await A.call(current, i); }
      }));
      return performance.now() - t0;
    },
    mem() {
      if (typeof gc === "function") gc();
      const go = globalThis.__go;
      const mem = go && go._inst && go._inst.exports.mem;
      return { wasm: mem ? mem.buffer.byteLength : 0, heap: performance.memory ? performance.memory.usedJSHeapSize : 0 };
    },
  };
  return true;
})()
