// The arguments a model is still writing, as a view sees them
// (web/partialjson.js): every prefix of a call's JSON gives an object that
// only grows towards the whole, never a wrong value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { partialJSON } from "../../web/partialjson.js";

test("each prefix of the arguments says what is written so far", () => {
  assert.deepEqual(partialJSON('{"city": "Par'), { city: "Par" });
  assert.deepEqual(partialJSON('{"city": "Paris", "days'), { city: "Paris" });
  assert.deepEqual(partialJSON('{"city": "Paris", "days":'), { city: "Paris" });
  assert.deepEqual(partialJSON('{"city": "Paris", "days": 1'), { city: "Paris", days: 1 });
  assert.deepEqual(partialJSON('{"ok": tr'), {});
  assert.deepEqual(partialJSON('{"list": [1, 2, {"a": "x\\'), { list: [1, 2, { a: "x" }] });
  assert.deepEqual(partialJSON('{"q": "say \\"hi'), { q: 'say "hi' });
  assert.deepEqual(partialJSON('{"a": {"b": [true, null, "}]'), { a: { b: [true, null, "}]"] } });
  assert.deepEqual(partialJSON("{"), {});
});

test("the whole text is the whole object, and what is no object is undefined", () => {
  const whole = '{"code": "const s = new THREE.Scene();\\nrender(s);", "height": 400}';
  assert.deepEqual(partialJSON(whole), JSON.parse(whole));
  for (let i = 1; i <= whole.length; i++) assert.equal(typeof partialJSON(whole.slice(0, i)), "object");
  assert.equal(partialJSON(""), undefined);
  assert.equal(partialJSON("[1, 2"), undefined);
  assert.equal(partialJSON('"text'), undefined);
  assert.equal(partialJSON(42), undefined);
});
