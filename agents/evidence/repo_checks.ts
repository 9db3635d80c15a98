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

import type { CompleteTaskCall } from "../completion/handler_contract.ts";
import type {
  CheckEvidence,
  ChecksEvidence,
  Declaration,
  ReviewedDeclaration,
  TestCounts,
  WorkerTestEvidence,
} from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import type { GitReader } from "../git/hardened.ts";
import {
  binaryFinding,
  binarySources,
  OBJECT_FINDING,
  objectFinding,
} from "./copy/object_findings.ts";
import {
  type CheckRun,
  describeRun,
  nameList,
  type RepoCheck,
  runRepoCheck,
} from "./run/check_run.ts";
import {
  changedOnPurpose,
  DEPENDENCY_FOLDERS,
  dependencyEntries,
  folderOf,
  nodeInstallCommand,
} from "./copy/dependency_folders.ts";
import { DependencySnapshot } from "./copy/dependency_tree.ts";
import {
  applyVerdicts,
  cutDiff,
  type DeclarationReviewer,
  reviewFeedback,
} from "./judge/declarations.ts";
import { changedProtectedFiles, protectedRole } from "./judge/protected_files.ts";
import { findSpecialCases } from "./judge/special_cases.ts";
import { heldOutFailures } from "./held_out/held_out_feedback.ts";
import { HeldOutStore } from "./held_out/held_out_store.ts";
import { VerifierWorkspace } from "./held_out/verifier_workspace.ts";
import {
  assertionLines,
  type HeldOutTest,
  judgeReproduction,
  type Reproduction,
} from "./held_out/reproduction.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "../checks/checker_contract.ts";
import { type BaselineResult, CheckWorktree } from "./copy/worktree_run.ts";
import { BuildSeed, seedEntries, settleTimes } from "./copy/build_seed.ts";
import { fixedRedTests, flippedTests, workerTestFiles } from "./judge/fail_to_pass.ts";
import { canaryProblem, runCanaries } from "./run/canary.ts";
import { runnerSignals, signalFinding } from "./judge/runner_signals.ts";
import { type RedTestChange, redTestChanges, writeSplices } from "./judge/red_tests.ts";
import { filteredCommand } from "./run/test_filter.ts";
import { finalDue, splitTiers } from "./detect/check_tier.ts";

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

/** The repository as the run found it. */
interface RunStart {
  /** Uncommitted files already there, with their signatures: not the agent's. */
  dirt: Map<string, string>;
  /** The dependency folders copied into worktrees, every file listed and hashed. */
  dependencies: DependencySnapshot;
}

/** How one dependency folder reaches the clean copy of a commit. */
interface FolderPlan {
  dir: string;
  /** Install from the commit's manifest and lock files, else link the folder found at the start. */
  install: boolean;
  /** The manifest or lock files the agent changed on purpose. */
  changedFiles: string[];
  /** What the agent changed in the linked folder. */
  changes: string[];
  /** Names what would be installed. */
  key: string;
}

/** A claim ready to be checked on a clean copy. */
interface Claim {
  repo: GitRepo;
  head: string;
  plans: FolderPlan[];
  /** The run's starting commit, as the loop knows it. */
  base?: string;
}

/** A baseline run as the gate compares with it: confirmed by a second run when it was red. */
interface BaselineView {
  run: CheckRun;
  /** Tests that failed at the first run and passed at the second. */
  flakyTests?: string[];
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
  readonly #checks: RepoCheck[];
  readonly #timeoutMs: number;
  readonly #protect: string[];
  readonly #configFiles: string[];
  #owner: string | undefined;
  #start: Promise<RunStart> | undefined;
  #baseline: Promise<BaselineResult> | undefined;
  /** The baseline of the per-claim checks: resolves before the final checks' baseline runs. */
  #claimBaseline: Promise<BaselineResult> | undefined;
  /** Names of the checks that run once, before the run ends. */
  #final: Set<string>;
  /** The baseline's worktree, kept until its red checks ran a second time. */
  #baselineWorktree: CheckWorktree | undefined;
  #confirmation: Promise<void> | undefined;
  #confirmed = false;
  #stopBaseline = new AbortController();
  /** The one clean copy of a run, moved from commit to commit. */
  #copy: CheckWorktree | undefined;
  /** The clean copy made ready for the next claim, after the last one's checks. */
  #tidying: Promise<void> | undefined;
  /** The commit the baseline checks run at, once started. */
  #baselineCommit: string | undefined;
  /**
   * A green baseline's worktree, kept to become the clean copy at the first
   * claim: at the path the baseline built in, a compiler's incremental cache
   * (rustc's names the source files by their full path) serves the claims.
   */
  #baselineCopy: CheckWorktree | undefined;
  /** What the baseline built (Cargo's `target`), the clean copy's start at every move. */
  #seed: BuildSeed | undefined;
  /** The held-out test's files, kept with their hashes since the verifier stopped. */
  #heldOutStore: HeldOutStore | undefined;
  /** Checks run one at a time: they share the clean copy. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Who is told which check of the current claim runs (its context's `onCheck`). */
  #onCheck: ((name: string, running: boolean) => void) | undefined;
  #evidence: ChecksEvidence | undefined;
  #last: { key: string; result: TaskCompletionResult; evidence: ChecksEvidence } | undefined;
  /** The verifier's reproduction test, once judged. */
  #reproduction: Promise<Reproduction> | undefined;
  /** Why the worker's own fail-to-pass test is required, when it is. */
  #workerTestWhy: string | undefined;
  /** The checks on the starting commit with each set of the worker's test files. */
  #workerTests = new Map<string, CheckRun[]>();
  /** Reviews declarations; without one they stand as declared. */
  #reviewer: DeclarationReviewer | undefined;
  /** The reviews already had, by commit and declarations. */
  #reviews = new Map<string, ReviewedDeclaration[]>();
  /** Every review of the run, in order, for the report. */
  #reviewLog: Array<{ commit: string; declarations: ReviewedDeclaration[] }> = [];
  /** The failing tests of the last claim the full suite ran on, by check: re-run first at the next. */
  #failedLast = new Map<string, string[]>();

  /**
   * Create the gate.
   *
   * @param options The checks, their timeout and the protected files.
   */
  constructor(options: RepoChecksOptions) {
    this.#checks = options.checks;
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#protect = options.protect ?? [];
    this.#configFiles = options.configFiles ?? [];
    this.#owner = options.owner;
    this.#final = new Set(options.finalChecks ?? []);
  }

  /**
   * The checks, in order.
   *
   * @returns A copy of the list.
   */
  get checks(): RepoCheck[] {
    return [...this.#checks];
  }

  /**
   * The evidence of the latest check, for the summary and the report.
   *
   * @returns The evidence, or undefined before the first check.
   */
  get evidence(): ChecksEvidence | undefined {
    return this.#evidence;
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
    this.#start ??= (async () => {
      const [dirt, head] = await Promise.all([repo.snapshot(options.exclude), repo.head()]);
      const entries = head ? await dependencyEntries(repo, head) : [];
      return {
        dirt: dirt ?? new Map(),
        dependencies: await DependencySnapshot.take(repo.root, entries),
      };
    })();
    await this.#start;
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
    const signal = this.#stopBaseline.signal;
    this.#baselineCommit = commit;
    let claimDone: (result: BaselineResult) => void = () => {};
    const claimEarly = new Promise<BaselineResult>((resolve) => claimDone = resolve);
    this.#baseline = (async (): Promise<BaselineResult> => {
      await this.recordStart(repo);
      const started = performance.now();
      const finished = (runs: CheckRun[], error?: string): BaselineResult => ({
        commit,
        runs,
        durationMs: Math.round(performance.now() - started),
        ...(error ? { error } : {}),
      });
      const worktree = await CheckWorktree.create(repo, commit, {
        dependencies: (await this.#start!).dependencies,
        owner: this.#owner,
      });
      if (typeof worktree === "string") return finished([], worktree);
      // Cargo's build output becomes the clean copy's seed: the times it is built against first.
      const seeds = await seedEntries(worktree.objects, commit);
      if (seeds.length > 0 && await settleTimes(worktree.objects, undefined, commit)) {
        seeds.length = 0;
      }
      const tiers = splitTiers(this.#checks, this.#final);
      const runs = await worktree.run(tiers.perClaim, { timeoutMs: this.#timeoutMs, signal });
      if (tiers.final.length > 0 && !signal.aborted) {
        // One object for both: what the final checks add (and a second run's retries) reach both.
        const result = finished(runs);
        claimDone(result);
        runs.push(
          ...await worktree.run(tiers.final, { timeoutMs: this.#timeoutMs, signal, nice: true }),
        );
        result.durationMs = Math.round(performance.now() - started);
      }
      if (seeds.length > 0 && !signal.aborted && runs.length > 0) {
        this.#seed = await BuildSeed.take(worktree.dir, commit, seeds, {
          owner: this.#owner ? { repo: repo.root, run: this.#owner } : undefined,
        });
      }
      if (signal.aborted) {
        await worktree.remove();
      } else if (runs.every((run) => run.green)) {
        this.#baselineCopy = worktree;
      } else {
        this.#baselineWorktree = worktree;
      }
      return signal.aborted ? finished(runs, "stopped before it finished") : finished(runs);
    })();
    // Without final checks, or when the baseline ends early, the whole baseline answers.
    this.#claimBaseline = Promise.race([claimEarly, this.#baseline]);
    this.#claimBaseline.catch(() => {});
    return this.#baseline;
  }

  /**
   * Whether the baseline's red checks ran a second time: a claim's verdict may
   * change with it, so a verdict from before is not reused after.
   *
   * @returns True once they ran (or there was nothing to run again).
   */
  get baselineConfirmed(): boolean {
    return this.#confirmed;
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
    if (!this.#baseline) return Promise.resolve();
    this.#confirmation ??= this.#confirm(this.#baseline);
    return this.#confirmation;
  }

  async #confirm(pending: Promise<BaselineResult>): Promise<void> {
    const baseline = await pending;
    const worktree = this.#baselineWorktree;
    this.#baselineWorktree = undefined;
    try {
      const signal = this.#stopBaseline.signal;
      if (!worktree || baseline.error || signal.aborted) return;
      const red = this.#checks.filter((check) =>
        baseline.runs.some((run) => run.name === check.name && !run.green)
      );
      // A clean start, as the first run had.
      if (await worktree.moveTo(baseline.commit)) return;
      const retries = await worktree.run(red, { timeoutMs: this.#timeoutMs, signal, nice: true });
      if (!signal.aborted) baseline.retries = retries;
    } finally {
      this.#confirmed = true;
      await worktree?.remove();
    }
  }

  /**
   * Stop a baseline (and its second run) still running, and wait for its
   * worktree to be removed.
   *
   * @returns Resolves once it has stopped.
   */
  async stopBaseline(): Promise<void> {
    this.#stopBaseline.abort();
    await this.#baseline;
    await this.#confirmation;
    await this.#baselineWorktree?.remove();
    this.#baselineWorktree = undefined;
    await this.#baselineCopy?.remove();
    this.#baselineCopy = undefined;
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
    const signal = this.#stopBaseline.signal;
    this.#reproduction = (async (): Promise<Reproduction> => {
      await this.recordStart(repo);
      const start = await this.#start!;
      const worktree = await CheckWorktree.create(repo, commit, {
        dependencies: start.dependencies,
        owner: this.#owner,
      });
      if (typeof worktree === "string") return { kept: false, why: worktree, notes: [] };
      try {
        // The verifier writes in a repository of its own, which the worker's cannot name.
        const workspace = await VerifierWorkspace.create(repo, commit, {
          link: worktree.dependencyPaths,
        });
        if (typeof workspace === "string") return { kept: false, why: workspace, notes: [] };
        const isTest = (file: string) =>
          protectedRole(file, { protect: this.#protect, configFiles: [] }) === "test file";
        let failed: string | undefined;
        let written: Awaited<ReturnType<VerifierWorkspace["written"]>>;
        try {
          failed = await write(workspace.dir);
          written = await workspace.written(isTest);
        } finally {
          await workspace.remove();
        }
        const notes: string[] = [];
        if (failed) notes.push(failed);
        if (written.others.length > 0) {
          notes.push(`dropped what it changed outside test files: ${listPaths(written.others)}`);
        }
        if (written.files.length === 0) {
          return { kept: false, why: failed ?? "the verifier wrote no test file", notes };
        }
        // Copied into finishline's keeping the moment it stopped; claims run that copy.
        await this.#heldOutStore?.remove();
        this.#heldOutStore = await HeldOutStore.save(written.files);
        const files: HeldOutTest["files"] = written.files;
        // Only its tests, on the starting commit: a clean checkout, the files written back.
        const moved = await worktree.moveTo(commit);
        if (moved) return { kept: false, why: moved, notes };
        await writeFiles(worktree.dir, files);
        const runs = await worktree.run(this.#checks, { timeoutMs: this.#timeoutMs, signal });
        if (signal.aborted) return { kept: false, why: "stopped before it finished", notes };
        const baseline = await this.#baseline;
        const judged = judgeReproduction(runs, baseline?.error ? [] : baseline?.runs ?? []);
        if ("why" in judged) return { kept: false, why: judged.why, notes };
        return { kept: true, test: { files, ...judged }, notes };
      } finally {
        await worktree.remove();
      }
    })();
    return this.#reproduction;
  }

  /**
   * The reproduction, once judged.
   *
   * @returns It, or undefined when none was started.
   */
  async reproduction(): Promise<Reproduction | undefined> {
    return await this.#reproduction;
  }

  /**
   * Name the run that owns the gate's worktrees (see {@linkcode RepoChecksOptions.owner}),
   * when the gate was made before the run's id was known.
   *
   * @param runId The run.
   */
  ownedBy(runId: string): void {
    this.#owner = runId;
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
    this.#workerTestWhy = why;
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
    this.#reviewer = reviewer;
  }

  /**
   * Every review of declarations so far, in order (a claim answered from an
   * earlier review is not listed again).
   *
   * @returns The commit each review was of, and the declarations with their verdicts.
   */
  get reviews(): Array<{ commit: string; declarations: ReviewedDeclaration[] }> {
    return structuredClone(this.#reviewLog);
  }

  /**
   * Resolves once the clean copy is ready for the next claim: what the last
   * claim's checks wrote removed, and the build seed copied in again.
   *
   * @returns Resolves when nothing is being done to the clean copy.
   */
  async ready(): Promise<void> {
    await this.#queue;
    await this.#tidying;
  }

  /**
   * End of the run: stop the baseline, remove the baseline's worktree, its
   * build seed and the clean copy. A later check makes a new clean copy.
   *
   * @returns Resolves once nothing of the gate is left in `git worktree list`.
   */
  async close(): Promise<void> {
    await this.stopBaseline();
    await this.#reproduction?.catch(() => undefined);
    await this.#queue;
    await this.#tidying;
    this.#tidying = undefined;
    const copy = this.#copy;
    this.#copy = undefined;
    await copy?.remove();
    const seed = this.#seed;
    this.#seed = undefined;
    await seed?.remove();
    const heldOut = this.#heldOutStore;
    this.#heldOutStore = undefined;
    await heldOut?.remove();
    // The dependency folders' hashing (seconds after the start at most) reads no file after the end.
    await this.#start?.then((start) => start.dependencies.hashed(), () => {});
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
    return await this.#baseline;
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
      this.#onCheck = context.onCheck;
      try {
        return await this.#claim(context);
      } finally {
        this.#onCheck = undefined;
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
    const start = (await this.#start)!;
    const head = await repo.head();
    if (!head) {
      return this.#refuse({}, "Nothing is committed yet: commit your work, then claim it done");
    }
    const base = git.baseline ?? undefined;
    // Both read the agent's checkout only: side by side.
    const [uncommitted, plans] = await Promise.all([
      uncommittedChanges(repo, start.dirt),
      this.#planFolders(repo, start, base, head),
    ]);
    if (uncommitted.length > 0) {
      return this.#refuse(
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
      return this.#refuse(
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
        this.#confirmed,
      ]);
    if (this.#last?.key === key()) {
      this.#evidence = structuredClone(this.#last.evidence);
      return this.#last.result;
    }
    const result = await this.#check(context, { repo, head, plans, base });
    // What the checks wrote goes, and the build seed is copied in, while the agent works.
    const copy = this.#copy;
    if (copy && !context.signal?.aborted) this.#tidying = copy.tidy();
    // A review that could not be had is asked again at the next claim.
    const unreviewed = this.#evidence?.declarations?.some((entry) =>
      entry.verdict === "unreviewed"
    );
    if (this.#evidence && !context.signal?.aborted && !unreviewed) {
      this.#last = { key: key(), result, evidence: structuredClone(this.#evidence) };
    }
    return result;
  }

  /** A claim refused before any check ran. */
  #refuse(facts: Partial<ChecksEvidence>, feedback: string): TaskCompletionResult {
    this.#evidence = { passed: false, checks: [], outOfScope: [], testsChanged: [], ...facts };
    return incomplete(feedback);
  }

  /** How each dependency folder reaches the clean copy of `head`, and what the agent changed in it. */
  async #planFolders(
    repo: GitRepo,
    start: RunStart,
    base: string | undefined,
    head: string,
  ): Promise<FolderPlan[]> {
    const onPurpose = base ? await changedOnPurpose(repo, base, head) : new Map();
    const changes = await start.dependencies.changes(repo.root);
    const plans: FolderPlan[] = [];
    for (const folder of DEPENDENCY_FOLDERS) {
      const entries = start.dependencies.entries.filter((entry) => folderOf(entry) === folder);
      const linked = entries.length > 0;
      const changedFiles: string[] = onPurpose.get(folder.dir) ?? [];
      const install = folder.installable && changedFiles.length > 0 &&
        (linked || folder.dir === "node_modules");
      if (!linked && !install) continue;
      const within = (line: string) =>
        entries.some((entry) => line.startsWith(`${entry}/`) || line.startsWith(`${entry} (`));
      const listed = await repo.exec(["ls-tree", head, "--", ...folder.manifests]);
      plans.push({
        dir: folder.dir,
        install,
        changedFiles,
        changes: changes.filter(within),
        key: listed.stdout,
      });
    }
    return plans;
  }

  /**
   * The clean copy at `head`: made on the first claim, moved on later ones;
   * each dependency folder linked, or installed from the commit's lock file.
   */
  async #cleanCopy(
    claim: Claim,
  ): Promise<{ copy?: CheckWorktree; notes: string[]; problem?: string; changes?: string[] }> {
    const start = (await this.#start)!;
    await this.#tidying;
    this.#tidying = undefined;
    // The first claim moves the green baseline's worktree (moveTo cleans it as any move does).
    let copy = this.#copy ?? this.#baselineCopy;
    this.#baselineCopy = undefined;
    const seeded = copy?.seeded ?? false;
    if (copy && await copy.moveTo(claim.head)) {
      if (copy.finding) {
        this.#copy = copy;
        return { notes: [], problem: objectFinding(copy.finding) };
      }
      // Something broke the copy (its folder removed, say): a new one.
      await copy.remove();
      copy = undefined;
    }
    if (!copy) {
      const made = await CheckWorktree.create(claim.repo, claim.head, {
        dependencies: start.dependencies,
        owner: this.#owner,
      });
      if (typeof made === "string") {
        this.#copy = undefined;
        return {
          notes: [],
          problem: OBJECT_FINDING.test(made)
            ? objectFinding(made)
            : `finishline could not make its clean copy: ${made}`,
        };
      }
      copy = made;
    }
    this.#copy = copy;
    // The diffs read the starting commit from the copy's repository too.
    const base = this.#baselineCommit ?? claim.base;
    const fetched = base ? await copy.objects.fetch([base]) : undefined;
    if (fetched) return { copy, notes: [], problem: `finishline could not copy ${fetched}` };
    const binary = base ? await binarySources(copy.objects, base, claim.head) : [];
    if (binary.length > 0) return { copy, notes: [], problem: binaryFinding(binary) };
    const notes: string[] = [];
    const planted = copy.seeded ||
      (this.#seed?.usable === true && await copy.seedWith(this.#seed));
    if (!planted && (seeded || this.#seed)) {
      await this.#seed?.remove();
      this.#seed = undefined;
      notes.push(
        "finishline's copy of what the baseline built (target) changed after it was taken, or could not be copied: the checks built from nothing",
      );
    }
    // A folder installed for an earlier commit whose dependency change is gone since.
    for (const dir of [...copy.folders.keys()]) {
      if (!claim.plans.some((plan) => plan.dir === dir)) await copy.drop(dir);
    }
    for (const plan of claim.plans) {
      const note = pythonNote(plan);
      if (note) notes.push(note);
      if (!plan.install) {
        const failed = await copy.copyIn(plan.dir);
        if (failed) {
          return { copy, notes, problem: `finishline could not copy ${plan.dir}: ${failed}` };
        }
        continue;
      }
      const command = await nodeInstallCommand(copy.dir);
      const failed = await copy.install(plan.dir, command, {
        key: plan.key,
        timeoutMs: this.#timeoutMs,
      });
      if (!failed) {
        notes.push(
          `You changed ${
            listPaths(plan.changedFiles)
          }: the clean copy installed ${plan.dir} with \`${command.command}\` instead of linking the one found at the start`,
        );
        continue;
      }
      if (!failed.missing) {
        return {
          copy,
          notes,
          problem: `You changed ${
            listPaths(plan.changedFiles)
          }, so finishline installs ${plan.dir} from them in its clean copy of ${
            claim.head.slice(0, 12)
          }, and that failed: ${failed.detail}. Fix the dependency manifest and lock file, and commit them`,
        };
      }
      const linked = start.dependencies.entries.some((entry) =>
        folderOf(entry)?.dir === plan.dir
      ) &&
        await copy.copyIn(plan.dir) === undefined;
      notes.push(
        `You changed ${
          listPaths(plan.changedFiles)
        }, but finishline cannot install ${plan.dir} (${failed.detail}): the checks ran with ${
          linked ? `the ${plan.dir} found at the start` : `no ${plan.dir}`
        }`,
      );
      if (linked && plan.changes.length > 0) return { copy, notes, changes: plan.changes };
    }
    return { copy, notes };
  }

  async #check(
    context: TaskCompletionContext,
    claim: Claim | undefined,
  ): Promise<TaskCompletionResult> {
    const declared = declaredOutOfScope(context.completeTask);
    const setupStarted = performance.now();
    const prepared = claim ? await this.#cleanCopy(claim) : { notes: [] };
    const setupMs = Math.round(performance.now() - setupStarted);
    const notes = prepared.notes;
    const facts: Partial<ChecksEvidence> = {
      ...(claim ? { commit: claim.head, setupMs } : {}),
      ...(notes.length > 0 ? { dependencyNotes: notes } : {}),
    };
    if (prepared.changes) {
      return this.#refuse(
        { ...facts, dependencyChanges: prepared.changes },
        dependencyFeedback(prepared.changes, claim!.plans),
      );
    }
    if (prepared.problem) return this.#refuse(facts, prepared.problem);
    // Outside a repository there is no commit to copy: the working directory, as it is.
    const copy = prepared.copy;
    const cwd = copy?.dir ?? context.cwd;
    // The run's signal stops the checks: an interrupted run does not wait for its suite.
    const signal = context.signal;
    // What failed at the last claim runs first, alone: the agent hears at once when it still fails.
    const rerun = this.#failedLast.size > 0
      ? await this.#rerunFailed(cwd, declared, facts, signal)
      : undefined;
    if (rerun?.result) return rerun.result;
    // The protected files the claim changed are read from the agent's checkout while the
    // checks run in the clean copy (against the baseline's commit, as after them).
    const early = this.#baselineCommit ?? context.git?.baseline ?? undefined;
    const changedEarly = this.#changedTests(context, early, claim?.head);
    // The final state runs while a baseline still running finishes; the comparison waits for both.
    const runs: CheckRun[] = [];
    const tiers = splitTiers(this.#checks, this.#final);
    for (const check of tiers.perClaim) runs.push(await this.#runOne(check, cwd, signal));
    // The slow checks run once the others leave nothing to refuse: at the claim that completes.
    const due = tiers.final.length > 0 && finalDue(runs, declared);
    for (const check of due ? tiers.final : []) runs.push(await this.#runOne(check, cwd, signal));
    const ran = due ? [...tiers.perClaim, ...tiers.final] : tiers.perClaim;
    if (signal?.aborted) {
      await changedEarly.catch(() => undefined);
      return this.#refuse(facts, STOPPED);
    }
    const started = await (due ? this.#baseline : this.#claimBaseline ?? this.#baseline);
    // A baseline that could not run compares as none.
    const baseline = started?.error ? undefined : started;
    const base = baseline?.commit ?? context.git?.baseline ?? undefined;
    const views = await this.#views(baseline, runs);
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
      this.#failedLast = new Map(
        settled.flatMap(({ run }) =>
          run.green || run.failing.length === 0 ? [] : [[run.name, run.failing]]
        ),
      );
    }
    // The agent's tests ran: what they wrote into the copy's dependency folders is undone.
    const planted = claim && await this.#undoWrites(facts);
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
      const isTest = (file: string) =>
        protectedRole(file, { protect: this.#protect, configFiles: [] }) === "test file";
      const held = await this.#reproduction?.catch(() => undefined);
      const cases = await findSpecialCases(
        this.#copy?.objects ?? git.repo,
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
      evidence.canary = await runCanaries(copy.dir, this.#checks, {
        timeoutMs: this.#timeoutMs,
        signal,
      });
      const tampered = canaryProblem(evidence.canary);
      if (tampered) problems.push(tampered);
    }
    const reproduction = problems.length === 0 && claim
      ? await this.#reproduction?.catch(() => undefined)
      : undefined;
    let heldOutFailure: string | undefined;
    let dispute: Declaration | undefined;
    if (reproduction?.kept && claim && this.#copy) {
      const heldOut = await this.#heldOut(reproduction.test, claim, signal);
      const planted = await this.#undoWrites(facts);
      if (planted) return planted;
      evidence.heldOut = { tests: reproduction.test.tests, passed: heldOut.length === 0 };
      const disputed = context.completeTask?.held_out_wrong?.trim() || undefined;
      if (heldOut.length > 0) {
        heldOutFailure =
          `A held-out acceptance test, written from the task before you started and never shown to you, fails against your code: ${
            heldOut.join("; ")
          }. It checks the behaviour the task asks for: change the code so that it does what the task says, for every input, not only the ones your own tests use${
            this.#reviewer
              ? ". If you are sure the test contradicts the task, say why in complete_task held_out_wrong: a reviewer who sees the test decides"
              : ""
          }`;
        if (disputed && this.#reviewer) {
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
      original = originals.runs.filter((run) => !excused.has(run.name));
      const planted = await this.#undoWrites(facts);
      if (planted) return planted;
      const unfixed = [
        ...stillFailing(original, views),
        ...greenedByTests(
          originals.runs.filter((run) => excused.has(run.name)),
          settled.map((entry) => entry.run),
          views,
        ),
      ];
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
    if (problems.length === 0 && base && claim && this.#workerTestWhy) {
      const worker = await this.#workerTest(claim, base, testsChanged, settled, noTest, signal, {
        redFixed: fixedRedTests([...views.values()], original),
      });
      const planted = await this.#undoWrites(facts);
      if (planted) return planted;
      evidence.workerTest = worker.evidence;
      if (worker.problem) problems.push(worker.problem);
    }
    // Code that reads a test runner's signals behaves differently under test: the reviewer sees it.
    const signals = problems.length === 0 && base && claim
      ? await runnerSignals(
        claim.repo,
        { base, head: claim.head },
        (file) => protectedRole(file, { protect: this.#protect, configFiles: [] }) === "test file",
      )
      : [];
    if (signals.length > 0) evidence.runnerSignals = signals;
    if (problems.length === 0 && base && claim && this.#reviewer && !signal?.aborted) {
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
        const reviewed = await this.#review(claim, base, declarations, { focus, signal });
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
    if (signal?.aborted) return this.#refuse(facts, STOPPED);
    // Sent back to work: a red baseline runs again meanwhile, for the next claim to compare with.
    // A confirmation that fails (its worktree gone with the run) leaves the first baseline.
    if (problems.length > 0) this.confirmBaseline().catch(() => undefined);
    evidence.passed = problems.length === 0;
    this.#evidence = evidence;
    const noted = notes.length > 0 ? `\n\n${notes.join("\n")}` : "";
    return problems.length > 0
      ? incomplete(`${problems.join("\n\n")}${noted}`)
      : ok(`${passedText(evidence)}${checkedOn(claim)}${noted}`);
  }

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
  async #rerunFailed(
    cwd: string,
    declared: Map<string, string>,
    facts: Partial<ChecksEvidence>,
    signal: AbortSignal | undefined,
  ): Promise<{ result?: TaskCompletionResult; evidence: NonNullable<ChecksEvidence["rerun"]> }> {
    const evidence: NonNullable<ChecksEvidence["rerun"]> = [];
    const started = await this.#baseline;
    // Never waits for the baseline's second run: the views it has so far.
    const views = await this.#views(started?.error ? undefined : started, []);
    const read = (file: string) => Deno.readTextFile(`${cwd}/${file}`).catch(() => undefined);
    for (const check of this.#checks) {
      const tests = this.#failedLast.get(check.name);
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
      let run = await this.#runOne(narrowed, cwd, signal);
      let still = run.failing.filter((name) => tests.includes(name));
      const flakyBefore = new Set(before?.flakyTests ?? []);
      if (
        still.length > 0 && !signal?.aborted &&
        (before?.run.green || still.every((name) => flakyBefore.has(name)))
      ) {
        run = await this.#runOne(narrowed, cwd, signal);
        still = run.failing.filter((name) => tests.includes(name));
      }
      if (signal?.aborted) return { result: this.#refuse(facts, STOPPED), evidence };
      evidence.push({
        check: check.name,
        tests,
        outcome: rerunOutcome(run, still),
        command: filtered.command,
        ...(still.length > 0 ? { stillFailing: still } : {}),
        durationMs: run.durationMs,
      });
      if (still.length === 0) continue;
      const result = this.#refuse(
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

  /**
   * The baseline runs to compare with. A check red at the baseline and red
   * now makes the verdict depend on that red: the baseline's second run is
   * waited for. Otherwise it is used once it has run, and never waited for:
   * a passing claim is not held up to annotate its evidence.
   */
  async #views(
    baseline: BaselineResult | undefined,
    runs: CheckRun[],
  ): Promise<Map<string, BaselineView>> {
    const redAgain = runs.some((run) =>
      !run.green && baseline?.runs.some((before) => before.name === run.name && !before.green)
    );
    if (redAgain) await this.confirmBaseline();
    const views = new Map<string, BaselineView>();
    for (const first of baseline?.runs ?? []) {
      const second = baseline?.retries?.find((run) => run.name === first.name);
      if (!second) {
        views.set(first.name, { run: first });
        continue;
      }
      const again = new Set(second.failing);
      const flakyTests = first.failing.filter((test) => !again.has(test));
      // Red twice: every test that failed at either run was failing at the start.
      const failing = [...new Set([...first.failing, ...second.failing])];
      views.set(first.name, {
        run: second.green ? second : { ...second, failing },
        ...(second.green || flakyTests.length > 0 ? { flakyTests } : {}),
      });
    }
    return views;
  }

  /** Protected files the agent changed since `base`, with the reasons it declared. */
  async #changedTests(
    context: TaskCompletionContext,
    base: string | undefined,
    head: string | undefined,
  ): Promise<ChecksEvidence["testsChanged"]> {
    if (!context.git || !base) return [];
    // The claim's commit, read by hash in the clean copy's repository: no attribute hides a diff.
    const reader = head && this.#copy ? this.#copy.objects : context.git.repo;
    if (reader !== context.git.repo && await this.#copy!.objects.fetch([base])) return [];
    const changed = await changedProtectedFiles(reader, base, {
      protect: this.#protect,
      configFiles: this.#configFiles,
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
    const again = await this.#runOne(check, cwd, signal);
    return { run: again, flaky: again.green };
  }

  /** One check of the current claim, its start and end told to the claim's `onCheck`. */
  async #runOne(check: RepoCheck, cwd: string, signal: AbortSignal | undefined): Promise<CheckRun> {
    this.#onCheck?.(check.name, true);
    try {
      // In the clean copy, Python's bytecode goes to finishline's folder beside it.
      const pycache = this.#copy?.dir === cwd ? this.#copy.pycache : undefined;
      return await runRepoCheck(check, { cwd, timeoutMs: this.#timeoutMs, signal, pycache });
    } finally {
      this.#onCheck?.(check.name, false);
    }
  }

  /** Run the checks on the clean copy with the original test files put back. */
  /**
   * The held-out tests on the clean copy of the claim: its files added, the
   * checks that ran them run again. Returns the held-out tests that fail,
   * each with what its assertion said (never its code).
   */
  async #heldOut(
    test: HeldOutTest,
    claim: Claim,
    signal: AbortSignal | undefined,
  ): Promise<string[]> {
    const copy = this.#copy!;
    const kept = await this.#heldOutStore?.load() ?? test.files;
    if (typeof kept === "string") return [`it could not be run: ${kept}`];
    const moved = await copy.moveTo(claim.head);
    if (moved) return [`it could not be added to a copy of your commit (${moved})`];
    await writeFiles(copy.dir, kept);
    const checks = this.#checks.filter((check) => test.checks.includes(check.name));
    const runs = await copy.run(checks, {
      timeoutMs: this.#timeoutMs,
      signal,
      onCheck: this.#onCheck,
    });
    const failing: string[] = [];
    for (const run of runs) {
      if (run.green) continue;
      const named = run.failing.filter((name) => test.tests.includes(name));
      // A red run that names no test of its own may still be ours: the held-out names decide.
      const ours = named.length > 0 ? named : run.failing.length === 0 ? test.tests : [];
      if (ours.length === 0) continue;
      // Its name and the behaviour, never what its assertion printed: that would be an oracle.
      failing.push(heldOutFailures(ours));
    }
    // Held out again: the copy, which git worktree list shows, does not keep them.
    await copy.moveTo(claim.head);
    return failing;
  }

  /**
   * Put the clean copy's dependency folders back as they were copied, before
   * the next run of checks there: a test that wrote a shim into them (or
   * pnpm relinking `.bin`) reaches no later run. A claim is refused only when
   * that cannot be done.
   */
  async #undoWrites(facts: Partial<ChecksEvidence>): Promise<TaskCompletionResult | undefined> {
    const failed = await this.#copy?.resetDependencies();
    if (!failed) return undefined;
    return this.#refuse(
      facts,
      `finishline could not put the dependency folders of its clean copy back as they were before the next run of checks: ${failed}. Reinstall the dependencies as they were when the run started`,
    );
  }

  /**
   * The worker's own fail-to-pass test: its new or changed test files on a
   * clean copy of the starting commit, the checks run there, and the tests
   * that fail there and pass on the claim. Remembered by the files' content.
   */
  async #workerTest(
    claim: Claim,
    base: string,
    changes: ChecksEvidence["testsChanged"],
    settled: Array<{ run: CheckRun }>,
    noTest: string | undefined,
    signal: AbortSignal | undefined,
    known: { redFixed: string[] },
  ): Promise<{ evidence: WorkerTestEvidence; problem?: string }> {
    const required = this.#workerTestWhy!;
    const files = workerTestFiles(changes);
    const evidence: WorkerTestEvidence = { required, files, tests: [], passed: false };
    // The repository's own tests, red at the baseline and passing unchanged: the fix's evidence.
    const existing = () => ({
      evidence: { required, files: [], tests: known.redFixed, passed: true },
    });
    const ask = `add or change a test that fails on the starting commit (${
      base.slice(0, 12)
    }) and passes with your fix, and commit it`;
    const waived = () => {
      // The reviewer decides whether the reason stands.
      evidence.noTest = noTest;
      evidence.passed = true;
      return { evidence };
    };
    if (files.length === 0) {
      if (known.redFixed.length > 0) return existing();
      if (noTest) return waived();
      return {
        evidence,
        problem:
          `This run needs a test of the fix (${required}), and your commits add or change no test file: ${ask}. If no test can show the bug, say why in complete_task no_test; a reviewer decides whether the reason stands`,
      };
    }
    const listed = await this.#copy!.objects.exec(["ls-tree", claim.head, "--", ...files]);
    const key = `${base}\n${listed.stdout}`;
    let atStart = this.#workerTests.get(key);
    if (!atStart) {
      const ran = await this.#atStart(claim, base, files, signal);
      if (typeof ran === "string") {
        return { evidence, problem: `Your tests could not be run on the starting commit: ${ran}` };
      }
      atStart = ran;
      if (!signal?.aborted) this.#workerTests.set(key, atStart);
    }
    // Against this claim's runs: another commit with the same test files may pass other tests.
    evidence.tests = flippedTests(atStart, settled.map((entry) => entry.run));
    if (evidence.tests.length > 0) {
      // The reviewer decides whether what failed at the start is the bug.
      const said = atStart.flatMap((run) => run.green ? [] : assertionLines(run.tail, 3));
      if (said.length > 0) evidence.failedWith = said;
      evidence.passed = true;
      return { evidence };
    }
    if (known.redFixed.length > 0) return existing();
    if (noTest) return waived();
    return {
      evidence,
      problem:
        `This run needs a test of the fix (${required}). finishline ran your new or changed test files (${
          files.slice(0, 5).map((file) => `"${file}"`).join(", ")
        }) on the starting commit, without the rest of your change, and none of their tests failed there: they do not show the bug. ${
          ask[0].toUpperCase()
        }${
          ask.slice(1)
        }. If no test can show the bug, say why in complete_task no_test; a reviewer decides whether the reason stands`,
    };
  }

  /** The checks on a clean copy of `base` with the claim's versions of `files`; the copy goes back to the claim after. */
  async #atStart(
    claim: Claim,
    base: string,
    files: string[],
    signal: AbortSignal | undefined,
  ): Promise<CheckRun[] | string> {
    const copy = this.#copy!;
    try {
      const error = await copy.moveTo(base) ?? await copy.restore(claim.head, files);
      if (error) return error;
      return await copy.run(this.#checks, {
        timeoutMs: this.#timeoutMs,
        signal,
        onCheck: this.#onCheck,
      });
    } finally {
      await copy.moveTo(claim.head);
    }
  }

  /**
   * The declarations reviewed by the run's reviewer in the clean copy of the
   * claim, which goes back to the commit afterwards. Remembered by commit and
   * declarations; a review that failed is asked again at the next claim.
   */
  async #review(
    claim: Claim,
    base: string,
    declarations: Declaration[],
    options: { focus: string[]; signal: AbortSignal | undefined },
  ): Promise<ReviewedDeclaration[]> {
    const { signal } = options;
    const key = JSON.stringify([claim.head, declarations]);
    const known = this.#reviews.get(key);
    if (known) return structuredClone(known);
    const copy = this.#copy!;
    const diff = await reviewDiff(copy.objects, claim, base, options.focus);
    let reviewed: ReviewedDeclaration[];
    try {
      const moved = await copy.moveTo(claim.head);
      const answer = moved ? { failed: `no clean copy to review in (${moved})` } : await this
        .#reviewer!({
          dir: copy.dir,
          base,
          head: claim.head,
          diff: cutDiff(diff),
          declarations,
          signal,
        }).catch((error) => ({ failed: `the reviewer failed: ${String(error)}` }));
      reviewed = applyVerdicts(declarations, answer);
    } finally {
      await copy.moveTo(claim.head);
    }
    if (reviewed.every((entry) => entry.verdict !== "unreviewed")) {
      this.#reviews.set(key, structuredClone(reviewed));
    }
    this.#reviewLog.push({ commit: claim.head, declarations: structuredClone(reviewed) });
    return reviewed;
  }

  async #originals(
    claim: Claim,
    base: string,
    changed: Array<{ path: string; from?: string }>,
    outOfScope: Map<string, string>,
    options: { signal: AbortSignal | undefined; splices: RedTestChange[] },
  ): Promise<{ passed: boolean; detail: string; runs: CheckRun[] }> {
    const { signal, splices } = options;
    const copy = this.#copy!;
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
    // The checks declared out of scope run too: their failures there are excused, but a test
    // the claim's own test changes turned from red to green is not (greenedByTests).
    const runs = await copy.run(this.#checks, {
      timeoutMs: this.#timeoutMs,
      signal,
      onCheck: this.#onCheck,
    });
    const failed = runs.find((run) => !run.green && !outOfScope.has(run.name));
    return failed
      ? { passed: false, detail: `: "${failed.name}"${describeRun(failed)}`, runs }
      : { passed: true, detail: "", runs };
  }
}

const STOPPED = "The checks were stopped before they finished: the run is ending";

/**
 * The worker's dispute of a failing held-out test, for the reviewer: the
 * tests, what they asserted, and their code (the worker never sees it; the
 * reviewer must, to judge the test against the task).
 */
function heldOutDispute(test: HeldOutTest, failing: string[], reason: string): Declaration {
  const code = test.files.map((file) => `--- ${file.path}\n${file.content.slice(0, 4000)}`)
    .join("\n");
  return {
    kind: "held_out_wrong",
    subject: test.tests.join(", "),
    reason,
    facts:
      `a held-out acceptance test, written by a verifier from the task before the work began, fails against the new code: ${
        failing.join("; ")
      }. Its code (never shown to the worker):\n${code}`,
  };
}

/**
 * The declarations a passing verdict relies on: every check accepted as out
 * of scope; the declared test changes when the verdict would not stand
 * without them (`without`: the rules find problems once no change is
 * declared, or the original versions fail); a `no_test` that stands in for
 * the worker's test.
 */
function reliedOn(
  evidence: ChecksEvidence,
  options: {
    without: boolean;
    declared: NonNullable<CompleteTaskCall["tests_changed"]>;
    summary: string;
  },
): Declaration[] {
  const declarations: Declaration[] = [];
  for (const entry of evidence.outOfScope) {
    const check = evidence.checks.find((found) => found.name === entry.check);
    declarations.push({
      kind: "out_of_scope",
      subject: entry.check,
      reason: entry.reason,
      facts: `"${entry.check}" failed on the starting commit${
        check?.baselineFailing?.length ? ` (failing: ${nameList(check.baselineFailing)})` : ""
      } and still fails${check?.failing.length ? ` (failing: ${nameList(check.failing)})` : ""}`,
    });
  }
  if (options.without || evidence.originalsPass === false) {
    // A declaration naming a file the commits did not change still made the rules let it pass.
    const changed = new Set(evidence.testsChanged.map((entry) => entry.path));
    for (const entry of options.declared) {
      if (!entry?.reason?.trim() || changed.has(entry.path)) continue;
      declarations.push({
        kind: "tests_changed",
        subject: entry.path,
        reason: entry.reason.trim(),
        facts:
          `"${entry.path}" is not among the test or runner files the worker's commits changed, yet the claim runs fewer tests or sets tests aside, and passes only with a declared change`,
      });
    }
    for (const entry of evidence.testsChanged) {
      if (!entry.reason) continue;
      declarations.push({
        kind: "tests_changed",
        subject: entry.path,
        reason: entry.reason,
        facts: `"${entry.path}" was ${entry.change}${
          entry.from ? ` from "${entry.from}"` : ""
        } (protected: ${entry.why ?? "test file"}); the original versions of the changed files ${
          evidence.originalsPass === false ? "fail" : "pass"
        } against the new code`,
      });
    }
  }
  const worker = evidence.workerTest;
  // A test the repository already had, red at the baseline, is finishline's own evidence.
  if (worker && worker.tests.length > 0 && worker.files.length > 0 && !worker.noTest) {
    declarations.push({
      kind: "worker_test",
      subject: worker.tests.join(", "),
      reason: options.summary.trim() || "(the worker's summary is empty)",
      facts: `the run needs a test that shows the bug (${worker.required}). The worker's ${
        worker.tests.length === 1 ? "test" : "tests"
      } in ${
        worker.files.map((file) => `"${file}"`).join(", ")
      } failed on the starting commit, run there with only its test files${
        worker.failedWith?.length ? ` (${worker.failedWith.join(" ")})` : ""
      }, and pass on the claim. Accept only when that failure at the start is the bug the task describes, not something else the worker's change adds (a file, a module, a field, a setting) or a test that is flaky`,
    });
  }
  if (worker?.noTest) {
    declarations.push({
      kind: "no_test",
      subject: "the task",
      reason: worker.noTest,
      facts: `the run needs a test of the fix (${worker.required}); ${
        worker.files.length === 0
          ? "the worker added or changed no test file"
          : `none of the tests in ${
            worker.files.map((file) => `"${file}"`).join(", ")
          } fails on the starting commit`
      }`,
    });
  }
  return declarations;
}

/** The gate's rules on every check, from the settled runs and the baseline: no I/O, so it can run twice. */
function judgeAll(
  settled: Array<{ run: CheckRun; flaky: boolean }>,
  views: Map<string, BaselineView>,
  declared: Map<string, string>,
  changes: {
    undeclared: ChecksEvidence["testsChanged"];
    changedCount: number;
    declarations?: CompleteTaskCall["tests_changed"];
  },
): { checks: CheckEvidence[]; outOfScope: ChecksEvidence["outOfScope"]; problems: string[] } {
  const { undeclared, changedCount, declarations } = changes;
  const checks: CheckEvidence[] = [];
  const outOfScope: ChecksEvidence["outOfScope"] = [];
  const problems: string[] = [];
  for (const { run, flaky } of settled) {
    const view = views.get(run.name);
    const before = view?.run;
    checks.push({
      ...checkEvidence(run, before, flaky),
      ...(view?.flakyTests ? { baselineFlaky: view.flakyTests } : {}),
    });
    const judged = judgeRun(run, before, declared.get(run.name));
    if (judged.problem) problems.push(judged.problem);
    if (judged.outOfScope) outOfScope.push(judged.outOfScope);
    const fewer = fewerTests(run, before, undeclared, changedCount, declarations);
    if (fewer) problems.push(fewer);
  }
  return { checks, outOfScope, problems };
}

/**
 * The checks whose tests failed at the baseline and still fail in the
 * original versions of the changed tests, against the agent's code: red was
 * turned green by changing tests, not code. A check whose runner does not
 * name its tests counts when it was red at the baseline and is red again.
 */
function stillFailing(originals: CheckRun[], views: Map<string, BaselineView>): string[] {
  const found: string[] = [];
  for (const run of originals) {
    const before = views.get(run.name)?.run;
    if (run.green || !before || before.green) continue;
    if (before.failing.length === 0 || run.failing.length === 0) {
      found.push(`"${run.name}" failed before your changes and still fails`);
      continue;
    }
    const earlier = new Set(before.failing);
    const still = run.failing.filter((name) => earlier.has(name));
    if (still.length > 0) found.push(`"${run.name}": ${nameList(still)}`);
  }
  return found;
}

/**
 * In the checks declared out of scope (red at the baseline, and excused for
 * the failures that were there), the tests that failed at the baseline,
 * pass in the claim, and fail again in their original versions against the
 * claim's code: the claim's test changes, not its code, turned them green.
 * The declaration excuses tests left failing, never tests made to pass by
 * weakening them. A check whose runner does not name its tests counts when
 * it is green in the claim and red in the original versions.
 */
function greenedByTests(
  originals: CheckRun[],
  claimed: CheckRun[],
  views: Map<string, BaselineView>,
): string[] {
  const found: string[] = [];
  for (const run of originals) {
    const before = views.get(run.name)?.run;
    const now = claimed.find((entry) => entry.name === run.name);
    if (run.green || !before || before.green || !now) continue;
    if (before.failing.length === 0 || run.failing.length === 0) {
      if (now.green) found.push(`"${run.name}" failed before your changes and still fails`);
      continue;
    }
    const earlier = new Set(before.failing);
    const failingNow = new Set(now.failing);
    const greened = run.failing.filter((name) => earlier.has(name) && !failingNow.has(name));
    if (greened.length > 0) found.push(`"${run.name}": ${nameList(greened)}`);
  }
  return found;
}

/** Writes files under `root`, making their folders. */
async function writeFiles(root: string, files: Array<{ path: string; content: string }>) {
  for (const file of files) {
    const target = `${root}/${file.path}`;
    await Deno.mkdir(target.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(target, file.content);
  }
}

/** Files the agent changed and did not commit: uncommitted now, and not as they were at the start. */
async function uncommittedChanges(repo: GitRepo, dirt: Map<string, string>): Promise<string[]> {
  const now = await repo.snapshot();
  if (!now) return [];
  return [...now].filter(([file, signature]) => dirt.get(file) !== signature).map(([file]) => file);
}

/**
 * The diff a reviewer reads: its summary, then the test and runner files
 * the claim changed, then the rest, so that padding the change cannot push
 * the files a declaration is about out of what the prompt holds.
 */
async function reviewDiff(
  reader: GitReader,
  claim: Claim,
  base: string,
  focus: string[],
): Promise<string> {
  const diff = async (args: string[]) => {
    const result = await reader.exec(["diff", "--no-color", ...args]);
    return result.code === 0 ? result.stdout : `(git diff failed: ${result.stderr.trim()})`;
  };
  const paths = [...new Set(focus)];
  const parts = [await diff(["--stat", base, claim.head])];
  if (paths.length > 0) {
    parts.push(await diff([base, claim.head, "--", ...paths.map((file) => `:(literal)${file}`)]));
  }
  parts.push(
    await diff([
      base,
      claim.head,
      "--",
      ".",
      ...paths.map((file) => `:(literal,exclude)${file}`),
    ]),
  );
  return parts.filter((part) => part.trim() !== "").join("\n");
}

/** What the feedback says when the agent changed a file of a dependency folder. */
function dependencyFeedback(changes: string[], plans: FolderPlan[]): string {
  const shown = changes.slice(0, 10).join(", ");
  const more = changes.length > 10 ? ` and ${changes.length - 10} more` : "";
  const notes = plans.flatMap((plan) => pythonNote(plan) ?? []);
  return `You changed ${shown}${more}; dependency folders are not yours to change. finishline compares every file of the ones it found at the start with how they were then, and its clean copy has them as they were then, so the checks did not run. Undo the changes (reinstall the dependencies as they were), or, to change the dependencies on purpose, commit the change to the manifest and lock file (package.json and package-lock.json, for example): finishline then installs from them${
    notes.length > 0 ? `\n\n${notes.join("\n")}` : ""
  }`;
}

/** The note for a Python or vendor folder whose requirements changed: it cannot be installed here. */
function pythonNote(plan: FolderPlan): string | undefined {
  if (plan.install || plan.changedFiles.length === 0) return undefined;
  return `You changed ${
    listPaths(plan.changedFiles)
  }, but finishline cannot install ${plan.dir} offline: the checks run with the ${plan.dir} found at the start`;
}

/** Where a passing gate ran, for the agent. */
function checkedOn(claim: Claim | undefined): string {
  return claim ? ` (on a clean copy of ${claim.head.slice(0, 12)})` : "";
}

function listPaths(paths: string[]): string {
  const shown = paths.slice(0, 8).map((file) => `"${file}"`).join(", ");
  return paths.length > 8 ? `${shown} and ${paths.length - 8} more` : shown;
}

function declaredOutOfScope(call: CompleteTaskCall | undefined): Map<string, string> {
  const declared = new Map<string, string>();
  for (const entry of call?.out_of_scope ?? []) {
    if (entry?.check && entry.reason?.trim()) declared.set(entry.check, entry.reason.trim());
  }
  return declared;
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

/** Tests failing now that were not failing at the baseline (none known without a baseline). */
function newFailures(run: CheckRun, before: CheckRun | undefined): string[] {
  if (!before) return [];
  const earlier = new Set(before.failing);
  return run.failing.filter((name) => !earlier.has(name));
}

/** A check's run now, against its run at the baseline. */
function checkEvidence(run: CheckRun, before: CheckRun | undefined, flaky: boolean): CheckEvidence {
  return {
    name: run.name,
    baseline: before ? (before.green ? "green" : "red") : "unknown",
    now: run.green ? "green" : "red",
    failing: run.failing,
    ...(before && !before.green ? { baselineFailing: before.failing } : {}),
    ...(run.testsRun !== undefined ? { testsRun: run.testsRun } : {}),
    ...(before?.testsRun !== undefined ? { baselineTestsRun: before.testsRun } : {}),
    ...(run.counts !== undefined ? { counts: run.counts } : {}),
    ...(before?.counts !== undefined ? { baselineCounts: before.counts } : {}),
    durationMs: run.durationMs,
    ...(flaky ? { flaky } : {}),
  };
}

/**
 * The gate's rules for one red check: green at the baseline must stay green;
 * red must turn green unless declared out of scope, and the declaration
 * covers only the failures that were there before. The feedback tells the
 * failures the agent's changes caused from those that were there before.
 */
function judgeRun(
  run: CheckRun,
  before: CheckRun | undefined,
  declaredReason: string | undefined,
): { problem?: string; outOfScope?: { check: string; reason: string } } {
  if (run.green) return {};
  const name = run.name;
  if (before?.green) {
    return {
      problem: `"${name}" passed before your changes and fails now${describeRun(run, before)}`,
    };
  }
  const fresh = newFailures(run, before);
  if (declaredReason && fresh.length > 0) {
    return {
      problem: `"${name}" was declared out of scope, but it now also fails in ${
        nameList(fresh)
      }, which ${fresh.length === 1 ? "was" : "were"} not failing before your changes: fix ${
        fresh.length === 1 ? "it" : "them"
      }${describeRun(run, before)}`,
    };
  }
  if (declaredReason) return { outOfScope: { check: name, reason: declaredReason } };
  return {
    problem: `"${name}" fails${
      before
        ? " (it failed before your changes too: fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason)"
        : ""
    }${describeRun(run, before)}`,
  };
}

/** The kinds of tests set aside, as the feedback names them. */
const SET_ASIDE = ["skipped", "ignored", "todo"] as const;

/**
 * Fewer tests run, or more skipped, ignored or todo, than at the baseline is
 * never silent, whatever the exit code and the baseline's colour: turning a
 * failing test into a skipped one is how a suite is made to pass without a fix.
 * It stands only when every changed protected file is declared in
 * tests_changed and the agent declared a change (protected or not: inline
 * tests live in source files), and never when the tests set aside are ones
 * that failed at the baseline.
 */
function fewerTests(
  run: CheckRun,
  before: CheckRun | undefined,
  undeclared: ChecksEvidence["testsChanged"],
  changedCount: number,
  declarations: CompleteTaskCall["tests_changed"] = [],
): string | undefined {
  // Runs recorded before counts existed carry only testsRun.
  const now: TestCounts = run.counts ?? { run: run.testsRun };
  const then: TestCounts = before?.counts ?? { run: before?.testsRun };
  const changes: string[] = [];
  if (now.run !== undefined && then.run !== undefined && now.run < then.run) {
    changes.push(
      `ran ${now.run} ${
        now.run === 1 ? "test" : "tests"
      }, fewer than the ${then.run} before your changes`,
    );
  }
  for (const kind of SET_ASIDE) {
    const count = now[kind];
    const earlier = then[kind];
    if (count === undefined || earlier === undefined || count <= earlier) continue;
    changes.push(
      `reports ${count - earlier} more ${kind} than before your changes (${count}, not ${earlier})`,
    );
  }
  if (changes.length === 0) return undefined;
  const earlierSet = new Set(before?.skippedTests ?? []);
  const newlySet = (run.skippedTests ?? []).filter((name) => !earlierSet.has(name));
  const wereFailing = new Set(before?.failing ?? []);
  const failedBefore = newlySet.filter((name) => wereFailing.has(name));
  const declared = declarations.some((entry) => entry?.reason?.trim());
  // A failing test set aside is not fixed: no declaration makes it so.
  if (failedBefore.length > 0 && undeclared.length === 0) {
    return `"${run.name}" ${changes.join(", and ")}: ${
      nameList(failedBefore)
    } failed before your changes and ${
      failedBefore.length === 1 ? "is" : "are"
    } now set aside. Skipping or ignoring a failing test does not fix it, declared or not: remove the skip and fix the code`;
  }
  if (undeclared.length === 0 && (changedCount > 0 || declared)) return undefined;
  const named = newlySet.length === 0
    ? ""
    : `. Newly set aside: ${nameList(newlySet)}${
      failedBefore.length === 0
        ? ""
        : failedBefore.length === newlySet.length
        ? `, all failing before your changes`
        : `; of these, ${nameList(failedBefore)} failed before your changes`
    }`;
  const head = `"${run.name}" ${changes.join(", and ")}${named}`;
  if (undeclared.length > 0) {
    return `${head}; you changed ${listChanges(undeclared)}: restore ${
      undeclared.length === 1 ? "it" : "them"
    }, or declare each change in complete_task tests_changed with a reason`;
  }
  return `${head}. Tests that ran before your changes must run and pass now: fix the code rather than setting tests aside; if a test really has to go, declare the change in complete_task tests_changed (the file and a reason)`;
}

function listChanges(changes: ChecksEvidence["testsChanged"]): string {
  return changes.map((entry) =>
    `"${entry.path}" (${entry.change}${entry.from ? ` from "${entry.from}"` : ""}${
      entry.why ? `, ${entry.why}` : ""
    })`
  ).join(", ");
}

/** What a passing gate tells the agent. */
function passedText(evidence: ChecksEvidence): string {
  const passed = evidence.checks.filter((check) => check.now === "green").map((check) =>
    `"${check.name}"${check.flaky ? " (after a retry: it failed once)" : ""}`
  );
  const parts = passed.length > 0 ? [`${passed.join(", ")} passed`] : [];
  for (const entry of evidence.outOfScope) {
    parts.push(`"${entry.check}" still fails, declared out of scope: ${entry.reason}`);
  }
  return parts.join("; ") || "no checks ran";
}
