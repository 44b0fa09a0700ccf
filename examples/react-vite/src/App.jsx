import { useEffect, useState } from "react";
import { useMcpClient, useCatalog } from "mcpwasm/react";

// The server comes from the dev server's config (/devserver/config.json):
// ?server=mcp2 picks the demo server without sign-in, else the protected one.
export function App() {
  const [config, setConfig] = useState(null);
  const [mounted, setMounted] = useState(true);
  useEffect(() => {
    fetch("/devserver/config.json").then((r) => r.json()).then(setConfig);
  }, []);
  useEffect(() => {
    // Counts effect runs: 2 on the first mount under StrictMode in development.
    window.__appEffects = (window.__appEffects ?? 0) + 1;
  }, []);
  if (!config) return <p>Loading configuration…</p>;
  const params = new URLSearchParams(location.search);
  if (params.get("view") === "catalog") {
    return (
      <main>
        <h1>mcpwasm + React: a catalog</h1>
        <button id="toggle" onClick={() => setMounted((m) => !m)}>{mounted ? "Unmount" : "Mount"}</button>
        {mounted && <Servers config={config} />}
      </main>
    );
  }
  const which = new URLSearchParams(location.search).get("server") === "mcp2" ? config.mcp2URL : config.mcpURL;
  return (
    <main>
      <h1>mcpwasm + React</h1>
      <button id="toggle" onClick={() => setMounted((m) => !m)}>{mounted ? "Unmount" : "Mount"}</button>
      {mounted && <Server url={which} />}
    </main>
  );
}

function Server({ url }) {
  const { state, tools, error, authorize, callTool, serverInfo } = useMcpClient(url, {
    redirectUri: "/oauth/callback",
    clientName: "mcpwasm React example",
  });
  const [result, setResult] = useState("");
  useEffect(() => {
    if (state === "connected" && window.__connectedAt === undefined) window.__connectedAt = performance.now();
  }, [state]);
  const add = async () => {
    const r = await callTool("add", { a: 2, b: 40 });
    setResult(r.content.map((c) => c.text ?? "").join(" "));
  };
  return (
    <section id="server" data-state={state}>
      <p>Server: <code>{url}</code> {serverInfo && <span id="server-name">({serverInfo.name})</span>}</p>
      <p>State: <strong id="state">{state}</strong></p>
      {error && state !== "connected" && <p id="error" role="alert">{error.message}</p>}
      {(state === "needs_auth" || state === "declined") && (
        <button id="sign-in" onClick={() => { authorize().catch(() => {}); }}>Sign in</button>
      )}
      {state === "connected" && (
        <>
          {/* The button first: the tool list, which arrives after "connected", does not move it under the pointer. */}
          <button id="add" onClick={add}>Add 2 and 40</button>
          <output id="result">{result}</output>
          <ul id="tools">{tools.map((t) => <li key={t.name} data-tool={t.name}>{t.name}</li>)}</ul>
        </>
      )}
    </section>
  );
}

// Both demo servers behind one tool list (useCatalog).
function Servers({ config }) {
  const { status, tools, authorize } = useCatalog({
    servers: {
      demo: { url: config.mcpURL, title: "Demo (sign-in)", redirectUri: "/oauth/callback" },
      notes: { url: config.mcp2URL, title: "Notes" },
    },
  });
  return (
    <section id="catalog">
      <ul id="servers">
        {Object.entries(status).map(([id, s]) => (
          <li key={id} data-server={id} data-state={s.state}>
            {s.title ?? id}: {s.state}
            {s.state === "needs_auth" && <button data-sign-in={id} onClick={() => { authorize(id).catch(() => {}); }}>Sign in</button>}
          </li>
        ))}
      </ul>
      <ul id="catalog-tools">{tools.map((t) => <li key={t.name} data-tool={t.name}>{t.name}</li>)}</ul>
    </section>
  );
}
