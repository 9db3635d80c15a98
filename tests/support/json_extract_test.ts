import assert from "node:assert/strict";
import { extractJsonObject } from "../../agents/support/json_extract.ts";

const FENCE = "```";

Deno.test("extractJsonObject finds a JSON object in model output", async (t) => {
  await t.step("a bare object", () => {
    assert.deepEqual(extractJsonObject('{"complete": true, "missing": []}'), {
      complete: true,
      missing: [],
    });
  });

  await t.step("a bare object with surrounding whitespace", () => {
    assert.deepEqual(extractJsonObject('\n\n  {"a": 1}  \n'), { a: 1 });
  });

  await t.step("a fenced object with a json info string", () => {
    assert.deepEqual(extractJsonObject(`${FENCE}json\n{"status": "waiting"}\n${FENCE}`), {
      status: "waiting",
    });
  });

  await t.step("a fenced object without an info string", () => {
    assert.deepEqual(extractJsonObject(`${FENCE}\n{"status": "done"}\n${FENCE}`), {
      status: "done",
    });
  });

  await t.step("a fenced object with CRLF line ends", () => {
    assert.deepEqual(extractJsonObject(`${FENCE}json\r\n{"a": 1}\r\n${FENCE}`), { a: 1 });
  });

  await t.step("a fenced object among prose", () => {
    const text =
      `Here is my verdict:\n\n${FENCE}json\n{\n  "complete": false\n}\n${FENCE}\n\nThanks.`;
    assert.deepEqual(extractJsonObject(text), { complete: false });
  });

  await t.step("an object surrounded by prose on the same line", () => {
    assert.deepEqual(
      extractJsonObject('Sure! {"status": "waiting", "reason": "CI"} Hope that helps'),
      { status: "waiting", reason: "CI" },
    );
  });

  await t.step("nested objects are returned whole", () => {
    const text = 'Result: {"outer": {"inner": {"deep": [1, {"x": 2}]}}, "ok": true} end';
    assert.deepEqual(extractJsonObject(text), {
      outer: { inner: { deep: [1, { x: 2 }] } },
      ok: true,
    });
  });

  await t.step("braces inside strings do not end the object", () => {
    const text = 'Verdict: {"note": "use } and { with care", "ok": true} -- done';
    assert.deepEqual(extractJsonObject(text), { note: "use } and { with care", ok: true });
  });

  await t.step("escaped quotes inside strings do not end the string", () => {
    const text = 'Reply {"quote": "she said \\"}\\" twice", "n": 2} ok';
    assert.deepEqual(extractJsonObject(text), { quote: 'she said "}" twice', n: 2 });
  });

  await t.step("an unbalanced brace before the object does not hide it", () => {
    assert.deepEqual(extractJsonObject('Look { here: {"a": 1}'), { a: 1 });
  });

  await t.step("an object holding an array is an object", () => {
    assert.deepEqual(extractJsonObject('{"missing": ["tests", "docs"]}'), {
      missing: ["tests", "docs"],
    });
  });
});

Deno.test("extractJsonObject returns undefined when there is no JSON object", async (t) => {
  await t.step("arrays are not objects", () => {
    assert.equal(extractJsonObject("[1, 2, 3]"), undefined);
    assert.equal(extractJsonObject(`${FENCE}json\n["a", "b"]\n${FENCE}`), undefined);
  });

  await t.step("other JSON values are not objects", () => {
    assert.equal(extractJsonObject("null"), undefined);
    assert.equal(extractJsonObject("42"), undefined);
    assert.equal(extractJsonObject('"text"'), undefined);
  });

  await t.step("garbage", () => {
    assert.equal(extractJsonObject(""), undefined);
    assert.equal(extractJsonObject("no json here"), undefined);
    assert.equal(extractJsonObject("{not: json}"), undefined);
    assert.equal(extractJsonObject("{"), undefined);
    assert.equal(extractJsonObject("}{"), undefined);
    assert.equal(extractJsonObject(`${FENCE}json\n{"a": }\n${FENCE}`), undefined);
  });
});

Deno.test("extractJsonObject prefers the first valid object", async (t) => {
  await t.step("of two objects in prose, the first wins", () => {
    assert.deepEqual(extractJsonObject('First {"a": 1} then {"b": 2}'), { a: 1 });
  });

  await t.step("an invalid span is skipped for the next valid one", () => {
    assert.deepEqual(extractJsonObject('{oops} and then {"b": 2}'), { b: 2 });
  });

  await t.step("of two fenced blocks, the first valid one wins", () => {
    const text = `${FENCE}json\n{"a": 1}\n${FENCE}\n${FENCE}json\n{"b": 2}\n${FENCE}`;
    assert.deepEqual(extractJsonObject(text), { a: 1 });
  });

  await t.step("a fenced block that is not JSON is skipped for a later one", () => {
    const text = `${FENCE}ts\nconst x = {a: 1};\n${FENCE}\n${FENCE}json\n{"b": 2}\n${FENCE}`;
    assert.deepEqual(extractJsonObject(text), { b: 2 });
  });

  await t.step("a fenced object is preferred over an object in prose", () => {
    const text =
      `I first thought {"complete": true}, but:\n${FENCE}json\n{"complete": false}\n${FENCE}`;
    assert.deepEqual(extractJsonObject(text), { complete: false });
  });
});
