import { useEffect, useMemo, useState } from "react";
import { useChat } from "@ai-sdk/react";
import { DirectChatTransport, ToolLoopAgent, stepCountIs } from "ai";
import { useCatalog } from "mcpwasm/react";
import { toolsFromCatalog } from "mcpwasm/ai";
import { mockModel } from "./model.js";

// The demo notes server (no sign-in) comes from the dev server's config
// (/devserver/config.json).
export function App() {
  const [config, setConfig] = useState(null);
  useEffect(() => {
    fetch("/devserver/config.json").then((r) => r.json()).then(setConfig);
  }, []);
  if (!config) return <p>Loading configuration…</p>;
  return (
    <main>
      <h1>mcpwasm + the AI SDK</h1>
      <Tools config={config} />
    </main>
  );
}

// The catalog's tools as an AI SDK ToolSet. Read-only tools run; any other
// asks the person in the chat (approve resolves when a button is pressed,
// and the question goes away when the turn is stopped).
function Tools({ config }) {
  const { catalog, error } = useCatalog({ servers: { notes: { url: config.mcp2URL, title: "Notes" } } });
  const [tools, setTools] = useState(null);
  const [failed, setFailed] = useState("");
  const [question, setQuestion] = useState(null);
  useEffect(() => {
    if (!catalog) return;
    const ac = new AbortController();
    const approve = (request, { signal }) => request.annotations?.readOnlyHint === true || new Promise((resolve) => {
      const answer = (a) => { setQuestion(null); resolve(a); };
      setQuestion({ request, answer });
      signal?.addEventListener("abort", () => answer(false), { once: true });
    });
    toolsFromCatalog(catalog, { approve, signal: ac.signal }).then(setTools, (e) => {
      if (!ac.signal.aborted) setFailed(e.message);
    });
    return () => ac.abort();
  }, [catalog]);
  if (error || failed) return <p id="chat-error" role="alert">{error?.message ?? failed}</p>;
  if (!tools) return <p id="loading">Connecting to the notes server…</p>;
  return <Chat tools={tools} question={question} />;
}

const SUGGESTIONS = ["reverse hello", "note buy milk", "note call mom", "list notes", "reverse without text", "reverse a list", "note water plants", "note feed cat"];
const STOPPED = "The user stopped this call before it finished; whether it had an effect is unknown.";

// useChat over an agent that runs in the page (DirectChatTransport): the
// model is the AI SDK's mock, the tools are the catalog's.
function Chat({ tools, question }) {
  const transport = useMemo(() => new DirectChatTransport({
    agent: new ToolLoopAgent({ model: mockModel(), tools, stopWhen: stepCountIs(4) }),
  }), [tools]);
  const { messages, sendMessage, status, error, stop, addToolOutput } = useChat({ transport });
  const busy = status === "submitted" || status === "streaming";
  // A stopped turn leaves its unfinished tool calls without a result, which
  // the next turn's model request may not carry: give each one that says so.
  const stopTurn = async () => {
    const last = messages.at(-1);
    await stop();
    for (const p of last?.role === "assistant" ? last.parts : []) {
      if (p.type === "dynamic-tool" && (p.state === "input-streaming" || p.state === "input-available")) {
        addToolOutput({ tool: p.toolName, toolCallId: p.toolCallId, state: "output-error", errorText: STOPPED });
      }
    }
  };
  return (
    <section id="chat" data-status={status}>
      <p id="tool-names">Tools: {Object.keys(tools).join(", ")}</p>
      {/* The buttons and the question first: a growing chat neither moves
          them under the pointer nor scrolls them out of view. */}
      <div id="suggestions">
        {SUGGESTIONS.map((s) => <button key={s} data-say={s} disabled={busy} onClick={() => sendMessage({ text: s })}>{s}</button>)}
        <button id="stop" disabled={!busy} onClick={stopTurn}>Stop</button>
      </div>
      {question && (
        <div id="approval" data-tool={question.request.name} role="group" aria-label="Run this tool?">
          <p>Run <code>{question.request.tool}</code> on {question.request.id}? It changes something on the server.</p>
          <pre>{JSON.stringify(question.request.args)}</pre>
          <button id="allow" onClick={() => question.answer(true)}>Allow</button>
          <button id="always" onClick={() => question.answer("always")}>Allow for this chat</button>
          <button id="deny" onClick={() => question.answer(false)}>Deny</button>
        </div>
      )}
      <ol id="messages">
        {messages.map((m) => (
          <li key={m.id} data-role={m.role}>
            {m.parts.map((p, i) => <Part key={p.toolCallId ?? i} part={p} />)}
          </li>
        ))}
      </ol>
      {error && <p id="chat-error" role="alert">{error.message}</p>}
    </section>
  );
}

// A part of a message: text, or a call of one of the catalog's tools
// (dynamic tools: their names are known only at run time) with its result.
function Part({ part: p }) {
  if (p.type === "text") return <p data-part="text">{p.text}</p>;
  if (p.type !== "dynamic-tool") return null;
  const result = p.state === "output-available"
    ? (p.output?.content ?? []).map((c) => c.text ?? "").join("\n")
    : p.state === "output-error" ? p.errorText : "";
  return (
    <div data-part="tool" data-name={p.toolName} data-state={p.state} data-error={p.output?.isError === true || p.state === "output-error"}>
      <code>{p.toolName}</code> <code>{JSON.stringify(p.input ?? {})}</code> <span className="state">{p.state}</span>
      {result && <pre className="result">{result}</pre>}
    </div>
  );
}
