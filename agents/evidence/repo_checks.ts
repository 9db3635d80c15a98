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
 * failed run first, alone ({@linkcode filteredCommand}): one that fails
 * again answers the claim at once; the full suite decides every pass.
 *
 * @module
 */

import type { ChecksEvidence, Declaration, ReviewedDeclaration } from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import { type CheckRun, describeRun, type RepoCheck } from "./run/check_run.ts";
import { type DeclarationReviewer, reviewFeedback } from "./judge/declarations.ts";
import { changedProtectedFiles } from "./judge/protected_files.ts";
import { findSpecialCases } from "./judge/special_cases.ts";
import type { Reproduction } from "./held_out/reproduction.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "../checks/checker_contract.ts";
import type { BaselineResult } from "./copy/worktree_run.ts";
import { fixedRedTests } from "./judge/fail_to_pass.ts";
import { canaryProblem, runCanaries } from "./run/canary.ts";
import { runnerSignals, signalFinding } from "./judge/runner_signals.ts";
import { type RedTestChange, redTestChanges, writeSplices } from "./judge/red_tests.ts";
import { finalDue, splitTiers } from "./detect/check_tier.ts";
import { type BaselineView, declaredOutOfScope, judgeAll, stillFailing } from "./_rules.ts";
import { listChanges, listPaths, passedText, STOPPED } from "./_feedback.ts";
import { type Claim, GateState } from "./_gate_state.ts";
import {
  dependencyFeedback,
  planFolders,
  pythonNote,
  recordStart,
  uncommittedChanges,
} from "./_run_start.ts";
import { baselineViews, confirmBaseline, startBaseline, stopBaseline } from "./_baseline.ts";
import { heldOutDispute, runHeldOut, startReproduction } from "./_held_out.ts";
import { cleanCopy } from "./_clean_copy.ts";
import { rerunFailed } from "./_rerun.ts";
import { workerTest } from "./_worker_test.ts";
import { reliedOn, reviewClaim } from "./_review.ts";

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
  readonly #state: GateState;
  /** Checks run one at a time: they share the clean copy. */
  #queue: Promise<unknown> = Promise.resolve();
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
    const declared = declaredOutOfScope(context.completeTask);
    const setupStarted = performance.now();
    const prepared = claim ? await cleanCopy(this.#state, claim) : { notes: [] };
    const setupMs = Math.round(performance.now() - setupStarted);
    const notes = prepared.notes;
    const facts: Partial<ChecksEvidence> = {
      ...(claim ? { commit: claim.head, setupMs } : {}),
      ...(notes.length > 0 ? { dependencyNotes: notes } : {}),
    };
    if (prepared.changes) {
      return this.#state.refuse(
        { ...facts, dependencyChanges: prepared.changes },
        dependencyFeedback(prepared.changes, claim!.plans),
      );
    }
    if (prepared.problem) return this.#state.refuse(facts, prepared.problem);
    // Outside a repository there is no commit to copy: the working directory, as it is.
    const copy = prepared.copy;
    const cwd = copy?.dir ?? context.cwd;
    // The run's signal stops the checks: an interrupted run does not wait for its suite.
    const signal = context.signal;
    // What failed at the last claim runs first, alone: the agent hears at once when it still fails.
    const rerun = this.#state.failedLast.size > 0
      ? await rerunFailed(this.#state, cwd, declared, facts, signal)
      : undefined;
    if (rerun?.result) return rerun.result;
    // The protected files the claim changed are read from the agent's checkout while the
    // checks run in the clean copy (against the baseline's commit, as after them).
    const early = this.#state.baselineCommit ?? context.git?.baseline ?? undefined;
    const changedEarly = this.#changedTests(context, early, claim?.head);
    // The final state runs while a baseline still running finishes; the comparison waits for both.
    const runs: CheckRun[] = [];
    const tiers = splitTiers(this.#state.checks, this.#state.final);
    for (const check of tiers.perClaim) runs.push(await this.#state.runOne(check, cwd, signal));
    // The slow checks run once the others leave nothing to refuse: at the claim that completes.
    const due = tiers.final.length > 0 && finalDue(runs, declared);
    for (const check of due ? tiers.final : []) {
      runs.push(await this.#state.runOne(check, cwd, signal));
    }
    const ran = due ? [...tiers.perClaim, ...tiers.final] : tiers.perClaim;
    if (signal?.aborted) {
      await changedEarly.catch(() => undefined);
      return this.#state.refuse(facts, STOPPED);
    }
    const started =
      await (due ? this.#state.baseline : this.#state.claimBaseline ?? this.#state.baseline);
    // A baseline that could not run compares as none.
    const baseline = started?.error ? undefined : started;
    const base = baseline?.commit ?? context.git?.baseline ?? undefined;
    const views = await baselineViews(this.#state, baseline, runs);
    let testsChanged = await changedEarly.catch(() => undefined);
    // The baseline could not run: its commit is not the base any more.
    if (base !== early || !testsChanged) {
      testsChanged = await this.#changedTests(context, base, claim?.head);
    }
    // Red tests found by name wherever they live: an inline one whose body changed is protected too.
    const splices = claim && base ? await redTestChanges(claim, base, views, testsChanged) : [];
    testsChanged = [...testsChanged, ...splices.map((edit) => edit.change)];
    const undeclared = testsChanged.filter((entry) => !entry.reason);
    const settled: Array<{ run: CheckRun; flaky: boolean }> = [];
    for (const [index, check] of ran.entries()) {
      settled.push(await this.#settle(check, runs[index], views.get(check.name), cwd, signal));
    }
    if (!signal?.aborted) {
      this.#state.failedLast = new Map(
        settled.flatMap(({ run }) =>
          run.green || run.failing.length === 0 ? [] : [[run.name, run.failing]]
        ),
      );
    }
    // The agent's tests ran: what they wrote into the copy's dependency folders is undone.
    const planted = claim && await this.#state.undoWrites(facts);
    if (planted) return planted;
    const judged = judgeAll(settled, views, declared, {
      undeclared,
      changedCount: testsChanged.length,
      declarations: context.completeTask?.tests_changed,
    });
    const evidence: ChecksEvidence = {
      passed: false,
      checks: judged.checks,
      outOfScope: judged.outOfScope,
      testsChanged,
      ...facts,
      ...(rerun ? { rerun: rerun.evidence } : {}),
    };
    const problems = judged.problems;
    const git = context.git;
    if (problems.length === 0 && git && base && claim) {
      const isTest = (file: string) => this.#state.isTest(file);
      const held = await this.#state.reproduction?.catch(() => undefined);
      const cases = await findSpecialCases(
        this.#state.copy?.objects ?? git.repo,
        base,
        claim.head,
        isTest,
        held?.kept ? held.test.files : [],
      );
      if (cases.length > 0) {
        evidence.specialCases = cases;
        problems.push(
          `Your code special-cases the values the tests use: ${
            cases.slice(0, 5).map((found) =>
              `${found.file}:${found.line} \`${found.text}\` compares against values that appear together in ${found.test}`
            ).join("; ")
          }. Tests check examples of the behaviour; write the general logic, not the tested cases`,
        );
      }
    }
    // finishline's own tests, that must fail, in each runner: a runner that passes them was tampered with.
    if (problems.length === 0 && claim && copy) {
      evidence.canary = await runCanaries(copy.dir, this.#state.checks, {
        timeoutMs: this.#state.timeoutMs,
        signal,
      });
      const tampered = canaryProblem(evidence.canary);
      if (tampered) problems.push(tampered);
    }
    const reproduction = problems.length === 0 && claim
      ? await this.#state.reproduction?.catch(() => undefined)
      : undefined;
    let heldOutFailure: string | undefined;
    let dispute: Declaration | undefined;
    if (reproduction?.kept && claim && this.#state.copy) {
      const heldOut = await runHeldOut(this.#state, reproduction.test, claim, signal);
      const planted = await this.#state.undoWrites(facts);
      if (planted) return planted;
      evidence.heldOut = { tests: reproduction.test.tests, passed: heldOut.length === 0 };
      const disputed = context.completeTask?.held_out_wrong?.trim() || undefined;
      if (heldOut.length > 0) {
        heldOutFailure =
          `A held-out acceptance test, written from the task before you started and never shown to you, fails against your code: ${
            heldOut.join("; ")
          }. It checks the behaviour the task asks for: change the code so that it does what the task says, for every input, not only the ones your own tests use${
            this.#state.reviewer
              ? ". If you are sure the test contradicts the task, say why in complete_task held_out_wrong: a reviewer who sees the test decides"
              : ""
          }`;
        if (disputed && this.#state.reviewer) {
          evidence.heldOut.disputed = disputed;
          dispute = heldOutDispute(reproduction.test, heldOut, disputed);
        } else {
          problems.push(heldOutFailure);
        }
      }
    }
    // The claim's code with the tests in their original form: its own runs unless it changed some.
    let original: CheckRun[] = settled.map((entry) => entry.run);
    if (problems.length === 0 && git && base && claim && testsChanged.length > 0) {
      // Only the checks accepted as out of scope are left out: a declaration on a green check is not.
      const excused = new Map(judged.outOfScope.map((entry) => [entry.check, entry.reason]));
      const originals = await this.#originals(claim, base, testsChanged, excused, {
        signal,
        splices,
      });
      evidence.originalsPass = originals.passed;
      original = originals.runs;
      const planted = await this.#state.undoWrites(facts);
      if (planted) return planted;
      const unfixed = stillFailing(originals.runs, views);
      if (unfixed.length > 0) {
        problems.push(
          `${
            unfixed.join("; ")
          }: in their original versions, against your code, tests that failed before your changes still fail. You changed ${
            listChanges(testsChanged)
          }; deleting, skipping, loosening or renaming a failing test does not fix it, declared or not: restore the test and fix the code`,
        );
      } else if (!originals.passed && undeclared.length > 0) {
        problems.push(
          `You changed ${
            listChanges(undeclared)
          }, which define when the task is done, and the original versions fail against your code${originals.detail}. Restore them and fix the code, or declare each change in complete_task tests_changed with a reason`,
        );
      }
    }
    const noTest = context.completeTask?.no_test?.trim() || undefined;
    if (problems.length === 0 && base && claim && this.#state.workerTestWhy) {
      const worker = await workerTest(
        this.#state,
        claim,
        base,
        testsChanged,
        settled,
        noTest,
        signal,
        {
          redFixed: fixedRedTests([...views.values()], original),
        },
      );
      const planted = await this.#state.undoWrites(facts);
      if (planted) return planted;
      evidence.workerTest = worker.evidence;
      if (worker.problem) problems.push(worker.problem);
    }
    // Code that reads a test runner's signals behaves differently under test: the reviewer sees it.
    const signals = problems.length === 0 && base && claim
      ? await runnerSignals(
        claim.repo,
        { base, head: claim.head },
        (file) => this.#state.isTest(file),
      )
      : [];
    if (signals.length > 0) evidence.runnerSignals = signals;
    if (problems.length === 0 && base && claim && this.#state.reviewer && !signal?.aborted) {
      const declarations = [
        ...(dispute ? [dispute] : []),
        ...signals.map(signalFinding),
        ...reliedOn(evidence, {
          // The verdict without the test changes declared: does it need them?
          without: judgeAll(settled, views, declared, {
            undeclared: testsChanged,
            changedCount: testsChanged.length,
          }).problems.length > 0,
          declared: context.completeTask?.tests_changed ?? [],
          summary: context.completeTask?.summary ?? "",
        }),
      ];
      if (declarations.length > 0) {
        const focus = [
          ...testsChanged.flatMap((entry) => entry.from ? [entry.from, entry.path] : [entry.path]),
          ...(evidence.workerTest?.files ?? []),
        ];
        const reviewed = await reviewClaim(this.#state, claim, base, declarations, {
          focus,
          signal,
        });
        evidence.declarations = reviewed;
        const accepted = (kind: Declaration["kind"]) =>
          reviewed.some((entry) => entry.kind === kind && entry.verdict === "accepted");
        if (dispute && evidence.heldOut) {
          evidence.heldOut.overruled = accepted("held_out_wrong");
          if (!evidence.heldOut.overruled) problems.push(heldOutFailure!);
        }
        const refused = reviewFeedback(reviewed);
        if (refused) problems.push(refused);
        if (evidence.workerTest?.noTest) evidence.workerTest.passed = accepted("no_test");
        else if (evidence.workerTest?.tests.length && evidence.workerTest.files.length) {
          evidence.workerTest.passed = accepted("worker_test");
        }
      }
    } else if (dispute) {
      problems.push(heldOutFailure!);
    }
    if (signal?.aborted) return this.#state.refuse(facts, STOPPED);
    // Sent back to work: a red baseline runs again meanwhile, for the next claim to compare with.
    // A confirmation that fails (its worktree gone with the run) leaves the first baseline.
    if (problems.length > 0) this.confirmBaseline().catch(() => undefined);
    evidence.passed = problems.length === 0;
    this.#state.evidence = evidence;
    const noted = notes.length > 0 ? `\n\n${notes.join("\n")}` : "";
    return problems.length > 0
      ? incomplete(`${problems.join("\n\n")}${noted}`)
      : ok(`${passedText(evidence)}${checkedOn(claim)}${noted}`);
  }

  /** Protected files the agent changed since `base`, with the reasons it declared. */
  async #changedTests(
    context: TaskCompletionContext,
    base: string | undefined,
    head: string | undefined,
  ): Promise<ChecksEvidence["testsChanged"]> {
    if (!context.git || !base) return [];
    // The claim's commit, read by hash in the clean copy's repository: no attribute hides a diff.
    const reader = head && this.#state.copy ? this.#state.copy.objects : context.git.repo;
    if (reader !== context.git.repo && await this.#state.copy!.objects.fetch([base])) return [];
    const changed = await changedProtectedFiles(reader, base, {
      protect: this.#state.protect,
      configFiles: this.#state.configFiles,
      ...(reader !== context.git.repo ? { head } : {}),
    });
    const reasons = new Map(
      (context.completeTask?.tests_changed ?? []).map((
        entry,
      ) => [entry.path, entry.reason?.trim()]),
    );
    return changed.map((entry) => {
      const reason = reasons.get(entry.path);
      return reason ? { ...entry, reason } : entry;
    });
  }

  /**
   * A check that passed before the run and fails once may be flaky: it is
   * asked again. So is one that fails only in tests that were flaky at the
   * baseline.
   */
  async #settle(
    check: RepoCheck,
    run: CheckRun,
    before: BaselineView | undefined,
    cwd: string,
    signal: AbortSignal | undefined,
  ): Promise<{ run: CheckRun; flaky: boolean }> {
    if (run.green || run.timedOut || !before) return { run, flaky: false };
    const flakyBefore = new Set(before.flakyTests ?? []);
    const onlyFlaky = run.failing.length > 0 && run.failing.every((test) => flakyBefore.has(test));
    if (!before.run.green && !onlyFlaky) return { run, flaky: false };
    const again = await this.#state.runOne(check, cwd, signal);
    return { run: again, flaky: again.green };
  }

  /** Run the checks on the clean copy with the original test files put back. */
  async #originals(
    claim: Claim,
    base: string,
    changed: Array<{ path: string; from?: string }>,
    outOfScope: Map<string, string>,
    options: { signal: AbortSignal | undefined; splices: RedTestChange[] },
  ): Promise<{ passed: boolean; detail: string; runs: CheckRun[] }> {
    const { signal, splices } = options;
    const copy = this.#state.copy!;
    // An inline red test is put back alone, its file's other changes (the fix) kept.
    const spliced = new Map(
      splices.flatMap((edit) => edit.spliced === undefined ? [] : [[edit.change.path, edit]]),
    );
    // A fresh copy of the commit: what the first runs wrote is gone.
    const error = await copy.moveTo(claim.head) ??
      // A rename is undone by putting back the old path and removing the new one.
      await copy.restore(
        base,
        changed.flatMap((entry) =>
          entry.from ? [entry.from, entry.path] : spliced.has(entry.path) ? [] : [entry.path]
        ),
      ) ?? await writeSplices(copy.dir, [...spliced.values()]);
    if (error) return { passed: false, detail: ` (${error})`, runs: [] };
    const runs = await copy.run(this.#state.checks.filter((check) => !outOfScope.has(check.name)), {
      timeoutMs: this.#state.timeoutMs,
      signal,
      onCheck: this.#state.onCheck,
    });
    const failed = runs.find((run) => !run.green);
    return failed
      ? { passed: false, detail: `: "${failed.name}"${describeRun(failed)}`, runs }
      : { passed: true, detail: "", runs };
  }
}

/** Where a passing gate ran, for the agent. */
function checkedOn(claim: Claim | undefined): string {
  return claim ? ` (on a clean copy of ${claim.head.slice(0, 12)})` : "";
}
