import { useEffect, useState } from "react";
import { models } from "mcpwasm";
import { useMcpClient, useCatalog, useAgent, askUser, McpAppView } from "mcpwasm/react";

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
  if (params.get("view") === "chat") {
    return (
      <main>
        <h1>mcpwasm + React: a chat</h1>
        <button id="toggle" onClick={() => setMounted((m) => !m)}>{mounted ? "Unmount" : "Mount"}</button>
        {mounted && <Chat config={config} />}
      </main>
    );
  }
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

// A chat over the notes server (no sign-in) and the demo server (sign in
// above the chat) with the dev server's scripted stand-in model (useAgent).
// askUser routes the catalog's questions to this chat: tools that are not
// read-only (notes_note_add) ask first, with Approve, Allow for this chat
// and Deny; a server's own question (the demo's ask_user: elicitation)
// shows as a form, or as a link to open. The conversation is stored, so a
// reload shows it and goes on with it.
const SUGGESTIONS = ["reverse hello", "note buy milk and reverse abc", "note call mom", "weather in Paris", "list notes", "ask me who I am"];

function Chat({ config }) {
  const cat = useCatalog({
    servers: {
      notes: { url: config.mcp2URL, title: "Notes" },
      demo: { url: config.mcpURL, title: "Demo (sign-in)", redirectUri: "/oauth/callback" },
    },
    approve: askUser,
    onElicitation: askUser,
    apps: true,
  });
  const { messages, status, usage, error, pending, send, stop, approve, answerElicitation } = useAgent(cat, {
    model: models.openai({ baseURL: config.modelURL, model: "mcpwasm-standin" }),
    system: "You are a helpful assistant. Use the tools when they help.",
    // The model's context window: usage then says how full it is.
    contextLimit: 128000,
    // Stored in IndexedDB: the chat is still here after a reload.
    conversation: "example-chat",
  });
  const [text, setText] = useState("");
  const [refused, setRefused] = useState("");
  const busy = status !== "idle" && status !== "error";
  const say = (t) => {
    setRefused("");
    // Refused while a turn runs (the buttons are disabled then anyway).
    send(t).catch((e) => setRefused(e.message));
  };
  const submit = (e) => {
    e.preventDefault();
    if (!text.trim()) return;
    say(text.trim());
    setText("");
  };
  return (
    <section id="chat" data-status={status}>
      <ul id="chat-servers">
        {Object.entries(cat.status).map(([id, s]) => (
          <li key={id} data-server={id} data-state={s.state}>
            {s.title ?? id}: {s.state}
            {(s.state === "needs_auth" || s.state === "declined") && <button data-sign-in={id} onClick={() => { cat.authorize(id).catch(() => {}); }}>Sign in</button>}
          </li>
        ))}
      </ul>
      <ol id="messages">
        {messages.map((m) => m.role === "user"
          ? <li key={m.id} data-role="user">{m.text}</li>
          : (
            <li key={m.id} data-role="assistant" data-state={m.state}>
              {m.parts.map((p, i) => <Part key={p.type === "tool" ? p.id : i} part={p} cat={cat} sandboxURL={config.sandboxURL} />)}
              {m.state === "streaming" && <span className="typing" aria-label="The assistant is answering">…</span>}
              {m.state === "stopped" && <p className="notice">Stopped.</p>}
            </li>
          ))}
      </ol>
      {pending.filter((q) => q.kind === "approval").map((q) => (
        <div key={q.id} className="approval" data-tool={q.request.name} role="group" aria-label="Approve this tool call?">
          <p>Run <code>{q.request.tool}</code> on {q.request.id}? It may change something on the server.</p>
          <pre>{JSON.stringify(q.request.args)}</pre>
          <button className="approve" onClick={() => approve(true, q.id)}>Approve</button>
          <button className="always" onClick={() => approve("always", q.id)}>Allow for this chat</button>
          <button className="deny" onClick={() => approve(false, q.id)}>Deny</button>
        </div>
      ))}
      {pending.filter((q) => q.kind === "elicitation").map((q) => (
        <Question key={q.id} serverId={q.serverId} request={q.request} answer={(a) => answerElicitation(a, q.id)} />
      ))}
      {error && <p id="chat-error" role="alert">{error.message}</p>}
      {refused && <p id="refused" role="alert">{refused}</p>}
      <div id="suggestions">
        {SUGGESTIONS.map((s) => <button key={s} data-say={s} disabled={busy || !cat.catalog} onClick={() => say(s)}>{s}</button>)}
      </div>
      <form id="chat-form" onSubmit={submit}>
        <input id="chat-input" value={text} onChange={(e) => setText(e.target.value)} placeholder="Ask something" aria-label="Message" />
        <button id="send" type="submit" disabled={busy || !cat.catalog}>Send</button>
        <button id="stop" type="button" disabled={!busy} onClick={stop}>Stop</button>
      </form>
      <p id="usage">{usage && `Tokens so far: ${usage.inputTokens} in, ${usage.outputTokens} out; context ${usage.contextTokens} of ${usage.contextLimit}`}</p>
    </section>
  );
}

// A server asks the person something (elicitation). URL mode: a link the
// person opens (the library opens nothing), then Done or Cancel. Form
// mode: a form built from requestedSchema, read when submitted (the
// browser checks required, min, max and lengths first).
function Question({ serverId, request, answer }) {
  if (request.mode === "url") {
    return (
      <div className="elicitation" data-mode="url" role="group" aria-label={`${serverId} asks you to open a page`}>
        <p>{serverId} asks: {request.message}</p>
        {webURL(request.url) ? <a href={request.url} target="_blank" rel="noopener noreferrer">{request.url}</a> : <code>{request.url}</code>}
        <button className="done" onClick={() => answer({ action: "accept" })}>Done</button>
        <button className="cancel" onClick={() => answer({ action: "cancel" })}>Cancel</button>
      </div>
    );
  }
  const fields = Object.entries(request.requestedSchema?.properties ?? {});
  const required = request.requestedSchema?.required ?? [];
  const submit = (e) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const content = {};
    for (const [name, s] of fields) {
      const v = form.get(name);
      if (s.type === "boolean") content[name] = v === "on";
      else if (v !== null && v !== "") content[name] = s.type === "number" || s.type === "integer" ? Number(v) : v;
    }
    answer({ action: "accept", content });
  };
  return (
    <form className="elicitation" data-mode="form" aria-label={`${serverId} asks`} onSubmit={submit}>
      <p>{serverId} asks: {request.message}</p>
      {fields.map(([name, s]) => (
        <label key={name} data-field={name}>
          {s.title ?? name} <Field name={name} schema={s} required={required.includes(name)} />
          {s.description && <small> {s.description}</small>}
        </label>
      ))}
      <button className="submit" type="submit">Submit</button>
      <button className="decline" type="button" onClick={() => answer({ action: "decline" })}>Decline</button>
      <button className="cancel" type="button" onClick={() => answer({ action: "cancel" })}>Cancel</button>
    </form>
  );
}

// One input for a property of an elicitation's (flat) schema.
function Field({ name, schema: s, required }) {
  if (s.type === "boolean") return <input type="checkbox" name={name} defaultChecked={s.default === true} />;
  if (Array.isArray(s.enum)) {
    return (
      <select name={name} required={required} defaultValue={s.default ?? ""}>
        {!required && <option value="">—</option>}
        {s.enum.map((v) => <option key={v} value={v}>{v}</option>)}
      </select>
    );
  }
  if (s.type === "number" || s.type === "integer") {
    return <input type="number" name={name} required={required} min={s.minimum} max={s.maximum} step={s.type === "integer" ? 1 : "any"} defaultValue={s.default} />;
  }
  return <input type={s.format === "email" ? "email" : "text"} name={name} required={required} minLength={s.minLength} maxLength={s.maxLength} defaultValue={s.default} />;
}

// Only http(s) links are shown as links: a server's URL is data, not code.
function webURL(url) {
  try {
    return ["https:", "http:"].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

// A tool with a view (MCP Apps) shows it under the call, from the sandbox
// origin the dev server runs (sandboxURL in its config): from the moment
// the model starts writing the call (part.view), with the arguments as
// they come, then the result.
function Part({ part: p, cat, sandboxURL }) {
  const [view, setView] = useState("loading");
  switch (p.type) {
    case "text":
      return <p data-part="text">{p.text}</p>;
    case "reasoning":
      return <details data-part="reasoning"><summary>Reasoning</summary>{p.text}</details>;
    case "tool":
      return (
        <div data-part="tool" data-name={p.name} data-state={p.state}>
          <code>{p.name}</code> <code>{p.arguments}</code> <span className="state">{p.state}</span>
          {p.result && <pre className="result">{p.result.text}</pre>}
          {(p.view ?? p.app) && sandboxURL && (
            <McpAppView catalog={cat} {...(p.view ?? p.app)} arguments={p.arguments} inputPending={p.state === "writing"}
              result={p.callResult} sandboxUrl={sandboxURL} className="view"
              onReady={() => setView("ready")} onError={() => setView("failed")} />
          )}
          {(p.view ?? p.app) && <span className="view-state" data-view={view} hidden />}
        </div>
      );
    case "authrequired":
      return <p data-part="authrequired">{p.serverId} needs you to sign in. <button onClick={() => { cat.authorize(p.serverId).catch(() => {}); }}>Sign in</button></p>;
    default:
      return <p data-part={p.type}>{p.text}</p>;
  }
}
