/**
 * End to end for the run report and the history output: a run interrupted
 * with SIGINT and resumed, and what its report, `runs show` and `runs --json`
 * say about it. The CLI as a subprocess, the real Claude Code binary against
 * the scripted model, real git and real SQLite.
 */

import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { seconds, usd } from "../../agents/support/format.ts";
import type { RunSegment } from "../../agents/store/mod.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { runCli, tempRepo } from "../_helpers.ts";
import { mermaidBlocks } from "../pinned/mod.ts";

const TASK = "Add two steps, one commit each";

const commitTurn = (n: number) =>
  toolTurn("Bash", {
    command:
      `printf '${n}\\n' > step${n}.txt && git add step${n}.txt && git commit -qm 'feat: step ${n}'`,
  });

const completeTask = (status: "partial" | "success", summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status,
    original_request_summary: TASK,
    summary,
    ...(status === "partial" ? { remaining_work: "Step 2" } : {}),
  });

Deno.test("an interrupted and resumed run's report tells the whole run", async () => {
  await using repo = await tempRepo();
  let started: () => void;
  const inIteration = new Promise<void>((resolve) => started = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [
      [commitTurn(1), completeTask("partial", "Added step1.txt"), textTurn("Step 1 done.")],
      [() => {
        started();
        return { text: "too late", delayMs: 60_000 };
      }],
      [commitTurn(2), completeTask("success", "Added step2.txt"), textTurn("Step 2 done.")],
    ],
  });
  const args = ["--iterate-max", "2", "--task", TASK, "--json"];
  const interrupted = await runCli(args, {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await inIteration;
      child.kill("SIGINT");
    },
  });
  assert.equal(interrupted.code, 130, interrupted.stderr);
  const first = JSON.parse(interrupted.stdout);
  const firstReport = await Deno.readTextFile(first.report);
  assert.match(firstReport, /^⏸️ \*\*interrupted\*\*/m);
  assert.match(
    firstReport,
    new RegExp(`Resume it with:\\n\\n\`\`\`sh\\n.*--resume ${first.runId}`),
  );

  const resumed = await runCli(["--resume", "--json"], { cwd: repo.path, server });
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout);
  assert.equal(result.runId, first.runId);
  const report = await Deno.readTextFile(result.report);

  const show = JSON.parse(
    (await runCli(["runs", "show", result.runId, "--json"], { cwd: repo.path })).stdout,
  );
  const segments: RunSegment[] = show.segments;
  assert.deepEqual(segments.map((segment) => [segment.number, segment.status]), [
    [1, "interrupted"],
    [2, "completed"],
  ]);
  assert.deepEqual(segments.map((segment) => segment.logFile), [first.logFile, result.logFile]);

  // The task and the command line, pasteable.
  assert.match(report, new RegExp(`^> ${TASK}$`, "m"));
  assert.match(
    report,
    /^deno run -A \S+main\.ts --iterate-max 2 --task 'Add two steps, one commit each' --json$/m,
  );
  // The start is the run's first, the time and cost those of both segments.
  assert.match(report, new RegExp(`^- Started: ${show.run.startedAt.slice(0, 10)} `, "m"));
  const time = segments.reduce((sum, segment) => sum + segment.durationMs!, 0);
  const cost = segments.reduce((sum, segment) => sum + segment.costUsd!, 0);
  assert.ok(time > result.durationMs, "the first segment's time is counted too");
  assert.match(
    report,
    new RegExp(
      `^- Iterations: 2; duration: ${
        seconds(time).replace(".", "\\.")
      } over 2 segments \\(stopped 1 time and resumed\\); cost: \\${usd(cost)}$`,
      "m",
    ),
  );
  assert.match(report, /^- Model: \S+/m);
  // Two iterations: the table says it all, no chart (charts from 4 iterations, charts_test).
  assert.deepEqual(mermaidBlocks(report), []);
  assert.match(report, /^- Branch: `main`$/m);
  // The interruption and the resume, each with its log next to the report.
  assert.match(report, /^\| 1 \| .* \| interrupted: .* \| \[[^\]]+\.jsonl\]\([^)]+\) \|$/m);
  assert.match(report, /^\| 2 \| .* \| 2 \| completed: .* \| \[[^\]]+\.jsonl\]\([^)]+\) \|$/m);
  for (const log of [first.logFile, result.logFile]) {
    assert.ok(report.includes(`[${basename(log)}](${basename(log)})`), `no link to ${log}`);
    assert.equal(dirname(log), dirname(result.report));
    await Deno.stat(join(dirname(result.report), basename(log)));
  }
  // The commits and the files they changed.
  assert.match(report, /^2 commits since `[0-9a-f]{12}`:$/m);
  assert.match(report, /^- `[0-9a-f]{7,}` feat: step 1$/m);
  assert.match(report, /^- `[0-9a-f]{7,}` feat: step 2$/m);
  assert.match(report, /^- `step1\.txt` \(added, \+1 −0\)$/m);
  assert.match(report, /^- `step2\.txt` \(added, \+1 −0\)$/m);
  // Every complete_task report.
  assert.match(
    report,
    /### Iteration 1: partial\n\n- Request: Add two steps.*\n- Summary: Added step1\.txt\n- Remaining work: Step 2/,
  );
  assert.match(report, /### Iteration 2: success\n\n- Summary: Added step2\.txt/);

  // runs show prints the command quoted, the time over both segments and each segment.
  const text = await runCli(["runs", "show", result.runId.slice(0, 8)], { cwd: repo.path });
  assert.match(
    text.stdout,
    /^Command: +deno run -A \S+main\.ts --iterate-max 2 --task 'Add two steps, one commit each' --json$/m,
  );
  assert.match(
    text.stdout,
    new RegExp(`^Time: +${seconds(time).replace(".", "\\.")} over 2 segments$`, "m"),
  );
  assert.match(text.stdout, /^ {2}1\. .* interrupted: /m);
  assert.match(text.stdout, /^ {2}2\. .* completed: /m);

  // runs --json: costs without float noise.
  const runs = await runCli(["runs", "--json"], { cwd: repo.path });
  const costs = [...runs.stdout.matchAll(/"costUsd":([0-9.e-]+)/g)].map((match) => match[1]);
  assert.ok(costs.length > 0);
  for (const value of costs) assert.match(value, /^\d+(\.\d{1,6})?$/, `cost ${value}`);
});
