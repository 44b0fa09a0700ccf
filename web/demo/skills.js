// skills.js — the explorer's skills (the Skills extension): each skill's
// name and description as listed; Load reads its SKILL.md, verified
// against the server's entry, into the viewer.
import { $, h, describeError, errorBox } from "./util.js";
import { addLog } from "./log.js";
import { session, currentClient } from "./connect.js";

const SKILLS = "io.modelcontextprotocol/skills";

async function refreshSkills() {
  const c = currentClient();
  if (!c || c.state !== "connected") return;
  const list = $("#skills");
  if (!c.capabilities?.extensions?.[SKILLS]) {
    list.replaceChildren(h("li", { class: "empty", text: "This server offers no skills." }));
    return;
  }
  try {
    const skills = await c.skills();
    if (currentClient() !== c) return;
    list.replaceChildren(...(skills.length ? skills.map((s) => h("li", {},
      h("button", { type: "button", class: "item", dataset: { skill: s.uri }, disabled: s.dynamic, onclick: () => loadSkill(s) },
        h("span", { class: "item-title", text: s.name }),
        h("code", { class: "item-sub", text: s.uri }),
        h("span", { class: "item-desc", text: s.description }),
        h("span", { class: "chip", text: s.dynamic ? "generated: not verifiable" : `${s.files?.length ?? 0} files` })))) :
      [h("li", { class: "empty", text: "No skills listed." })]));
  } catch (err) {
    if (currentClient() !== c) return;
    list.replaceChildren(h("li", { class: "empty error-text", text: `Could not list skills: ${describeError(err).message}` }));
  }
}

async function loadSkill(s) {
  const c = currentClient();
  if (!c) return;
  const view = $("#skill-view");
  view.hidden = false;
  view.replaceChildren(h("p", { class: "muted", text: `Loading ${s.name}…` }));
  addLog("skill", s.uri);
  try {
    const loaded = await c.loadSkill(s.uri);
    if (currentClient() !== c) return;
    view.replaceChildren(
      h("div", { class: "viewer-head" },
        h("h3", { text: `${loaded.name}: verified` }),
        h("button", { type: "button", class: "btn btn-ghost btn-small", text: "Close", "aria-label": "Close the skill", onclick: () => { view.hidden = true; } })),
      h("p", { class: "muted", text: "The server's instructions, checked against its listing (size, digest, frontmatter)." }),
      h("pre", { class: "text-content", dataset: { skillText: loaded.uri }, text: loaded.text }));
  } catch (err) {
    if (currentClient() !== c) return;
    view.replaceChildren(errorBox(`Could not load ${s.name}`, err));
  }
}

export function initSkills() {
  session.addEventListener("connected", refreshSkills);
  session.addEventListener("reset", (e) => {
    $("#skills").replaceChildren(h("li", { class: "empty", text: e.detail.message }));
    $("#skill-view").hidden = true;
  });
}
