/**
 * The checks phase: a claim of done meets the evidence. The configured and
 * detected checkers run on the final state, then, with `--create-pr`, the
 * pull request's own checks.
 *
 * One verification per tree: the complete_task check, the Stop hook's check
 * and the verdict's claim verification often look at the same tree. The
 * checkers (and the repository's suite among them) run once for it, and the
 * others reuse the record. The key is what the checkers read: HEAD, the
 * working tree's fingerprint, the complete_task call (its declarations), the
 * repository gate's baseline state, and, when a checker reads the session
 * (judge, plan, custom), the session's latest words and tools (except at a
 * stop after a pass: only a changed tree runs the checks again there).
 * Outside git (or before the first commit) there is no key and nothing is
 * reused.
 *
 * @module
 */

import type { VerificationRecord } from "../checks/checker_contract.ts";
import { CommandChecker } from "../checks/command.ts";
import { FilesChecker } from "../checks/files.ts";
import { GitChecker } from "../checks/git_checker.ts";
import { RepoChecksChecker } from "../evidence/repo_checks.ts";
import { verify } from "../checks/verifier.ts";
import type { CompleteTaskCall } from "../record/complete_task_tool.ts";
import type { AgentMessage, IterationSummary } from "../record/iteration.ts";
import type { RunState } from "./state.ts";
import { evidenceSources, missingEvidence } from "./unverified.ts";

/**
 * Verify a complete claim: the checkers, then the pull request's checks.
 *
 * @param state The run.
 * @param summary The iteration that claims done.
 * @returns The verification, or undefined when nothing gates completion.
 */
export async function verifyClaim(
  state: RunState,
  summary: IterationSummary,
): Promise<VerificationRecord | undefined> {
  const iteration = summary.iteration;
  let verification: VerificationRecord | undefined;
  if (state.hasChecks) {
    const verified = (await verifyTree(state, summary, {
      completeTask: summary.completeTask,
      stopReason: summary.stopReason ?? undefined,
    }, "handler"))!;
    verification = verified.record;
    summary.verification = verification;
    state.emit({
      type: "verification",
      iteration,
      trigger: "handler",
      verification,
      ...(verified.reused ? { reused: true } : {}),
    });
  }
  if ((!verification || verification.passed) && state.options.pullRequest) {
    const unverified = verification ? verification.unverified : missingEvidence(
      evidenceSources(state),
      summary,
    );
    const published = await state.options.pullRequest.check(summary, state.signal);
    state.pullRequest = published.url ?? state.pullRequest;
    verification = published.verification;
    // A pull request whose checks ran and passed is evidence; one without checks is none.
    if (verification.passed && unverified && !published.checksPassed) {
      verification = { ...verification, unverified };
    }
    summary.verification = verification;
    state.emit({ type: "verification", iteration, trigger: "pull_request", verification });
  }
  return verification;
}

/** What a verification is asked with. */
export interface VerifyAsk {
  /** The complete_task call the claim rests on, if any. */
  completeTask?: CompleteTaskCall;
  /** Why the agent stopped. */
  stopReason?: string;
  /** The session's messages, when the summary's are not kept yet. */
  messages?: readonly AgentMessage[];
  /**
   * After a pass: run the checks only if the tree changed since (the agent's
   * new words alone do not count); when the tree cannot be told apart, run
   * nothing and answer undefined (the pass stands).
   */
  onlyIfChanged?: boolean;
}

/**
 * Run the configured checkers on the tree as it is, or reuse the run's
 * latest verification when the tree (and everything else they read) is the
 * same. The summary gets the repository checks' evidence either way.
 *
 * @param state The run (with checkers).
 * @param summary The iteration verified.
 * @param ask The evidence beyond the tree.
 * @param trigger What asks.
 * @returns The record (a reused one carries this trigger), whether it was
 *   reused; undefined when `onlyIfChanged` and the tree cannot be told apart.
 */
export async function verifyTree(
  state: RunState,
  summary: IterationSummary,
  ask: VerifyAsk,
  trigger: VerificationRecord["trigger"],
): Promise<{ record: VerificationRecord; reused: boolean } | undefined> {
  const before = await keysOf(state, summary, ask.completeTask);
  // After a pass, only the tree matters: the agent's last words do not undo it.
  const known = before &&
    (state.verifications.get(before.full) ??
      (ask.onlyIfChanged ? passed(state.verifications.get(before.tree)) : undefined));
  if (known) {
    if (known.checks) summary.checks = structuredClone(known.checks);
    return { record: { ...structuredClone(known.record), trigger }, reused: true };
  }
  if (before === undefined && ask.onlyIfChanged) return undefined;
  const record = await state.noteCheckWrites(() =>
    verify(
      state.options.verifier!,
      state.checkContext(summary, {
        completeTask: ask.completeTask,
        stopReason: ask.stopReason,
        messages: ask.messages,
      }),
      trigger,
    )
  );
  state.recordChecks(summary);
  if (record.passed) {
    const unverified = missingEvidence(evidenceSources(state), summary);
    if (unverified) record.unverified = unverified;
  }
  const unreviewed = summary.checks?.declarations?.some((entry) => entry.verdict === "unreviewed");
  // A checker that threw, an aborted run or an unreviewed declaration is asked again next time.
  if (before === undefined || record.faulted || state.signal.aborted || unreviewed) {
    state.verifications.clear();
  } else {
    const after = await keysOf(state, summary, ask.completeTask);
    const keys = [before, ...(after ? [after] : [])].flatMap((key) => [key.full, key.tree]);
    state.verifications.set(keys, record, summary.checks);
  }
  return { record, reused: false };
}

function passed<T extends { record: VerificationRecord }>(entry: T | undefined): T | undefined {
  return entry?.record.passed ? entry : undefined;
}

/**
 * The keys of what the checkers read: `tree` (HEAD, the working tree, the
 * call, the gate's baseline) and `full` (with the session, when a checker
 * reads it); undefined outside git or before the first commit.
 */
async function keysOf(
  state: RunState,
  summary: IterationSummary,
  completeTask: CompleteTaskCall | undefined,
): Promise<{ tree: string; full: string } | undefined> {
  const repo = state.options.git;
  if (!repo) return undefined;
  const now = await repo.observe(undefined, state.options.ignorePaths ?? []);
  if (!now.head || !now.fingerprint) return undefined;
  const readsSession = state.options.verifier!.checkers.some((checker) =>
    !(checker instanceof CommandChecker || checker instanceof FilesChecker ||
      checker instanceof GitChecker || checker instanceof RepoChecksChecker)
  );
  const tree = [
    now.head,
    now.fingerprint,
    completeTask ?? null,
    state.options.repoChecks?.baselineConfirmed ?? null,
  ];
  const session = readsSession
    ? [summary.iteration, summary.assistantResponses.slice(-3), summary.toolsUsed]
    : null;
  return {
    tree: `tree:${JSON.stringify(tree)}`,
    full: `full:${JSON.stringify([...tree, session])}`,
  };
}
