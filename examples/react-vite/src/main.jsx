import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

// A Content-Security-Policy violation is a bug the tests look for.
document.addEventListener("securitypolicyviolation", (e) => {
  document.body.dataset.cspViolations = String(Number(document.body.dataset.cspViolations || 0) + 1);
  console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
});

const root = createRoot(document.getElementById("root"));

if (location.pathname === "/oauth/callback") {
  // This route is the OAuth redirect URI: the callback module relays the
  // result to the window that opened the sign-in and closes this one.
  root.render(<p role="status">Finishing sign-in…</p>);
  import("mcpwasm/callback");
} else {
  import("./App.jsx").then(({ App }) => root.render(<StrictMode><App /></StrictMode>));
}
