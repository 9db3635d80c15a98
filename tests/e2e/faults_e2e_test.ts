/**
 * End to end for API faults, hangs and signals: the real Claude Code binary
 * against a scripted model server that injects faults; the run must end with
 * the right status and the store must hold every iteration that finished.
 */

import assert from "node:assert/strict";
import { SqliteStore } from "../../agents/store/mod.ts";
import {
  ScriptedModelServer,
  type ScriptedTurn,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";
import { catalogueLine } from "./_fault_catalogue.ts";

const commit = (n: number) =>
  toolTurn("Bash", {
    command: `printf '${n}' > f${n}.txt && git add f${n}.txt && git commit -qm 'feat: ${n}'`,
  });

async function faultAgent(repo: string, retry: Record<string, unknown> = {}): Promise<void> {
  await Deno.mkdir(`${repo}/.agent/faulty`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/faulty/agent.json`,
    JSON.stringify({
      name: "faulty",
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 2 },
        requireCompleteTask: false,
      },
      probe: { enabled: false },
      retry: { baseDelaySeconds: 0, ...retry },
      // No finish model steps (tests/e2e/finish_model_e2e_test.ts has them): the CLI ends
      // as soon as the run does, as the catalogue times it. With them, the Claude Code process
      // of a session stopped at its first 401 lives on while the finish asks its questions (the
      // SDK's close ends its stdin first) and gets one retry out.
      finish: { maxCostUsd: 0 },
    }),
  );
  await git(repo, "add", ".agent");
  await git(repo, "commit", "-qm", "chore: agent");
}

function storedIterations(repo: string, runId: string): number[] {
  const store = SqliteStore.open(`${repo}/.agent/.finishline/state.db`);
  try {
    return store.iterations(runId).map((row) => row.number);
  } finally {
    store.close();
  }
}

Deno.test("transient API faults are survived and every iteration is recorded", async (t) => {
  const faults: Array<[string, ScriptedTurn]> = [
    ["529 overloaded", { fault: { kind: "http", status: 529 } }],
    ["500", { fault: { kind: "http", status: 500 } }],
    ["connection reset mid-stream", { fault: { kind: "reset", afterEvents: 2 } }],
    ["malformed SSE", { fault: { kind: "malformed", afterEvents: 1 } }],
  ];
  for (const [name, fault] of faults) {
    await t.step(name, async () => {
      await using repo = await tempRepo();
      await faultAgent(repo.path);
      await using server = await ScriptedModelServer.start({
        scripts: [[commit(1), textTurn("one")], [fault, commit(2), textTurn("two")]],
      });
      const started = performance.now();
      const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.status, "completed");
      const iterations = storedIterations(repo.path, result.runId);
      assert.deepEqual(iterations, [1, 2]);
      assert.equal(await git(repo.path, "show", "HEAD:f2.txt"), "2");
      if (name.startsWith("connection reset")) {
        catalogueLine("stream reset mid-response", "completed, exit 0", started, iterations);
      }
    });
  }
});

Deno.test("a response that never ends is a hang: the session is aborted and the iteration retried", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path, { iterationTimeoutSeconds: 3 });
  await using server = await ScriptedModelServer.start({
    scripts: [
      [commit(1), textTurn("one")],
      [{ fault: { kind: "hang", afterEvents: 2 } }],
      [commit(2), textTurn("two")],
    ],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 2, "the retry did not use up an iteration");
  const iterations = storedIterations(repo.path, result.runId);
  assert.deepEqual(iterations, [1, 2]);
  catalogueLine(
    "a hang (3 s watchdog)",
    "aborted, retried, completed, exit 0",
    started,
    iterations,
  );
  const log = (await Deno.readTextFile(result.logFile)).trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  const fault = log.find((record) => record.kind === "session_fault");
  assert.match(fault.message, /No message from the agent for 3 s: the session hung/);
  const second = log.find((record) =>
    record.kind === "iteration_finished" && record.iteration === 2
  );
  assert.equal(second.summary.retries.length, 1);
});

Deno.test("a persistent server error that Claude Code may not retry ends the run failed after the runner's retries; finished iterations stay recorded", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path, { maxAttempts: 2 });
  await using server = await ScriptedModelServer.start({
    scripts: [[commit(1), textTurn("one")]],
    fallback: {
      fault: {
        kind: "http",
        status: 500,
        message: "the server is on fire",
        // The API's own word that a retry will not help: Claude Code gives up at once.
        headers: { "x-should-retry": "false" },
      },
    },
  });
  const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 1, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "failed");
  assert.match(
    result.completionReason,
    /^Gave up on iteration 2 after 2 attempts: API error: .*server is on fire/,
  );
  assert.deepEqual(storedIterations(repo.path, result.runId), [1, 2]);
});

/** Main-loop model requests the server answered with an error status. */
function failedRequests(server: ScriptedModelServer): number {
  return server.requests.filter((request) => !request.side && request.path === "/v1/messages")
    .length;
}

for (
  const [status, reason] of [
    [401, /^Authentication failed: check ANTHROPIC_API_KEY \(or the Claude Code login it uses\)/],
    [403, /^(Authentication failed: check ANTHROPIC_API_KEY|The API refused access \(403\))/],
  ] as const
) {
  Deno.test(`a ${status} ends the run failed at once with what to do, without Claude Code's retries`, async () => {
    await using repo = await tempRepo();
    await faultAgent(repo.path);
    await using server = await ScriptedModelServer.start({
      fallback: { fault: { kind: "http", status, message: "invalid x-api-key" } },
    });
    const started = performance.now();
    const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 1, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.equal(result.status, "failed");
    assert.match(result.completionReason, reason);
    assert.match(run.stderr, /\[finishline\] Failed: /);
    // The first api_retry report stops the session; Claude Code's first retry, due
    // about 0.5 s later, may still go out on a loaded machine. Without the watch it
    // would make 11 requests over minutes, and the runner would retry them all again.
    assert.ok(
      failedRequests(server) <= 2,
      `no more than one retry slipped through: ${failedRequests(server)} requests`,
    );
    catalogueLine(
      `${status}`,
      "failed with what to do, exit 1",
      started,
      storedIterations(repo.path, result.runId),
    );
  });
}

Deno.test("529 three times then success: Claude Code's retries are shown live and the run completes", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path);
  const overloaded: ScriptedTurn = { fault: { kind: "http", status: 529 } };
  await using server = await ScriptedModelServer.start({
    scripts: [[commit(1), textTurn("one")], [overloaded, overloaded, overloaded, textTurn("two")]],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  const iterations = storedIterations(repo.path, result.runId);
  assert.deepEqual(iterations, [1, 2]);
  catalogueLine("529 three times, then success", "completed, exit 0", started, iterations);
  const shown = run.stderr.match(
    /\[finishline\] iteration 2: API retry \d+\/10 \(529 overloaded\), next in \d+\.\ds/g,
  );
  assert.deepEqual(
    shown?.map((line) => line.match(/retry (\d+)/)![1]),
    ["1", "2", "3"],
    run.stderr,
  );
  const log = (await Deno.readTextFile(result.logFile)).trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  assert.deepEqual(
    log.filter((record) => record.kind === "api_retry").map((record) => record.status),
    [529, 529, 529],
  );
});

Deno.test("429 with retry-after: Claude Code waits what the server asked, shown live, and the run completes", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path);
  await using server = await ScriptedModelServer.start({
    scripts: [[commit(1), textTurn("one")], [
      { fault: { kind: "http", status: 429, headers: { "retry-after": "2" } } },
      commit(2),
      textTurn("two"),
    ]],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  const shown = run.stderr.match(
    /\[finishline\] iteration 2: API retry 1\/10 \(429 [a-z_]+\), next in (\d+\.\d)s/,
  );
  assert.ok(shown, run.stderr);
  assert.ok(Number(shown[1]) >= 2, `the retry-after of 2 s was honoured: ${shown[0]}`);
  const iterations = storedIterations(repo.path, result.runId);
  assert.deepEqual(iterations, [1, 2]);
  catalogueLine("429 with retry-after: 2", "waited, completed, exit 0", started, iterations);
});

Deno.test("an outage beyond the wait budget ends the run failed with what to do; finished iterations stay recorded", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path, { maxWaitSeconds: 2 });
  await using server = await ScriptedModelServer.start({
    scripts: [[commit(1), textTurn("one")]],
    fallback: { fault: { kind: "http", status: 529 } },
  });
  const started = performance.now();
  const run = await runCli(["--agent", "faulty", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 1, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "failed");
  assert.match(
    result.completionReason,
    /^Claude's API kept failing \(529 overloaded\) for \d+ s, beyond the wait budget of 2 s \(retry\.maxWaitSeconds, --max-wait\): try again later, or resume with --resume$/,
  );
  assert.match(run.stderr, /API retry 1\/10 \(529 overloaded\)/);
  const iterations = storedIterations(repo.path, result.runId);
  assert.deepEqual(iterations, [1, 2]);
  catalogueLine(
    "529 for longer than a 2 s wait budget",
    "failed with what to do, exit 1",
    started,
    iterations,
  );
});

Deno.test("SIGINT during an iteration exits 130 with the iteration recorded, and --resume completes the run", async () => {
  await using repo = await tempRepo();
  await faultAgent(repo.path);
  let started: () => void;
  const inIteration = new Promise<void>((resolve) => started = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [
      [commit(1), textTurn("one")],
      [() => {
        started();
        return { text: "too late", delayMs: 60_000 };
      }],
      [commit(2), textTurn("two")],
    ],
  });
  let signalled = 0;
  const interrupted = await runCli(["--agent", "faulty", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await inIteration;
      signalled = performance.now();
      child.kill("SIGINT");
    },
  });
  assert.equal(interrupted.code, 130, interrupted.stderr);
  assert.ok(performance.now() - signalled < 10_000, "exits within seconds");
  const first = JSON.parse(interrupted.stdout);
  assert.equal(first.status, "interrupted");
  assert.deepEqual(
    storedIterations(repo.path, first.runId),
    [1, 2],
    "the interrupted iteration is recorded",
  );

  const resumed = await runCli(["--resume", "--json"], { cwd: repo.path, server });
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout);
  assert.equal(result.runId, first.runId);
  assert.equal(result.status, "completed");
});
