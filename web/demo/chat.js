// chat.js — the Chat panel: an agent over the Servers panel's catalog. The
// model is the dev server's scripted stand-in (the default: it follows
// fixed rules, it is not a real model) or any OpenAI-compatible endpoint
// (OpenAI, Ollama, vLLM, LM Studio, …). The API key stays in this page's
// memory: it is never stored and never logged.
//
// The transcript shows the streamed answer, the model's reasoning (folded),
// each tool call as it is written and then with its server, arguments and
// result, the tokens each turn used and how full the model's context is,
// an Approve / Allow for this chat / Deny prompt before a tool that is not
// read-only runs (the catalog's approve hook), a Sign in prompt when a call needs one, and under a call of a
// tool with a view (MCP Apps) the server's view, in the dev server's
// sandbox origin (config.sandboxURL). One agent serves the
// whole conversation, so "Allow for this chat" ("always") holds until New
// chat (or another model). Stop aborts the run. The conversation is a
// stored one: a reload shows it again, its views too (with what they
// kept), and goes on with it; New chat deletes it.
import { $, h, describeError, announce, prettyText, updateChildren, validServerURL } from "./util.js";
import { addLog } from "./log.js";
import { partialJSON } from "../partialjson.js";
import { getCatalog, serverEvents, serverTitle, signIn, statuses, viewTrust } from "./servers.js";

const STANDIN_MODEL = "mcpwasm-standin";
// The stand-in has no real context window: this figure lets the demo show
// how full a model's context is, as a real model's documented one would.
const STANDIN_CONTEXT = 128000;
const OLLAMA_URL = "http://localhost:11434/v1";
const SYSTEM = "You are the assistant of the mcpwasm demo page. Use the tools when they help and say which ones you used. " +
  "When a tool result says the user must sign in, refused, or that something failed, tell the user plainly; never guess a result.";
const SUGGESTIONS = ["add 2 and 40 and reverse hello", "weather in Paris and note buy milk", "note remember the milk", "slow"];

let mcp = null;
let config = {};
// The stored conversation the chat goes on with, across reloads; New
// chat deletes it and starts another.
const CHAT_ID_KEY = "mcpwasm-demo-chat";
let chatId = localStorage.getItem(CHAT_ID_KEY) ?? freshChatId();
let run = null; // {ctrl, turn} of the running turn
let chat = null; // {agent, cat, key}: the conversation's agent, the scope of "Allow for this chat"
let runsEnded = 0; // shown as the chat log's data-runs
const views = new Set(); // the servers' views shown in the transcript, closed by New chat
const pendingApprovals = new Set(); // {settle} of approval prompts not answered yet

const chatLog = $("#chat-log");
const input = $("#chat-input");
const sendBtn = $("#chat-send");
const stopBtn = $("#chat-stop");
const choice = $("#model-choice");

function freshChatId() {
  const id = `chat-${Date.now().toString(36)}-${crypto.getRandomValues(new Uint32Array(1))[0].toString(36)}`;
  localStorage.setItem(CHAT_ID_KEY, id);
  return id;
}

// ------------------------------------------------------------ the model

/** The model settings, or an Error saying what to fix. */
function modelSettings() {
  if (choice.value === "standin") {
    if (!config.modelURL) return new Error("This page has no stand-in model (it is not served by the dev server): pick an OpenAI-compatible endpoint.");
    return { baseURL: config.modelURL, model: STANDIN_MODEL, label: "Stand-in (scripted)", contextLimit: STANDIN_CONTEXT };
  }
  const raw = $("#model-base-url").value.trim() || OLLAMA_URL;
  const url = validServerURL(raw);
  if (!url) return new Error("The base URL must be an http:// or https:// URL, such as http://localhost:11434/v1.");
  const model = $("#model-name").value.trim();
  if (!model) return new Error("Enter the model's name (for Ollama, one `ollama list` shows, such as llama3.2).");
  const apiKey = $("#model-key").value; // read at run time; kept nowhere else
  const ctx = $("#model-context").value.trim();
  const contextLimit = ctx === "" ? undefined : Number(ctx);
  if (contextLimit !== undefined && !(Number.isInteger(contextLimit) && contextLimit > 0)) {
    return new Error("The context window must be a whole number of tokens, such as 128000, or empty.");
  }
  return { baseURL: raw, model, apiKey: apiKey || undefined, label: model, contextLimit };
}

function renderModelChoice() {
  const custom = choice.value !== "standin";
  $("#model-custom").hidden = !custom;
  $("#model-standin-hint").hidden = custom;
  $("#chat-suggestions").hidden = custom;
}

/** Shows the stand-in's own description from its /models list. */
async function describeStandin() {
  if (!config.modelURL) return;
  try {
    const r = await fetch(`${config.modelURL.replace(/\/$/, "")}/models`);
    const body = await r.json();
    const m = (body.data ?? []).find((x) => x.id === STANDIN_MODEL);
    if (m?.description) $("#model-standin-hint").textContent = m.description;
  } catch {
    // The hint keeps its own text.
  }
}

// ------------------------------------------------------------ transcript

function scrollDown() {
  chatLog.scrollTop = chatLog.scrollHeight;
}

function append(li) {
  chatLog.querySelector(".chat-empty")?.remove();
  chatLog.append(li);
  scrollDown();
  return li;
}

function note(kind, ...children) {
  return append(h("li", { class: "chat-note", dataset: { kind } }, ...children));
}

/** One turn of the conversation: the assistant's text and tool calls as they happen. */
class Turn {
  constructor(label, signal) {
    this.label = label;
    this.signal = signal; // aborted: Stop was pressed
    this.bubble = null; // the assistant text being streamed
    this.thinking = null; // the reasoning being streamed
    this.calls = new Map(); // call id → li
    this.args = new Map(); // call id → the call's arguments, an object
    this.live = new Map(); // call id → {text, view}: a view shown while the model writes the call (a promise of it)
    this.answered = false;
  }

  reasoning(delta) {
    if (!this.thinking) {
      this.thinking = append(h("li", { class: "chat-reasoning" },
        h("details", {}, h("summary", { text: "Reasoning" }), h("div", { class: "chat-text" }))));
    }
    this.thinking.querySelector(".chat-text").textContent += delta;
    scrollDown();
  }

  /** A tool call being written: shown at once, its arguments as they come. */
  toolCallDelta(ev) {
    this.endText();
    let li = this.calls.get(ev.id);
    if (!li) {
      li = this.callItem(ev.id, ev.name, "writing…");
      li.dataset.state = "writing";
    }
    li.querySelector(".chat-tool-args").textContent += ev.argumentsDelta ?? "";
    // A tool with a view shows it at once, with the arguments as they come.
    if (ev.app && !this.live.has(ev.id)) this.live.set(ev.id, { text: "", view: showView(li, ev.app, { pending: true }) });
    const live = this.live.get(ev.id);
    if (live && ev.argumentsDelta) {
      live.text += ev.argumentsDelta;
      const partial = partialJSON(live.text);
      if (partial) live.view.then((v) => { if (v?.state === "loading" || v?.state === "ready") v.sendToolInputPartial(partial); });
    }
    scrollDown();
  }

  callItem(id, where, state) {
    const li = append(h("li", { class: "chat-tool", dataset: { callId: id, state } },
      h("div", { class: "chat-tool-head" },
        h("span", { class: "chat-who", text: "Tool call" }),
        h("code", { class: "chat-tool-where", text: where }),
        h("span", { class: "chip chat-tool-state", text: state })),
      h("pre", { class: "json chat-tool-args", "aria-label": "Arguments" }),
      h("div", { class: "chat-tool-result" })));
    this.calls.set(id, li);
    return li;
  }

  usage(ev) {
    const t = (this.tokens ??= { input: 0, output: 0, cached: 0, reasoning: 0, responses: 0 });
    t.input += ev.inputTokens || 0;
    t.output += ev.outputTokens || 0;
    t.cached += ev.cachedInputTokens || 0;
    t.reasoning += ev.reasoningTokens || 0;
    t.responses++;
  }

  /** The turn's tokens, from done's totals. */
  showUsage(u) {
    if (!u) return;
    const n = (x) => Number(x || 0).toLocaleString("en");
    const input = `${n(u.inputTokens)} in${u.cachedInputTokens ? ` (${n(u.cachedInputTokens)} cached)` : ""}`;
    const output = `${n(u.outputTokens)} out${u.reasoningTokens ? ` (${n(u.reasoningTokens)} reasoning)` : ""}`;
    const over = this.tokens?.responses > 1 ? ` over ${this.tokens.responses} model responses` : "";
    const full = u.contextLimit ? ` of ${n(u.contextLimit)} (${Math.round((100 * u.contextTokens) / u.contextLimit)}%)` : "";
    const context = u.contextTokens ? ` Context: ${n(u.contextTokens)} tokens${full}.` : "";
    const el = note("usage", `Tokens this turn: ${input} · ${output}${over}.${context}`);
    el.dataset.input = String(u.inputTokens);
    if (u.contextTokens) el.dataset.context = String(u.contextTokens);
  }

  text(delta) {
    if (!this.bubble) {
      this.bubble = append(h("li", { class: "chat-msg assistant", "aria-busy": "true" },
        h("span", { class: "chat-who", text: `Assistant · ${this.label}` }),
        h("div", { class: "chat-text" })));
    }
    this.bubble.querySelector(".chat-text").textContent += delta;
    this.answered = true;
    scrollDown();
  }

  endText() {
    this.bubble?.setAttribute("aria-busy", "false");
    this.bubble = null;
    this.thinking = null;
  }

  toolCall(ev) {
    this.endText();
    const where = ev.serverId ? `${serverTitle(ev.serverId)} · ${ev.tool || ev.name}` : ev.name;
    const li = this.calls.get(ev.id) ?? this.callItem(ev.id, where, "running…");
    Object.assign(li.dataset, { name: ev.name, server: ev.serverId ?? "", tool: ev.tool ?? "", state: "running" });
    li.querySelector(".chat-tool-where").textContent = where;
    li.querySelector(".chat-tool-state").textContent = "running…";
    li.querySelector(".chat-tool-args").textContent = prettyText(ev.arguments);
    this.args.set(ev.id, argsObject(ev.arguments));
    this.live.get(ev.id)?.view.then((v) => { if (v?.state === "loading" || v?.state === "ready") v.sendToolInput(argsObject(ev.arguments)); });
  }

  progress(ev) {
    const li = this.calls.get(ev.id);
    if (!li) return;
    const total = Number(ev.total) || 0;
    li.querySelector(".chat-tool-state").textContent = ev.message || (total ? `${ev.progress} of ${total}` : `running… ${ev.progress}`);
  }

  // The server of a running call asks the person (the dialog answers it):
  // the call says so while it waits.
  elicitation(ev) {
    const li = this.calls.get(ev.id);
    if (li) li.querySelector(".chat-tool-state").textContent = ev.mode === "url" ? "waiting: a page to open" : "waiting for your answer";
  }

  approval(ev) {
    const li = this.calls.get(ev.id);
    if (li && !ev.approved) li.dataset.denied = "true";
    if (li && ev.decidedBy === "remembered") {
      li.dataset.approval = "remembered";
      li.querySelector(".chat-tool-head").append(h("span", { class: "chip ok chat-tool-allowed", text: "allowed for this chat" }));
    }
  }

  toolResult(ev) {
    const li = this.calls.get(ev.id);
    if (!li) return;
    // A call cut short by Stop ends as an error result saying so.
    const state = li.dataset.denied ? "denied" : this.signal.aborted && ev.isError ? "stopped" : ev.isError ? "error" : "ok";
    li.dataset.state = state;
    const chip = li.querySelector(".chat-tool-state");
    chip.textContent = { ok: "done", error: "error", denied: "denied", stopped: "stopped" }[state];
    chip.className = `chip chat-tool-state ${state === "ok" ? "ok" : state === "error" ? "danger" : "warn"}`;
    li.querySelector(".chat-tool-result").replaceChildren(h("pre", { class: "text-content", text: ev.text }));
    const live = this.live.get(ev.id);
    if (live) {
      live.view.then((v) => {
        if (!v || v.state === "closed" || v.state === "failed") return;
        if (ev.result && state === "ok") v.sendToolResult(ev.result);
        else v.cancel(state === "ok" ? "the server sent no result for the view" : `the call ended: ${state}`);
      });
    } else if (ev.app && ev.result && state === "ok") showView(li, ev.app, { args: this.args.get(ev.id) ?? {}, result: ev.result });
  }

  authRequired(ev) {
    const id = ev.serverId;
    const title = serverTitle(id);
    // After a declined sign-in the call does not wait: the model is told
    // the person can still sign in, and this offers it.
    const says = ev.declined
      ? `The model called a tool of ${title}, whose sign-in you declined. Sign in to let it use ${title}: `
      : `The model called a tool of ${title}, which needs you to sign in. The call waits for you: `;
    const btn = h("button", {
      type: "button", class: "btn btn-primary btn-small sign-in", "aria-label": `Sign in to ${title}`, text: `Sign in to ${title}`,
      // In the click, synchronously: the sign-in window opens at once.
      onclick: () => { btn.disabled = true; signIn(id).finally(() => { btn.disabled = false; }); },
    });
    note("auth", h("span", { text: says }), btn);
    announce(`${title} needs you to sign in`);
  }

  stopped() {
    this.endText();
    for (const li of this.calls.values()) {
      if (li.dataset.state === "running") {
        li.dataset.state = "stopped";
        li.querySelector(".chat-tool-state").textContent = "stopped";
        li.querySelector(".chat-tool-state").className = "chip chat-tool-state warn";
      }
    }
    note("stopped", "Stopped: the run was aborted and its running tool calls were cancelled.");
  }

  failed(err) {
    this.endText();
    const { message, code } = describeError(err);
    note("error", h("strong", { text: "The run failed: " }), message, code && h("code", { class: "code-chip", text: code }));
  }

  done(res) {
    this.endText();
    if (this.answered) return;
    if (res.text) {
      this.text(res.text);
      this.endText();
    } else {
      note("info", "The model gave no answer.");
    }
  }

  event(ev) {
    switch (ev.type) {
      case "text": this.text(ev.delta ?? ""); break;
      case "reasoning": this.reasoning(ev.delta ?? ""); break;
      case "toolcalldelta": this.toolCallDelta(ev); break;
      case "usage": this.usage(ev); break;
      case "toolcall": this.toolCall(ev); break;
      case "progress": this.progress(ev); break;
      case "approval": this.approval(ev); break;
      case "elicitation": this.elicitation(ev); break;
      case "toolresult": this.toolResult(ev); break;
      case "authrequired": this.authRequired(ev); break;
      case "step": this.endText(); break;
      case "error":
        // max_steps and empty_response end a run early without failing it.
        if (ev.code === "max_steps" || ev.code === "empty_response") note("info", ev.message);
        break;
    }
  }
}

// ------------------------------------------------------------ servers' views (MCP Apps)

/** A call's arguments as an object (the model wrote them as JSON text); {} when they are not one. */
function argsObject(text) {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * Shows the view of a tool with one under its call: the server's HTML,
 * run in the sandbox proxy's origin (never this page's), sized by the
 * view. The call's element says how far it got in data-view: loading,
 * ready, failed, or none (no sandbox origin to show it in). A message the
 * view sends for the user goes into the message field, for the person to
 * read and send; a link it asks for opens in a new tab, without opener.
 */
/**
 * Shows the view of a tool under its call, with its arguments and result
 * or, pending, before them (the caller sends them as they come); resolves
 * the view, or null when it is not shown.
 */
function showView(li, app, { args, result, pending = false }) {
  const box = h("div", { class: "chat-tool-view", dataset: { resourceUri: app.resourceUri, live: String(pending) } });
  li.append(box);
  if (!config.sandboxURL) {
    li.dataset.view = "none";
    box.append(h("p", { class: "hint", text: `${app.tool} has a view, which this page shows only with a sandbox origin for views (the dev server's -sandbox-addr).` }));
    return Promise.resolve(null);
  }
  const failed = (err) => {
    li.dataset.view = "failed";
    const { message, code } = describeError(err);
    box.append(h("p", { class: "notice", dataset: { tone: "error" } },
      h("strong", { text: "The view could not be shown: " }), message, code && h("code", { class: "code-chip", text: code })));
    addLog("apps", `${app.serverId}/${app.tool}: the view failed: ${message}`, "error");
  };
  li.dataset.view = "loading";
  return mcp.apps.render(box, {
    catalog: getCatalog(),
    serverId: app.serverId,
    tool: app.tool,
    ...(pending ? { inputPending: true } : { arguments: args, result }),
    // What the view keeps lasts with the conversation (its agent names it).
    ...(app.stateKey && { stateKey: app.stateKey }),
    sandboxUrl: config.sandboxURL,
    trust: viewTrust(app.serverId),
    onMessage: (msg) => {
      const text = (msg.content ?? []).filter((c) => c?.type === "text").map((c) => String(c.text)).join("\n").trim();
      if (!text) return false;
      input.value = text;
      input.focus();
      announce("The view wrote a message for you in the message field: read it, then send it or not.");
      return true;
    },
    onOpenLink: (url) => {
      window.open(url, "_blank", "noopener");
      return true;
    },
  }).then((view) => {
    views.add(view);
    view.addEventListener("ready", () => {
      li.dataset.view = "ready";
      addLog("apps", `${app.serverId}/${app.tool}: the view is ready`);
    });
    view.addEventListener("error", (e) => { if (view.state === "failed") failed(e.detail); });
    view.addEventListener("warning", (e) => addLog("apps", e.detail.message, "warn"));
    view.addEventListener("sizechange", scrollDown);
    // What the view keeps (with the conversation's stateKey) was saved.
    view.addEventListener("statesave", (e) => { box.dataset.kept = String(e.detail.size); });
    return view;
  }, (err) => {
    failed(err);
    return null;
  });
}

function closeViews() {
  for (const v of views) v.close();
  views.clear();
}

// ------------------------------------------------------------ approvals

/**
 * The catalog's approve hook: asked before every call of a tool that is
 * not marked read-only. Resolves true (Approve), "always" (Allow for this
 * chat: this tool, until New chat) or false (Deny).
 */
export function approve(req) {
  // A view's calls come here for every tool (the catalog asks about the
  // agent's only when they are not read-only): the same rule for both.
  if (req.via === "app" && req.annotations?.readOnlyHint === true) return Promise.resolve(true);
  return new Promise((resolve) => {
    const title = serverTitle(req.id);
    const what = req.tool === "sampling/createMessage"
      ? `${title} asks the model to write a reply (sampling).`
      : req.tool === "catalog_enable_server"
        ? `The model asks to use ${serverTitle(String(req.args?.id ?? ""))}.`
      : req.via === "app"
        ? `The view of ${title} wants to run ${req.tool}.`
        : `The model wants to run ${req.tool} on ${title}.`;
    const result = h("span", { class: "approval-result", role: "status" });
    const buttons = h("div", { class: "approval-actions" });
    const li = append(h("li", { class: "chat-approval", tabindex: "-1", dataset: { server: req.id, tool: req.tool, state: "asking" } },
      h("p", { class: "approval-question" }, h("strong", { text: "Approve this tool call? " }), what),
      h("p", { class: "hint", text: "It is not marked read-only: it may change something on the server." }),
      h("pre", { class: "json", "aria-label": "Arguments", text: prettyText(typeof req.args === "string" ? req.args : JSON.stringify(req.args ?? {})) }),
      buttons, result));
    const entry = { view: req.via === "app" }; // a view's call outlives the run
    const settle = (ok, why) => {
      if (!pendingApprovals.has(entry)) return;
      pendingApprovals.delete(entry);
      buttons.remove();
      li.dataset.state = ok === "always" ? "always" : ok ? "approved" : "denied";
      const said = ok === "always" ? "Allowed for this chat: the model may run it again without asking until New chat." : ok ? "Approved." : "Denied: the model is told you refused.";
      result.textContent = why ?? said;
      addLog("approval", `${req.name}: ${ok === "always" ? "allowed for this chat" : ok ? "approved" : "denied"}${why ? ` (${why})` : ""}`, ok ? "info" : "warn");
      resolve(ok);
    };
    entry.settle = settle;
    pendingApprovals.add(entry);
    buttons.append(...[
      h("button", { type: "button", class: "btn btn-primary btn-small approve", "aria-label": `Approve ${req.tool}`, text: "Approve", onclick: () => settle(true) }),
      // A sampling request, or a view's call (not the agent's), is asked about each time.
      req.tool !== "sampling/createMessage" && req.via !== "app" && h("button", { type: "button", class: "btn btn-secondary btn-small allow-chat", "aria-label": `Allow ${req.tool} for this chat`, text: "Allow for this chat", onclick: () => settle("always") }),
      h("button", { type: "button", class: "btn btn-secondary btn-small deny", "aria-label": `Deny ${req.tool}`, text: "Deny", onclick: () => settle(false) }),
    ].filter(Boolean));
    li.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.preventDefault(); settle(false); }
    });
    // Keyboard users land on the question; Tab reaches Approve, Escape denies.
    li.focus();
    announce(`${what} Approve or deny.`);
  });
}

// ------------------------------------------------------------ the catalog's sign-in needs

/** Above the composer: servers whose tools the model cannot use until the person signs in. */
function renderAuthNeeds() {
  const box = $("#chat-auth");
  const waiting = Object.entries(statuses()).filter(([, s]) => s.state === "needs_auth" || s.state === "declined");
  updateChildren(box, waiting.map(([id, s]) => {
    const title = serverTitle(id);
    return h("p", { class: "notice", dataset: { tone: s.state === "declined" ? "warn" : "info", server: id } },
      h("span", { text: `${title}: ${s.state === "declined" ? "sign-in declined" : "sign in required"}. The model cannot use its tools until you sign in. ` }),
      h("button", { type: "button", class: "btn btn-secondary btn-small sign-in", "aria-label": `Sign in to ${title}`, text: "Sign in", onclick: () => { signIn(id); } }));
  }));
  box.hidden = !waiting.length;
}

// ------------------------------------------------------------ running a turn

function setBusy(busy) {
  sendBtn.disabled = busy || !getCatalog();
  stopBtn.disabled = !busy;
  stopBtn.hidden = !busy;
  $("#chat-form").setAttribute("aria-busy", String(busy));
  $("#chat-new").disabled = busy;
}

async function send(text) {
  const cat = getCatalog();
  if (run || !cat || !mcp) return;
  const settings = modelSettings();
  if (settings instanceof Error) {
    note("error", settings.message);
    return;
  }
  append(h("li", { class: "chat-msg user" }, h("span", { class: "chat-who", text: "You" }), h("div", { class: "chat-text", text })));
  const ctrl = new AbortController();
  const turn = new Turn(settings.label, ctrl.signal);
  let agent;
  try {
    agent = chatAgent(cat, settings);
  } catch (err) {
    turn.failed(err);
    return;
  }
  run = { ctrl, turn };
  setBusy(true);
  input.value = "";
  addLog("chat", `sent to ${settings.label}: ${text}`);
  try {
    const conv = await agent.conversation(chatId);
    const res = await conv.run(text, { signal: ctrl.signal, onEvent: (ev) => turn.event(ev) }).done;
    turn.done(res);
    turn.showUsage(res.usage);
    addLog("chat", `answered in ${res.steps} step${res.steps === 1 ? "" : "s"} (${res.finishReason})`);
    announce("The assistant answered.");
  } catch (err) {
    if (err.code === "aborted") {
      turn.stopped();
      addLog("chat", "stopped", "warn");
      announce("Stopped.");
    } else {
      turn.failed(err);
      addLog("chat", `failed: ${describeError(err).message}`, "error");
    }
  } finally {
    for (const p of [...pendingApprovals]) if (!p.view) p.settle(false, "Not answered: the run ended.");
    run = null;
    chatLog.dataset.runs = String(++runsEnded);
    setBusy(false);
    input.focus();
  }
}

/**
 * The conversation's agent: kept from turn to turn, so that "Allow for
 * this chat" holds; another model (or catalog) starts a new one.
 */
function chatAgent(cat, settings) {
  const key = JSON.stringify([settings.baseURL, settings.model, settings.apiKey ?? "", settings.contextLimit ?? 0]);
  if (chat?.cat === cat && chat.key === key) return chat.agent;
  chat?.agent.close();
  chat = null;
  const agent = cat.agent({
    model: mcp.models.openai({ baseURL: settings.baseURL, apiKey: settings.apiKey, model: settings.model }),
    system: SYSTEM,
    authWaitMs: 120_000,
    contextLimit: settings.contextLimit,
  });
  chat = { agent, cat, key };
  return agent;
}

function newChat() {
  if (run) return;
  chat?.agent.close(); // its "Allow for this chat" answers end with it
  chat = null;
  const old = chatId;
  chatId = freshChatId();
  withReader((reader) => reader.conversation(old).then((c) => c.delete())).catch((err) => {
    addLog("chat", `the last conversation could not be deleted: ${describeError(err).message}`, "warn");
  });
  closeViews();
  chatLog.replaceChildren(h("li", { class: "chat-empty", text: "New conversation." }));
  input.focus();
}

/** Enter sends; Shift+Enter starts a new line. */
function onKey(e) {
  if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey && !e.isComposing) {
    e.preventDefault();
    $("#chat-form").requestSubmit();
  }
}

/** Wires the panel before the module is loaded (sending waits for startChat). */
export function initChat(cfg) {
  config = cfg;
  if (!config.modelURL) {
    const opt = choice.querySelector('option[value="standin"]');
    opt.disabled = true;
    opt.textContent += " (only with the dev server)";
    choice.value = "custom";
  }
  renderModelChoice();
  describeStandin();
  choice.addEventListener("change", renderModelChoice);
  $("#chat-suggestions").replaceChildren(...SUGGESTIONS.map((s) => h("button", {
    type: "button", class: "btn btn-ghost btn-small suggestion", text: s, "aria-label": `Write "${s}"`,
    onclick: () => { input.value = s; input.focus(); },
  })));
  input.addEventListener("keydown", onKey);
  $("#chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) {
      input.focus();
      return;
    }
    send(text);
  });
  stopBtn.addEventListener("click", () => run?.ctrl.abort());
  $("#chat-new").addEventListener("click", newChat);
  setBusy(false);
}

/**
 * Runs f with an agent of the catalog that only reads stored
 * conversations (its model is never asked), and closes it.
 */
async function withReader(f) {
  const cat = getCatalog();
  if (!cat) throw new Error("the page has no catalog");
  const reader = cat.agent({ model: async () => { throw new Error("this agent only reads stored conversations"); } });
  try {
    return await f(reader);
  } finally {
    reader.close();
  }
}

/**
 * Shows the stored conversation the chat goes on with, as an earlier page
 * left it: messages, tool calls and their results, and each call's view
 * again from what the conversation kept (with what the view stored).
 */
async function restore() {
  let conv;
  try {
    conv = await withReader((reader) => reader.conversation(chatId));
  } catch (err) {
    note("error", h("strong", { text: "The stored conversation could not be read: " }), describeError(err).message);
    return;
  }
  if (run || !conv.messages.length) return;
  note("info", `The conversation as you left it (${conv.messages.length} messages, kept sealed in this browser). New chat deletes it.`);
  let turn = null;
  const results = new Map(conv.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m]));
  for (const m of conv.messages) {
    if (m.role === "user") {
      turn = null;
      const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c?.text ?? "").join("");
      append(h("li", { class: "chat-msg user" }, h("span", { class: "chat-who", text: "You" }), h("div", { class: "chat-text", text })));
    } else if (m.role === "assistant") {
      turn ??= new Turn("earlier", new AbortController().signal);
      if (m.content) {
        turn.text(typeof m.content === "string" ? m.content : m.content.map((c) => c?.text ?? "").join(""));
        turn.endText();
      }
      for (const tc of m.tool_calls ?? []) {
        const kept = conv.views[tc.id];
        turn.toolCall({ id: tc.id, name: tc.function?.name ?? "", serverId: kept?.app.serverId, tool: kept?.app.tool, arguments: tc.function?.arguments ?? "{}" });
        const r = results.get(tc.id);
        if (r) turn.toolResult({ id: tc.id, isError: kept?.result.isError === true, text: typeof r.content === "string" ? r.content : JSON.stringify(r.content), app: kept?.app, result: kept?.result });
      }
    }
  }
}

/** The module and the catalog are ready. */
export function startChat(loaded) {
  mcp = loaded;
  setBusy(false);
  serverEvents.addEventListener("statuschange", renderAuthNeeds);
  serverEvents.addEventListener("listchange", renderAuthNeeds);
  renderAuthNeeds();
  restore().finally(() => { chatLog.dataset.restored = "true"; });
}
