import assert from "node:assert/strict";
import { SummaryBuilder } from "../../agents/loop/summary_builder.ts";
import { apiRetryCause, classifyFault, fatalApiRetry } from "../../agents/loop/faults.ts";
import { SessionGoneError } from "../../agents/backends/port.ts";

const RETRY = { iterationTimeoutSeconds: 1200, maxWaitSeconds: 900 };

/** A builder fed Claude Code's messages: its init, then its `api_retry` messages. */
function session(
  retries: Array<{ status: number | null; error: string; attempt?: number }>,
  apiKeySource = "ANTHROPIC_API_KEY",
): SummaryBuilder {
  const builder = new SummaryBuilder(1);
  builder.add({ type: "system", subtype: "init", session_id: "s1", apiKeySource });
  retries.forEach(({ status, error, attempt }, index) =>
    builder.add({
      type: "system",
      subtype: "api_retry",
      attempt: attempt ?? index + 1,
      max_retries: 10,
      retry_delay_ms: 500 * 2 ** index,
      error_status: status,
      error,
      session_id: "s1",
    })
  );
  return builder;
}

const ended = { error: undefined, hung: false };

Deno.test("an API retry that cannot help is a fatal fault with what to do", async (t) => {
  const cases: Array<[string, { status: number | null; error: string }, RegExp]> = [
    ["401", { status: 401, error: "authentication_failed" }, /^Authentication failed: check/],
    ["403 as Claude Code names it", { status: 403, error: "authentication_failed" }, /^Auth/],
    ["403 unnamed", { status: 403, error: "unknown" }, /^The API refused access \(403\)/],
    ["billing", { status: 400, error: "billing_error" }, /^Billing: /],
    ["model not found", { status: 404, error: "model_not_found" }, /^The model was not found/],
    ["404 by its error type", { status: null, error: "not_found_error" }, /^The model was/],
  ];
  for (const [name, retry, message] of cases) {
    await t.step(name, () => {
      const fault = classifyFault(session([retry]), ended, RETRY);
      assert.equal(fault?.retryable, false);
      assert.match(fault!.message, message);
      assert.match(fault!.message, /Claude Code's retries were stopped\)$/);
    });
  }
});

Deno.test("retries that may help are no fault of a session that then succeeds", async (t) => {
  for (
    const retry of [
      { status: 529, error: "overloaded" },
      { status: 429, error: "rate_limit" },
      { status: 500, error: "server_error" },
      { status: null, error: "unknown" },
    ]
  ) {
    await t.step(`${retry.status} ${retry.error}`, () => {
      const builder = session([retry, retry]);
      assert.equal(fatalApiRetry(builder.lastApiRetry!), undefined);
      builder.add({ type: "result", subtype: "success", num_turns: 1 });
      assert.equal(classifyFault(builder, ended, RETRY), undefined);
    });
  }
});

Deno.test("a first 401 of a login token may be fixed by its refresh; a second one is fatal", () => {
  const first = { status: 401, error: "authentication_failed" };
  assert.equal(fatalApiRetry(session([first], "oauth").lastApiRetry!, "oauth"), undefined);
  assert.equal(
    fatalApiRetry(session([first], "ANTHROPIC_API_KEY").lastApiRetry!, "ANTHROPIC_API_KEY"),
    "authentication_failed",
  );
  const twice = session([first, first], "oauth");
  assert.equal(classifyFault(twice, ended, RETRY)?.retryable, false);
});

Deno.test("retries beyond the run's wait budget are a fatal fault that names the cause and the budget", () => {
  const builder = session([{ status: 529, error: "overloaded" }, {
    status: 529,
    error: "overloaded",
  }]);
  const fault = classifyFault(builder, { ...ended, waitedMs: 7400 }, {
    ...RETRY,
    maxWaitSeconds: 5,
  });
  assert.deepEqual(fault, {
    retryable: false,
    modelDown: true,
    message: "Claude's API kept failing (529 overloaded) for 7 s, beyond the wait budget of 5 s " +
      "(retry.maxWaitSeconds, --max-wait): try again later, or resume with --resume",
  });
});

Deno.test("connection errors beyond the wait budget name the cause a probe found, never 'no response unknown'", () => {
  const builder = session([{ status: null, error: "unknown" }, { status: null, error: "unknown" }]);
  const cause = "cannot reach api.anthropic.com:443: DNS lookup failed (ENOTFOUND)";
  const fault = classifyFault(builder, { ...ended, waitedMs: 21_000, connectionCause: cause }, {
    ...RETRY,
    maxWaitSeconds: 20,
  });
  assert.equal(fault?.modelDown, true);
  assert.equal(
    fault?.message,
    `Claude's API kept failing (connection error: ${cause}) for 21 s, beyond the wait budget of ` +
      "20 s (retry.maxWaitSeconds, --max-wait): try again later, or resume with --resume",
  );
  const unprobed = classifyFault(builder, { ...ended, waitedMs: 21_000 }, RETRY);
  assert.match(unprobed!.message, /^Claude's API kept failing \(connection error\) for 21 s/);
});

Deno.test("apiRetryCause: a status and its code; a connection error, a silent API, and the probe's cause", () => {
  const retry = { attempt: 1, maxRetries: 10, waitMs: 500 };
  assert.equal(apiRetryCause({ ...retry, status: 529, error: "overloaded" }), "529 overloaded");
  assert.equal(apiRetryCause({ ...retry, status: null, error: "unknown" }), "connection error");
  assert.equal(
    apiRetryCause({ ...retry, status: null, error: "connection_error" }, "cannot reach h:80: x"),
    "connection error: cannot reach h:80: x",
  );
  assert.equal(
    apiRetryCause({ ...retry, status: null, error: "unknown", noResponseMs: 30_000 }),
    "no response within 30 s",
  );
});

Deno.test("only faults of the API itself mark the model as down", () => {
  const down = (retry: { status: number | null; error: string }) =>
    classifyFault(session([retry, retry]), ended, RETRY)?.modelDown ?? false;
  assert.equal(down({ status: 401, error: "authentication_failed" }), true);
  assert.equal(down({ status: 400, error: "billing_error" }), true);
  assert.equal(down({ status: 404, error: "model_not_found" }), false, "another model may work");
  assert.equal(
    classifyFault(session([]), { error: undefined, hung: true }, RETRY)?.modelDown,
    undefined,
  );
});

Deno.test("a hang stays a retryable fault whatever the retries said", () => {
  const builder = session([{ status: 401, error: "authentication_failed" }]);
  const fault = classifyFault(builder, { error: undefined, hung: true }, RETRY);
  assert.equal(fault?.retryable, true);
  assert.match(fault!.message, /^No message from the agent for 1200 s/);
});

Deno.test("a session the agent no longer has is retried at once as a new session; an error before any turn is a fault", () => {
  const gone = classifyFault(
    session([]),
    {
      error: new SessionGoneError("ACP agent codex: cannot reopen session s1: not found"),
      hung: false,
    },
    RETRY,
  );
  assert.equal(gone?.retryable, true);
  assert.equal(gone?.fresh, true);
  assert.match(
    gone!.message,
    /no longer has the session to continue \(ACP agent codex: cannot reopen/,
  );

  // Claude Code's answer to a resume of a transcript it does not have.
  const lost = new SummaryBuilder(2);
  lost.add({
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    num_turns: 0,
    errors: ["No conversation found with session ID: s1"],
    session_id: "s1",
  });
  const fresh = classifyFault(lost, ended, RETRY);
  assert.equal(fresh?.fresh, true);
  assert.equal(
    fresh?.message,
    "The agent no longer has the session to continue: starting a new one",
  );

  const early = new SummaryBuilder(2);
  early.add({
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    num_turns: 0,
    errors: ["the model is unavailable"],
    session_id: "s2",
  });
  const fault = classifyFault(early, ended, RETRY);
  assert.equal(fault?.retryable, true, "nothing was done: the iteration must not count");
  assert.equal(fault?.fresh, undefined);
  assert.match(
    fault!.message,
    /^The agent ended before its first turn: .*the model is unavailable/,
  );

  const done = new SummaryBuilder(2);
  done.add({ type: "result", subtype: "success", num_turns: 1, session_id: "s3" });
  assert.equal(classifyFault(done, ended, RETRY), undefined);
});
