// A view's storage kept under render()'s stateKey (web/apps/viewstorage.js):
// the localStorage the proxy gives the view, and the page's side that keeps
// what the view sends. The browsers run both in e2e (TestAppViewKeepsItsState).
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_VIEW_STORAGE, STORAGE_CHANGED, ViewStorage, isStorage, storageScript } from "../../web/apps/viewstorage.js";

/** Runs the script's code as the view's document would, in a window of its own; returns it and what it posted. */
function viewWindow(items) {
  const html = storageScript(items);
  const code = html.replace(/^<script>/, "").replace(/<\/script>$/, "");
  const posted = [];
  const window = {};
  const parent = { postMessage: (msg, target) => posted.push({ msg, target }) };
  new Function("window", "parent", code)(window, parent);
  return { window, posted, html };
}

const tick = () => new Promise((r) => setTimeout(r));

test("the view's localStorage starts with what was kept and posts each change once, whole", async () => {
  const { window, posted } = viewWindow({ page: "3", "view-uuid": "x" });
  const ls = window.localStorage;
  assert.equal(ls.getItem("page"), "3");
  assert.equal(ls.length, 2);
  assert.equal(ls.getItem("none"), null);
  ls.setItem("page", 4); // values are strings, as a Storage's
  ls.zoom = "2"; // a name set as a property is an item
  ls.removeItem("view-uuid");
  assert.equal(posted.length, 0, "posted before the changes of one task were made");
  await tick();
  assert.equal(posted.length, 1);
  assert.deepEqual(posted[0].msg, { jsonrpc: "2.0", method: STORAGE_CHANGED, params: { items: { page: "4", zoom: "2" } } });
  assert.equal(ls.zoom, "2");
  assert.equal(ls.key(0), "page");
  assert.deepEqual(Object.keys(ls).sort(), ["page", "zoom"]);
  assert.equal("zoom" in ls, true);
  assert.equal(typeof ls.setItem, "function");
  ls.setItem("page", "4"); // no change: nothing posted
  await tick();
  assert.equal(posted.length, 1);
  delete ls.zoom;
  ls.clear();
  await tick();
  assert.deepEqual(posted.at(-1).msg.params.items, {});
});

test("a write past the quota throws QuotaExceededError and changes nothing", async () => {
  const { window, posted } = viewWindow({});
  const ls = window.localStorage;
  ls.setItem("a", "x".repeat(MAX_VIEW_STORAGE - 10));
  assert.throws(() => ls.setItem("b", "y".repeat(20)), (e) => e.name === "QuotaExceededError");
  ls.setItem("a", "short"); // replacing frees the old value's room
  ls.setItem("b", "y".repeat(20));
  await tick();
  assert.deepEqual(posted.at(-1).msg.params.items, { a: "short", b: "y".repeat(20) });
});

test("what was kept cannot end the script it is put in", () => {
  const { html, window } = viewWindow({ x: "</script><script>alert(1)</script><!--" });
  assert.equal(html.match(/<\/script>/g).length, 1);
  assert.equal(window.localStorage.getItem("x"), "</script><script>alert(1)</script><!--");
});

test("isStorage takes names and strings within the quota only", () => {
  assert.equal(isStorage({ a: "1" }), true);
  assert.equal(isStorage({}), true);
  for (const bad of [null, [], "x", { a: 1 }, { a: null }, { a: "x".repeat(MAX_VIEW_STORAGE) }]) assert.equal(isStorage(bad), false, JSON.stringify(bad)?.slice(0, 40));
});

test("the page keeps one write at a time, and the last change made during one after it", async () => {
  const writes = [];
  let release;
  const views = {
    read: async () => ({ storage: { n: "0" } }),
    keep: (key, items) => {
      writes.push({ key, items });
      return new Promise((r) => { release = r; });
    },
  };
  const s = await ViewStorage.open(views, "conversation:c/call_1", "https://x.example/mcp");
  assert.deepEqual(s.items, { n: "0" });
  const kept = [];
  s.onKept = (items, error) => kept.push({ items, error });
  assert.equal(s.changed({ n: "1" }), true);
  assert.equal(s.changed({ n: "2" }), true);
  assert.equal(s.changed({ n: "3" }), true);
  assert.equal(s.changed({ n: 4 }), false);
  assert.equal(writes.length, 1);
  assert.equal(writes[0].key, "conversation:c/call_1\u0000https://x.example/mcp");
  release();
  await tick();
  assert.deepEqual(writes.map((w) => w.items.n), ["1", "3"]);
  release();
  await s.flush();
  assert.deepEqual(kept.map((k) => [k.items.n, k.error]), [["1", null], ["3", null]]);
});

test("a store that cannot be read starts the view empty and says why", async () => {
  const s = await ViewStorage.open({ read: async () => { throw new Error("disk on fire"); } }, "k", "https://x.example/mcp");
  assert.deepEqual(s.items, {});
  assert.match(s.problem, /could not be read \(disk on fire\); it starts with an empty storage/);
  const bad = await ViewStorage.open({ read: async () => ({ storage: { a: 1 } }) }, "k", "u");
  assert.deepEqual(bad.items, {});
});
