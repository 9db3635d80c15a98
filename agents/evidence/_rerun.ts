/**
 * The tests that failed at the last claim, run first and alone at the next
 * one ({@linkcode filteredCommand}): one that fails again answers the claim
 * at once; anything else leaves the verdict to the full suite.
 *
 * @module
 */

import type { ChecksEvidence } from "../record/iteration.ts";
import type { TaskCompletionResult } from "../checks/checker_contract.ts";
import { type CheckRun, describeRun, nameList } from "./run/check_run.ts";
import { filteredCommand } from "./run/test_filter.ts";
import { STOPPED } from "./_feedback.ts";
import type { GateState } from "./_gate_state.ts";
import { checkEvidence } from "./_rules.ts";
import { baselineViews } from "./_baseline.ts";

/**
 * The tests that failed at the last claim the full suite ran on, re-run
 * alone ({@linkcode filteredCommand}) on the clean copy, check by check.
 * One that fails again, by name, answers the claim: the full suite would
 * reject it too, since its check is red and not declared out of scope. A
 * check green at the baseline asks a failing test twice, as the full run
 * does. Anything else (they pass, the filter ran no test, the run names
 * none of them, the check cannot be narrowed) leaves the verdict to the
 * full suite: a narrowed run never passes a claim.
 */
export async function rerunFailed(
  state: GateState,
  cwd: string,
  declared: Map<string, string>,
  facts: Partial<ChecksEvidence>,
  signal: AbortSignal | undefined,
): Promise<{ result?: TaskCompletionResult; evidence: NonNullable<ChecksEvidence["rerun"]> }> {
  const evidence: NonNullable<ChecksEvidence["rerun"]> = [];
  const started = await state.baseline;
  // Never waits for the baseline's second run: the views it has so far.
  const views = await baselineViews(state, started?.error ? undefined : started, []);
  const read = (file: string) => Deno.readTextFile(`${cwd}/${file}`).catch(() => undefined);
  for (const check of state.checks) {
    const tests = state.failedLast.get(check.name);
    if (!tests) continue;
    if (declared.has(check.name)) {
      evidence.push({
        check: check.name,
        tests,
        outcome: "not run",
        why: "declared out of scope",
      });
      continue;
    }
    const filtered = await filteredCommand(check, tests, { read });
    if ("why" in filtered) {
      evidence.push({ check: check.name, tests, outcome: "not run", why: filtered.why });
      continue;
    }
    const narrowed = { ...check, command: filtered.command };
    const before = views.get(check.name);
    let run = await state.runOne(narrowed, cwd, signal);
    let still = run.failing.filter((name) => tests.includes(name));
    const flakyBefore = new Set(before?.flakyTests ?? []);
    if (
      still.length > 0 && !signal?.aborted &&
      (before?.run.green || still.every((name) => flakyBefore.has(name)))
    ) {
      run = await state.runOne(narrowed, cwd, signal);
      still = run.failing.filter((name) => tests.includes(name));
    }
    if (signal?.aborted) return { result: state.refuse(facts, STOPPED), evidence };
    evidence.push({
      check: check.name,
      tests,
      outcome: rerunOutcome(run, still),
      command: filtered.command,
      ...(still.length > 0 ? { stillFailing: still } : {}),
      durationMs: run.durationMs,
    });
    if (still.length === 0) continue;
    const result = state.refuse(
      { ...facts, checks: [checkEvidence(run, before?.run, false)], rerun: evidence },
      `"${check.name}" still fails in ${
        nameList(still)
      }: finishline re-ran first only the tests that failed at your last claim (\`${filtered.command}\`) and answers as soon as one still fails; the full suite runs once they pass${
        describeRun(run, before?.run)
      }`,
    );
    return { result, evidence };
  }
  return { evidence };
}

/** What a narrowed run of the last claim's failing tests says. */
function rerunOutcome(
  run: CheckRun,
  still: string[],
): NonNullable<ChecksEvidence["rerun"]>[number]["outcome"] {
  if (still.length > 0) return "still failing";
  const counts = run.counts;
  const ran = counts?.run ?? (counts?.passed ?? 0) + (counts?.failed ?? 0);
  if (counts === undefined) return "no verdict";
  if (ran === 0) return "matched none";
  return run.green ? "passed" : "no verdict";
}
