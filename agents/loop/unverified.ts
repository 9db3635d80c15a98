/**
 * No evidence is not success. A claim of done that passes only because
 * nothing checked it (no check found or configured, every check declared out
 * of scope, no held-out test, a pull request without checks) is
 * _unverified_: the run never says that the checks passed, never closes or
 * completes anything on its own authority, and says why in its final line,
 * report, `--json` and pull request body.
 *
 * What counts as evidence of the final state: a checker the user configured
 * (`verify.checks`), a repository check green on the claim's clean copy, the
 * held-out reproduction test passing there, or a pull request's checks that
 * ran and passed. The commit gate of an issue run ("at least one new
 * commit") is a precondition, not evidence: a commit proves nothing about
 * what it holds. A custom handler is the user's own code deciding done, as a
 * configured checker is: its verdict is the user's evidence. The built-in
 * handlers that take the agent's word (the keyword, the issue, the project
 * board) are the ones that need evidence; an iterate run promises a number of
 * iterations, not finished work, so it completes and says it is unverified.
 *
 * @module
 */

import type { TaskCompletionChecker } from "../checks/checker_contract.ts";
import { GitChecker } from "../checks/git_checker.ts";
import { RepoChecksChecker } from "../evidence/repo_checks.ts";
import type { CheckEvidence, IterationSummary } from "../record/iteration.ts";
import type { RunState } from "./state.ts";

/** Checkers that gate a claim without being evidence of it. */
const PRECONDITIONS = new WeakSet<TaskCompletionChecker>();

/**
 * The gate an issue run gets when it configures no check: at least one new
 * commit. It refuses a claim that changed nothing, but a pass is no evidence
 * that the work is right.
 *
 * @returns The checker, known to {@linkcode missingEvidence} as no evidence.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commitGate } from "./unverified.ts";
 *
 * assert.equal(commitGate().name, "commits");
 * ```
 */
export function commitGate(): TaskCompletionChecker {
  const gate = new GitChecker({ minCommits: 1, name: "commits" });
  PRECONDITIONS.add(gate);
  return gate;
}

/** The built-in handlers whose "done" is the agent's claim, or a count: they need evidence. */
const CLAIMED = new Set(["manual", "issue", "project", "iterate"]);

/** What a run's evidence is made of, as {@linkcode missingEvidence} reads it. */
export interface EvidenceSources {
  /** The completion handler's type: a custom handler's verdict is the user's own evidence. @default "manual" */
  handler?: string;
  /** The run's checkers (configured, the repository gate, preconditions). */
  checkers: readonly TaskCompletionChecker[];
  /** Whether the repository's checks were looked for (`verify.detect`). */
  detect: boolean;
  /** Whether the run has a repository gate (checks were found). */
  gate: boolean;
}

/**
 * Why nothing verified a claim that passed, or undefined when something did.
 *
 * @param sources The run's checkers and detection.
 * @param summary The iteration whose claim passed (its repository-check evidence).
 * @returns The reason, in a few words (`no checks found`), or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commitGate, missingEvidence } from "./unverified.ts";
 * import { emptySummary } from "../record/iteration.ts";
 *
 * const sources = { checkers: [commitGate()], detect: true, gate: false };
 * assert.equal(missingEvidence(sources, emptySummary(1)), "no checks found");
 * ```
 */
export function missingEvidence(
  sources: EvidenceSources,
  summary: IterationSummary,
): string | undefined {
  if (!CLAIMED.has(sources.handler ?? "manual")) return undefined;
  const configured = sources.checkers.filter((checker) =>
    !(checker instanceof RepoChecksChecker) && !PRECONDITIONS.has(checker)
  );
  if (configured.length > 0) return undefined;
  const checks = summary.checks;
  if (checks?.heldOut?.passed) return undefined;
  if (checks?.checks.some(checkedTheWork)) return undefined;
  if (!sources.gate) {
    return sources.detect ? "no checks found" : 'no check is configured and "verify.detect" is off';
  }
  const declared = checks?.outOfScope.map((entry) => `\`${entry.check}\``) ?? [];
  if (declared.length > 0) {
    return `no check passed (${declared.join(", ")} declared out of scope)`;
  }
  return checks?.checks.length ? "no check passed" : "no check ran";
}

/**
 * Whether a check's run on the claim is evidence: it passed, or its tests
 * ran and passed but for the ones that were already failing at the baseline
 * (a red check declared out of scope whose other tests, the new ones among
 * them, passed).
 */
function checkedTheWork(check: CheckEvidence): boolean {
  if (check.now === "green") return true;
  const before = new Set(check.baselineFailing ?? []);
  if (check.failing.length === 0 || !check.failing.every((test) => before.has(test))) return false;
  const passed = check.counts?.passed ??
    (check.testsRun === undefined ? 0 : check.testsRun - check.failing.length);
  return passed > 0;
}

/**
 * The sources of a run's evidence, from its state.
 *
 * @param state The run.
 * @returns Its checkers and detection.
 */
export function evidenceSources(state: RunState): EvidenceSources {
  return {
    handler: state.handler.type,
    checkers: state.options.verifier?.checkers ?? [],
    detect: state.definition.verify.detect,
    gate: state.options.repoChecks !== undefined,
  };
}

/**
 * The run's reason for an unverified end: what the agent claimed, and why
 * nothing checked it. It starts with `unverified: ` and the reason.
 *
 * @param reason Why nothing verified the claim ({@linkcode missingEvidence}).
 * @param iteration The iteration whose claim ended the run.
 * @returns The sentence.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unverifiedReason } from "./unverified.ts";
 *
 * assert.equal(
 *   unverifiedReason("no checks found", 2),
 *   "unverified: no checks found; the agent called the work done in iteration 2, and nothing checked it",
 * );
 * ```
 */
export function unverifiedReason(reason: string, iteration: number): string {
  return `unverified: ${reason}; the agent called the work done in iteration ${iteration}, and nothing checked it`;
}
