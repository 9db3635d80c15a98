/**
 * End to end for the run history: crash and resume, the finish workflow,
 * learnings across runs, and the history subcommands. The CLI as a
 * subprocess, the real Claude Code binary against the scripted model, real
 * git and real SQLite.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { runFinish } from "../../agents/finish/workflow.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { runCli, tempRepo } from "../_helpers.ts";

const commitTurn = (n: number) =>
  toolTurn("Bash", {
    command:
      `printf '${n}' > step${n}.txt && git add step${n}.txt && git commit -qm 'feat: step ${n}'`,
  });

function storePath(repo: string): string {
  return `${repo}/.agent/.finishline/state.db`;
}

Deno.test("a run killed with SIGKILL mid-iteration resumes with --resume; iterations are exactly 1..N", async () => {
  await using repo = await tempRepo();
  let hung: () => void;
  const hanging = new Promise<void>((resolve) => hung = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [
      [commitTurn(1), textTurn("Step 1 done.")],
      [() => {
        hung();
        return { text: "never delivered", delayMs: 120_000 };
      }],
      [commitTurn(2), textTurn("Step 2 done.")],
      [commitTurn(3), textTurn("Step 3 done.")],
    ],
  });
  const first = await runCli(["--iterate-max", "3", "--task", "Three steps", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await hanging;
      child.kill("SIGKILL");
    },
  });
  assert.equal(first.code, 137, `killed: ${first.stderr}`);

  const runs = await runCli(["runs", "--json"], { cwd: repo.path });
  const [killed] = JSON.parse(runs.stdout);
  assert.equal(killed.status, "running", "the killed run never recorded an end");
  assert.equal(killed.iterations, 1, "iteration 1 was recorded before iteration 2 started");
  // The stable names, as a run's own result has them, beside the names before 0.2.
  assert.equal(killed.runId, killed.id);
  assert.equal(killed.completionReason, killed.reason);
  assert.equal(killed.handler, "iterate");
  const before = await runCli(["runs", "show", killed.id], { cwd: repo.path });
  assert.match(
    before.stdout,
    new RegExp(`^Resume: +deno run -A \\S+main\\.ts --resume ${killed.id}$`, "m"),
  );

  const resumed = await runCli(["--resume", "--json"], { cwd: repo.path, server });
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout);
  assert.equal(result.runId, killed.id, "the same run goes on");
  assert.equal(result.iterations, 3);
  assert.match(resumed.stderr, /resuming run .* after iteration 1/);

  const show = JSON.parse(
    (await runCli(["runs", "show", killed.id.slice(0, 8), "--json"], { cwd: repo.path })).stdout,
  );
  assert.deepEqual(show.iterations.map((row: { number: number }) => row.number), [1, 2, 3]);
  assert.equal(show.run.status, "completed");
  assert.equal(show.runId, killed.id);
  assert.equal(show.status, "completed");
  assert.equal(show.completionReason, result.completionReason);
  // The killed process left its segment open; the resume closed it from its log.
  const [dead, alive] = show.segments;
  assert.deepEqual([dead.status, alive.status], ["killed", "completed"]);
  assert.match(dead.reason, /stopped without recording its end/);
  assert.notEqual(dead.endedAt, null);
  assert.ok(dead.endedAt >= show.iterations[0].recordedAt, "ended when last heard of");
  assert.equal(dead.costUsd, show.iterations[0].summary.costUsd);
  assert.equal(alive.afterIteration, 1);
  assert.equal(alive.logFile, result.logFile);
  assert.deepEqual(show.finish.steps, [
    "summary",
    "learnings",
    "skills",
    "next_actions",
    "persist",
    "cleanup",
  ]);
  const second = server.requests.find((request) => !request.side && request.sessionIndex === 2)!;
  assert.ok(
    JSON.stringify(second.body).includes("iteration 2 of 3"),
    "the interrupted iteration is re-run",
  );

  const again = await runCli(["--resume"], { cwd: repo.path });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /No unfinished run to resume/);
});

Deno.test("the finish workflow is checkpointed; after a failure in step 3, `finish RUN_ID` completes it", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [[
      commitTurn(1),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Add step 1",
        summary: "Added step1.txt",
        learned: ["Commit each step separately"],
        skills_used: ["git"],
        new_skills_needed: ["changelog-writer"],
      }),
      textTurn("Done."),
    ]],
  });
  const run = await runCli(["--iterate-max", "1", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const { runId } = JSON.parse(run.stdout);

  // Simulate a finish that stopped in step 3: forget the checkpoints, fail on skills.
  const store = SqliteStore.open(storePath(repo.path));
  store.clearFinish(runId);
  store.setRunStatus(runId, "running", null);
  const failing = new Proxy(store, {
    get(target, property) {
      if (property === "setSkills") {
        return () => {
          throw new Error("disk full");
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const report = await runFinish({
    store: failing,
    runId,
    outcome: { status: "completed", reason: "ok" },
  });
  assert.equal(report.failed?.step, "skills");
  assert.deepEqual(store.getFinish(runId).steps, ["summary", "learnings"]);
  assert.equal(store.getRun(runId)?.status, "running", "persist did not run");
  store.close();

  // The model steps left ask the scripted model (its default side reply is no JSON: they fall back).
  const finish = await runCli(["finish", runId], { cwd: repo.path, server });
  assert.equal(finish.code, 0, finish.stderr);
  assert.match(finish.stdout, /Finished run .*: skills, next_actions, persist, cleanup/);
  const again = await runCli(["finish", runId], { cwd: repo.path, server });
  assert.match(again.stdout, /already finished/);

  const show = JSON.parse(
    (await runCli(["runs", "show", runId, "--json"], { cwd: repo.path })).stdout,
  );
  assert.deepEqual(show.finish.steps, [
    "summary",
    "learnings",
    "skills",
    "next_actions",
    "persist",
    "cleanup",
  ]);
  assert.equal(
    show.run.status,
    "completed",
    "the outcome the summary step recorded is the one persisted",
  );
  assert.deepEqual(show.skills, [
    { name: "git", kind: "used", description: "", lifecycle: "implemented" },
    { name: "changelog-writer", kind: "missing", description: "", lifecycle: "proposed" },
  ]);
  assert.equal(show.finish.summary.task, "Add step 1");
});

Deno.test("learnings of one run are searchable and reach a later run's first prompt", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        commitTurn(1),
        toolTurn(COMPLETE_TASK_TOOL, {
          status: "success",
          original_request_summary: "Write a Deno script that runs shell commands",
          summary: "Wrote it with dax",
          learned: ["Use dax for shell commands in Deno scripts: it escapes arguments"],
        }),
        textTurn("Done."),
      ],
      // The same learning again, in other case and punctuation: one learning, seen twice.
      [
        commitTurn(2),
        toolTurn(COMPLETE_TASK_TOOL, {
          status: "success",
          original_request_summary: "Add another Deno script for shell commands",
          summary: "Added it",
          learned: ["use dax for shell commands in Deno scripts: it escapes arguments."],
        }),
        textTurn("Done again."),
      ],
      [commitTurn(3), textTurn("Done a third time.")],
    ],
  });
  const first = await runCli([
    "--iterate-max",
    "1",
    "--task",
    "Write a Deno script that runs shell commands",
  ], {
    cwd: repo.path,
    server,
  });
  assert.equal(first.code, 0, first.stderr);

  const search = await runCli(["learnings", "search", "shell commands", "--json"], {
    cwd: repo.path,
  });
  assert.equal(search.code, 0, search.stderr);
  const found = JSON.parse(search.stdout);
  assert.equal(found[0].text, "Use dax for shell commands in Deno scripts: it escapes arguments");
  const plain = await runCli(["learnings", "search", "dax"], { cwd: repo.path });
  assert.match(plain.stdout, /^- Use dax for shell commands/m);

  const second = await runCli([
    "--iterate-max",
    "1",
    "--task",
    "Add another Deno script for shell commands",
  ], {
    cwd: repo.path,
    server,
  });
  assert.equal(second.code, 0, second.stderr);
  const prompt = JSON.stringify(
    server.requests.find((request) => !request.side && request.sessionIndex === 1)!.body,
  );
  assert.ok(
    prompt.includes("Use dax for shell commands in Deno scripts"),
    "uv-learnings is filled",
  );
  const deduplicated = JSON.parse(
    (await runCli(["learnings", "search", "dax", "--json"], { cwd: repo.path })).stdout,
  );
  assert.equal(deduplicated.length, 1, "the second run's repeat is no new learning");
  assert.equal(deduplicated[0].seen, 2);
  assert.equal(
    deduplicated[0].text,
    "Use dax for shell commands in Deno scripts: it escapes arguments",
  );
  const latest = await runCli(["learnings", "search", "--limit", "5"], { cwd: repo.path });
  assert.equal(latest.code, 0, latest.stderr);
  assert.match(
    latest.stdout,
    /^- Use dax for shell commands .*seen in 2 runs, last \d{4}-\d{2}-\d{2}\)$/m,
  );
  assert.equal(latest.stdout.trim().split("\n").length, 1);

  const third = await runCli(
    [
      "--iterate-max",
      "1",
      "--task",
      "Add another Deno script for shell commands",
      "--no-learnings",
    ],
    { cwd: repo.path, server },
  );
  assert.equal(third.code, 0, third.stderr);
  const off = JSON.stringify(
    server.requests.find((request) => !request.side && request.sessionIndex === 2)!.body,
  );
  assert.ok(!off.includes("Use dax for shell commands"), "--no-learnings leaves them out");

  const runs = await runCli(["runs"], { cwd: repo.path });
  // A header, one line a run with what it worked on, then the totals.
  const lines = runs.stdout.trim().split("\n");
  assert.equal(lines.length, 6, runs.stdout);
  assert.match(lines[0], /^RUN +STARTED +OUTCOME +ITER +COST +TIME +TASK$/);
  assert.match(
    lines[1],
    / completed +1 +\$\d+\.\d{4} +\d+\.\ds {2}Add another Deno script for shell commands$/,
  );
  assert.match(lines[5], /^3 runs \(3 completed\): 3 iterations, \$\d+\.\d{4}, \d+\.\ds$/);
});

Deno.test("history subcommands reject bad input with exit 2", async (t) => {
  await using repo = await tempRepo();
  for (
    const [args, message] of [
      [["runs", "show", "nope"], /No run "nope" in the history/],
      [["runs", "frobnicate"], /Unknown command "runs frobnicate"/],
      [["learnings"], /Unknown command "learnings"/],
      [["runs", "--bogus"], /Unknown flag "--bogus"/],
      [["runs", "--limit", "0"], /"--limit" expects a whole number/],
      [["--resume", "abc"], /No run "abc" in the history/],
      [
        ["--resume", "--issue", "3"],
        /"--resume" continues a run with the arguments it was started with/,
      ],
    ] as Array<[string[], RegExp]>
  ) {
    await t.step(args.join(" "), async () => {
      const run = await runCli(args, { cwd: repo.path });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split("\n").length, 1);
    });
  }
});
