// redirect.js — the check that a full-page redirect sign-in's return was
// finished (mcp.handleCallback()): a page the sign-in came back to, with
// no callback module run there, says so instead of waiting forever.
import { RETURN_KEY } from "./auth.js";
import { MCPError } from "./errors.js";

/**
 * Throws redirect_unhandled when this page is itself a redirect sign-in's
 * return (a result in its query, a return address the sign-in left) that
 * no callback module took: the app's server answered at the redirect URI
 * with this page.
 */
export function unhandledReturn() {
  const q = new URLSearchParams(globalThis.location?.search ?? "");
  let returning = null;
  try { returning = sessionStorage.getItem(RETURN_KEY); } catch { /* storage off */ }
  if (!returning || !q.has("state") || !(q.has("code") || q.has("error"))) return;
  sessionStorage.removeItem(RETURN_KEY);
  const at = location.origin + location.pathname;
  throw new MCPError("redirect_unhandled", `The sign-in came back to ${at}, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does.`,
    { detail: `the redirect sign-in returned to ${at} and no callback module (mcpwasm/callback, oauth/callback.html) ran there; it left no result for handleCallback()` });
}
