/**
 * End to end for the final rescue (seed 003, "Final rescue attempt even on
 * timeout"): at every end where the agent left uncommitted work, the agent
 * is asked to commit it, or the runner commits it with `git.autoCommit` when
 * the agent cannot be asked (an interrupt, a spent cost budget); the user's
 * files stay uncommitted; `rescue.finalAttempt: false` turns it off. The CLI
 * as a subprocess, the real Claude Code binary against the scripted model,
 * real git.
 */

import assert from "node:assert/strict";
import { RESCUE_PROMPT } from "../../agents/loop/rescue.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { lastUserText } from "../../agents/testing/_request.ts";
import { rescueReply } from "../fixtures/scenarios/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";

interface LogRecord {
  kind: string;
  [field: string]: unknown;
}

const RESCUE_MARK = RESCUE_PROMPT.slice(0, 30);

/** A manual agent that never hears its keyword: its runs end at the cap of one iteration. */
function capAgent(extra: Record<string, unknown> = {}, behavior: Record<string, unknown> = {}) {
  return {
    name: "capped",
    behavior: {
      completionType: "manual",
      completionConfig: { completionKeyword: "SHIPPED", maxIterations: 1 },
      // The rescue at the run's end is under test, not the reminder that would precede it.
      requireCompleteTask: false,
      allowedTools: ["Bash"],
      ...behavior,
    },
    probe: { enabled: false },
    ...extra,
  };
}

const leaveWip = toolTurn("Bash", { command: "printf 'half done\\n' > wip.txt" });

/** The main-loop prompts that asked for a commit rescue. */
function rescuePrompts(server: ScriptedModelServer): string[] {
  return server.requests.filter((request) => !request.side)
    .map((request) => lastUserText(request.body))
    .filter((text) => text.includes(RESCUE_MARK))
    .filter((text, index, all) => all.indexOf(text) === index);
}

async function readLog(path: string): Promise<LogRecord[]> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((line) => JSON.parse(line));
}

async function finalRescueEvents(logFile: string): Promise<LogRecord[]> {
  return (await readLog(logFile)).filter((record) => record.kind === "final_rescue");
}

Deno.test("at the cap the agent commits its work in the final rescue; the user's dirty files stay uncommitted", async () => {
  await using repo = await tempRepo();
  await commitAgent(repo.path, capAgent());
  // The user's work in progress: a changed tracked file, an untracked one, and one the agent will touch.
  await Deno.writeTextFile(`${repo.path}/README.md`, "# test repo\n\nDraft.\n");
  await Deno.writeTextFile(`${repo.path}/notes.txt`, "mine\n");
  await Deno.writeTextFile(`${repo.path}/shared.txt`, "mine too\n");
  await using server = await ScriptedModelServer.start({
    scripts: [[
      leaveWip,
      toolTurn("Bash", { command: "printf 'agent was here\\n' >> shared.txt" }),
      textTurn("Worked on it."),
      rescueReply(toolTurn("Bash", { command: "git add wip.txt && git commit -qm 'feat: wip'" })),
      textTurn("Committed wip.txt."),
    ]],
  });
  const run = await runCli(["--agent", "capped", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 3, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "max_iterations");
  const head = await git(repo.path, "rev-parse", "HEAD");
  const expected = {
    status: "max_iterations",
    by: "agent",
    files: ["wip.txt"],
    left: [],
    commit: head,
  };
  assert.deepEqual(result.finalRescue, expected);
  const [event, ...more] = await finalRescueEvents(result.logFile);
  assert.equal(more.length, 0);
  assert.deepEqual(
    {
      status: event.status,
      by: event.by,
      files: event.files,
      left: event.left,
      commit: event.commit,
    },
    expected,
  );
  assert.match(
    run.stderr,
    /final rescue \(max_iterations\) by the agent: work committed \([0-9a-f]{7}\)/,
  );

  const prompts = rescuePrompts(server);
  assert.equal(prompts.length, 1, "one rescue prompt, at the end");
  assert.match(prompts[0], /they are the user's\. Leave them uncommitted[^\n]*`shared\.txt`/);
  assert.doesNotMatch(
    prompts[0],
    /notes\.txt|README/,
    "only the user's files the agent touched are named",
  );
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: wip");
  assert.equal(await git(repo.path, "show", "--name-only", "--format=", "HEAD"), "wip.txt");
  // The user's files: untouched by the rescue, still uncommitted.
  const status = await git(
    repo.path,
    "status",
    "--porcelain",
    "--",
    "README.md",
    "notes.txt",
    "shared.txt",
  );
  assert.deepEqual(status.split("\n").map((line) => line.trim()).sort(), [
    "?? notes.txt",
    "?? shared.txt",
    "M README.md",
  ]);
  assert.equal(await Deno.readTextFile(`${repo.path}/shared.txt`), "mine too\nagent was here\n");
});

Deno.test("a spent cost budget: no rescue prompt, git.autoCommit commits the agent's work", async () => {
  await using repo = await tempRepo();
  await commitAgent(
    repo.path,
    capAgent({ git: { autoCommit: true } }, {
      completionConfig: { completionKeyword: "SHIPPED", maxIterations: 3 },
      maxBudgetUsd: 0.05,
    }),
  );
  // The first turn is cheap, so Claude Code runs its tool; the second spends the budget.
  await using server = await ScriptedModelServer.start({
    scripts: [[leaveWip, { text: "Working on it.", usage: { input_tokens: 200_000 } }]],
  });
  const run = await runCli(["--agent", "capped", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 6, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.deepEqual(rescuePrompts(server), [], "a spent budget is not exceeded by a rescue prompt");
  assert.deepEqual(result.finalRescue, {
    status: "budget_exhausted",
    by: "runner",
    files: ["wip.txt"],
    left: [],
    commit: await git(repo.path, "rev-parse", "HEAD"),
  });
  assert.match(
    await git(repo.path, "log", "-1", "--format=%s"),
    /^chore\(finishline\): commit work left uncommitted/,
  );
  assert.equal(await git(repo.path, "show", "--name-only", "--format=", "HEAD"), "wip.txt");
  assert.equal(await git(repo.path, "status", "--porcelain", "--", "wip.txt"), "");
});

Deno.test("rescue.finalAttempt false: no rescue prompt at the cap, the work stays uncommitted", async () => {
  await using repo = await tempRepo();
  await commitAgent(repo.path, capAgent({ rescue: { finalAttempt: false } }));
  await using server = await ScriptedModelServer.start({
    scripts: [[leaveWip, textTurn("Worked on it.")]],
  });
  const run = await runCli(["--agent", "capped", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 3, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.deepEqual(rescuePrompts(server), []);
  assert.equal(result.finalRescue, undefined);
  assert.deepEqual(await finalRescueEvents(result.logFile), []);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "chore: agent");
  assert.equal(await git(repo.path, "status", "--porcelain", "--", "wip.txt"), "?? wip.txt");
});

Deno.test("an interrupt: no rescue prompt, git.autoCommit commits the agent's work", async () => {
  await using repo = await tempRepo();
  await commitAgent(repo.path, capAgent({ git: { autoCommit: true } }));
  let wrote: () => void;
  const written = new Promise<void>((resolve) => wrote = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [[leaveWip, () => {
      wrote();
      return { text: "This reply comes too late.", delayMs: 60_000 };
    }]],
  });
  const run = await runCli(["--agent", "capped", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await written;
      child.kill("SIGINT");
    },
  });
  assert.equal(run.code, 130, run.stderr);
  assert.deepEqual(rescuePrompts(server), [], "an interrupted run asks the agent nothing more");
  assert.match(run.stderr, /final rescue \(interrupted\) by the runner: work committed/);
  assert.match(
    await git(repo.path, "log", "-1", "--format=%s"),
    /^chore\(finishline\): commit work left uncommitted/,
  );
  assert.equal(await git(repo.path, "show", "--name-only", "--format=", "HEAD"), "wip.txt");
  const logs = `${repo.path}/.agent/capped/logs`;
  const [file] = [...Deno.readDirSync(logs)].filter((entry) => entry.name.endsWith(".jsonl"));
  const [event] = await finalRescueEvents(`${logs}/${file.name}`);
  assert.deepEqual(
    { status: event.status, by: event.by, files: event.files, left: event.left },
    { status: "interrupted", by: "runner", files: ["wip.txt"], left: [] },
  );
  assert.equal(event.commit, await git(repo.path, "rev-parse", "HEAD"));
});

Deno.test("a spent time budget: the agent is still asked to commit its work", async () => {
  await using repo = await tempRepo();
  await commitAgent(
    repo.path,
    capAgent({}, {
      completionConfig: { completionKeyword: "SHIPPED", maxIterations: 3 },
      maxDurationSeconds: 10,
    }),
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      leaveWip,
      // The session outlives the time budget: the run stops it there.
      { text: "Still going.", delayMs: 60_000 },
      rescueReply(toolTurn("Bash", { command: "git add wip.txt && git commit -qm 'feat: wip'" })),
      textTurn("Committed wip.txt."),
    ]],
  });
  const run = await runCli(["--agent", "capped", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 6, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.completionReason, /Time budget of 10 s spent/);
  assert.equal(rescuePrompts(server).length, 1);
  assert.deepEqual(result.finalRescue, {
    status: "budget_exhausted",
    by: "agent",
    files: ["wip.txt"],
    left: [],
    commit: await git(repo.path, "rev-parse", "HEAD"),
  });
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: wip");
});

Deno.test("a completed run gets no final rescue: what its checks wrote is not the agent's work", async () => {
  await using repo = await tempRepo();
  await commitAgent(
    repo.path,
    capAgent({
      git: { autoCommit: true },
      verify: { checks: [{ type: "command", command: "touch CHECKED", name: "touch" }] },
    }),
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "printf 'done\\n' > work.txt && git add work.txt && git commit -qm 'feat: work'",
      }),
      textTurn("All committed. SHIPPED"),
    ]],
  });
  const run = await runCli(["--agent", "capped", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.finalRescue, undefined);
  assert.deepEqual(rescuePrompts(server), []);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: work");
  assert.equal(await git(repo.path, "status", "--porcelain", "--", "CHECKED"), "?? CHECKED");
});
