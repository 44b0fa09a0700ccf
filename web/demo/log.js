// log.js — the event log panel: one line per thing that happened, with a
// kind ("state", "call", "catalog", …) and a level (info, warn, error).
// Expected steps (a server asking for a sign-in) are info, never error.
import { $, h } from "./util.js";

const LOG_LIMIT = 300;
const logList = $("#log");

export function addLog(kind, text, level = "info") {
  const stick = logList.scrollTop + logList.clientHeight >= logList.scrollHeight - 8;
  const now = new Date();
  const time = now.toLocaleTimeString([], { hour12: false });
  logList.append(h("li", { class: `log-entry log-${level}`, dataset: { kind, level } },
    h("time", { datetime: now.toISOString(), text: time }),
    h("span", { class: "log-kind", text: kind }),
    h("span", { class: "log-text", text })));
  while (logList.children.length > LOG_LIMIT) logList.firstElementChild.remove();
  if (stick) logList.scrollTop = logList.scrollHeight;
}

export function initLog() {
  $("#log-clear").addEventListener("click", () => logList.replaceChildren());
  // The page runs under a strict CSP (see index.html): report anything it blocks.
  document.addEventListener("securitypolicyviolation", (e) => {
    document.body.dataset.cspViolations = String(Number(document.body.dataset.cspViolations || 0) + 1);
    addLog("csp", `blocked by ${e.effectiveDirective}: ${e.blockedURI || "inline"}`, "error");
  });
}
