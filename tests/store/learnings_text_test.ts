import assert from "node:assert/strict";
import {
  formatLearnings,
  learningsFinder,
  parseLearnings,
  reportedLearnings,
} from "../../agents/store/learnings_text.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { openStore } from "./_helpers.ts";

const RUN_ID = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f";

Deno.test("parseLearnings", async (t) => {
  await t.step("reads a JSON array of learnings with their fields", () => {
    assert.deepEqual(
      parseLearnings(
        '[{"learning": " Run deno fmt first ", "tool_or_technique": "deno fmt", ' +
          '"applicability": "always", "tags": ["deno", 3]}]',
      ),
      [{
        text: "Run deno fmt first",
        technique: "deno fmt",
        applicability: "always",
        tags: ["deno", "3"],
      }],
    );
  });

  await t.step("accepts text and technique as field names", () => {
    assert.deepEqual(parseLearnings('[{"text": "a lesson", "technique": "grep"}]'), [
      { text: "a lesson", technique: "grep", applicability: undefined, tags: undefined },
    ]);
  });

  await t.step("reads an object holding the array under learnings", () => {
    assert.deepEqual(
      parseLearnings('{"learnings": [{"learning": "one"}, "two"]}').map((l) => l.text),
      ["one", "two"],
    );
  });

  await t.step("reads a fenced block and an array inside prose", () => {
    assert.deepEqual(
      parseLearnings('Sure!\n```json\n[{"learning": "fenced"}]\n```\nThat is all.').map((l) =>
        l.text
      ),
      ["fenced"],
    );
    assert.deepEqual(
      parseLearnings('What I found: ["prose array"] - hope it helps').map((l) => l.text),
      ["prose array"],
    );
  });

  await t.step("takes plain strings and skips entries without text", () => {
    assert.deepEqual(
      parseLearnings(
        '["  a string  ", "", "   ", 42, null, {"learning": ""}, {"tags": ["x"]}, ' +
          '{"learning": 7}, {"learning": "kept"}]',
      ).map((learning) => learning.text),
      ["a string", "kept"],
    );
  });

  await t.step("gives none for garbage, empty arrays and objects without learnings", () => {
    assert.deepEqual(parseLearnings("no idea"), []);
    assert.deepEqual(parseLearnings(""), []);
    assert.deepEqual(parseLearnings("[]"), []);
    assert.deepEqual(parseLearnings('{"learnings": "not a list"}'), []);
    assert.deepEqual(parseLearnings("[not json]"), []);
    assert.deepEqual(parseLearnings("```json\n{broken\n```"), []);
  });
});

Deno.test("formatLearnings", async (t) => {
  await t.step("writes one bullet per learning with its technique and short run id", () => {
    assert.equal(
      formatLearnings([
        { text: "Pin   TZ\nin CI ", technique: "env pinning", runId: RUN_ID },
        { text: "Run deno fmt" },
      ]),
      `- Pin TZ in CI (env pinning; run ${RUN_ID.slice(0, 8)})\n- Run deno fmt`,
    );
  });

  await t.step("keeps at most count learnings, five by default", () => {
    const found = Array.from({ length: 8 }, (_, index) => ({ text: `lesson ${index}` }));
    assert.equal(formatLearnings(found).split("\n").length, 5);
    assert.equal(formatLearnings(found, { count: 2 }), "- lesson 0\n- lesson 1");
  });

  await t.step("stops before a learning that would pass maxChars", () => {
    const found = [{ text: "a".repeat(10) }, { text: "b".repeat(10) }, { text: "c".repeat(10) }];
    // Each line is 12 characters, plus a newline between lines.
    assert.equal(
      formatLearnings(found, { maxChars: 25 }),
      `- ${"a".repeat(10)}\n- ${"b".repeat(10)}`,
    );
    assert.equal(formatLearnings(found, { maxChars: 24 }), `- ${"a".repeat(10)}`);
    assert.ok(formatLearnings(found, { maxChars: 24 }).length <= 24);
    const long = formatLearnings(
      Array.from({ length: 50 }, (_, index) => ({
        text: `${String(index).padStart(2, "0")}${"x".repeat(98)}`,
      })),
      { count: 50 },
    );
    assert.ok(long.length <= 2000);
    assert.equal(long.split("\n").length, 19);
  });

  await t.step("never writes the same learning twice, whatever its case or punctuation", () => {
    const found = [
      { text: "Pin TZ=UTC in CI", runId: RUN_ID },
      { text: "pin tz=utc in ci.", runId: "other-run" },
      { text: "  Pin   TZ=UTC in CI!  " },
      { text: "- pin TZ=UTC in CI" },
      { text: "Run the suite twice" },
      { text: "..." },
    ];
    assert.equal(
      formatLearnings(found),
      `- Pin TZ=UTC in CI (run ${RUN_ID.slice(0, 8)})\n- Run the suite twice`,
    );
    // The repeats do not take the places of distinct learnings.
    assert.equal(formatLearnings(found, { count: 2 }).split("\n").length, 2);
  });

  await t.step("says how many runs saw a learning when more than one did", () => {
    assert.equal(
      formatLearnings([{ text: "Pin TZ", runId: RUN_ID, seen: 3 }, { text: "Once", seen: 1 }]),
      `- Pin TZ (run ${RUN_ID.slice(0, 8)}; seen in 3 runs)\n- Once`,
    );
  });

  await t.step("says there are none when nothing fits", () => {
    assert.equal(formatLearnings([]), "(no learnings from earlier runs yet)");
    assert.equal(
      formatLearnings([{ text: "x".repeat(50) }], { maxChars: 10 }),
      "(no learnings from earlier runs yet)",
    );
  });
});

Deno.test("reportedLearnings counts a learning reported again once", () => {
  const iteration = (number: number, learned: string[]) => ({
    ...emptySummary(number),
    completeTask: {
      status: "partial" as const,
      original_request_summary: "Fix the build",
      summary: "Working on it",
      learned,
    },
  });
  assert.deepEqual(
    reportedLearnings([
      iteration(1, ["Run deno fmt first", "Pin TZ in CI"]),
      iteration(2, ["run deno fmt first.", "Pin TZ in CI"]),
      iteration(3, ["Pin  TZ in CI!", "Cache the npm folder"]),
    ], "fixer").map((learning) => learning.text),
    ["Run deno fmt first", "Pin TZ in CI", "Cache the npm folder"],
  );
});

Deno.test("learningsFinder fills {uv-learnings} from the history, each learning once", async () => {
  await using fixture = await openStore({ runs: ["run-1", "run-2", "run-3", "current"] });
  const { store } = fixture;
  store.setLearnings("run-1", "agent", [{ text: "Use dax for shell commands" }]);
  store.setLearnings("run-2", "agent", [{ text: "use dax for shell commands." }]);
  store.setLearnings("run-3", "extracted", [{ text: "Use DAX for shell commands!" }]);
  store.setLearnings("current", "agent", [
    { text: "Use dax for shell commands" },
    { text: "Shell commands of the current run only" },
  ]);
  const find = learningsFinder(() => store, { runId: "current" });
  assert.equal(
    find("a Deno script that runs shell commands"),
    "- Use dax for shell commands (run run-3; seen in 4 runs)",
  );
});
