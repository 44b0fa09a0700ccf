// The OAuth redirect receiver: a thin courier; the runtime owns PKCE,
// state and the exchange. It relays the
// authorization response — {code, state, iss} or {error, error_description,
// state} — to the page that started the login, and closes itself. It never
// exchanges the code and never inserts URL data as HTML.
//
// Paths, all tried:
//  - window.opener.postMessage(..., own origin): the popup flow;
//  - BroadcastChannel "mcpwasm-oauth": when a Cross-Origin-Opener-Policy on
//    the authorization server severed window.opener;
//  - full-page redirect mode (no opener, a return address in sessionStorage):
//    store the callback URL and go back to the app, whose
//    mcp.handleCallback() completes the flow.
//
// It is also the module "mcpwasm/callback" of the npm package: importing it
// on any route of a single-page app makes that route the redirect receiver
// (it does its work once, on import). The #status and #hint elements of
// oauth/callback.html are optional.
const CHANNEL = "mcpwasm-oauth";
const RETURN_KEY = "mcpwasm:returnTo";
const CALLBACK_KEY = "mcpwasm:callback";

// The sign-in window's opener reads this (same origin) to know that a
// callback receiver ran here, whatever it found in the URL: without it, a
// window at the redirect URI ends the sign-in as redirect_unhandled.
window.__mcpwasmCallback = true;

const status = document.getElementById("status");
const hint = document.getElementById("hint");
const say = (text) => {
  if (status) status.textContent = text;
};

const params = new URLSearchParams(location.search);
const message = { type: "mcpwasm:oauth-callback", url: location.href };
for (const k of ["code", "state", "iss", "error", "error_description"]) {
  if (params.has(k)) message[k] = params.get(k);
}

function relay() {
  let delivered = false;
  if (window.opener && !window.opener.closed) {
    try {
      window.opener.postMessage(message, location.origin);
      delivered = true;
    } catch { /* a severed or cross-origin opener */ }
  }
  if ("BroadcastChannel" in window) {
    const ch = new BroadcastChannel(CHANNEL);
    ch.postMessage(message);
    ch.close();
    delivered = true;
  }
  return delivered;
}

const returnTo = sessionStorage.getItem(RETURN_KEY);
if (!window.opener && returnTo) {
  // Full-page redirect mode: hand the result back to the app page.
  sessionStorage.removeItem(RETURN_KEY);
  sessionStorage.setItem(CALLBACK_KEY, location.href);
  const target = new URL(returnTo, location.href);
  if (target.origin === location.origin) {
    say("Signed in. Returning to the app…");
    location.replace(target.href);
  } else {
    say("Sign-in finished, but the return address is not on this site.");
  }
} else if (!message.state) {
  say("This page finishes a sign-in, but it was opened without one.");
} else {
  relay();
  say(message.error ? "Sign-in was not completed." : "Signed in. This window will close.");
  // Give the messages a moment to leave, then close (popups only).
  setTimeout(() => {
    window.close();
    if (hint) hint.hidden = false;
  }, 300);
}
