import assert from "node:assert/strict";
import path from "node:path";
import { RunLog } from "../../agents/support/log.ts";
import { REDACTED, Redactor } from "../../agents/support/redact.ts";
import { API_KEY, assertNoSecrets, DB_PASSWORD, ENV, FINE_GRAINED, GH_TOKEN } from "./_secrets.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-log-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("RunLog writes one redacted JSON line per record", async (t) => {
  const redactor = new Redactor(ENV);

  await t.step("events and messages, in order", async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, "logs", "nested", "run.jsonl");
      const log = RunLog.open(file, redactor);
      assert.equal(log.path, file);
      log.event("run_started", { agent: "iterator", maxIterations: 3 });
      log.message(1, {
        type: "assistant",
        message: { content: [{ type: "text", text: "Line one\nLine two" }] },
      });
      log.event("run_finished", { status: "completed" });
      log.close();

      const text = await Deno.readTextFile(file);
      assert.ok(text.endsWith("\n"));
      const lines = text.trimEnd().split("\n");
      assert.equal(lines.length, 3);
      const records = lines.map((line) => JSON.parse(line));
      assert.deepEqual(records.map((record) => record.kind), [
        "run_started",
        "message",
        "run_finished",
      ]);
      for (const record of records) {
        assert.match(record.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      assert.equal(records[0].agent, "iterator");
      assert.equal(records[0].maxIterations, 3);
      assert.equal(records[1].iteration, 1);
      assert.equal(
        records[1].message.message.content[0].text,
        "Line one\nLine two",
      );
      assert.equal(records[2].status, "completed");
    });
  });

  await t.step("appends to an existing log", async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, "run.jsonl");
      const first = RunLog.open(file, redactor);
      first.event("run_started");
      first.close();
      const second = RunLog.open(file, redactor);
      second.event("run_resumed");
      second.close();
      const kinds = (await Deno.readTextFile(file)).trimEnd().split("\n")
        .map((line) => JSON.parse(line).kind);
      assert.deepEqual(kinds, ["run_started", "run_resumed"]);
    });
  });

  await t.step("records after close are dropped", async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, "run.jsonl");
      const log = RunLog.open(file, redactor);
      log.event("run_started");
      log.close();
      log.event("late");
      log.message(2, { type: "assistant" });
      log.close();
      assert.equal(
        (await Deno.readTextFile(file)).trimEnd().split("\n").length,
        1,
      );
    });
  });

  await t.step("the file never contains a secret", async () => {
    await withTempDir(async (dir) => {
      const file = path.join(dir, "run.jsonl");
      const log = RunLog.open(file, redactor);
      log.event("run_started", {
        env: { ANTHROPIC_API_KEY: API_KEY, note: `db ${DB_PASSWORD}` },
        headers: { Authorization: `Bearer ${API_KEY}` },
      });
      log.message(1, {
        type: "assistant",
        message: {
          content: [
            {
              type: "tool_use",
              name: "Bash",
              input: { command: `gh auth login --with-token <<< ${GH_TOKEN}` },
            },
            { type: "text", text: `Pushed with ${FINE_GRAINED}` },
          ],
        },
      });
      log.message(1, {
        type: "result",
        subtype: "success",
        result: `Done; the key was ${API_KEY}`,
        usage: { input_tokens: 1200, output_tokens: 300 },
      });
      log.close();
      const text = await Deno.readTextFile(file);
      assertNoSecrets(text);
      assert.ok(text.includes(REDACTED));
      const usage = JSON.parse(text.trimEnd().split("\n")[2]).message.usage;
      assert.deepEqual(usage, { input_tokens: 1200, output_tokens: 300 });
    });
  });
});

Deno.test("a log whose disk is full never throws: it says so once and counts the lines it lost", () => {
  // /dev/full refuses every write with ENOSPC, as a full disk does.
  const log = RunLog.open("/dev/full", new Redactor({}));
  const faults: string[] = [];
  log.onFault = (error) => faults.push(error);
  log.event("run_started", { a: 1 });
  log.event("iteration_finished", { iteration: 1 });
  log.message(1, { type: "assistant" });
  log.close();
  assert.equal(faults.length, 1, "said once");
  assert.match(faults[0], /No space left on device/);
  assert.equal(log.failedWrites, 3);
});
