import assert from "node:assert/strict";
import { parseDefinition } from "../../agents/definition/parse.ts";
import type { AgentBackend, AgentMessage, SessionRequest } from "../../agents/backends/port.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { RunLog } from "../../agents/support/log.ts";
import { EXIT_CODES, type RunEvent, runIterations } from "../../agents/loop/runner.ts";

/** A backend that answers each session from a list of canned message lists. */
class CannedBackend implements AgentBackend {
  readonly name = "canned";
  readonly requests: SessionRequest[] = [];
  #sessions: Array<(request: SessionRequest) => AsyncIterable<AgentMessage>>;

  constructor(
    sessions: Array<(request: SessionRequest) => AsyncIterable<AgentMessage>>,
  ) {
    this.#sessions = sessions;
  }

  session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.requests.push(request);
    const next = this.#sessions[this.requests.length - 1] ??
      this.#sessions.at(-1)!;
    return next(request);
  }
}

function session(
  text: string,
  options: { id?: string; cost?: number; tools?: string[] } = {},
) {
  return async function* (
    request: SessionRequest,
  ): AsyncIterable<AgentMessage> {
    const id = options.id ?? request.resume ?? crypto.randomUUID();
    yield { type: "system", subtype: "init", session_id: id };
    yield {
      type: "assistant",
      session_id: id,
      parent_tool_use_id: null,
      message: {
        content: [
          ...(options.tools ?? []).map((name, index) => ({
            type: "tool_use",
            id: `t${index}`,
            name,
            input: {},
          })),
          { type: "text", text },
        ],
      },
    };
    yield {
      type: "result",
      subtype: "success",
      session_id: id,
      total_cost_usd: options.cost ?? 0.01,
      num_turns: 1,
      stop_reason: "end_turn",
      usage: { input_tokens: 5, output_tokens: 3 },
    };
  };
}

class KeywordHandler implements CompletionHandler {
  readonly type = "manual" as const;
  readonly prompts: string[] = [];
  readonly checked: number[] = [];
  constructor(readonly keyword: string) {}
  buildInitialPrompt(): Promise<string> {
    this.prompts.push("initial");
    return Promise.resolve("start");
  }
  buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    this.prompts.push(`continue ${iteration} after ${summaries.length}`);
    return Promise.resolve(`continue ${iteration}`);
  }
  buildCompletionCriteria() {
    return { short: `say ${this.keyword}`, detailed: `Say ${this.keyword}` };
  }
  isComplete(summary: IterationSummary): Promise<boolean> {
    this.checked.push(summary.iteration);
    return Promise.resolve(
      summary.assistantResponses.some((text) => text.includes(this.keyword)),
    );
  }
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(`keyword in iteration ${summary.iteration}`);
  }
}

function definition(extra: Record<string, unknown> = {}) {
  return parseDefinition(
    JSON.stringify({
      name: "test",
      probe: { enabled: false },
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "DONE" },
        ...extra,
      },
    }),
    { displayPath: "test/agent.json" },
  );
}

function options(
  backend: AgentBackend,
  handler: CompletionHandler,
  extra: Record<string, unknown> = {},
) {
  return {
    definition: definition(),
    handler,
    backend,
    systemPrompt: "system",
    args: {},
    cwd: "/tmp",
    maxIterations: 5,
    ...extra,
  };
}

Deno.test("runner stops in the iteration whose summary satisfies the handler", async () => {
  const backend = new CannedBackend([
    session("working"),
    session("all DONE"),
    session("never reached"),
  ]);
  const handler = new KeywordHandler("DONE");
  const events: RunEvent[] = [];
  const result = await runIterations({
    ...options(backend, handler),
    onEvent: (event) => events.push(event),
  });
  assert.equal(result.status, "unverified");
  assert.equal(result.iterations, 2);
  assert.equal(backend.requests.length, 2);
  assert.deepEqual(handler.checked, [1, 2]);
  assert.deepEqual(handler.prompts, ["initial", "continue 2 after 1"]);
  // The keyword is a claim, and nothing checked it: not "keyword in iteration 2", the handler's word.
  assert.equal(
    result.completionReason,
    "unverified: no checks found; the agent called the work done in iteration 2, and nothing checked it",
  );
  assert.equal(result.unverified, "no checks found");
  assert.equal(result.sessionIds.length, 2);
  assert.equal(Math.round(result.costUsd * 100), 2);
  const verdicts = events.flatMap((event) =>
    event.type === "iteration_finished" ? [event.verdict] : []
  );
  assert.deepEqual(verdicts, ["continue", "unverified"]);
  assert.equal(EXIT_CODES[result.status], 7);
});

Deno.test("runner ends at the iteration cap with max_iterations", async () => {
  const backend = new CannedBackend([session("still working")]);
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    maxIterations: 3,
  });
  assert.equal(result.status, "max_iterations");
  assert.equal(result.iterations, 3);
  assert.equal(backend.requests.length, 3);
  assert.equal(EXIT_CODES[result.status], 3);
  assert.match(result.completionReason, /cap of 3 iterations/);
});

Deno.test("runner passes the definition's settings to each session", async (t) => {
  await t.step("fresh sessions do not resume", async () => {
    const backend = new CannedBackend([session("a"), session("b")]);
    await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      maxIterations: 2,
    });
    assert.deepEqual(backend.requests.map((request) => request.resume), [
      undefined,
      undefined,
    ]);
    assert.equal(backend.requests[0].systemPromptAppend, "system");
    assert.equal(backend.requests[0].permissionMode, "acceptEdits");
    assert.deepEqual(backend.requests[0].settingSources, ["project"]);
  });
  await t.step(
    "continue resumes the previous iteration's session",
    async () => {
      const backend = new CannedBackend([
        session("a", { id: "s-1" }),
        session("b"),
        session("c"),
      ]);
      const continuing = parseDefinition(
        JSON.stringify({
          name: "test",
          probe: { enabled: false },
          behavior: {
            completionType: "manual",
            completionConfig: { completionKeyword: "DONE" },
            session: "continue",
          },
        }),
        { displayPath: "agent.json" },
      );
      const result = await runIterations({
        ...options(backend, new KeywordHandler("DONE")),
        definition: continuing,
        maxIterations: 3,
      });
      assert.deepEqual(backend.requests.map((request) => request.resume), [
        undefined,
        "s-1",
        "s-1",
      ]);
      assert.deepEqual(result.sessionIds, ["s-1"]);
    },
  );
});

Deno.test("runner ends budget_exhausted when the cost budget is spent", async () => {
  const backend = new CannedBackend([session("x", { cost: 0.4 })]);
  const budgeted = parseDefinition(
    JSON.stringify({
      name: "test",
      probe: { enabled: false },
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "DONE" },
        maxBudgetUsd: 1,
      },
    }),
    { displayPath: "agent.json" },
  );
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    definition: budgeted,
  });
  assert.equal(result.status, "budget_exhausted");
  assert.equal(result.iterations, 3);
  assert.equal(EXIT_CODES[result.status], 6);
  assert.ok(
    backend.requests[1].maxBudgetUsd! < 0.61 &&
      backend.requests[1].maxBudgetUsd! > 0.59,
  );
});

Deno.test("runner records an interrupted iteration and ends interrupted", async () => {
  const controller = new AbortController();
  const backend = new CannedBackend([
    session("first"),
    async function* (request) {
      yield { type: "system", subtype: "init", session_id: "s-2" };
      controller.abort();
      if (request.signal.aborted) throw new Error("aborted");
    },
  ]);
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    signal: controller.signal,
  });
  assert.equal(result.status, "interrupted");
  assert.equal(result.iterations, 2);
  assert.equal(result.summaries[1].stopReason, "interrupted");
  assert.equal(EXIT_CODES[result.status], 130);
});

Deno.test("a session that dies without a result is retried, then the run ends failed with the error", async () => {
  const backend = new CannedBackend([
    async function* () {
      yield { type: "system", subtype: "init", session_id: "s-1" };
      throw new Error("Claude Code process exited with code 1\nstack...");
    },
  ]);
  const waits: number[] = [];
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  assert.equal(result.status, "failed");
  assert.equal(result.iterations, 1, "retries do not use up iterations");
  assert.equal(backend.requests.length, 3, "retry.maxAttempts attempts");
  assert.equal(waits.length, 2);
  assert.match(
    result.completionReason,
    /^Gave up on iteration 1 after 3 attempts: .*exited with code 1$/,
  );
  assert.equal(result.summaries[0].retries?.length, 3);
});

Deno.test("a retried session that then succeeds continues the run normally", async () => {
  const backend = new CannedBackend([
    async function* () {
      yield { type: "system", subtype: "init", session_id: "s-1" };
      throw new Error("socket hang up");
    },
    session("all DONE"),
  ]);
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    sleep: () => Promise.resolve(),
  });
  assert.equal(result.status, "unverified");
  assert.equal(result.iterations, 1);
  assert.deepEqual(result.summaries[0].retries, [
    "retryable: The agent process ended without a result: socket hang up",
  ]);
});

Deno.test("fatal API errors end the run at once; a rejected rate limit waits until it resets", async (t) => {
  const apiError = (error: string, text: string) =>
    async function* (): AsyncIterable<AgentMessage> {
      yield { type: "system", subtype: "init", session_id: "s" };
      yield {
        type: "assistant",
        session_id: "s",
        parent_tool_use_id: null,
        error,
        message: { content: [{ type: "text", text }] },
      };
      yield {
        type: "result",
        subtype: "success",
        is_error: true,
        session_id: "s",
        total_cost_usd: 0,
        num_turns: 1,
        usage: {},
      };
    };
  await t.step("authentication_failed", async () => {
    const backend = new CannedBackend([apiError("authentication_failed", "Invalid API key")]);
    const result = await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      sleep: () => Promise.resolve(),
    });
    assert.equal(result.status, "failed");
    assert.equal(backend.requests.length, 1, "no retry");
    assert.match(result.completionReason, /^Authentication failed: check ANTHROPIC_API_KEY/);
  });
  await t.step("billing_error", async () => {
    const backend = new CannedBackend([apiError("billing_error", "Credit balance is too low")]);
    const result = await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      sleep: () => Promise.resolve(),
    });
    assert.equal(backend.requests.length, 1);
    assert.match(result.completionReason, /^Billing:/);
  });
  await t.step("rate_limit_event rejected", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 30;
    const backend = new CannedBackend([
      async function* () {
        yield { type: "system", subtype: "init", session_id: "s" };
        yield {
          type: "rate_limit_event",
          session_id: "s",
          rate_limit_info: { status: "rejected", resetsAt },
        };
        yield {
          type: "assistant",
          session_id: "s",
          parent_tool_use_id: null,
          error: "rate_limit",
          message: { content: [{ type: "text", text: "limit" }] },
        };
        yield {
          type: "result",
          subtype: "success",
          is_error: true,
          session_id: "s",
          total_cost_usd: 0,
          num_turns: 1,
          usage: {},
        };
      },
      session("all DONE"),
    ]);
    const waits: number[] = [];
    const result = await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    assert.equal(result.status, "unverified");
    assert.equal(waits.length, 1);
    assert.ok(waits[0] > 25_000 && waits[0] <= 30_000, `waited until the reset: ${waits[0]} ms`);
  });
  await t.step("a reset beyond --max-wait ends the run failed, resumable", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 3600;
    const backend = new CannedBackend([
      async function* () {
        yield { type: "system", subtype: "init", session_id: "s" };
        yield {
          type: "rate_limit_event",
          session_id: "s",
          rate_limit_info: { status: "rejected", resetsAt },
        };
        yield {
          type: "result",
          subtype: "success",
          is_error: true,
          session_id: "s",
          total_cost_usd: 0,
          num_turns: 1,
          usage: {},
        };
      },
    ]);
    const result = await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      sleep: () => Promise.resolve(),
    });
    assert.equal(result.status, "failed");
    assert.match(
      result.completionReason,
      /beyond --max-wait \(900 s\): resume later with --resume$/,
    );
  });
});

Deno.test("a handler that throws is an incomplete verdict with feedback; three in a row end the run failed", async () => {
  const handler = new KeywordHandler("DONE");
  handler.isComplete = () => Promise.reject(new Error("gh exploded"));
  const backend = new CannedBackend([session("x")]);
  const result = await runIterations(options(backend, handler));
  assert.equal(result.status, "failed");
  assert.equal(result.iterations, 3);
  assert.match(result.completionReason, /failed 3 times in a row: gh exploded/);
  assert.equal(
    result.summaries[0].verification?.feedback,
    "The completion handler failed: gh exploded",
  );
  assert.ok(handler.prompts[1].startsWith("continue 2"), "the run went on after the first failure");
});

Deno.test("runner writes run, iteration and message records to the log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = RunLog.open(`${dir}/run.jsonl`);
    const backend = new CannedBackend([session("DONE", { tools: ["Bash"] })]);
    const result = await runIterations({
      ...options(backend, new KeywordHandler("DONE")),
      log,
    });
    log.close();
    const records = (await Deno.readTextFile(`${dir}/run.jsonl`)).trim().split(
      "\n",
    ).map((line) => JSON.parse(line));
    const kinds = records.map((record) => record.kind);
    assert.equal(kinds[0], "run_started");
    assert.equal(kinds.at(-1), "run_finished");
    assert.equal(kinds.filter((kind) => kind === "message").length, 3);
    assert.ok(kinds.includes("iteration_finished"));
    assert.equal(result.logFile, `${dir}/run.jsonl`);
    const finished = records.find((record) => record.kind === "iteration_finished");
    assert.deepEqual(finished.summary.toolsUsed, ["Bash"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A session that reports Claude Code's retries, then answers unless it was stopped first. */
function retryingSession(
  retries: Array<{ status: number | null; error: string; waitMs: number }>,
  seen: { retries: number; answered: boolean },
) {
  return async function* (): AsyncIterable<AgentMessage> {
    yield { type: "system", subtype: "init", session_id: "s1", apiKeySource: "ANTHROPIC_API_KEY" };
    for (const [index, retry] of retries.entries()) {
      seen.retries++;
      yield {
        type: "system",
        subtype: "api_retry",
        attempt: index + 1,
        max_retries: 10,
        retry_delay_ms: retry.waitMs,
        error_status: retry.status,
        error: retry.error,
        session_id: "s1",
      };
    }
    seen.answered = true;
    yield* session("all DONE", { id: "s1" })({} as SessionRequest);
  };
}

Deno.test("a retry that cannot help stops the session at its first report and fails the run", async () => {
  const seen = { retries: 0, answered: false };
  const unauthorised = { status: 401, error: "authentication_failed", waitMs: 500 };
  const backend = new CannedBackend([retryingSession([unauthorised, unauthorised], seen)]);
  const events: RunEvent[] = [];
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    onEvent: (event) => events.push(event),
  });
  assert.equal(result.status, "failed");
  assert.match(result.completionReason, /^Authentication failed: check ANTHROPIC_API_KEY/);
  assert.deepEqual(seen, { retries: 1, answered: false });
  assert.equal(backend.requests.length, 1, "the runner does not retry a fatal fault");
  assert.equal(events.filter((event) => event.type === "api_retry").length, 0);
});

Deno.test("retries that may help are reported and counted against the run's wait budget", async () => {
  const seen = { retries: 0, answered: false };
  const overloaded = { status: 529, error: "overloaded", waitMs: 400_000 };
  const backend = new CannedBackend([
    retryingSession([overloaded, overloaded, overloaded, overloaded], seen),
  ]);
  const events: RunEvent[] = [];
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    onEvent: (event) => events.push(event),
  });
  assert.equal(result.status, "failed");
  assert.equal(
    result.completionReason,
    "Claude's API kept failing (529 overloaded) for 1200 s, beyond the wait budget of 900 s " +
      "(retry.maxWaitSeconds, --max-wait): try again later, or resume with --resume",
  );
  assert.deepEqual(seen, { retries: 3, answered: false });
  assert.deepEqual(
    events.filter((event) => event.type === "api_retry"),
    [1, 2, 3].map((attempt) => ({
      type: "api_retry",
      iteration: 1,
      attempt,
      maxRetries: 10,
      status: 529,
      error: "overloaded",
      waitMs: 400_000,
    })),
  );
});

Deno.test("retries within the wait budget let the session finish", async () => {
  const seen = { retries: 0, answered: false };
  const overloaded = { status: 529, error: "overloaded", waitMs: 500 };
  const backend = new CannedBackend([retryingSession([overloaded, overloaded, overloaded], seen)]);
  const result = await runIterations(options(backend, new KeywordHandler("DONE")));
  assert.equal(result.status, "unverified");
  assert.deepEqual(seen, { retries: 3, answered: true });
});

Deno.test("connection errors are reported with the cause a probe of the host found, and the run records that the model could not be used", async () => {
  const seen = { retries: 0, answered: false };
  const refused = { status: null, error: "unknown", waitMs: 400_000 };
  const backend = new CannedBackend([retryingSession([refused, refused, refused, refused], seen)]);
  const events: RunEvent[] = [];
  let probes = 0;
  const result = await runIterations({
    ...options(backend, new KeywordHandler("DONE")),
    onEvent: (event) => events.push(event),
    connectionCause: () => {
      probes++;
      return Promise.resolve("cannot reach 127.0.0.1:9: connection refused (ECONNREFUSED)");
    },
  });
  assert.equal(result.status, "failed");
  assert.equal(
    result.completionReason,
    "Claude's API kept failing (connection error: cannot reach 127.0.0.1:9: connection refused " +
      "(ECONNREFUSED)) for 1200 s, beyond the wait budget of 900 s (retry.maxWaitSeconds, " +
      "--max-wait): try again later, or resume with --resume",
  );
  assert.equal(result.modelFailure, result.completionReason);
  assert.equal(probes, 1, "the host is probed once per session");
  const reported = events.filter((event) => event.type === "api_retry");
  assert.equal(reported.length, 3);
  for (const event of reported) {
    assert.equal(
      (event as { cause?: string }).cause,
      "cannot reach 127.0.0.1:9: connection refused (ECONNREFUSED)",
    );
  }
});

Deno.test("a run that ends for another reason records no model failure", async () => {
  const seen = { retries: 0, answered: false };
  const overloaded = { status: 529, error: "overloaded", waitMs: 500 };
  const backend = new CannedBackend([retryingSession([overloaded], seen)]);
  const result = await runIterations(options(backend, new KeywordHandler("DONE")));
  assert.equal(result.status, "unverified");
  assert.equal(result.modelFailure, undefined);
});
