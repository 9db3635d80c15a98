/**
 * Stall as the completion-detection design defines it: only iterations
 * without progress whose agent was not active count. The breaker alone, then
 * the loop against a stand-in backend in a real temp git repository.
 */

import assert from "node:assert/strict";
import type { AgentBackend, AgentMessage, SessionRequest } from "../../agents/backends/port.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { CircuitBreaker } from "../../agents/loop/circuit_breaker.ts";
import { PROBE_MARKER } from "../../agents/loop/status_probe.ts";
import { runIterations } from "../../agents/loop/runner.ts";
import { tempRepo } from "../_helpers.ts";

Deno.test("the breaker counts idle iterations, resets on progress or an active agent, skips unknowns", () => {
  const breaker = new CircuitBreaker({ noProgressThreshold: 3, sameErrorThreshold: 2 });
  const idle = { newCommits: 0, filesChanged: false, active: false };
  assert.equal(breaker.record(idle), undefined);
  assert.equal(breaker.record(idle), undefined);
  assert.deepEqual([breaker.counted, breaker.noProgressStreak], [true, 2]);
  assert.equal(breaker.record({ ...idle, active: true }), undefined);
  assert.deepEqual([breaker.counted, breaker.noProgressStreak], [false, 0]);
  // Unknown evidence (outside git, git failing) neither counts nor resets.
  breaker.record(idle);
  breaker.record({ newCommits: null, filesChanged: false, active: false });
  assert.deepEqual([breaker.counted, breaker.noProgressStreak], [false, 1]);
  breaker.record({ ...idle, filesChanged: true });
  assert.deepEqual([breaker.counted, breaker.noProgressStreak], [false, 0]);
  // The same error counts apart, whatever the progress or activity.
  const failing = { newCommits: 1, filesChanged: true, active: true, error: "API error: 500" };
  assert.equal(breaker.record(failing), undefined);
  assert.match(breaker.record(failing) ?? "", /same error ended 2 iterations/);
});

/** Never complete: the cap or the breaker ends the run. */
class NeverDone implements CompletionHandler {
  readonly type = "custom" as const;
  buildInitialPrompt = () => Promise.resolve("Do the work.");
  buildContinuationPrompt = () => Promise.resolve("Keep going.");
  buildCompletionCriteria = () => ({ short: "never", detailed: "Never done." });
  isComplete = (_summary: IterationSummary) => Promise.resolve(false);
  getCompletionDescription = () => Promise.resolve("never");
}

/**
 * Sessions that change nothing. Each stops with the given background tasks
 * (the Stop hook's input), and answers status probes from its list in order.
 */
class IdleBackend implements AgentBackend {
  readonly name = "idle";
  readonly probes: string[] = [];
  #sessions = 0;

  constructor(
    readonly iterations: Array<{ background?: number; answers?: string[] }>,
  ) {}

  session(request: SessionRequest): AsyncIterable<AgentMessage> {
    if (request.prompt.includes(PROBE_MARKER)) {
      const n = Number(request.resume!.slice(1));
      const answer = this.iterations[n - 1]?.answers?.shift() ?? "no idea";
      this.probes.push(`${n}: ${answer}`);
      return reply(request.resume!, answer);
    }
    const n = ++this.#sessions;
    return this.#work(request, n);
  }

  async *#work(request: SessionRequest, n: number): AsyncIterable<AgentMessage> {
    const background = this.iterations[n - 1]?.background ?? 0;
    await request.onStop?.({
      stopHookActive: false,
      backgroundTasks: Array.from({ length: background }, (_, index) => ({ id: `b${index}` })),
    });
    yield* reply(`s${n}`, "Looked around.");
  }
}

async function* reply(id: string, text: string): AsyncIterable<AgentMessage> {
  yield { type: "system", subtype: "init", session_id: id };
  yield {
    type: "assistant",
    session_id: id,
    parent_tool_use_id: null,
    message: { content: [{ type: "text", text }] },
  };
  yield {
    type: "result",
    subtype: "success",
    session_id: id,
    total_cost_usd: 0.01,
    num_turns: 1,
    stop_reason: "end_turn",
  };
}

async function runIdle(backend: IdleBackend, probe: Record<string, unknown>) {
  await using repo = await tempRepo();
  const definition = parseDefinition(
    JSON.stringify({
      name: "idle",
      probe,
      behavior: {
        completionType: "custom",
        completionConfig: { handlerPath: "handler.ts", maxIterations: 5 },
        // An idle agent never calls it; the reminder would only add turns to the stall under test.
        requireCompleteTask: false,
        prewarm: false,
      },
    }),
    { displayPath: "idle/agent.json" },
  );
  const result = await runIterations({
    definition,
    handler: new NeverDone(),
    backend,
    systemPrompt: "system",
    args: {},
    cwd: repo.path,
    maxIterations: 5,
    git: await GitRepo.open(repo.path),
  });
  return {
    status: result.status,
    stall: result.summaries.map((summary) => summary.stall),
  };
}

Deno.test("background tasks at the stop count as an active agent: never a stall", async () => {
  const busy = await runIdle(
    new IdleBackend(Array.from({ length: 5 }, () => ({ background: 1 }))),
    { enabled: false },
  );
  assert.equal(busy.status, "max_iterations");
  assert.deepEqual(
    busy.stall,
    Array.from({ length: 5 }, () => ({ counted: false, streak: 0, probe: "not_probed" })),
  );
  // The same iterations without background tasks: no probe ran and nothing moved, so they count.
  const idle = await runIdle(new IdleBackend([]), { enabled: false });
  assert.equal(idle.status, "stalled");
  assert.deepEqual(
    idle.stall,
    [1, 2, 3].map((streak) => ({ counted: true, streak, probe: "not_probed" })),
  );
});

Deno.test("any active probe answer keeps an iteration from counting, not only the last", async () => {
  const backend = new IdleBackend([
    { answers: ['{"status": "waiting"}', "no idea"] },
    { answers: ['{"status": "complete", "agents_active": true}'] },
    { answers: ["no idea"] },
    { answers: ['{"status": "complete", "agents_active": false}'] },
    { answers: ["no idea"] },
  ]);
  const run = await runIdle(backend, { maxProbes: 3, probeIntervalSeconds: 0 });
  assert.deepEqual(backend.probes, [
    '1: {"status": "waiting"}',
    "1: no idea",
    '2: {"status": "complete", "agents_active": true}',
    "3: no idea",
    '4: {"status": "complete", "agents_active": false}',
    "5: no idea",
  ]);
  assert.equal(run.status, "stalled");
  assert.deepEqual(run.stall, [
    { counted: false, streak: 0, probe: "active" },
    { counted: false, streak: 0, probe: "active" },
    { counted: true, streak: 1, probe: "timeout" },
    // A claim of done without a commit or a change still counts (the seed's failure mode 4).
    { counted: true, streak: 2, probe: "complete" },
    { counted: true, streak: 3, probe: "timeout" },
  ]);
});

Deno.test("rounds of probes that run out on waiting count after two in a row: an agent that always waits stalls the run", async () => {
  const waiting = '{"status": "waiting", "message": "the migration runs"}';
  const backend = new IdleBackend(Array.from({ length: 5 }, () => ({ answers: [waiting] })));
  const run = await runIdle(backend, { maxProbes: 1, probeIntervalSeconds: 0 });
  assert.equal(run.status, "stalled");
  assert.deepEqual(run.stall, [
    { counted: false, streak: 0, probe: "active", waitingRounds: 1 },
    { counted: false, streak: 0, probe: "active", waitingRounds: 2 },
    { counted: true, streak: 1, probe: "active", waitingRounds: 3 },
    { counted: true, streak: 2, probe: "active", waitingRounds: 4 },
    { counted: true, streak: 3, probe: "active", waitingRounds: 5 },
  ]);
});

Deno.test("a waiting round that did not run out, or a working one, or one where files moved, starts the count again", () => {
  const breaker = new CircuitBreaker({ noProgressThreshold: 3, sameErrorThreshold: 5 });
  const waitedOut = { newCommits: 0, filesChanged: false, active: true, waitedOut: true };
  breaker.record(waitedOut);
  breaker.record(waitedOut);
  assert.equal(breaker.waitingRounds, 2);
  // Still working when the probes ran out: active, and no waiting round.
  breaker.record({ ...waitedOut, waitedOut: false });
  assert.deepEqual([breaker.waitingRounds, breaker.counted], [0, false]);
  breaker.record(waitedOut);
  breaker.record(waitedOut);
  // The background work changed files: progress, whatever the agent said.
  breaker.record({ ...waitedOut, filesChanged: true });
  assert.deepEqual([breaker.waitingRounds, breaker.counted], [0, false]);
  breaker.record(waitedOut);
  breaker.record(waitedOut);
  breaker.record(waitedOut);
  assert.deepEqual([breaker.waitingRounds, breaker.counted, breaker.noProgressStreak], [
    3,
    true,
    1,
  ]);
});
