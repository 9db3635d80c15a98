/**
 * The same end-to-end suite on every backend: iterate, the manual keyword,
 * complete_task enforcement, a failing check fed back, the commit rescue, and
 * the status probe.
 * Each runs the CLI as a subprocess driving a real agent (Claude Code through
 * the Agent SDK and through claude-agent-acp, Codex through codex-acp,
 * opencode through `opencode acp`, Gemini CLI through `gemini --acp`) against
 * a scripted server for its API, in a temp git repository.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { RecordedRequest, ScriptedTurn, ScriptStep } from "../../agents/testing/mod.ts";
import { textTurn } from "../../agents/testing/mod.ts";
import { CONTINUATION_MESSAGE } from "../../agents/loop/complete_task_guard.ts";
import { PROBE_MARKER } from "../../agents/loop/status_probe.ts";
import { commitAgent, git, runCli, type RunCliOptions, tempRepo } from "../_helpers.ts";
import { BACKENDS, type BackendUnderTest, CLAUDE_SDK, type Harness } from "./_backends.ts";
import type { AcpCommand } from "../../agents/backends/acp.ts";
import { startTime } from "../../agents/support/process_tags.ts";

async function writeAgent(
  repo: string,
  harness: Harness,
  behavior: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await commitAgent(repo, {
    name: "suite",
    behavior: { ...behavior, ...(harness.backend ? { backend: harness.backend } : {}) },
    probe: { enabled: false },
    ...extra,
  });
}

function run(
  repo: string,
  harness: Harness,
  args: string[] = [],
  options: Partial<RunCliOptions> = {},
) {
  return runCli(["--agent", "suite", "--json", ...args], {
    cwd: repo,
    server: harness.server,
    home: harness.home,
    ...options,
    env: { ...harness.env, ...options.env },
  });
}

/** A step that checks what the agent was last told, then replies. */
function expecting(text: string, reply: ScriptedTurn): ScriptStep {
  return (ctx) =>
    ctx.lastUserText.includes(text)
      ? reply
      : textTurn(`SCRIPT ERROR: expected the last user message to include ${text}`);
}

function main(harness: Harness): RecordedRequest[] {
  return harness.requests.filter((request) => !request.side);
}

function noScriptErrors(harness: Harness): void {
  assert.ok(
    !harness.requests.some((request) => JSON.stringify(request.body).includes("SCRIPT ERROR")),
    "the model was told what it expected at each step",
  );
}

/** The main requests of each of the first `count` sessions, by turn. */
function turnsBySession(harness: Harness, count: number): number[][] {
  return Array.from(
    { length: count },
    (_, index) =>
      main(harness).filter((request) => request.sessionIndex === index).map((r) => r.turnIndex),
  );
}

async function logRecords(path: string): Promise<Array<Record<string, unknown>>> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((line) => JSON.parse(line));
}

function storedIterations(repo: string): number[] {
  const db = new DatabaseSync(`${repo}/.agent/.finishline/state.db`, { readOnly: true });
  try {
    return db.prepare("SELECT number FROM iterations ORDER BY number").all()
      .map((row) => Number(row.number));
  } finally {
    db.close();
  }
}

const MANUAL = {
  completionType: "manual",
  completionConfig: { completionKeyword: "SHIPPED", maxIterations: 3 },
  allowedTools: ["Bash"],
  requireCompleteTask: true,
};

function suite(backend: BackendUnderTest): void {
  const done = (summary: string) =>
    backend.completeTask({
      status: "success",
      original_request_summary: "Ship the feature",
      summary,
    });

  Deno.test(`${backend.name}: iterate runs 2 sessions, each committing through the agent's shell`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([1, 2].map((n) => [
      backend.shell(
        `echo "iteration ${n}" >> progress.txt && git add progress.txt && ` +
          `git commit -qm "docs: progress ${n}"`,
      ),
      textTurn(`Iteration ${n} done.`),
    ]));
    await writeAgent(repo.path, harness, {
      completionType: "iterate",
      completionConfig: { maxIterations: 2 },
      // Sessions and commits are under test; complete_task has its own tests below.
      requireCompleteTask: false,
    });
    const result = await run(repo.path, harness, ["--task", "Write progress notes"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      await Deno.readTextFile(`${repo.path}/progress.txt`),
      "iteration 1\niteration 2\n",
    );
    assert.equal(
      await git(repo.path, "log", "-2", "--format=%s"),
      "docs: progress 2\ndocs: progress 1",
    );
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, "completed");
    assert.equal(outcome.iterations, 2);
    assert.equal(outcome.costUsd > 0, backend.reportsCost, `cost reported: ${outcome.costUsd}`);
    const finished = (await logRecords(outcome.logFile))
      .filter((record) => record.kind === "iteration_finished");
    assert.equal(finished.length, 2, "the run log holds both iterations");
    assert.deepEqual(storedIterations(repo.path), [1, 2], "the store holds both");
    assert.deepEqual(turnsBySession(harness, 2), [[0, 1], [0, 1]], "two sessions, two turns each");
    const first = main(harness)[0];
    assert.ok(JSON.stringify(first.body).includes("Write progress notes"), "the task reaches it");
    assert.ok(
      backend.toolNames(first).includes(backend.completeTaskName),
      `the model is offered complete_task: ${backend.toolNames(first)}`,
    );
    // The finish tool comes with it, from the same MCP server (seed 000).
    const finishName = backend.completeTaskName.replace("complete_task", "finish");
    assert.ok(
      backend.toolNames(first).includes(finishName),
      `the model is offered finish: ${backend.toolNames(first)}`,
    );
  });

  Deno.test(`${backend.name}: session "continue" keeps one agent session for the whole run`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([[1, 2].flatMap((n) => [
      backend.shell(
        `echo "step ${n}" >> steps.txt && git add steps.txt && git commit -qm "feat: step ${n}"`,
      ),
      textTurn(`Step ${n} done.`),
    ])]);
    await writeAgent(repo.path, harness, {
      completionType: "iterate",
      completionConfig: { maxIterations: 2 },
      session: "continue",
      // The session mode is under test; complete_task has its own tests below.
      requireCompleteTask: false,
    });
    const result = await run(repo.path, harness, ["--task", "Write the steps"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await Deno.readTextFile(`${repo.path}/steps.txt`), "step 1\nstep 2\n");
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.iterations, 2);
    assert.equal(new Set(outcome.sessionIds).size, 1, `one session id: ${outcome.sessionIds}`);
    assert.deepEqual(turnsBySession(harness, 1), [[0, 1, 2, 3]], "both iterations in one session");
    const second = main(harness)[2];
    assert.ok(
      JSON.stringify(second.body).includes("Step 1 done."),
      "the second iteration's request holds the first one's conversation",
    );
  });

  /**
   * Starts a `continue` run of two iterations that SIGINT stops while the second
   * one waits for the model. The second step is scripted in the first session
   * when the resumed run should reopen it, else in a new one.
   */
  async function interruptedRun(repo: string, reopened: boolean) {
    let interrupt!: () => void;
    const waiting = new Promise<void>((resolve) => (interrupt = resolve));
    const step = (n: number) =>
      backend.shell(
        `echo "step ${n}" >> steps.txt && git add steps.txt && git commit -qm "feat: step ${n}"`,
      );
    const hang: ScriptStep = () => {
      interrupt();
      return { text: "This reply comes too late.", delayMs: 60_000 };
    };
    const rest = [step(2), textTurn("Step 2 done.")];
    const harness = await backend.start(
      reopened
        ? [[step(1), textTurn("Step 1 done."), hang, ...rest]]
        : [[step(1), textTurn("Step 1 done."), hang], rest],
    );
    await writeAgent(repo, harness, {
      completionType: "iterate",
      completionConfig: { maxIterations: 2 },
      session: "continue",
      // Resuming is under test; complete_task has its own tests below.
      requireCompleteTask: false,
    });
    const first = await run(repo, harness, ["--task", "Write the steps"], {
      onSpawn: async (child) => {
        await waiting;
        child.kill("SIGINT");
      },
    });
    assert.equal(first.code, 130, first.stderr);
    const interrupted = JSON.parse(first.stdout);
    const resume = () =>
      runCli(["--resume", interrupted.runId, "--json"], {
        cwd: repo,
        server: harness.server,
        home: harness.home,
        env: harness.env,
      });
    return { harness, interrupted, resume };
  }

  Deno.test(`${backend.name}: a "continue" run interrupted and resumed goes on in the same agent session`, async () => {
    await using repo = await tempRepo();
    const { harness, interrupted, resume } = await interruptedRun(
      repo.path,
      backend.reopensSessions === true,
    );
    await using _harness = harness;
    const resumed = await resume();
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(await Deno.readTextFile(`${repo.path}/steps.txt`), "step 1\nstep 2\n");
    const outcome = JSON.parse(resumed.stdout);
    assert.equal(outcome.iterations, 2);
    const refused = /cannot reopen session/.test(resumed.stderr);
    if (backend.reopensSessions === true) assert.ok(!refused, resumed.stderr);
    if (backend.reopensSessions === false) assert.ok(refused, resumed.stderr);
    if (backend.reopensSessions === "sometimes" && !refused) {
      // It had saved the chat: the same session goes on, holding iteration 1.
      assert.deepEqual(new Set(outcome.sessionIds), new Set(interrupted.sessionIds));
      const stepTwo = main(harness).find((request) =>
        JSON.stringify(request.body).includes("step 2")
      )!;
      assert.ok(JSON.stringify(stepTwo.body).includes("Step 1 done."), "it holds iteration 1");
      return;
    }
    if (refused) {
      // The agent refused to reopen it: said, and a new session did the work.
      assert.match(
        resumed.stderr,
        /no longer has the session to continue \(.*cannot reopen session/,
      );
      assert.deepEqual(turnsBySession(harness, 2)[1], [0, 1]);
      return;
    }
    assert.deepEqual(
      new Set(outcome.sessionIds),
      new Set(interrupted.sessionIds),
      "the resumed run's session is the interrupted run's",
    );
    const stepTwo = main(harness).find((request) => request.turnIndex === 3)!;
    assert.equal(stepTwo.sessionIndex, 0, "the server sees the same session");
    assert.ok(
      JSON.stringify(stepTwo.body).includes("Step 1 done."),
      "the resumed session holds the first iteration's conversation",
    );
  });

  Deno.test(`${backend.name}: a resumed "continue" run whose session the agent lost starts a new one and does the work`, async () => {
    await using repo = await tempRepo();
    const { harness, resume } = await interruptedRun(repo.path, false);
    await using _harness = harness;
    await harness.forgetSessions();
    const resumed = await resume();
    assert.equal(resumed.code, 0, resumed.stderr);
    if (!harness.backend) {
      // Claude Code says so (the ACP agents quietly open an empty session under the old id).
      assert.match(resumed.stderr, /no longer has the session to continue: starting a new one/);
    }
    assert.equal(await Deno.readTextFile(`${repo.path}/steps.txt`), "step 1\nstep 2\n");
    const outcome = JSON.parse(resumed.stdout);
    assert.equal(outcome.iterations, 2);
    assert.deepEqual(turnsBySession(harness, 2)[1], [0, 1], "a new session did the second step");
    const first = main(harness).find((request) => request.sessionIndex === 1)!;
    assert.ok(
      JSON.stringify(first.body).includes("Step 1 done."),
      "its prompt carries what the first iteration did",
    );
  });

  Deno.test(`${backend.name}: manual stops in the iteration whose response holds the keyword`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([
      [
        backend.shell("echo half > half.txt && git add half.txt && git commit -qm 'feat: half'"),
        backend.completeTask({
          status: "partial",
          original_request_summary: "Convert the files",
          summary: "Converted half of the files.",
          remaining_work: "the other half",
        }),
        textTurn("Still working on it."),
      ],
      [
        backend.shell("echo all > all.txt && git add all.txt && git commit -qm 'feat: all'"),
        done("Converted all the files."),
        textTurn("Everything is in place. ALL DONE"),
      ],
      [textTurn("This session must never start.")],
    ]);
    await writeAgent(repo.path, harness, {
      ...MANUAL,
      completionConfig: { completionKeyword: "ALL DONE", maxIterations: 5 },
    });
    const result = await run(repo.path, harness);
    // The keyword is the agent's word and this repository has no check: unverified (exit 7).
    assert.equal(result.code, 7, result.stderr);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.iterations, 2);
    assert.equal(outcome.status, "unverified");
    assert.match(outcome.completionReason, /^unverified: no checks found; .* in iteration 2/);
    assert.equal(await git(repo.path, "log", "-2", "--format=%s"), "feat: all\nfeat: half");
    const second = main(harness).find((request) => request.sessionIndex === 1)!;
    assert.ok(
      JSON.stringify(second.body).includes("the other half"),
      "the continuation prompt carries what was left",
    );
    assert.ok(
      !harness.requests.some((request) =>
        JSON.stringify(request.body).includes("This session must never start")
      ),
    );
  });

  Deno.test(`${backend.name}: a turn that ends without complete_task is sent back in the same session`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([[
      textTurn("All done. SHIPPED"),
      expecting(CONTINUATION_MESSAGE.slice(0, 40), done("Shipped the feature")),
      expecting("Recorded: success", textTurn("Finished. SHIPPED")),
    ]]);
    await writeAgent(repo.path, harness, MANUAL);
    const result = await run(repo.path, harness);
    // No check in this repository: the claim ends unverified (exit 7).
    assert.equal(result.code, 7, result.stderr);
    noScriptErrors(harness);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.iterations, 1);
    assert.deepEqual(turnsBySession(harness, 1), [[0, 1, 2]], "one session, three turns");
    const finished = (await logRecords(outcome.logFile))
      .find((record) => record.kind === "iteration_finished")!;
    const summary = finished.summary as { completeTask: { status: string }; continuations: number };
    assert.equal(summary.completeTask.status, "success");
    assert.equal(summary.continuations, 1);
  });

  Deno.test(`${backend.name}: complete_task with a failing check gets the failure back, and the fix completes`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([[
      backend.shell("echo broken > status.txt"),
      done("Wrote the status file"),
      expecting(
        "did NOT pass (status)",
        backend.shell(
          "echo fixed > status.txt && git add status.txt && git commit -qm 'fix: status'",
        ),
      ),
      done("Fixed the status file"),
      expecting("the checks passed", textTurn("Now it is right. SHIPPED")),
    ]]);
    await writeAgent(repo.path, harness, MANUAL, {
      verify: {
        checks: [{ type: "command", command: "grep -q fixed status.txt", name: "status" }],
      },
    });
    const result = await run(repo.path, harness);
    assert.equal(result.code, 0, result.stderr);
    noScriptErrors(harness);
    assert.equal(JSON.parse(result.stdout).iterations, 1);
    assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "fix: status");
    assert.deepEqual(turnsBySession(harness, 1), [[0, 1, 2, 3, 4]], "one session");
  });

  Deno.test(`${backend.name}: the verifier gets its instructions, and its held-out test refuses an empty claim`, async () => {
    await using repo = await tempRepo();
    await Deno.mkdir(`${repo.path}/src`);
    await Deno.writeTextFile(
      `${repo.path}/package.json`,
      '{ "name": "flags", "private": true, "scripts": { "test": "node --test" } }',
    );
    await Deno.writeTextFile(`${repo.path}/src/flag.js`, "exports.flag = () => false;\n");
    await git(repo.path, "add", "-A");
    await git(repo.path, "commit", "-qm", "flags");
    const reproduction = [
      'const test = require("node:test");',
      'const assert = require("node:assert");',
      'const { flag } = require("../src/flag.js");',
      'test("flag is on", () => assert.equal(flag(), true));',
    ].join("\\n");
    await using harness = await backend.start(
      [[done("flag() already returns true"), textTurn("SHIPPED")]],
      {
        verifier: [
          backend.shell(`mkdir -p test && printf '${reproduction}\\n' > test/flag.test.js`),
          textTurn("The test is written and fails on this commit."),
        ],
      },
    );
    await writeAgent(repo.path, harness, {
      ...MANUAL,
      completionConfig: { completionKeyword: "SHIPPED", maxIterations: 1 },
    }, {
      verify: { reproduce: "held-out" },
    });
    const result = await run(repo.path, harness, [
      "--task",
      "Make flag() in src/flag.js return true",
    ]);
    const outcome = JSON.parse(result.stdout);
    assert.notEqual(outcome.status, "completed", await Deno.readTextFile(outcome.report));
    const verifier = harness.requests.filter((request) => request.role === "verifier");
    assert.ok(verifier.length > 0, "the verifier's session reached the model");
    assert.match(JSON.stringify(verifier[0].body), /You are the verifier of a coding task/);
    const told = main(harness).filter((request) => !request.role)
      .map((request) => JSON.stringify(request.body)).join("\n");
    assert.match(told, /A held-out acceptance test, written from the task before you started/);
    assert.match(told, /flag is on/);
    assert.doesNotMatch(told, /assert.equal\(flag\(\), true\)/, "never its code");
  });

  Deno.test(`${backend.name}: uncommitted work gets the commit rescue prompt in the same session`, async () => {
    await using repo = await tempRepo();
    await using harness = await backend.start([[
      backend.shell("printf 'draft' > draft.txt"),
      textTurn("Wrote a draft."),
      expecting(
        "COMMIT RESCUE",
        backend.shell("git add draft.txt && git commit -qm 'docs: draft'"),
      ),
      textTurn("Committed the draft."),
    ]]);
    await writeAgent(repo.path, harness, {
      completionType: "iterate",
      completionConfig: { maxIterations: 1 },
      // The rescue is under test: without complete_task the agent is not sent back first.
      requireCompleteTask: false,
    });
    const result = await run(repo.path, harness);
    assert.equal(result.code, 0, result.stderr);
    noScriptErrors(harness);
    assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "docs: draft");
    assert.equal(await git(repo.path, "status", "--porcelain"), "");
    assert.deepEqual(turnsBySession(harness, 1), [[0, 1, 2, 3]], "one session");
  });

  Deno.test(`${backend.name}: the status probe is a follow-up prompt in the same session`, async () => {
    await using repo = await tempRepo();
    await Deno.mkdir(`${repo.path}/.agent/suite/completion`, { recursive: true });
    await Deno.copyFile(
      new URL("../fixtures/scenarios/commits_handler.ts", import.meta.url),
      `${repo.path}/.agent/suite/completion/commits.ts`,
    );
    await using harness = await backend.start([[
      textTurn("Not sure where I am."),
      expecting(PROBE_MARKER, textTurn('{"status": "blocked", "message": "needs a token"}')),
    ]]);
    await writeAgent(repo.path, harness, {
      completionType: "custom",
      completionConfig: { handlerPath: "completion/commits.ts", maxIterations: 1 },
      // The probe is under test; complete_task enforcement has its own test.
      requireCompleteTask: false,
    }, { probe: { maxProbes: 1, probeIntervalSeconds: 0, probeTimeoutSeconds: 60 } });
    const result = await run(repo.path, harness);
    assert.equal(result.code, 5, result.stderr);
    noScriptErrors(harness);
    assert.match(JSON.parse(result.stdout).completionReason, /needs a token/);
    assert.deepEqual(turnsBySession(harness, 1), [[0, 1]], "one session");
  });

  Deno.test({
    name: `${backend.name}: SIGINT while the agent runs a command exits 130 and leaves no process`,
    ignore: Deno.build.os !== "linux",
    async fn() {
      await using repo = await tempRepo();
      // A command no other test runs, to find in /proc (Claude Code refuses a long `sleep`).
      const sleeper = `tail -f -s ${900 + BACKENDS.indexOf(backend)} /dev/null`;
      await using harness = await backend.start([[backend.shell(sleeper), textTurn("Slept.")]]);
      await writeAgent(repo.path, harness, {
        completionType: "iterate",
        completionConfig: { maxIterations: 1 },
      });
      const result = await run(repo.path, harness, [], {
        onSpawn: async (child) => {
          assert.ok(await until(async () => (await running(sleeper)).length > 0), "it sleeps");
          child.kill("SIGINT");
        },
      });
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /\[finishline\] Interrupted during iteration 1\. Resume with: /);
      const left = await until(async () => (await running(sleeper)).length === 0)
        ? []
        : await running(sleeper);
      for (const pid of left) Deno.kill(pid, "SIGKILL");
      assert.deepEqual(left, [], `the agent's command is stopped with it (${sleeper})`);
    },
  });

  /**
   * The backend's agent command behind a wrapper that appends the pid of each
   * agent process it starts to a file (`exec` keeps the pid).
   */
  function counted(harness: Harness, repo: string) {
    const { acp } = harness.backend as { acp: AcpCommand };
    const spawns = `${repo}/.git/agent-spawns`;
    // The pids are the host's: in a sandbox `$$` would be one of its own pid namespace, so
    // these runs count processes unsandboxed (the sandbox's processes have tests of their own).
    const wrapper = ["sh", "-c", 'echo $$ >> "$0"; exec "$@"', spawns, ...acp.command];
    const pids = async () =>
      (await Deno.readTextFile(spawns).catch(() => "")).trim().split("\n").filter(Boolean)
        .map(Number);
    return { backend: { acp: { ...acp, command: wrapper } }, pids };
  }

  Deno.test({
    name: `${backend.name}: a 3-iteration run ${
      backend.keepsProcess
        ? "opens each session in one agent process"
        : "starts each iteration's agent process while the one before works"
    }`,
    ignore: backend === CLAUDE_SDK,
    async fn() {
      await using repo = await tempRepo();
      await using harness = await backend.start([1, 2, 3].map((n) => [
        backend.shell(`echo ${n} >> n.txt && git add n.txt && git commit -qm "docs: ${n}"`),
        textTurn(`Iteration ${n} done.`),
      ]));
      const { backend: wrapped, pids } = counted(harness, repo.path);
      await commitAgent(repo.path, {
        name: "suite",
        behavior: {
          completionType: "iterate",
          completionConfig: { maxIterations: 3 },
          // Sessions are under test; complete_task has its own tests above.
          requireCompleteTask: false,
          backend: wrapped,
        },
        probe: { enabled: false },
        verify: { sandbox: "off" },
        // The finish's model steps would start the agent once more, after the loop's.
        finish: { maxCostUsd: 0 },
      });
      const result = await run(repo.path, harness, ["--task", "Count"]);
      assert.equal(result.code, 0, result.stderr);
      const outcome = JSON.parse(result.stdout);
      assert.equal(outcome.iterations, 3);
      assert.equal(new Set(outcome.sessionIds).size, 3, "a new session each iteration");
      assert.deepEqual(turnsBySession(harness, 3), [[0, 1], [0, 1], [0, 1]]);
      assert.equal(await git(repo.path, "log", "-3", "--format=%s"), "docs: 3\ndocs: 2\ndocs: 1");
      const started = await pids();
      // Without session/close, each new session needs a process: iteration N + 1's starts
      // during iteration N, and none after the last.
      assert.equal(started.length, backend.keepsProcess ? 1 : 3, `agent processes: ${started}`);
      assert.ok(await until(async () => (await alive(started)).length === 0), "all ended");
    },
  });

  Deno.test({
    name: `${backend.name}: SIGINT in iteration 2 of 3 leaves no agent process, warm ones included`,
    // The SDK backend: the SIGINT test above.
    ignore: Deno.build.os !== "linux" || backend === CLAUDE_SDK,
    async fn() {
      await using repo = await tempRepo();
      let interrupt!: () => void;
      const waiting = new Promise<void>((resolve) => (interrupt = resolve));
      const hang: ScriptStep = () => {
        interrupt();
        return { text: "This reply comes too late.", delayMs: 60_000 };
      };
      await using harness = await backend.start([
        [
          backend.shell('echo 1 > n.txt && git add n.txt && git commit -qm "docs: 1"'),
          textTurn("Iteration 1 done."),
        ],
        [hang],
        [textTurn("Iteration 3 done.")],
      ]);
      const { backend: wrapped, pids } = counted(harness, repo.path);
      await commitAgent(repo.path, {
        name: "suite",
        behavior: {
          completionType: "iterate",
          completionConfig: { maxIterations: 3 },
          // Processes are under test; complete_task has its own tests above.
          requireCompleteTask: false,
          backend: wrapped,
        },
        probe: { enabled: false },
        verify: { sandbox: "off" },
        // The finish's model steps would start the agent once more, after the loop's.
        finish: { maxCostUsd: 0 },
      });
      const result = await run(repo.path, harness, ["--task", "Count"], {
        onSpawn: async (child) => {
          await waiting;
          child.kill("SIGINT");
        },
      });
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /Interrupted during iteration 2/);
      const started = await pids();
      assert.ok(started.length >= 1, "the agent ran");
      // Checked as soon as the run has exited: finishline stops them itself.
      const left = await alive(started);
      for (const pid of left) Deno.kill(pid, "SIGKILL");
      assert.deepEqual(left, [], `agent processes left running (of ${started})`);
    },
  });
}

/** The processes of `pids` that still run (zombies do not). */
async function alive(pids: number[]): Promise<number[]> {
  const running: number[] = [];
  for (const pid of pids) if (await startTime(pid) !== undefined) running.push(pid);
  return running;
}

/** Polls `check` every 100 ms for up to 60 s; whether it came true. */
async function until(check: () => Promise<boolean>): Promise<boolean> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** The processes whose command line holds `needle`, from /proc. */
async function running(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    const line = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (line.replaceAll("\0", " ").includes(needle)) pids.push(Number(entry.name));
  }
  return pids;
}

for (const backend of BACKENDS) suite(backend);
