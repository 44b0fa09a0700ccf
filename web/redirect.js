// redirect.js — the check that a full-page redirect sign-in's return was
// finished (mcp.handleCallback()): a page the sign-in came back to, with
// no callback module run there, says so instead of waiting forever.
import { RETURN_KEY } from "./auth.js";
import { MCPError } from "./errors.js";
import { UNHANDLED_RETURN } from "./jsapi.js";

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
  throw new MCPError("redirect_unhandled", UNHANDLED_RETURN.message.replace("{url}", at), { detail: UNHANDLED_RETURN.detail.replace("{url}", at) });
}
