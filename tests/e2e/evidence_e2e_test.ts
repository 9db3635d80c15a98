/**
 * End to end for "done needs evidence": the complete_task tool, the Stop
 * hook, and the configured checkers, with the real Claude Code binary
 * against the scripted model server and real git in temp repositories.
 */

import assert from "node:assert/strict";
import { JUDGE_MARKER } from "../../agents/checks/judge.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { CONTINUATION_MESSAGE } from "../../agents/loop/complete_task_guard.ts";
import { PROBE_MARKER } from "../../agents/loop/status_probe.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

interface LogRecord {
  kind: string;
  iteration?: number;
  [field: string]: unknown;
}

async function writeAgent(repo: string, definition: Record<string, unknown>): Promise<void> {
  const name = String(definition.name);
  await Deno.mkdir(`${repo}/.agent/${name}`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/${name}/agent.json`,
    JSON.stringify(definition, null, 2),
  );
}

function manualAgent(extra: Record<string, unknown> = {}, behavior: Record<string, unknown> = {}) {
  return {
    name: "checked",
    behavior: {
      completionType: "manual",
      completionConfig: { completionKeyword: "SHIPPED", maxIterations: 3 },
      allowedTools: ["Bash"],
      ...behavior,
    },
    ...extra,
  };
}

function completeTask(
  status: "success" | "blocked" | "partial",
  summary: string,
  remaining?: string,
) {
  return toolTurn(COMPLETE_TASK_TOOL, {
    status,
    original_request_summary: "Ship the feature",
    summary,
    ...(remaining ? { remaining_work: remaining } : {}),
  });
}

/** A step that checks what the agent was told, then replies. */
function expecting(text: string, reply: ScriptStep): ScriptStep {
  return async (ctx) => {
    if (!ctx.lastUserText.includes(text)) {
      return textTurn(
        `SCRIPT ERROR: expected the last user message to include ${JSON.stringify(text)}`,
      );
    }
    return typeof reply === "function" ? await reply(ctx) : reply;
  };
}

/** The main-loop requests of the agent's n-th session (judge sessions are side requests). */
function agentSession(server: ScriptedModelServer, n: number) {
  const main = server.requests.filter((request) => !request.side);
  const ids = [...new Set(main.map((request) => request.sessionId))];
  return main.filter((request) => request.sessionId === ids[n]);
}

async function readLog(path: string): Promise<LogRecord[]> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test("an agent that stops without complete_task is sent back, calls it, and the run ends (unverified: no check here)", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, manualAgent());
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn("All done. SHIPPED"),
      expecting(CONTINUATION_MESSAGE.slice(0, 40), completeTask("success", "Shipped the feature")),
      expecting("Recorded: success", textTurn("Finished. SHIPPED")),
    ]],
  });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  // The keyword with no check in this repository: unverified (exit 7), the claim's flow unchanged.
  assert.equal(run.code, 7, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  const main = server.requests.filter((request) => !request.side);
  assert.equal(main.length, 3, "one model turn after the stop hook, one after the tool");
  assert.ok(!JSON.stringify(main.at(-1)!.body).includes("SCRIPT ERROR"));
  const tools = (main[0].body.tools as Array<{ name: string }>).map((tool) => tool.name);
  assert.ok(tools.includes(COMPLETE_TASK_TOOL), "the model sees complete_task in its tool list");
  const log = await readLog(result.logFile);
  assert.equal(log.filter((record) => record.kind === "stop_blocked").length, 1);
  const finished = log.find((record) => record.kind === "iteration_finished")!;
  const summary = finished.summary as { completeTask: { status: string }; continuations: number };
  assert.equal(summary.completeTask.status, "success");
  assert.equal(summary.continuations, 1);
});

Deno.test("complete_task(success) with a failing check: the tool result says why, the agent fixes it, calls again, completes", async () => {
  await using repo = await tempRepo();
  await writeAgent(
    repo.path,
    manualAgent({
      verify: {
        checks: [{ type: "command", command: "grep -q fixed status.txt", name: "status" }],
      },
    }),
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "echo broken > status.txt" }),
      completeTask("success", "Wrote the status file"),
      expecting(
        "did NOT pass (status)",
        toolTurn("Bash", {
          command: "echo fixed > status.txt && git add status.txt && git commit -qm 'fix: status'",
        }),
      ),
      completeTask("success", "Fixed the status file"),
      expecting("the checks passed", textTurn("Now it is right. SHIPPED")),
    ]],
  });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.ok(
    !server.requests.some((request) => JSON.stringify(request.body).includes("SCRIPT ERROR")),
    "the model was told what it expected at each step",
  );
  const failing = server.requests.find((request) =>
    JSON.stringify(request.body).includes("did NOT pass")
  );
  assert.ok(
    JSON.stringify(failing!.body).includes("grep -q fixed status.txt"),
    "the failure names the command",
  );
  const verdicts = (await readLog(result.logFile))
    .filter((record) => record.kind === "verification")
    .map((record) => {
      const verification = record.verification as { passed: boolean; trigger: string };
      return `${verification.trigger}:${verification.passed}`;
    });
  assert.deepEqual(verdicts, ["complete_task:false", "complete_task:true", "handler:true"]);
});

Deno.test("complete_task statuses: blocked ends the run with exit 5, partial goes on to the next iteration", async (t) => {
  await t.step("blocked", async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path, manualAgent());
    await using server = await ScriptedModelServer.start({
      scripts: [[
        completeTask("blocked", "Could not start", "needs the staging database password"),
        textTurn("Blocked."),
      ]],
    });
    const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 5, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.equal(result.status, "blocked");
    assert.match(result.completionReason, /needs the staging database password/);
    assert.equal(server.sessionIds().length, 1);
  });
  await t.step("partial", async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path, manualAgent());
    await using server = await ScriptedModelServer.start({
      scripts: [
        [completeTask("partial", "Did the first half", "the second half"), textTurn("Half done.")],
        [completeTask("success", "Did the second half"), textTurn("SHIPPED")],
      ],
    });
    const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 7, run.stderr);
    assert.equal(JSON.parse(run.stdout).iterations, 2);
    const second = agentSession(server, 1)[0];
    assert.ok(JSON.stringify(second.body).includes("complete_task: partial: Did the first half"));
  });
});

Deno.test("an agent that never calls complete_task is sent back twice, then the iteration ends and the loop goes on", async () => {
  await using repo = await tempRepo();
  await writeAgent(
    repo.path,
    manualAgent({}, { completionConfig: { completionKeyword: "SHIPPED", maxIterations: 2 } }),
  );
  await using server = await ScriptedModelServer.start({
    fallback: textTurn("I think I am finished."),
  });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 3, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 2, "the loop went on to iteration 2");
  for (const index of [0, 1]) {
    const turns = agentSession(server, index);
    const probes = turns.filter((request) => JSON.stringify(request.body).includes(PROBE_MARKER));
    assert.equal(
      turns.length - probes.length,
      3,
      `session ${index}: the first stop and two continuations`,
    );
    assert.equal(probes.length, 1, "then one status probe (no progress, no complete_task)");
  }
  const log = await readLog(result.logFile);
  const first = log.filter((record) => record.iteration === 1);
  assert.equal(first.filter((record) => record.kind === "stop_blocked").length, 2);
  assert.equal(first.filter((record) => record.kind === "stop_allowed").length, 1);
});

Deno.test("the judge checker: complete, incomplete with missing items fed back, and garbage", async (t) => {
  const judged = (verdicts: string[]) => {
    let index = 0;
    return (ctx: { request: { body: Record<string, unknown> } }) => {
      if (!JSON.stringify(ctx.request.body).includes(JUDGE_MARKER)) return textTurn("OK.");
      return textTurn(verdicts[Math.min(index++, verdicts.length - 1)]);
    };
  };
  const agent = manualAgent(
    { verify: { checks: [{ type: "judge", criteria: "The changelog mentions the new flag" }] } },
    { requireCompleteTask: false },
  );

  await t.step("a complete verdict completes the run", async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path, agent);
    await using server = await ScriptedModelServer.start({
      fallback: textTurn("Updated the changelog. SHIPPED"),
      sideReply: judged(['{"complete": true, "missing": []}']),
    });
    const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    const judge = server.requests.find((request) =>
      JSON.stringify(request.body).includes(JUDGE_MARKER)
    )!;
    assert.ok(
      JSON.stringify(judge.body).includes("The changelog mentions the new flag"),
      "the judge gets the criteria",
    );
    assert.ok(JSON.stringify(judge.body).includes("Updated the changelog"), "and the evidence");
  });

  // With complete_task not required, the Stop hook runs the checkers (seed 001's Stop hook):
  // the judge's missing items reach the agent in the same session, not in the next iteration.
  await t.step(
    "missing items are fed back to the agent at its stop, then a complete verdict completes",
    async () => {
      await using repo = await tempRepo();
      await writeAgent(repo.path, agent);
      await using server = await ScriptedModelServer.start({
        fallback: textTurn("Updated the changelog. SHIPPED"),
        sideReply: judged([
          'Verdict:\n```json\n{"complete": false, "missing": ["the --frobnicate flag is not in CHANGELOG.md"]}\n```',
          '{"complete": true}',
        ]),
      });
      const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.iterations, 1);
      const turns = agentSession(server, 0).filter((request) =>
        !JSON.stringify(request.body).includes(PROBE_MARKER)
      );
      assert.equal(turns.length, 2, "the first stop was sent back once");
      assert.ok(
        JSON.stringify(turns[1].body).includes("the --frobnicate flag is not in CHANGELOG.md"),
      );
      const judgeCalls = server.requests.filter((request) =>
        JSON.stringify(request.body).includes(JUDGE_MARKER)
      );
      // The judge reads the agent's last words: the status probe's answer (no file changed) is
      // new evidence, so the run's verdict asks the judge again.
      assert.equal(judgeCalls.length, 3, "one verdict per stop, then the run's verdict");
      const log = await readLog(result.logFile);
      const verdicts = log.filter((record) => record.kind === "verification").map((record) => {
        const verification = record.verification as { passed: boolean; trigger: string };
        return `${verification.trigger}:${verification.passed}${record.reused ? " (reused)" : ""}`;
      });
      assert.deepEqual(verdicts, ["stop_hook:false", "stop_hook:true", "handler:true"]);
    },
  );

  await t.step("a garbage verdict counts as incomplete", async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path, {
      ...agent,
      behavior: {
        ...agent.behavior,
        completionConfig: { completionKeyword: "SHIPPED", maxIterations: 1 },
      },
    });
    await using server = await ScriptedModelServer.start({
      fallback: textTurn("Updated the changelog. SHIPPED"),
      sideReply: judged(["Looks great to me, ship it!"]),
    });
    const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 3, run.stderr);
    const result = JSON.parse(run.stdout);
    const log = await readLog(result.logFile);
    const verification = log.find((record) => record.kind === "verification")!.verification as {
      passed: boolean;
      feedback: string;
    };
    assert.equal(verification.passed, false);
    assert.match(verification.feedback, /could not be read/);
  });
});

// The seed's budget bypass. Claude Code gets the budget left (`maxBudgetUsd`) and ends the
// session itself (`error_max_budget_usd`) when a turn spends it, before its Stop hook: the
// Stop hook's checks do not run, and the verdict skips them too.
Deno.test("the checks are skipped and the run ends budget_exhausted when the cost budget is spent", async () => {
  await using repo = await tempRepo();
  await writeAgent(
    repo.path,
    manualAgent(
      { verify: { checks: [{ type: "command", command: "touch CHECKED" }] } },
      { requireCompleteTask: false, maxBudgetUsd: 0.0001 },
    ),
  );
  await using server = await ScriptedModelServer.start({ fallback: textTurn("SHIPPED") });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 6, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.completionReason, /the checks were skipped/);
  await assert.rejects(Deno.stat(`${repo.path}/CHECKED`), "the command check never ran");
  const log = await readLog(result.logFile);
  assert.deepEqual(log.filter((record) => record.kind === "verification"), []);
});

/** A command check named "status" that passes once status.txt says fixed. */
const STATUS_CHECK = { type: "command", command: "grep -q fixed status.txt", name: "status" };
const COMMIT_FIXED = toolTurn("Bash", {
  command: "echo fixed > status.txt && git add status.txt && git commit -qm 'fix: status'",
});

/** Each verification in the log as `trigger:passed`, with ` (reused)` when nothing ran. */
function verdictsOf(log: LogRecord[]): string[] {
  return log.filter((record) => record.kind === "verification").map((record) => {
    const verification = record.verification as { passed: boolean; trigger: string };
    return `${verification.trigger}:${verification.passed}${record.reused ? " (reused)" : ""}`;
  });
}

Deno.test("the Stop hook runs the checks (complete_task not required): their feedback sends the agent back, the fixed tree passes", async () => {
  await using repo = await tempRepo();
  await writeAgent(
    repo.path,
    manualAgent({ verify: { checks: [STATUS_CHECK] } }, { requireCompleteTask: false }),
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn("All done. SHIPPED"),
      expecting("The checks did not pass (status)", COMMIT_FIXED),
      textTurn("Now it is done. SHIPPED"),
    ]],
  });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.ok(
    !server.requests.some((request) => JSON.stringify(request.body).includes("SCRIPT ERROR")),
  );
  const log = await readLog(result.logFile);
  const blocked = log.filter((record) => record.kind === "stop_blocked");
  assert.equal(blocked.length, 1);
  assert.match(String(blocked[0].reason), /The checks did not pass \(status\)/);
  assert.match(String(blocked[0].reason), /grep -q fixed status\.txt/);
  assert.deepEqual(verdictsOf(log), ["stop_hook:false", "stop_hook:true", "handler:true (reused)"]);
  const finished = log.find((record) => record.kind === "iteration_finished")!;
  assert.equal((finished.summary as { continuations: number }).continuations, 1);
});

Deno.test("the Stop hook checks again when the tree changed after a passing complete_task", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, manualAgent({ verify: { checks: [STATUS_CHECK] } }));
  await using server = await ScriptedModelServer.start({
    scripts: [[
      COMMIT_FIXED,
      completeTask("success", "Fixed the status file"),
      expecting("the checks passed", toolTurn("Bash", { command: "echo broken > status.txt" })),
      textTurn("Tidied up. SHIPPED"),
      expecting(
        "The checks did not pass (status)",
        toolTurn("Bash", { command: "git checkout -- status.txt" }),
      ),
      textTurn("Restored it. SHIPPED"),
    ]],
  });
  const run = await runCli(["--agent", "checked", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.ok(
    !server.requests.some((request) => JSON.stringify(request.body).includes("SCRIPT ERROR")),
  );
  const log = await readLog(result.logFile);
  assert.equal(log.filter((record) => record.kind === "stop_blocked").length, 1);
  assert.deepEqual(verdictsOf(log), [
    "complete_task:true",
    "stop_hook:false",
    "stop_hook:true",
    "handler:true (reused)",
  ]);
  assert.equal(await Deno.readTextFile(`${repo.path}/status.txt`), "fixed\n");
});

Deno.test("one tree is verified once: complete_task, the Stop hook and the verdict share one run of the checks", async (t) => {
  for (const require of [true, false]) {
    await t.step(`requireCompleteTask ${require}`, async () => {
      await using repo = await tempRepo();
      await using outside = await tempDir("finishline-counter-");
      const counter = `${outside.path}/runs.txt`;
      await writeAgent(
        repo.path,
        manualAgent(
          {
            verify: {
              checks: [{
                type: "command",
                command: 'echo run >> "$CHECK_COUNTER" && grep -q fixed status.txt',
                name: "status",
              }],
            },
          },
          { requireCompleteTask: require },
        ),
      );
      await using server = await ScriptedModelServer.start({
        scripts: [[
          COMMIT_FIXED,
          ...(require ? [completeTask("success", "Fixed the status file")] : []),
          textTurn("SHIPPED"),
        ]],
      });
      const run = await runCli(["--agent", "checked", "--json"], {
        cwd: repo.path,
        server,
        env: { CHECK_COUNTER: counter },
      });
      assert.equal(run.code, 0, run.stderr);
      const log = await readLog(JSON.parse(run.stdout).logFile);
      assert.deepEqual(
        verdictsOf(log),
        require ? ["complete_task:true", "handler:true (reused)"] : [
          "stop_hook:true",
          "handler:true (reused)",
        ],
      );
      assert.equal(await Deno.readTextFile(counter), "run\n", "the command ran once");
      assert.equal(await git(repo.path, "status", "--porcelain", "--", "status.txt"), "");
    });
  }
});

// The seed's deadline bypass. The run's time budget ends the session the moment it is spent,
// so nothing is checked at the stop, and the verdict skips the checks too.
Deno.test("the checks are skipped and the run ends budget_exhausted when the time budget is spent", async () => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-counter-");
  const counter = `${outside.path}/runs.txt`;
  await writeAgent(
    repo.path,
    manualAgent(
      { verify: { checks: [{ type: "command", command: 'echo run >> "$CHECK_COUNTER"' }] } },
      // Off so that a stop would be checked: the bypass, not the complete_task reminder, is under test.
      { requireCompleteTask: false, maxDurationSeconds: 1 },
    ),
  );
  await using server = await ScriptedModelServer.start({
    fallback: { ...textTurn("SHIPPED"), delayMs: 2500 },
  });
  const run = await runCli(["--agent", "checked", "--json"], {
    cwd: repo.path,
    server,
    env: { CHECK_COUNTER: counter },
  });
  assert.equal(run.code, 6, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.completionReason, /Time budget of 1 s spent/);
  await assert.rejects(Deno.stat(counter), "the command check never ran");
  const log = await readLog(result.logFile);
  assert.deepEqual(log.filter((record) => record.kind === "verification"), []);
});
