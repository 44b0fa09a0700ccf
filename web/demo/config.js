// config.js — where the demo servers are: the dev server publishes their
// URLs (its ports are chosen at start) at /devserver/config.json. Served by
// anything else, the page has no demo servers and asks for URLs.

/**
 * Resolves {mcpURL, sseURL, asURL, mcp2URL, modelURL, sandboxURL}, each a
 * string or absent; {} when there is no such file. sandboxURL is the MCP
 * Apps sandbox proxy (sandbox.html on an origin of its own), where the
 * chat shows servers' views.
 */
export async function loadConfig() {
  try {
    const r = await fetch(new URL("devserver/config.json", document.baseURI), { cache: "no-store" });
    if (!r.ok) return {};
    const c = await r.json();
    if (c === null || typeof c !== "object" || Array.isArray(c)) return {};
    const out = {};
    for (const k of ["mcpURL", "sseURL", "asURL", "mcp2URL", "modelURL", "sandboxURL"]) {
      if (typeof c[k] === "string" && c[k]) out[k] = c[k];
    }
    return out;
  } catch {
    return {};
  }
}
