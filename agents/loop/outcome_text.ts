/**
 * How a run ended, in words for people: what failed last (a red check and
 * its failing tests, not the feedback written for the agent), and the one
 * sentence the final line says for each status.
 *
 * @module
 */

import type { CheckEvidence, IterationSummary } from "../record/iteration.ts";
import { elide } from "../support/text_width.ts";
import type { RunResult } from "./run_types.ts";

/** Failing tests named before "and N more". */
const TESTS_SHOWN = 3;
/** Red checks named before "and N more". */
const CHECKS_SHOWN = 2;
/** The columns of a reason or a fault quoted in a sentence. */
const QUOTED = 200;

/**
 * What failed in an iteration's last verification, for people: the red
 * checks with their failing tests when the repository's checks refused the
 * claim, else the first sentence of the checker's feedback (without the
 * output and the instructions meant for the agent).
 *
 * @param summary The iteration.
 * @returns The sentence, or undefined when its verification passed or none ran.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { failureSentence } from "./outcome_text.ts";
 * import { emptySummary } from "../record/iteration.ts";
 *
 * const summary = {
 *   ...emptySummary(3),
 *   verification: { passed: false, checker: "checks", trigger: "handler" as const,
 *     feedback: '[checks] "npm test" fails (fix it, or declare it out of scope). Last lines of its output:\nnot ok 1' },
 *   checks: { passed: false, outOfScope: [], testsChanged: [], checks: [{
 *     name: "npm test", baseline: "red" as const, now: "red" as const,
 *     failing: ["adds", "divides"], durationMs: 900 }] },
 * };
 * assert.equal(failureSentence(summary), "`npm test` still fails (2 failing tests: adds, divides)");
 * const command = { ...emptySummary(1), verification: { passed: false, checker: "command",
 *   trigger: "handler" as const, feedback: "`make lint` exited with code 2.\nLast lines of its output:\nE501" } };
 * assert.equal(failureSentence(command), "`make lint` exited with code 2");
 * ```
 */
export function failureSentence(summary: IterationSummary | undefined): string | undefined {
  const verification = summary?.verification;
  if (!summary || !verification || verification.passed) return undefined;
  const checks = summary.checks;
  const declared = new Set(checks?.outOfScope.map((entry) => entry.check) ?? []);
  const red = (checks?.checks ?? []).filter((check) =>
    check.now === "red" && !declared.has(check.name)
  );
  if (verification.checker === "checks" && checks && !checks.passed) {
    if (checks.uncommitted?.length) {
      return `the work is not committed (${plural(checks.uncommitted.length, "file")} left out)`;
    }
    if (red.length > 0) return redChecks(red);
  }
  const said = firstSentence(verification.feedback);
  const by = verification.checker === "checks" ? "the repository's checks" : verification.checker;
  if (verification.faulted) {
    return `the ${by} checker failed: ${said.replace(/^the checker failed: /, "")}`;
  }
  return verification.checker === "command" ? said : `${by}: ${said}`;
}

/**
 * The sentence of the final line: how the run ended and why, for people.
 *
 * @param result The run's result.
 * @param resume The command that resumes the run (said when it was interrupted).
 * @returns The sentence.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outcomeSentence } from "./outcome_text.ts";
 *
 * const cap = { status: "max_iterations", iterations: 3, summaries: [],
 *   completionReason: "Reached the cap of 3 iterations; `npm test` still fails (1 failing test: adds)" };
 * assert.equal(outcomeSentence(cap as never),
 *   "Stopped at the iteration cap (3): `npm test` still fails (1 failing test: adds)");
 * const interrupted = { status: "interrupted", iterations: 1, summaries: [],
 *   completionReason: "Interrupted during iteration 1" };
 * assert.equal(outcomeSentence(interrupted as never, "finishline --resume 1a2b"),
 *   "Interrupted during iteration 1. Resume with: finishline --resume 1a2b");
 * ```
 */
export function outcomeSentence(result: RunResult, resume?: string): string {
  const reason = quoted(result.completionReason);
  const failure = failureSentence(result.summaries.at(-1));
  // The reasons that do not say it already: what the last check found.
  const andFailure = failure && !reason.includes(failure) ? `; ${failure}` : "";
  switch (result.status) {
    case "completed":
      return result.unverified
        ? `Done: ${reason}; unverified: ${result.unverified}`
        : `Done: ${reason}`;
    case "unverified":
      return `Ended ${reason}`;
    case "max_iterations": {
      const cap = /^Reached the cap of (\d+) iterations?(; )?/.exec(reason);
      if (!cap) return `Stopped at the iteration cap: ${reason}${andFailure}`;
      const rest = reason.slice(cap[0].length);
      return `Stopped at the iteration cap (${cap[1]})${cap[2] ? `: ${rest}` : rest}${andFailure}`;
    }
    case "budget_exhausted":
      return `Stopped: ${reason}${andFailure}`;
    case "stalled":
      return `Stalled: ${reason}${andFailure}`;
    case "blocked":
      return `Blocked: ${reason}`;
    case "interrupted":
      return `${reason}${resume ? `. Resume with: ${resume}` : ""}`;
    default:
      return `Failed: ${reason}`;
  }
}

/** Red checks, the first two with their failing tests. */
function redChecks(red: CheckEvidence[]): string {
  const described = red.slice(0, CHECKS_SHOWN).map((check) => {
    const verb = check.baseline === "red"
      ? "still fails"
      : check.baseline === "green"
      ? "fails (it passed before the run)"
      : "fails";
    const failing = check.failing.length > 0
      ? ` (${plural(check.failing.length, "failing test")}: ${names(check.failing, TESTS_SHOWN)})`
      : check.counts?.failed
      ? ` (${plural(check.counts.failed, "failing test")})`
      : "";
    return `\`${check.name}\` ${verb}${failing}`;
  });
  const more = red.length - CHECKS_SHOWN;
  if (more <= 0) return described.join("; ");
  return `${described.join("; ")}; and ${plural(more, "more check")} ${
    more === 1 ? "fails" : "fail"
  }`;
}

/** The first names, then how many more. */
function names(list: string[], shown: number): string {
  const first = list.slice(0, shown).join(", ");
  return list.length > shown ? `${first} and ${list.length - shown} more` : first;
}

/**
 * The first sentence of feedback: its first line, without the checker's
 * `[name]` prefix and what follows the first full stop, cut to a line.
 */
function firstSentence(feedback: string): string {
  const line = feedback.trim().split("\n")[0].replace(/^\[[^\]]+\]\s*/, "");
  const sentence = line.split(/(?<=[^.\s])\.(?:\s|$)/)[0].replace(/[:.\s]+$/, "");
  return quoted(sentence || "no reason given");
}

/** A text on one line of at most {@linkcode QUOTED} columns. */
function quoted(text: string): string {
  return elide(text.replace(/\s+/g, " ").trim(), QUOTED);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
