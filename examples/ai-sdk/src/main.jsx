import "./jitless.js"; // first: before the AI SDK's modules run
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.jsx";

// A Content-Security-Policy violation is a bug the tests look for.
document.addEventListener("securitypolicyviolation", (e) => {
  document.body.dataset.cspViolations = String(Number(document.body.dataset.cspViolations || 0) + 1);
  console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
});

createRoot(document.getElementById("root")).render(<StrictMode><App /></StrictMode>);
