// The view's Content-Security-Policy (web/apps/csp.js), as the page and
// the sandbox proxy build it: the specification's restrictive default,
// declared origins added to their directives only, and every entry that
// would widen the policy beyond an origin refused with its reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { policy, source, allow, trustProblem } from "../../web/apps/csp.js";

const directives = (p) => Object.fromEntries(p.split("; ").map((d) => { const [k, ...v] = d.split(" "); return [k, v]; }));

test("nothing declared: the specification's default", () => {
  const { policy: p, kept, dropped } = policy(undefined);
  const d = directives(p);
  assert.deepEqual(d["default-src"], ["'none'"]);
  assert.deepEqual(d["connect-src"], ["'none'"]);
  assert.deepEqual(d["frame-src"], ["'none'"]);
  assert.deepEqual(d["object-src"], ["'none'"]);
  assert.deepEqual(d["base-uri"], ["'self'"]);
  assert.deepEqual(d["form-action"], ["'none'"]);
  assert.deepEqual(d["script-src"], ["'self'", "'unsafe-inline'"]);
  assert.ok(!p.includes("unsafe-eval"));
  assert.deepEqual(kept, {});
  assert.deepEqual(dropped, []);
});

test("declared origins feed their directives and no others", () => {
  const { policy: p, kept } = policy({
    connectDomains: ["https://api.example.com", "wss://live.example.com:8443"],
    resourceDomains: ["https://*.cdn.example.com/"],
    frameDomains: ["https://player.example.com"],
    baseUriDomains: ["https://base.example.com"],
  });
  const d = directives(p);
  assert.deepEqual(d["connect-src"], ["https://api.example.com", "wss://live.example.com:8443"]);
  for (const k of ["script-src", "style-src", "img-src", "font-src", "media-src"]) assert.ok(d[k].includes("https://*.cdn.example.com"), k);
  assert.deepEqual(d["frame-src"], ["https://player.example.com"]);
  assert.deepEqual(d["base-uri"], ["'self'", "https://base.example.com"]);
  assert.deepEqual(d["default-src"], ["'none'"]);
  assert.ok(!d["script-src"].includes("https://api.example.com"));
  assert.deepEqual(kept.resourceDomains, ["https://*.cdn.example.com"]);
});

test("entries that would widen the policy are dropped with a reason", () => {
  const page = "http://127.0.0.1:8080", sandbox = "http://127.0.0.1:8085";
  const bad = [
    ["*", "origin"],
    ["https://*.com", "top-level domain"],
    ["http://api.example.com", "loopback"],
    ["https://a.example.com; script-src *", "separator"],
    ["https://a.example.com/path", "origin"],
    ["https://user@a.example.com", "origin"],
    ["'unsafe-eval'", "quote"],
    ["data:", "origin"],
    ["https://a..example.com", "empty host label"],
    [page, "own origin"],
    ["ws://127.0.0.1:8085", "own origin"],
    [42, "non-empty string"],
  ];
  for (const [domain, why] of bad) {
    const r = source(domain, [page, sandbox]);
    assert.ok(r.problem?.includes(why), `${domain}: ${JSON.stringify(r)}; want a problem saying ${why}`);
  }
  const { policy: p, dropped, kept } = policy({ connectDomains: ["*", "https://ok.example.com"], frameDomains: "https://x.example.com" }, [page]);
  assert.equal(directives(p)["connect-src"].join(" "), "https://ok.example.com");
  assert.deepEqual(dropped.map((x) => [x.list, x.domain]), [["connectDomains", "*"], ["frameDomains", "https://x.example.com"]]);
  assert.deepEqual(kept, { connectDomains: ["https://ok.example.com"] });
  assert.equal(source("http://localhost:3000").source, "http://localhost:3000");
});

test("grants the page gives a server's views widen only their own directives", () => {
  const d = directives(policy(undefined, [], ["eval"]).policy);
  assert.deepEqual(d["script-src"], ["'self'", "'unsafe-inline'", "'unsafe-eval'"]);
  assert.equal(d["worker-src"], undefined);
  const all = directives(policy({ resourceDomains: ["https://cdn.example.com"] }, [], ["eval", "wasm", "blob"]).policy);
  assert.deepEqual(all["script-src"], ["'self'", "'unsafe-inline'", "'unsafe-eval'", "'wasm-unsafe-eval'", "blob:", "data:", "https://cdn.example.com"]);
  assert.deepEqual(all["worker-src"], ["'self'", "blob:", "data:"]);
  assert.deepEqual(all["connect-src"], ["'none'"]);
  assert.deepEqual(all["default-src"], ["'none'"]);
  // A name that is no grant adds nothing, even if the host's check was bypassed.
  assert.equal(policy(undefined, [], ["*", "unsafe-eval", "__proto__"]).policy, policy(undefined).policy);
  assert.equal(trustProblem(["eval", "blob"]), "");
  assert.match(trustProblem(["eval", "all"]), /"all", which is not one of eval, wasm, blob/);
  assert.match(trustProblem("eval"), /list/);
});

test("declared permissions become the frame's allow list", () => {
  assert.equal(allow({ camera: {}, clipboardWrite: {} }), "camera *; clipboard-write *");
  assert.equal(allow({ camera: true, usb: {} }), "");
  assert.equal(allow(null), "");
});
