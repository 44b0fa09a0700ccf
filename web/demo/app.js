// app.js — the mcpwasm demo page. It wires the panels, each a module that
// owns its state:
//
//   load.js       downloading and starting the MCP client module
//   config.js     where the dev server's demo servers and model are
//   servers.js    the Servers panel: one catalog of many MCP servers
//   chat.js       the Chat panel: an agent over that catalog
//   connect.js    "Explore one server": the connection and its sign-in
//   tools.js, resources.js, prompts.js, skills.js   what that server offers
//   tasks.js      its tasks kept from calls before this page loaded
//   dialogs.js    the server's elicitation and sampling requests
//   log.js        the event log
//
// Rules every module keeps: no framework, no inline script or style (the
// page runs under a strict CSP), and server data only ever reaches the DOM
// as text (textContent, attribute values), never as HTML.
import { loadModule } from "./load.js";
import { loadConfig } from "./config.js";
import { initLog } from "./log.js";
import { initConnectForm, startConnect, currentClient, session } from "./connect.js";
import { initTools } from "./tools.js";
import { initResources } from "./resources.js";
import { initPrompts } from "./prompts.js";
import { initSkills } from "./skills.js";
import { initTasks } from "./tasks.js";
import { initDialogs, elicit, sample, closeDialogs } from "./dialogs.js";
import { startServers, getCatalog } from "./servers.js";
import { initChat, startChat, approve } from "./chat.js";

initLog();
initTools();
initResources();
initPrompts();
initSkills();
initTasks();
initDialogs();
// Requests of a session that ended cannot be answered any more.
session.addEventListener("reset", closeDialogs);

const loading = loadModule();
// The dev server's config arrives long before the module: the URL field
// and the model choice are filled while it downloads.
const config = await loadConfig();
initConnectForm(config.mcpURL);
initChat(config);
const mcp = await loading;
startConnect(mcp, { elicit, sample });
// One catalog for the page, made once: its approve hook is the chat's
// Approve / Deny prompt; its servers' questions (a form, or a page to
// open, shown as a link) use the same dialog as the single client's.
startServers(mcp, config, { approve, onElicitation: (request) => elicit(request) });
startChat(mcp);
document.body.dataset.ready = "true";

// For debugging in the console; the page does not rely on it.
Object.defineProperty(window, "demo", {
  value: { get client() { return currentClient(); }, get catalog() { return getCatalog(); }, mcp },
});
