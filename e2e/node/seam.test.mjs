// The page's side of the Go↔JS seam: what web/jsapi.js (generated from
// Go's jsapi package) carries is what rules.js, remote.js and worker.js
// act on. rules.js refuses to load when its host policy tests and
// jsapi.js's checks name different checks; e2e/xengine's parity tests
// compare the answers with Go's in each browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HOST_CALLBACKS, HOSTS, ID_FIELDS, POLICY, TARGET_KINDS, target } from "../../web/jsapi.js";
import { globRegExp, policyProblem, policyRefusal } from "../../web/rules.js";
import { PROTOCOL } from "../../web/remote.js";

test("a glob's * and ? never match a /, as Go's path.Match", () => {
  assert.equal(globRegExp("*").test("notes_list"), true);
  assert.equal(globRegExp("*").test("team/notes_list"), false);
  assert.equal(globRegExp("notes_?").test("notes_/"), false);
  assert.equal(globRegExp("*/*").test("team/notes_list"), true);
  assert.equal(globRegExp("a.b").test("axb"), false);
});

test("each check of a pattern refuses with its problem, in jsapi.js's order", () => {
  const examples = {
    form: "*.corp.example", scheme: "ftp://x.example", chars: "https://x.example/?q", bracket: "https://[bad/",
    ipv6: "http://[::1%eth0]", emptyPort: "https://x.example:", noHost: "https://*", ascii: "https://bücher.example/*",
    hostGlob: "https://x[.example", port: "https://x.example:abc", http: "http://corp.example/*",
    pathGlob: "https://x.example/[", dots: "https://x.example/a/../b",
  };
  for (const c of POLICY.patternChecks) {
    assert.ok(c.name in examples, `pattern check ${c.name} has no example here`);
    const s = examples[c.name];
    assert.equal(policyProblem("policy()", { servers: [s] }), `policy(): servers entry ${JSON.stringify(s)} ${c.problem}`);
  }
});

test("each check of a URL as written refuses it, with its form's why and fix", () => {
  const examples = {
    control: " https://a.corp.example/mcp", scheme: "javascript:alert(1)", escape: "https://a.corp.example/%zz",
    backslash: "https://api.example.com/team-a/..\\admin", userinfo: "https://user@a.corp.example/mcp", bracket: "https://[::1]x/mcp",
    ipv6: "https://[fe80::1%25eth0]:8443/mcp", noHost: "https://:443/mcp", hostChars: "https://bücher.example/mcp",
    port: "https://a.corp.example:99999/mcp", ipv4: "http://127.1:8080/mcp", encodedSlash: "https://api.example.com/team-a/x%2fy",
    dots: "https://api.example.com/team-a/../admin",
  };
  const policies = [{ options: { servers: ["https://x.example/*"] }, owner: "the test's policy" }];
  for (const c of POLICY.plainChecks) {
    assert.ok(c.name in examples, `URL check ${c.name} has no example here`);
    const got = policyRefusal(policies, "server", examples[c.name]);
    const why = c.form ? `${POLICY.plainForms[c.form].why}, so the test's policy refuses it; ${POLICY.plainForms[c.form].fix}` : `${POLICY.forms.notURL}, so the test's policy refuses it`;
    assert.ok(got?.endsWith(why), `${c.name}: ${examples[c.name]}: ${got}`);
  }
});

test("the worker's tables come from jsapi.js", () => {
  assert.deepEqual(Object.keys(HOST_CALLBACKS).sort(), [...HOSTS].sort());
  assert.equal(HOST_CALLBACKS.event.reply, false);
  assert.equal(HOST_CALLBACKS.approve.reply, true);
  assert.deepEqual([...ID_FIELDS].sort(), ["catalog", "id", "run"]);
  assert.ok(PROTOCOL.endsWith(`:${ID_FIELDS.join(",")}`));
  assert.equal(target("client", "c1"), "client:c1");
  assert.ok(TARGET_KINDS.includes("run"));
  assert.throws(() => target("tab", "x"));
});
