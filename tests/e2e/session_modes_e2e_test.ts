/**
 * End to end for how finishline runs Claude Code processes: `continue` keeps
 * one process for the whole run; `fresh` keeps the process of a session that
 * ended well for the next one (a new conversation after `/clear`), or starts
 * the next iteration's process ahead (parked) where it cannot; either way the
 * agent sees the repository as it is when its session starts. Real Claude
 * Code, a scripted model server, real git.
 */

import assert from "node:assert/strict";
import { SqliteStore } from "../../agents/store/mod.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, exited, git, runCli, tempRepo } from "../_helpers.ts";
import { processTree } from "../../bench/proc.ts";

const step = (n: number) => [
  toolTurn("Bash", {
    command: `printf '${n}' > f${n}.txt && git add f${n}.txt && git commit -qm 'feat: step ${n}'`,
  }),
  textTurn(`Step ${n} committed.`),
];

async function agent(
  repo: string,
  behavior: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await commitAgent(repo, {
    name: "modes",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 3 },
      requireCompleteTask: false,
      ...behavior,
    },
    probe: { enabled: false },
    ...extra,
  });
}

/**
 * Runs the CLI and collects the pids of the Claude Code processes it starts for the
 * agent, and of the tool-less ones (`--tools=`) of the finish workflow's questions.
 */
async function runWatched(repo: string, server: ScriptedModelServer) {
  const claudes = new Set<number>();
  const toolless = new Set<number>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const run = await runCli(["--agent", "modes", "--json"], {
    cwd: repo,
    server,
    onSpawn: (child) => {
      timer = setInterval(() => {
        for (const pid of processTree(child.pid)) {
          try {
            // Claude Code has helper processes of its own; count those finishline started
            // (directly, or through the sandbox's bwrap processes).
            const parentOf = (of: number) =>
              Number(Deno.readTextFileSync(`/proc/${of}/stat`).split(") ")[1].split(" ")[1]);
            const comm = (of: number) => Deno.readTextFileSync(`/proc/${of}/comm`).trim();
            let parent = parentOf(pid);
            while (parent !== child.pid && parent > 1 && comm(parent) === "bwrap") {
              parent = parentOf(parent);
            }
            if (parent === child.pid && comm(pid) === "claude") {
              // An exiting process has an empty command line: it was seen before.
              const args = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
              // In the sandbox a helper Claude Code starts (itself, as ripgrep) that outlives its
              // parent is the sandbox's child: only the SDK's stream-json sessions count.
              if (args.length > 1 && args.includes("stream-json")) {
                (args.includes("--tools=") ? toolless : claudes).add(pid);
              }
            }
          } catch {
            // gone
          }
        }
      }, 5);
    },
  });
  clearInterval(timer);
  return { run, claudes, toolless };
}

/** The run's iterations each cost the same, more than nothing: each its own turn's cost. */
function assertEqualCosts(repo: string, runId: string, iterations: number): void {
  const store = SqliteStore.open(`${repo}/.agent/.finishline/state.db`);
  try {
    const costs = store.iterations(runId).map((row) => row.summary.costUsd);
    assert.equal(costs.length, iterations);
    assert.ok(costs.every((cost) => cost > 0 && Math.abs(cost - costs[0]) < 1e-9), `${costs}`);
  } finally {
    store.close();
  }
}

async function logRecords(file: string): Promise<Array<Record<string, unknown>>> {
  return (await Deno.readTextFile(file)).trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test("continue: one Claude Code process serves every iteration, costs per iteration", async () => {
  await using repo = await tempRepo();
  await agent(repo.path, { session: "continue" });
  await using server = await ScriptedModelServer.start({
    scripts: [[...step(1), ...step(2), ...step(3)]],
  });
  const { run, claudes, toolless } = await runWatched(repo.path, server);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.sessionIds.length, 1);
  assert.deepEqual(server.sessionIds(), result.sessionIds);
  assert.equal(claudes.size, 1, "one Claude Code process for three iterations");
  assert.equal(toolless.size, 1, "and one for the finish workflow's four questions");
  // Each iteration's prompt reached the same session as a new user turn.
  const prompts = server.requests.filter((request) => !request.side && request.turnIndex % 2 === 0);
  assert.equal(prompts.length, 3);
  assert.match(JSON.stringify(prompts[2].body), /Step 2 committed/, "the history is kept");
  assertEqualCosts(repo.path, result.runId, 3);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: step 3");
});

Deno.test("continue: a hung turn ends the process; the retry resumes the same session in a new one", async () => {
  await using repo = await tempRepo();
  await agent(
    repo.path,
    { session: "continue", completionConfig: { maxIterations: 2 } },
    { retry: { baseDelaySeconds: 0, iterationTimeoutSeconds: 3 } },
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[...step(1), { fault: { kind: "hang", afterEvents: 2 } }, ...step(2)]],
  });
  const { run, claudes } = await runWatched(repo.path, server);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 2);
  assert.equal(result.sessionIds.length, 1, "the session went on after the hang");
  const records = await logRecords(result.logFile);
  assert.ok(records.some((record) => record.kind === "session_fault"));
  assert.equal(claudes.size, 2, "a second process took over after the hang");
  assert.equal(await git(repo.path, "show", "HEAD:f2.txt"), "2");
});

Deno.test("fresh: a parked process reads the repository when its session starts", async () => {
  await using repo = await tempRepo();
  // With a cost budget each session's cap differs, so no process is kept for the next
  // session: each one is started and parked ahead.
  await agent(repo.path, { session: "fresh", maxBudgetUsd: 50 });
  const marker = "MARKER-FROM-ITERATION-1";
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        toolTurn("Bash", {
          command:
            `printf '${marker}\\n' > CLAUDE.md && git add CLAUDE.md && git commit -qm 'docs: ${marker}'`,
        }),
        textTurn("Wrote CLAUDE.md."),
      ],
      step(2),
      step(3),
    ],
  });
  const run = await runCli(["--agent", "modes", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.sessionIds.length, 3);
  // Iteration 2's process was started while iteration 1 worked, yet its context
  // (CLAUDE.md and the git status) shows iteration 1's commit.
  const second = server.requests.find((request) => !request.side && request.sessionIndex === 1);
  const body = JSON.stringify(second?.body);
  assert.ok(body.includes(`docs: ${marker}`), "the git status is read at the session's start");
  assert.ok(body.includes(marker), "CLAUDE.md is read at the session's start");
});

Deno.test("fresh: a folder whose settings refuse parked processes still runs every iteration", async () => {
  await using repo = await tempRepo();
  await agent(repo.path, { session: "fresh" });
  // Project settings that set `env` make Claude Code refuse to bind a parked process.
  await Deno.mkdir(`${repo.path}/.claude`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.claude/settings.json`,
    JSON.stringify({ env: { FINISHLINE_TEST: "1" } }),
  );
  await git(repo.path, "add", ".claude");
  await git(repo.path, "commit", "-qm", "chore: settings");
  await using server = await ScriptedModelServer.start({ scripts: [step(1), step(2), step(3)] });
  const run = await runCli(["--agent", "modes", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.sessionIds.length, 3);
  assert.equal(server.requests.filter((request) => !request.side).length, 6);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: step 3");
});

/** The messages of a session's first request, as the model received them. */
function firstRequestOf(server: ScriptedModelServer, sessionIndex: number) {
  const request = server.requests.find((request) =>
    !request.side && request.sessionIndex === sessionIndex
  );
  assert.ok(request, `session ${sessionIndex} made a request`);
  return request.body as { messages: unknown[]; system?: unknown };
}

Deno.test("fresh: one Claude Code process serves every iteration, each a new conversation after /clear", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/sub`);
  await Deno.writeTextFile(`${repo.path}/sub/.keep`, "");
  await git(repo.path, "add", "sub");
  await git(repo.path, "commit", "-qm", "chore: sub");
  await agent(repo.path, { session: "fresh" });
  const marker = "MARKER-FROM-ITERATION-1";
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        // The shell moves and exports: a new process would not carry either over.
        toolTurn("Bash", {
          command: `printf '${marker}\\n' > CLAUDE.md && git add CLAUDE.md && ` +
            `git commit -qm 'docs: ${marker}' && cd sub && export LEAKED=from-iteration-1`,
        }),
        textTurn("Wrote CLAUDE.md."),
      ],
      [
        toolTurn("Bash", {
          command: `echo "where=$(pwd) leaked=\${LEAKED:-none}" > seen.txt && ` +
            `git add seen.txt && git commit -qm 'test: seen'`,
        }),
        textTurn("Looked around."),
      ],
      step(3),
    ],
  });
  const { run, claudes } = await runWatched(repo.path, server);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(claudes.size, 1, "one Claude Code process for three fresh iterations");
  // Three sessions: a new id at each /clear, and the model saw each as its own.
  assert.equal(new Set(result.sessionIds).size, 3);
  assert.deepEqual(server.sessionIds(), result.sessionIds);
  for (const index of [1, 2]) {
    const body = firstRequestOf(server, index);
    // As many messages as a new process's first request (its prompt, the environment); Claude
    // Code notes the /clear in the first one, but nothing of the conversation before.
    assert.equal(body.messages.length, firstRequestOf(server, 0).messages.length);
    assert.match(JSON.stringify(body), /<command-name>\/clear<\/command-name>/);
    // No tool call of an earlier session (the continuation prompt summarizes them in words).
    assert.doesNotMatch(JSON.stringify(body), /"tool_use"|"tool_result"|export LEAKED/);
  }
  // The folder is read again at each new conversation: iteration 1's commit and CLAUDE.md.
  const second = JSON.stringify(firstRequestOf(server, 1));
  assert.ok(second.includes(`docs: ${marker}`), "the git status is read at the session's start");
  assert.ok(second.includes(marker), "CLAUDE.md is read at the session's start");
  // The shell starts in the folder again, without the last session's exports.
  assert.equal(
    (await Deno.readTextFile(`${repo.path}/seen.txt`)).trim(),
    `where=${await Deno.realPath(repo.path)} leaked=none`,
  );
  // Each iteration's cost is its own (the process's running total starts again at /clear).
  assertEqualCosts(repo.path, result.runId, 3);
  assert.ok([...claudes].every(exited), "the kept process ended with the run");
});

Deno.test("fresh with prewarm off: a Claude Code process per iteration", async () => {
  await using repo = await tempRepo();
  await agent(repo.path, { session: "fresh", prewarm: false });
  await using server = await ScriptedModelServer.start({ scripts: [step(1), step(2), step(3)] });
  const { run, claudes } = await runWatched(repo.path, server);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).status, "completed");
  assert.equal(claudes.size, 3);
});

Deno.test("fresh: a session that ends without success is not kept; the next one starts a process", async () => {
  await using repo = await tempRepo();
  // One turn: a session that uses a tool ends with error_max_turns.
  await agent(repo.path, { session: "fresh", maxTurns: 1 });
  await using server = await ScriptedModelServer.start({
    scripts: [step(1), [textTurn("Nothing to do.")], [textTurn("Still nothing.")]],
  });
  const { run, claudes } = await runWatched(repo.path, server);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 3);
  assert.equal(new Set(result.sessionIds).size, 3);
  // Iteration 1's process is let go; iteration 2's serves iteration 3.
  assert.equal(claudes.size, 2);
});
