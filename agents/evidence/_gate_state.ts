/**
 * What the gate keeps for a run, shared by its phases: its settings, the
 * record of the repository at the start, the baseline and its worktrees, the
 * clean copy, the held-out test, the reviews, and the last claim's evidence.
 * One object that each phase of the gate (the start, the baseline, a claim's
 * run, its findings, the review) reads and updates, as the loop's phases
 * share `RunState`.
 *
 * @module
 */

import type { ChecksEvidence, ReviewedDeclaration } from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import { incomplete, type TaskCompletionResult } from "../checks/checker_contract.ts";
import { type CheckRun, type RepoCheck, runRepoCheck } from "./run/check_run.ts";
import type { DependencySnapshot } from "./copy/dependency_tree.ts";
import type { DeclarationReviewer } from "./judge/declarations.ts";
import type { ChangedLinesConfig } from "../definition/definition_types.ts";
import { protectedRole } from "./judge/protected_files.ts";
import type { HeldOutStore } from "./held_out/held_out_store.ts";
import type { Reproduction } from "./held_out/reproduction.ts";
import type { CheckWorktree } from "./copy/worktree_run.ts";
import type { BaselineResult } from "./run/baseline_result.ts";
import type { BuildSeed } from "./copy/build_seed.ts";

/** The repository as the run found it. */
export interface RunStart {
  /** Uncommitted files already there, with their signatures: not the agent's. */
  dirt: Map<string, string>;
  /** The dependency folders copied into worktrees, every file listed and hashed. */
  dependencies: DependencySnapshot;
}

/** How one dependency folder reaches the clean copy of a commit. */
export interface FolderPlan {
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
export interface Claim {
  repo: GitRepo;
  head: string;
  plans: FolderPlan[];
  /** The run's starting commit, as the loop knows it. */
  base?: string;
}

/** The gate's settings, defaults applied (see `RepoChecksOptions`). */
export interface GateSettings {
  /** The checks. */
  checks: RepoCheck[];
  /** Timeout of one check in milliseconds. */
  timeoutMs: number;
  /** Globs of the files that define done. */
  protect: string[];
  /** Files that define the checks, protected too. */
  configFiles: string[];
  /** The run that owns the gate's worktrees. */
  owner: string | undefined;
  /** Names of the checks that run once, before the run ends. */
  final: Set<string>;
  /** Proof of the change at the claim that completes, when measured. */
  changedLines?: ChangedLinesConfig;
}

/** How many seeds of claims' changed build definitions are kept (each a build folder's copy). */
export const CLAIM_SEEDS = 2;

/** The state of one gate, shared by its phases. */
export class GateState {
  /** The checks, in order. */
  readonly checks: RepoCheck[];
  /** Timeout of one check in milliseconds. */
  readonly timeoutMs: number;
  /** Globs of the files that define done. */
  readonly protect: string[];
  /** Files that define the checks, protected too. */
  readonly configFiles: string[];
  /** The run that owns the gate's worktrees, once known. */
  owner: string | undefined;
  /** The repository as the run found it, once recorded. */
  start: Promise<RunStart> | undefined;
  /** The baseline, once started. */
  baseline: Promise<BaselineResult> | undefined;
  /** The baseline of the per-claim checks: resolves before the final checks' baseline runs. */
  claimBaseline: Promise<BaselineResult> | undefined;
  /** Names of the checks that run once, before the run ends. */
  readonly final: Set<string>;
  /** Proof of the change (`verify.changedLines`), when measured. */
  readonly changedLines: ChangedLinesConfig | undefined;
  /** The baseline's worktree, kept until its red checks ran a second time. */
  baselineWorktree: CheckWorktree | undefined;
  /**
   * Makes the copy the baseline's red checks run again in, when the
   * baseline's worktree became the clean copy (its build folders kept).
   */
  confirmCopy: (() => Promise<CheckWorktree | string>) | undefined;
  /** The second run of the baseline's red checks, once started. */
  confirmation: Promise<void> | undefined;
  /** Whether that second run is over (or there was nothing to run again). */
  confirmed = false;
  /** Stops the baseline, its second run and the reproduction's checks. */
  readonly stopBaseline: AbortController = new AbortController();
  /** The one clean copy of a run, moved from commit to commit. */
  copy: CheckWorktree | undefined;
  /** The clean copy made ready for the next claim, after the last one's checks. */
  tidying: Promise<void> | undefined;
  /** The commit the baseline checks run at, once started. */
  baselineCommit: string | undefined;
  /**
   * A green baseline's worktree (or a red one whose build folders the seed
   * holds), kept to become the clean copy at the first
   * claim: at the path the baseline built in, a compiler's incremental cache
   * (rustc's names the source files by their full path) serves the claims.
   */
  baselineCopy: CheckWorktree | undefined;
  /** What the baseline built (Cargo's `target`), the clean copy's start at every move. */
  seed: BuildSeed | undefined;
  /**
   * The seeds of claims' changed build definitions (`copy/claim_seed.ts`),
   * the latest last; at most {@linkcode CLAIM_SEEDS} are kept.
   */
  readonly claimSeeds: BuildSeed[] = [];
  /** The seed commits whose build failed: not built again. */
  readonly unbuiltSeeds: Set<string> = new Set();
  /** The held-out test's files, kept with their hashes since the verifier stopped. */
  heldOutStore: HeldOutStore | undefined;
  /** Who is told which check of the current claim runs (its context's `onCheck`). */
  onCheck: ((name: string, running: boolean) => void) | undefined;
  /** The evidence of the latest check. */
  evidence: ChecksEvidence | undefined;
  /** The verifier's reproduction test, once judged. */
  reproduction: Promise<Reproduction> | undefined;
  /** Why the worker's own fail-to-pass test is required, when it is. */
  workerTestWhy: string | undefined;
  /** The checks on the starting commit with each set of the worker's test files. */
  readonly workerTests: Map<string, CheckRun[]> = new Map();
  /** Reviews declarations; without one they stand as declared. */
  reviewer: DeclarationReviewer | undefined;
  /** The reviews already had, by commit and declarations. */
  readonly reviews: Map<string, ReviewedDeclaration[]> = new Map();
  /** Every review of the run, in order, for the report. */
  readonly reviewLog: Array<{ commit: string; declarations: ReviewedDeclaration[] }> = [];
  /** The failing tests of the last claim the full suite ran on, by check: re-run first at the next. */
  failedLast: Map<string, string[]> = new Map();

  /**
   * A gate's state before anything ran.
   *
   * @param settings The checks, their timeout, the protected files and the owner.
   */
  constructor(settings: GateSettings) {
    this.checks = settings.checks;
    this.timeoutMs = settings.timeoutMs;
    this.protect = settings.protect;
    this.configFiles = settings.configFiles;
    this.owner = settings.owner;
    this.final = settings.final;
    this.changedLines = settings.changedLines;
  }

  /**
   * Whether `file` is a test file by the protected files' rules (the
   * configuration files aside).
   *
   * @param file A path in the repository.
   * @returns True for a test file.
   */
  isTest(file: string): boolean {
    return protectedRole(file, { protect: this.protect, configFiles: [] }) === "test file";
  }

  /** A claim refused before any check ran. */
  refuse(facts: Partial<ChecksEvidence>, feedback: string): TaskCompletionResult {
    this.evidence = { passed: false, checks: [], outOfScope: [], testsChanged: [], ...facts };
    return incomplete(feedback);
  }

  /** One check of the current claim, its start and end told to the claim's `onCheck`. */
  async runOne(check: RepoCheck, cwd: string, signal: AbortSignal | undefined): Promise<CheckRun> {
    this.onCheck?.(check.name, true);
    try {
      // In the clean copy, Python's bytecode and the kept build folders are finishline's, beside it.
      const copy = this.copy?.dir === cwd ? this.copy : undefined;
      return await runRepoCheck(check, {
        cwd,
        timeoutMs: this.timeoutMs,
        signal,
        pycache: copy?.pycache,
        buildDir: await copy?.buildFolder(check),
      });
    } finally {
      this.onCheck?.(check.name, false);
    }
  }

  /**
   * Put the clean copy's dependency folders back as they were copied, before
   * the next run of checks there: a test that wrote a shim into them (or
   * pnpm relinking `.bin`) reaches no later run. A claim is refused only when
   * that cannot be done.
   */
  async undoWrites(facts: Partial<ChecksEvidence>): Promise<TaskCompletionResult | undefined> {
    const failed = await this.copy?.resetDependencies();
    if (!failed) return undefined;
    return this.refuse(
      facts,
      `finishline could not put the dependency folders of its clean copy back as they were before the next run of checks: ${failed}. Reinstall the dependencies as they were when the run started`,
    );
  }
}
