// Injected into soak.html once it is ready: the soak scenario's tab. One
// catalog over the five servers, one Go agent over it with the scripted
// stand-in model, and a loop that runs a turn every few seconds until
// stopped. Each turn asks for one call per server; the page keeps, per
// turn, the calls the agent announced (toolcall), the results it
// delivered (toolresult), the final text (which quotes every result: the
// stand-in answers "Results: " and the results' texts) and whether the
// turn settled within its bound. It also keeps the catalog's status
// changes per server. The bench reads it all with SOAK.stop().
(() => {
  let cat, agent, cfg, running = false, loop;
  const turns = [], states = {};
  const pending = new Set();

  // oneTurn runs turn n and records it; a turn that has not settled
  // after cfg.turnBoundMs is recorded as unsettled and left to run.
  async function oneTurn(n) {
    const rec = { n, calls: {}, results: {}, text: "", error: "", settled: false };
    turns.push(rec);
    const prompt = cfg.prompt.replaceAll("{n}", String(n));
    const run = agent.run(prompt, {
      onEvent: (ev) => {
        if (ev.type === "toolcall") rec.calls[ev.id] = ev.serverId || ev.name;
        if (ev.type === "toolresult") rec.results[ev.id] = { serverId: ev.serverId || ev.name, isError: !!ev.isError, text: String(ev.text || "") };
      },
    });
    const done = run.done.then(
      (r) => { rec.text = String(r.text || ""); },
      (e) => { rec.error = String((e && e.code) || "") + ": " + String((e && e.message) || e); },
    ).finally(() => { rec.settled = true; pending.delete(done); });
    pending.add(done);
    let timer;
    await Promise.race([done, new Promise((r) => (timer = setTimeout(r, cfg.turnBoundMs)))]);
    clearTimeout(timer);
  }

  window.SOAK = {
    // setup makes the catalog and the agent; c: {servers, modelURL,
    // model, prompt, turnBoundMs, intervalMs, callTimeoutMs}.
    async setup(c) {
      cfg = c;
      const servers = {};
      for (const s of c.servers) servers[s.id] = { url: s.url, allowTools: [s.tool] };
      cat = window.__mcp.catalog({ servers, callTimeoutMs: c.callTimeoutMs, breaker: { failures: 3, cooldownMs: c.cooldownMs } });
      cat.addEventListener("statuschange", (ev) => {
        const { id, status } = ev.detail;
        const st = status && status.state;
        const s = (states[id] = states[id] || { last: "", changes: {}, reconnected: 0 });
        if (st && st !== s.last) {
          s.changes[st] = (s.changes[st] || 0) + 1;
          if (st === "connected" && s.last === "reconnecting") s.reconnected++;
          s.last = st;
        }
      });
      agent = cat.agent({ model: window.__mcp.models.openai({ baseURL: c.modelURL, model: c.model, apiKey: "soak" }), maxSteps: 4, authWaitMs: c.callTimeoutMs });
      return true;
    },
    // authorize signs in to server id (run as a user gesture).
    authorize(id) {
      return (window.__auth = cat.authorize(id).then(() => "ok", (e) => String(e && e.code) + ": " + String(e && e.message)));
    },
    // turn runs one turn now and returns its record.
    async turn() {
      await oneTurn(turns.length);
      return turns[turns.length - 1];
    },
    // start runs a turn every intervalMs (±25%) until stop.
    start() {
      running = true;
      loop = (async () => {
        while (running) {
          await oneTurn(turns.length);
          const wait = cfg.intervalMs * (0.75 + Math.random() / 2);
          await new Promise((r) => setTimeout(r, wait));
        }
      })();
      return true;
    },
    // stop ends the loop, waits up to graceMs for turns still running,
    // and returns every turn and the status changes.
    async stop(graceMs) {
      running = false;
      let timer;
      await Promise.race([Promise.all([loop, ...pending]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      return { turns, states };
    },
  };
  return true;
})()
