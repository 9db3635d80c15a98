import assert from "node:assert/strict";
import type { StopEvent } from "../../agents/backends/port.ts";
import type { VerificationRecord } from "../../agents/checks/checker_contract.ts";
import type { CompleteTaskCall } from "../../agents/completion/handler_contract.ts";
import {
  CompletionGuard,
  type CompletionGuardOptions,
  CONTINUATION_MESSAGE,
} from "../../agents/loop/complete_task_guard.ts";

const STOP: StopEvent = { stopHookActive: false, backgroundTasks: [] };
const STOP_AGAIN: StopEvent = { stopHookActive: true, backgroundTasks: [] };

function call(
  status: CompleteTaskCall["status"],
  extra: Partial<CompleteTaskCall> = {},
): CompleteTaskCall {
  return {
    status,
    original_request_summary: "Add a --verbose flag",
    summary: `Reported ${status}`,
    ...extra,
  };
}

function failed(checker: string, feedback: string): VerificationRecord {
  return { passed: false, checker, feedback, trigger: "complete_task" };
}

function passed(feedback = ""): VerificationRecord {
  return { passed: true, checker: "composite", feedback, trigger: "complete_task" };
}

/** A guard whose verifier answers the scripted records in order; records its events. */
function guardOf(
  options: Partial<CompletionGuardOptions> & { verdicts?: Array<VerificationRecord | undefined> } =
    {},
) {
  const events: Array<{ kind: string; data: Record<string, unknown> }> = [];
  const verified: CompleteTaskCall[] = [];
  const verdicts = [...(options.verdicts ?? [])];
  const guard = new CompletionGuard({
    require: options.require ?? true,
    maxAttempts: options.maxAttempts ?? 2,
    verify: (completeTask) => {
      verified.push(completeTask);
      return Promise.resolve(verdicts.shift());
    },
    onEvent: (kind, data) => events.push({ kind, data }),
  });
  return { guard, events, verified };
}

Deno.test("completion guard sends back an agent that stops without complete_task", async (t) => {
  await t.step(
    "it blocks with CONTINUATION_MESSAGE up to maxAttempts, then allows and gives up",
    async () => {
      const { guard } = guardOf({ maxAttempts: 2 });
      assert.deepEqual(await guard.onStop(STOP), { block: true, reason: CONTINUATION_MESSAGE });
      assert.equal(guard.attempts, 1);
      assert.deepEqual(await guard.onStop(STOP_AGAIN), {
        block: true,
        reason: CONTINUATION_MESSAGE,
      });
      assert.equal(guard.attempts, 2);
      assert.equal(guard.gaveUp, false);
      assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
      assert.equal(guard.attempts, 2);
      assert.equal(guard.gaveUp, true);
    },
  );

  await t.step("maxAttempts 0 never blocks but records that it gave up", async () => {
    const { guard } = guardOf({ maxAttempts: 0 });
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.equal(guard.gaveUp, true);
    assert.equal(guard.attempts, 0);
  });

  await t.step("require false never blocks", async () => {
    const { guard, events } = guardOf({ require: false, maxAttempts: 3 });
    for (let index = 0; index < 4; index++) {
      assert.deepEqual(await guard.onStop(STOP), { block: false });
    }
    assert.equal(guard.attempts, 0);
    assert.equal(guard.gaveUp, false);
    assert.deepEqual(events, []);
  });

  await t.step("CONTINUATION_MESSAGE tells the agent every way to answer", () => {
    for (const phrase of ["complete_task", "status success", "status blocked", "status partial"]) {
      assert.ok(CONTINUATION_MESSAGE.includes(phrase), phrase);
    }
  });
});

Deno.test("completion guard verifies a success call at once", async (t) => {
  await t.step("success without configured checks lets the agent stop", async () => {
    const { guard, verified } = guardOf({ verdicts: [undefined] });
    const reply = await guard.onCompleteTask(call("success"));
    assert.equal(reply, "Recorded: success. No checks are configured. You may stop now.");
    assert.deepEqual(verified, [call("success")]);
    assert.equal(guard.verification, undefined);
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.equal(guard.attempts, 0);
  });

  await t.step(
    "success with passing checks says so, with their feedback, and allows stop",
    async () => {
      const { guard } = guardOf({ verdicts: [passed("[files] All 1 required files exist")] });
      const reply = await guard.onCompleteTask(call("success"));
      assert.equal(
        reply,
        "Recorded: success, and the checks passed ([files] All 1 required files exist). You may stop now.",
      );
      assert.deepEqual(await guard.onStop(STOP), { block: false });
    },
  );

  await t.step(
    "success with failing checks: the tool result says did NOT pass and names the checker",
    async () => {
      const { guard } = guardOf({
        verdicts: [failed("tests", "[tests] `deno test` exited with code 1.")],
      });
      const reply = await guard.onCompleteTask(call("success"));
      assert.equal(
        reply,
        "Recorded, but the checks did NOT pass (tests):\n[tests] `deno test` exited with code 1.\nFix these problems, then call complete_task again.",
      );
      assert.equal(guard.verification?.passed, false);
    },
  );

  await t.step(
    "a stop after a failed verification is blocked with the feedback and counts as an attempt",
    async () => {
      const { guard } = guardOf({
        maxAttempts: 1,
        verdicts: [failed("tests", "[tests] 2 tests fail")],
      });
      await guard.onCompleteTask(call("success"));
      const decision = await guard.onStop(STOP);
      assert.equal(decision.block, true);
      assert.ok(decision.block && decision.reason.includes("did not pass the checks (tests)"));
      assert.ok(decision.block && decision.reason.includes("[tests] 2 tests fail"));
      assert.ok(decision.block && decision.reason.includes("partial or blocked"));
      assert.equal(guard.attempts, 1);
      assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false }, "attempts ran out");
      assert.equal(guard.gaveUp, true);
    },
  );

  await t.step("a later success whose checks pass lets the agent stop", async () => {
    const { guard, verified } = guardOf({
      maxAttempts: 3,
      verdicts: [failed("tests", "[tests] 2 tests fail"), passed()],
    });
    await guard.onCompleteTask(call("success", { summary: "first try" }));
    assert.equal((await guard.onStop(STOP)).block, true);
    const reply = await guard.onCompleteTask(call("success", { summary: "fixed the tests" }));
    assert.equal(reply, "Recorded: success, and the checks passed. You may stop now.");
    assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
    assert.equal(guard.gaveUp, false);
    assert.equal(guard.attempts, 1);
    assert.deepEqual(verified.map((completeTask) => completeTask.summary), [
      "first try",
      "fixed the tests",
    ]);
    assert.equal(guard.calls.length, 2);
    assert.equal(guard.lastCall?.summary, "fixed the tests");
    assert.equal(guard.verification?.passed, true);
    assert.deepEqual(guard.fixed, [failed("tests", "[tests] 2 tests fail")]);
  });

  await t.step("failures count as fixed only once a later success passes", async () => {
    const { guard } = guardOf({
      verdicts: [
        failed("tests", "first"),
        failed("tests", "second"),
        passed(),
        failed("lint", "x"),
      ],
    });
    await guard.onCompleteTask(call("success"));
    await guard.onCompleteTask(call("success"));
    assert.equal(guard.fixed.length, 0, "nothing passed yet");
    await guard.onCompleteTask(call("success"));
    assert.deepEqual(guard.fixed.map((record) => record.feedback), ["first", "second"]);
    await guard.onCompleteTask(call("success"));
    assert.equal(guard.fixed.length, 2, "the last failure is not fixed");
    assert.equal(guard.verification?.feedback, "x");
  });
});

Deno.test("completion guard lets blocked and partial calls stop without verifying", async (t) => {
  await t.step("blocked is recorded and the agent is told to stop", async () => {
    const { guard, verified } = guardOf({ verdicts: [failed("tests", "never asked")] });
    const reply = await guard.onCompleteTask(
      call("blocked", { remaining_work: "needs an API key" }),
    );
    assert.equal(
      reply,
      "Recorded: blocked. The run ends here and reports what you wrote in remaining_work. Stop now.",
    );
    assert.deepEqual(verified, [], "blocked calls are not verified");
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.equal(guard.lastCall?.status, "blocked");
  });

  await t.step("partial is recorded and the agent is told to stop", async () => {
    const { guard, verified } = guardOf({ verdicts: [failed("tests", "never asked")] });
    const reply = await guard.onCompleteTask(call("partial", { remaining_work: "docs" }));
    assert.equal(
      reply,
      "Recorded: partial. The next iteration continues from what you left in remaining_work. Stop now.",
    );
    assert.deepEqual(verified, []);
    assert.deepEqual(await guard.onStop(STOP), { block: false });
  });

  await t.step("a partial call after a failed success lets the agent stop", async () => {
    const { guard } = guardOf({ verdicts: [failed("tests", "[tests] failing")] });
    await guard.onCompleteTask(call("success"));
    await guard.onCompleteTask(call("partial", { remaining_work: "fix the tests" }));
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.equal(guard.attempts, 0);
  });
});

Deno.test("completion guard records background tasks and reports its events", async (t) => {
  await t.step("the number of background tasks at the last stop is kept", async () => {
    const { guard } = guardOf({ require: false });
    await guard.onStop({
      stopHookActive: false,
      backgroundTasks: [{ id: "b1", description: "dev server" }, { id: "b2" }],
    });
    assert.equal(guard.backgroundTasks, 2);
    await guard.onStop(STOP);
    assert.equal(guard.backgroundTasks, 0);
  });

  await t.step(
    "onEvent receives complete_task, verification, stop_blocked and stop_allowed",
    async () => {
      const verification = failed("git", "[git] no commits");
      const { guard, events } = guardOf({ maxAttempts: 1, verdicts: [verification] });
      await guard.onStop(STOP);
      await guard.onCompleteTask(call("success"));
      await guard.onStop(STOP_AGAIN);
      assert.deepEqual(events, [
        {
          kind: "stop_blocked",
          data: { attempt: 1, stopHookActive: false, reason: CONTINUATION_MESSAGE },
        },
        { kind: "complete_task", data: { call: call("success") } },
        { kind: "verification", data: { trigger: "complete_task", verification } },
        {
          kind: "stop_allowed",
          data: {
            attempts: 1,
            stopHookActive: true,
            reason: "Your complete_task call did not pass the checks (git): [git] no commits\n" +
              "Fix the problems and call complete_task again, or call it with status partial or blocked.",
          },
        },
      ]);
    },
  );

  await t.step(
    "a failed finish call sends the agent back to finish, not complete_task",
    async () => {
      const { guard } = guardOf({
        maxAttempts: 1,
        verdicts: [failed("tests", "[tests] 1 failed")],
      });
      await guard.onCompleteTask(call("success"), "finish");
      const decision = await guard.onStop(STOP);
      assert.ok(decision.block);
      assert.equal(
        decision.reason,
        "Your finish call did not pass the checks (tests): [tests] 1 failed\n" +
          "Fix the problems and call finish again, or call it with success false if you are blocked.",
      );
    },
  );

  await t.step("a guard without onEvent works the same", async () => {
    const guard = new CompletionGuard({
      require: true,
      maxAttempts: 1,
      verify: () => Promise.resolve(undefined),
    });
    assert.equal((await guard.onStop(STOP)).block, true);
    await guard.onCompleteTask(call("success"));
    assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
  });
});

/** A guard with a Stop hook check answering the scripted records in order, and a budget. */
function stopCheckGuard(options: {
  require?: boolean;
  maxAttempts?: number;
  atStop?: Array<VerificationRecord | undefined>;
  verdicts?: Array<VerificationRecord | undefined>;
  spent?: { kind: "budget" | "deadline"; reason: string };
}) {
  const events: Array<{ kind: string; data: Record<string, unknown> }> = [];
  const asked: Array<{ call?: CompleteTaskCall; afterPass: boolean }> = [];
  const verified: CompleteTaskCall[] = [];
  const atStop = [...(options.atStop ?? [])];
  const verdicts = [...(options.verdicts ?? [])];
  let spent = options.spent;
  const guard = new CompletionGuard({
    require: options.require ?? false,
    maxAttempts: options.maxAttempts ?? 2,
    verify: (completeTask) => {
      verified.push(completeTask);
      return Promise.resolve(verdicts.shift());
    },
    checkOnStop: (completeTask, afterPass) => {
      asked.push({ call: completeTask, afterPass });
      const record = atStop.shift();
      return Promise.resolve(
        record ? { record: { ...record, trigger: "stop_hook" }, reused: false } : undefined,
      );
    },
    spent: () => spent,
    onEvent: (kind, data) => events.push({ kind, data }),
  });
  return {
    guard,
    events,
    asked,
    verified,
    spend: (value: typeof spent) => (spent = value),
  };
}

Deno.test("completion guard runs the checks at a stop (seed 001's Stop hook)", async (t) => {
  await t.step(
    "complete_task not required: a failing check blocks with its feedback, counts as an attempt, a pass allows",
    async () => {
      const { guard, events, asked } = stopCheckGuard({
        atStop: [
          failed("status", "[status] `grep -q fixed status.txt` exited with code 1."),
          passed(),
        ],
      });
      const first = await guard.onStop(STOP);
      assert.equal(first.block, true);
      assert.equal(
        first.block && first.reason,
        "The checks did not pass (status):\n[status] `grep -q fixed status.txt` exited with code 1.\nFix these problems before you stop.",
      );
      assert.equal(guard.attempts, 1);
      assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
      assert.deepEqual(asked, [{ call: undefined, afterPass: false }, {
        call: undefined,
        afterPass: false,
      }]);
      assert.equal(guard.verification?.passed, true);
      assert.equal(guard.verification?.trigger, "stop_hook");
      assert.deepEqual(guard.fixed.map((record) => record.checker), ["status"]);
      assert.deepEqual(
        events.map((event) => `${event.kind}:${event.data.trigger ?? ""}`),
        ["verification:stop_hook", "stop_blocked:", "verification:stop_hook"],
      );
    },
  );

  await t.step(
    "failing checks at every stop: sent back maxAttempts times, then allowed",
    async () => {
      const failing = failed("status", "[status] no");
      const { guard } = stopCheckGuard({ maxAttempts: 1, atStop: [failing, failing] });
      assert.equal((await guard.onStop(STOP)).block, true);
      assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
      assert.equal(guard.gaveUp, true);
      assert.equal(guard.verification?.passed, false);
    },
  );

  await t.step(
    "complete_task required: no call gets the continuation message, and nothing is checked",
    async () => {
      const { guard, asked } = stopCheckGuard({ require: true, atStop: [passed()] });
      assert.deepEqual(await guard.onStop(STOP), { block: true, reason: CONTINUATION_MESSAGE });
      assert.deepEqual(asked, []);
    },
  );

  await t.step(
    "after a passing success the check is asked whether the tree changed (afterPass)",
    async () => {
      const { guard, asked } = stopCheckGuard({
        require: true,
        verdicts: [passed()],
        atStop: [failed("status", "[status] broken again")],
      });
      await guard.onCompleteTask(call("success"));
      const stop = await guard.onStop(STOP);
      assert.equal(stop.block, true);
      assert.match(stop.block ? stop.reason : "", /^The checks did not pass \(status\)/);
      assert.deepEqual(asked, [{ call: call("success"), afterPass: true }]);
    },
  );

  await t.step("blocked and partial calls are not checked at the stop", async () => {
    for (const status of ["blocked", "partial"] as const) {
      const { guard, asked } = stopCheckGuard({ atStop: [failed("status", "no")] });
      await guard.onCompleteTask(call(status));
      assert.deepEqual(await guard.onStop(STOP), { block: false });
      assert.deepEqual(asked, []);
    }
  });

  await t.step("no checks configured (undefined) allows the stop", async () => {
    const { guard, asked } = stopCheckGuard({ atStop: [undefined] });
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.equal(asked.length, 1);
    assert.equal(guard.verification, undefined);
  });
});

Deno.test("completion guard: a spent budget or deadline skips the checks and lets the agent stop", async (t) => {
  const deadline = { kind: "deadline" as const, reason: "The time budget of 60 s is spent" };
  await t.step("at a stop, even without complete_task when it is required", async () => {
    const { guard, events, asked } = stopCheckGuard({
      require: true,
      atStop: [failed("status", "no")],
      spent: deadline,
    });
    assert.deepEqual(await guard.onStop(STOP), { block: false });
    assert.deepEqual(asked, []);
    assert.equal(guard.attempts, 0);
    assert.equal(guard.gaveUp, false);
    assert.deepEqual(events, [{
      kind: "stop_allowed",
      data: { attempts: 0, stopHookActive: false, reason: "deadline", detail: deadline.reason },
    }]);
  });

  await t.step("at a success call: recorded, not verified", async () => {
    const { guard, verified, events, spend } = stopCheckGuard({ verdicts: [passed()] });
    spend({ kind: "budget", reason: "The cost budget of $1 is spent (about $1.0200)" });
    const reply = await guard.onCompleteTask(call("success"));
    assert.equal(
      reply,
      "Recorded: success. The cost budget of $1 is spent (about $1.0200), so the checks were skipped. Stop now.",
    );
    assert.deepEqual(verified, []);
    assert.equal(guard.lastCall?.status, "success");
    assert.deepEqual(events.map((event) => event.kind), ["complete_task", "checks_skipped"]);
  });

  await t.step("a budget spent after a failing check: the next stop is allowed", async () => {
    const { guard, spend } = stopCheckGuard({ atStop: [failed("status", "no")] });
    assert.equal((await guard.onStop(STOP)).block, true);
    spend(deadline);
    assert.deepEqual(await guard.onStop(STOP_AGAIN), { block: false });
  });
});
