/**
 * The repository's own checks as the gate of "done": run once on the
 * starting commit (the baseline, in a detached worktree beside the first
 * session; a red check there runs once more when the session's start-up is
 * over), then on a clean copy of the agent's last commit, never on the live
 * working tree. A check green at the baseline must stay green; a red one must
 * turn green unless the agent declares it out of scope; changed test files
 * must still pass in their original versions, or be declared. Uncommitted
 * work is not verified, and every file of the dependency folders must be as
 * the run found them (each clean copy has its own copy of them, put back
 * before every run of checks: what the checks write there is never the
 * agent's change). After a failed claim, the tests that
 * failed run first, alone (`run/test_filter.ts`): one that fails
 * again answers the claim at once; the full suite decides every pass.
 *
 * The checker queues the claims and answers a repeated one from its last
 * verdict; its phases are private modules beside it, sharing one
 * `GateState` (`_gate_state.ts`): the start record (`_run_start.ts`), the
 * baseline (`_baseline.ts`), the held-out test (`_held_out.ts`), a claim's
 * clean copy (`_clean_copy.ts`) and its run of the checks (`_claim_run.ts`,
 * with `_rerun.ts` and the rules of `_rules.ts`), what the checks alone do
 * not show (`_findings.ts`, with `_worker_test.ts`), and the review of the
 * declarations (`_review.ts`).
 *
 * @module
 */

import type { ChecksEvidence, ReviewedDeclaration } from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import type { ChangedLinesConfig } from "../definition/definition_types.ts";
import type { RepoCheck } from "./run/check_run.ts";
import type { DeclarationReviewer } from "./judge/declarations.ts";
import type { Reproduction } from "./held_out/reproduction.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "../checks/checker_contract.ts";
import type { BaselineResult } from "./run/baseline_result.ts";
import { listPaths, passedText, STOPPED } from "./_feedback.ts";
import { proofNote, proveClaim } from "./_proof.ts";
import { type Claim, GateState } from "./_gate_state.ts";
import {
  dependencyFeedback,
  planFolders,
  pythonNote,
  recordStart,
  uncommittedChanges,
} from "./_run_start.ts";
import { confirmBaseline, startBaseline, stopBaseline } from "./_baseline.ts";
import { startReproduction } from "./_held_out.ts";
import { reviewDeclarations } from "./_review.ts";
import { runClaim } from "./_claim_run.ts";
import { findings } from "./_findings.ts";

/** Options of {@linkcode RepoChecksChecker}. */
export interface RepoChecksOptions {
  /** The checks. */
  checks: RepoCheck[];
  /** Timeout of one check in milliseconds. @default 600000 */
  timeoutMs?: number;
  /** Globs of the files that define done. @default [] */
  protect?: string[];
  /** Files that define the checks (package.json, ...), protected too. @default [] */
  configFiles?: string[];
  /**
   * The run that owns the gate's worktrees: they are locked in its name, so
   * that a later run removes them if this one dies before it can.
   */
  owner?: string;
  /**
   * Checks that run once before the run ends, not at every claim (slow CI
   * variants, see `detect/check_tier.ts`): at a claim only when the others
   * leave nothing to refuse; their baseline runs after the others', so a
   * claim that does not reach them never waits for it. @default []
   */
  finalChecks?: string[];
  /**
   * Proof of the change at the claim that completes (`verify.changedLines`):
   * changed-line coverage and mutants, with optional floors. @default off
   */
  changedLines?: ChangedLinesConfig;
}

/**
 * The gate: the repository's checks on a clean copy of the agent's last
 * commit, compared with the baseline. Its {@linkcode RepoChecksChecker.evidence}
 * after a check is what the report shows. Call
 * {@linkcode RepoChecksChecker.close} at the end of a run: it removes the
 * worktrees.
 *
 * @example A check that passes with no baseline
 * ```ts
 * import assert from "node:assert/strict";
 * import { RepoChecksChecker } from "./repo_checks.ts";
 *
 * const gate = new RepoChecksChecker({ checks: [{ name: "true", command: "true" }] });
 * // Outside a repository the checker needs only the working directory.
 * const result = await gate.check({ cwd: Deno.cwd() } as never);
 * assert.equal(result.complete, true);
 * assert.equal(gate.evidence?.checks[0].now, "green");
 * assert.equal(gate.evidence?.checks[0].baseline, "unknown");
 * await gate.close();
 * ```
 */
export class RepoChecksChecker implements TaskCompletionChecker {
  /** The checker's name in feedback. */
  readonly name: string = "checks";
  /** What the gate's phases share. */
  readonly #state: GateState;
  /** Checks run one at a time: they share the clean copy. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The last claim's verdict, with what decided it: the same claim again gets it at once. */
  #last: { key: string; result: TaskCompletionResult; evidence: ChecksEvidence } | undefined;

  /**
   * Create the gate.
   *
   * @param options The checks, their timeout and the protected files.
   */
  constructor(options: RepoChecksOptions) {
    this.#state = new GateState({
      checks: options.checks,
      timeoutMs: options.timeoutMs ?? 600_000,
      protect: options.protect ?? [],
      configFiles: options.configFiles ?? [],
      owner: options.owner,
      final: new Set(options.finalChecks ?? []),
      changedLines: options.changedLines,
    });
  }

  /**
   * The checks, in order.
   *
   * @returns A copy of the list.
   */
  get checks(): RepoCheck[] {
    return [...this.#state.checks];
  }

  /**
   * The evidence of the latest check, for the summary and the report.
   *
   * @returns The evidence, or undefined before the first check.
   */
  get evidence(): ChecksEvidence | undefined {
    return this.#state.evidence;
  }

  /**
   * Record the repository as the run finds it, before the agent's first
   * session: the files already uncommitted (not the agent's work) and a
   * manifest of the dependency folders that worktrees link. Later calls
   * keep the first record.
   *
   * @param repo The repository.
   * @param options Paths to leave out of the uncommitted files (finishline's own).
   * @returns Resolves once recorded.
   */
  async recordStart(repo: GitRepo, options: { exclude?: string[] } = {}): Promise<void> {
    await recordStart(this.#state, repo, options);
  }

  /**
   * Start the baseline on `commit` in a detached worktree; it runs while the
   * first session works, and the first verification waits for it. Records
   * the start ({@linkcode RepoChecksChecker.recordStart}) when that was not
   * done yet.
   *
   * @param repo The repository.
   * @param commit The starting commit.
   * @returns The baseline's promise.
   */
  startBaseline(repo: GitRepo, commit: string): Promise<BaselineResult> {
    return startBaseline(this.#state, repo, commit);
  }

  /**
   * Whether the baseline's red checks ran a second time: a claim's verdict may
   * change with it, so a verdict from before is not reused after.
   *
   * @returns True once they ran (or there was nothing to run again).
   */
  get baselineConfirmed(): boolean {
    return this.#state.confirmed;
  }

  /**
   * Run the checks red at the baseline once more, at low priority, in the
   * baseline's worktree: a red baseline may come from contention with the
   * first session's start-up. Started at most once: by a claim whose verdict
   * depends on it, a claim sent back to work, or the end of a session that
   * did not pass, whichever comes first. The baseline's `retries` hold the
   * runs.
   *
   * @returns Resolves once they ran (at once when there is nothing to run).
   */
  confirmBaseline(): Promise<void> {
    return confirmBaseline(this.#state);
  }

  /**
   * Stop a baseline (and its second run) still running, and wait for its
   * worktree to be removed.
   *
   * @returns Resolves once it has stopped.
   */
  async stopBaseline(): Promise<void> {
    await stopBaseline(this.#state);
  }

  /**
   * Start the held-out reproduction test: a detached worktree of `commit`
   * (dependency folders linked as for the baseline) is handed to `write`,
   * which runs the verifier session in it. Its test files are kept (other
   * changes are dropped), the checks run with them, and they are held out
   * when they fail on the starting commit for a named reason that is not a
   * setup error ({@linkcode judgeReproduction}). Every later claim waits
   * for it, then needs its tests to pass on the clean copy.
   *
   * @param repo The repository.
   * @param commit The starting commit.
   * @param write Runs the verifier session in the folder; resolves with a problem, if any.
   * @returns The reproduction's promise.
   */
  startReproduction(
    repo: GitRepo,
    commit: string,
    write: (dir: string) => Promise<string | undefined>,
  ): Promise<Reproduction> {
    return startReproduction(this.#state, repo, commit, write);
  }

  /**
   * The reproduction, once judged.
   *
   * @returns It, or undefined when none was started.
   */
  async reproduction(): Promise<Reproduction | undefined> {
    return await this.#state.reproduction;
  }

  /**
   * Name the run that owns the gate's worktrees (see {@linkcode RepoChecksOptions.owner}),
   * when the gate was made before the run's id was known.
   *
   * @param runId The run.
   */
  ownedBy(runId: string): void {
    this.#state.owner = runId;
  }

  /**
   * Require the worker's own test: from now on a claim passes only when one
   * of the worker's new or changed test files holds a test that fails on
   * the starting commit and passes on the claim, or the worker's `no_test`
   * declaration stands.
   *
   * @param why Why the run needs one, as the feedback and the report say it.
   */
  requireWorkerTest(why: string): void {
    this.#state.workerTestWhy = why;
  }

  /**
   * Have the worker's declarations (`tests_changed`, `out_of_scope`,
   * `no_test`) reviewed: those a passing verdict relies on go to `reviewer`,
   * and count only when it accepts them. Without a reviewer they stand as
   * declared.
   *
   * @param reviewer Reviews a claim's declarations, or undefined for none.
   */
  setReviewer(reviewer: DeclarationReviewer | undefined): void {
    this.#state.reviewer = reviewer;
  }

  /**
   * Every review of declarations so far, in order (a claim answered from an
   * earlier review is not listed again).
   *
   * @returns The commit each review was of, and the declarations with their verdicts.
   */
  get reviews(): Array<{ commit: string; declarations: ReviewedDeclaration[] }> {
    return structuredClone(this.#state.reviewLog);
  }

  /**
   * Resolves once the clean copy is ready for the next claim: what the last
   * claim's checks wrote removed, and the build seed copied in again.
   *
   * @returns Resolves when nothing is being done to the clean copy.
   */
  async ready(): Promise<void> {
    await this.#queue;
    await this.#state.tidying;
  }

  /**
   * End of the run: stop the baseline, remove the baseline's worktree, its
   * build seed and the clean copy. A later check makes a new clean copy.
   *
   * @returns Resolves once nothing of the gate is left in `git worktree list`.
   */
  async close(): Promise<void> {
    await this.stopBaseline();
    await this.#state.reproduction?.catch(() => undefined);
    await this.#queue;
    await this.#state.tidying;
    this.#state.tidying = undefined;
    const copy = this.#state.copy;
    this.#state.copy = undefined;
    await copy?.remove();
    const seed = this.#state.seed;
    this.#state.seed = undefined;
    await seed?.remove();
    for (const claimed of this.#state.claimSeeds.splice(0)) await claimed.remove();
    const heldOut = this.#state.heldOutStore;
    this.#state.heldOutStore = undefined;
    await heldOut?.remove();
    // The dependency folders' hashing (seconds after the start at most) reads no file after the end.
    await this.#state.start?.then((start) => start.dependencies.hashed(), () => {});
  }

  /**
   * {@linkcode RepoChecksChecker.close}, for `await using`.
   *
   * @returns Resolves once closed.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The baseline, once it has run.
   *
   * @returns Its result, or undefined when none was started.
   */
  async baseline(): Promise<BaselineResult | undefined> {
    return await this.#state.baseline;
  }

  /**
   * Run every check on a clean copy of the last commit and compare with the
   * baseline. Uncommitted work is not verified: the agent is told to commit
   * it. Outside a repository the checks run in the working directory.
   *
   * @param context The working directory, git evidence and complete_task call.
   * @returns Complete when the gate passes, else the feedback for the agent.
   */
  check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const result = this.#queue.then(async () => {
      this.#state.onCheck = context.onCheck;
      try {
        return await this.#claim(context);
      } finally {
        this.#state.onCheck = undefined;
      }
    });
    this.#queue = result.catch(() => {});
    return result;
  }

  async #claim(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const git = context.git;
    if (!git) return await this.#check(context, undefined);
    const repo = git.repo;
    await this.recordStart(repo);
    const start = (await this.#state.start)!;
    const head = await repo.head();
    if (!head) {
      return this.#state.refuse(
        {},
        "Nothing is committed yet: commit your work, then claim it done",
      );
    }
    const base = git.baseline ?? undefined;
    // Both read the agent's checkout only: side by side.
    const [uncommitted, plans] = await Promise.all([
      uncommittedChanges(repo, start.dirt),
      planFolders(repo, start, base, head),
    ]);
    if (uncommitted.length > 0) {
      return this.#state.refuse(
        { commit: head, uncommitted },
        `Your work is not committed: ${listPaths(uncommitted)} ${
          uncommitted.length === 1 ? "is" : "are"
        } uncommitted. finishline verifies a clean copy of your last commit (${
          head.slice(0, 12)
        }), never the working tree, so uncommitted changes are not verified and the checks did not run. Commit your work (and delete files that do not belong to the task), then call complete_task again`,
      );
    }
    const tampered = plans.filter((plan) => !plan.install).flatMap((plan) => plan.changes);
    if (tampered.length > 0) {
      return this.#state.refuse(
        {
          commit: head,
          dependencyChanges: tampered.slice(0, 100),
          dependencyNotes: plans.flatMap((plan) => pythonNote(plan) ?? []),
        },
        dependencyFeedback(tampered, plans),
      );
    }
    // The same commit and the same declarations give the same verdict: the
    // handler's verdict right after a complete_task check does not run the suite again.
    // A baseline confirmed since then (by a second run) may change it.
    const key = () =>
      JSON.stringify([
        head,
        context.completeTask?.out_of_scope ?? [],
        context.completeTask?.tests_changed ?? [],
        context.completeTask?.no_test ?? null,
        context.completeTask?.held_out_wrong ?? null,
        git.baseline ?? null,
        plans.map((plan) => [plan.dir, plan.install, plan.key]),
        this.#state.confirmed,
      ]);
    if (this.#last?.key === key()) {
      this.#state.evidence = structuredClone(this.#last.evidence);
      return this.#last.result;
    }
    const result = await this.#check(context, { repo, head, plans, base });
    // What the checks wrote goes, and the build seed is copied in, while the agent works.
    const copy = this.#state.copy;
    if (copy && !context.signal?.aborted) this.#state.tidying = copy.tidy();
    // A review that could not be had is asked again at the next claim.
    const unreviewed = this.#state.evidence?.declarations?.some((entry) =>
      entry.verdict === "unreviewed"
    );
    if (this.#state.evidence && !context.signal?.aborted && !unreviewed) {
      this.#last = { key: key(), result, evidence: structuredClone(this.#state.evidence) };
    }
    return result;
  }

  async #check(
    context: TaskCompletionContext,
    claim: Claim | undefined,
  ): Promise<TaskCompletionResult> {
    const state = this.#state;
    const run = await runClaim(state, context, claim);
    if ("refused" in run) return run.refused;
    const found = await findings(state, run);
    if ("refused" in found) return found.refused;
    const proved = await proveClaim(state, run);
    if (proved) return proved;
    await reviewDeclarations(state, run, found);
    const { evidence, facts, notes, problems, signal } = run;
    if (signal?.aborted) return state.refuse(facts, STOPPED);
    // Sent back to work: a red baseline runs again meanwhile, for the next claim to compare with.
    // A confirmation that fails (its worktree gone with the run) leaves the first baseline.
    if (problems.length > 0) this.confirmBaseline().catch(() => undefined);
    evidence.passed = problems.length === 0;
    state.evidence = evidence;
    const noted = notes.length > 0 ? `\n\n${notes.join("\n")}` : "";
    return problems.length > 0
      ? incomplete(`${problems.join("\n\n")}${noted}`)
      : ok(`${passedText(evidence)}${checkedOn(claim)}${proofNote(evidence)}${noted}`);
  }
}

/** Where a passing gate ran, for the agent. */
function checkedOn(claim: Claim | undefined): string {
  return claim ? ` (on a clean copy of ${claim.head.slice(0, 12)})` : "";
}
