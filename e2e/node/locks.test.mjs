// acquireLock without Web Locks (Node 20 has no navigator.locks, as an
// insecure context has none): the holders of one name take turns, in
// order, and other names are not held up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { acquireLock } from "../../web/auth.js";

test("without Web Locks, one name's holders take turns in order", async () => {
  assert.equal(globalThis.navigator?.locks, undefined, "this test needs a runtime without Web Locks");
  const order = [];
  const hold = async (who, ms) => {
    const release = await acquireLock("refresh a");
    order.push(`${who} in`);
    await new Promise((r) => setTimeout(r, ms));
    order.push(`${who} out`);
    release();
    release(); // a second release changes nothing
  };
  await Promise.all([hold("first", 30), hold("second", 10), hold("third", 0)]);
  assert.deepEqual(order, ["first in", "first out", "second in", "second out", "third in", "third out"]);
});

test("without Web Locks, another name is not held up", async () => {
  const release = await acquireLock("refresh b");
  const other = await Promise.race([acquireLock("refresh c"), new Promise((r) => setTimeout(() => r(null), 500))]);
  assert.notEqual(other, null, "a lock of another name waited for refresh b");
  other();
  let taken = false;
  const next = acquireLock("refresh b").then((r) => { taken = true; return r; });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(taken, false, "refresh b was taken twice at once");
  release();
  (await next)();
  assert.equal(taken, true);
});
