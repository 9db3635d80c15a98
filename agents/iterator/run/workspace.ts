/**
 * Open once: the place a run works in — the working directory and its
 * repository, the run history, the log and report paths, the worktree — and
 * the run's record in the history (new, or resumed).
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import { firstLine, UsageError } from "../../support/errors.ts";
import { type GitFault, GitRepo } from "../../git/repo.ts";
import { GitSettingsGuard } from "../../git/settings.ts";
import { trustGitConfig } from "../../git/run_git.ts";
import { RunLog } from "../../support/log.ts";
import type { SqliteStore } from "../../store/mod.ts";
import { createWorktree, type Worktree, WORKTREES_DIR } from "../../git/worktree.ts";
import type { FinishSettings } from "../../finish/workflow.ts";
import type { RunPlan } from "./plan.ts";
import { openStore } from "../places.ts";
import { pathExists } from "../../support/resource.ts";
import { missingFolders, removeEmpty } from "./locks.ts";

/**
 * What the finish needs to clean up and to ask its model, recorded at the
 * start so a later `finish RUN_ID` can too.
 */
export type CleanupFacts = {
  /** The issue of an issue run. */
  issue?: number;
  /** `--repo`. */
  repo?: string;
  /** The labels the issue handler manages. */
  labels?: { inProgress?: string; blocked?: string };
  /** The worktree of a `--worktree` run. */
  worktreePath?: string;
  /** Its branch. */
  worktreeBranch?: string;
  /** The repository the worktree belongs to. */
  mainRepo?: string;
  /**
   * The files uncommitted when the run started (path → size and time), the
   * user's work in progress: the report keeps them apart from what the run left.
   */
  dirtyAtStart?: Record<string, string>;
  /** The finish workflow's model settings (agent.json's `finish`) and the run's budget. */
  finish?: FinishSettings;
};

/** Where a run works and what it writes to. */
export interface Workspace {
  /** The run history. */
  store: SqliteStore;
  /** The JSONL log. */
  log: RunLog;
  /** The Markdown report's path. */
  reportFile: string;
  /** The worktree, with `--worktree`. */
  worktree?: Worktree;
  /** Where the agent works: the worktree, or the working directory. */
  workDir: string;
  /** The repository the agent works in; absent outside one. */
  git?: GitRepo;
  /** finishline's own paths, kept out of the agent's git evidence. */
  ignorePaths: string[];
  /** The commit the run started from. */
  baseline: string | null;
  /** What the finish cleans up. */
  cleanup: CleanupFacts;
  /** The files uncommitted when the run started: the user's, not the run's. */
  dirtyAtStart: Record<string, string>;
  /** The first write to the history that failed during the run (locked, read-only). */
  storeFault?: string;
  /** This process's segment of the run (its start, or a resume), once recorded. */
  segment?: { number: number; afterIteration: number };
  /** The repository's git settings as the run found them, restored at its end. */
  gitSettings?: GitSettingsGuard;
  /** The log folder's real path when the log was opened: the report goes there only. */
  logDirReal?: string;
}

/**
 * Open the run's workspace: the history (created now that the input is known
 * to be good), the log, the worktree, and the run's record.
 *
 * @param plan The prepared run.
 * @param stderr Notes for the user.
 * @returns The workspace.
 */
export async function openWorkspace(
  plan: RunPlan,
  stderr: (text: string) => void,
): Promise<Workspace> {
  const freshStore = !plan.store && !(await pathExists(plan.storeFile));
  const logFolders = await missingFolders(plan.logDir);
  const worktreeFolders = plan.mainRepo
    ? await missingFolders(join(plan.mainRepo.root, WORKTREES_DIR))
    : [];
  const opened: { log?: RunLog } = {};
  try {
    return await openSteps(plan, stderr, opened);
  } catch (error) {
    // A run that never started (a base branch that is no branch, a worktree git
    // could not make) leaves nothing of its own: no history, no log.
    opened.log?.close();
    if (opened.log) await Deno.remove(opened.log.path).catch(() => {});
    await removeEmpty(logFolders);
    await removeEmpty(worktreeFolders);
    if (freshStore && plan.store) {
      plan.store.close();
      plan.store = undefined;
      for (const suffix of ["", "-wal", "-shm", "-journal", "-reserve"]) {
        await Deno.remove(`${plan.storeFile}${suffix}`).catch(() => {});
      }
    }
    throw error;
  }
}

async function openSteps(
  plan: RunPlan,
  stderr: (text: string) => void,
  opened: { log?: RunLog },
): Promise<Workspace> {
  const { definition, mainRepo, cwd, runId } = plan;
  const store = plan.store ??
    openStore(plan.storeFile, cwd, { embeddings: definition.learnings.embeddings, stderr });
  plan.store = store;
  checkWritable(store);
  const logDir = plan.logDir;
  // Before any of finishline's git calls of this run, and before the agent works:
  // the program settings of the repository's config now are the user's.
  if (mainRepo) await trustGitConfig(mainRepo.root);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const ignorePaths = mainRepo
    ? finishlinePaths(mainRepo.root, [
      logDir,
      join(mainRepo.root, WORKTREES_DIR),
      dirname(store.path),
    ])
    : [];
  if (mainRepo) await excludeFromGit(mainRepo, ignorePaths);
  const worktree = plan.flags.worktree ? await openWorktree(plan) : undefined;
  const workDir = worktree?.path ?? cwd;
  const log = RunLog.open(join(logDir, `${stamp}-${runId.slice(0, 8)}.jsonl`));
  opened.log = log;
  log.onFault = (error) =>
    stderr(
      `[finishline] the log could not be written (${error}): the run goes on; the run history keeps its iterations\n`,
    );
  const git = await GitRepo.open(workDir, {
    timeoutMs: definition.git.timeoutSeconds * 1000,
    onFault: (fault: GitFault) =>
      log.event("git_fault", { args: fault.args, code: fault.code, message: fault.message }),
  });
  if (git && worktree) await trustGitConfig(git.root);
  // After the worktree is made, so that what git did for it is not taken for the agent's.
  const gitSettings = git
    ? await GitSettingsGuard.capture(git, { ownBranch: worktree?.branch })
    : undefined;
  if (!git) {
    log.event("no_git", { cwd, note: "not a git repository: no commit evidence for this run" });
    stderr(
      `[finishline] note: "${cwd}" is not a git repository: no commit evidence, rescue or circuit breaker for this run\n`,
    );
  }
  const dirtyAtStart = await userWorkInProgress(plan, git, worktree, ignorePaths, stderr);
  const cleanup: CleanupFacts = {
    dirtyAtStart,
    issue: plan.flags.issue,
    repo: plan.flags.repo,
    labels: definition.github.labels,
    worktreePath: worktree?.path,
    worktreeBranch: worktree?.branch,
    mainRepo: mainRepo?.root,
    finish: {
      model: definition.finish.model,
      extractLearnings: definition.finish.extractLearnings,
      maxCostUsd: definition.finish.maxCostUsd,
      budgetUsd: definition.behavior.maxBudgetUsd,
    },
  };
  const workspace: Workspace = {
    store,
    log,
    reportFile: join(logDir, `${stamp}-${runId.slice(0, 8)}.md`),
    worktree,
    workDir,
    git,
    ignorePaths: worktree ? [] : ignorePaths,
    baseline: plan.resume?.baseline ?? null,
    cleanup,
    dirtyAtStart,
    gitSettings,
    logDirReal: await Deno.realPath(logDir).catch(() => undefined),
  };
  await recordRun(plan, workspace, stderr);
  return workspace;
}

/** How many of the user's uncommitted files the start-of-run warning names. */
const DIRTY_NAMED = 5;

/**
 * The user's uncommitted files when the run starts, with a warning naming them
 * (a resume keeps what its run found at the start; a worktree starts clean).
 */
async function userWorkInProgress(
  plan: RunPlan,
  git: GitRepo | undefined,
  worktree: Worktree | undefined,
  ignorePaths: string[],
  stderr: (text: string) => void,
): Promise<Record<string, string>> {
  if (plan.resume) {
    return (plan.resume.cleanup as CleanupFacts).dirtyAtStart ?? {};
  }
  if (!git || worktree) return {};
  const dirty = Object.fromEntries(await git.snapshot(ignorePaths) ?? []);
  const paths = Object.keys(dirty).sort();
  if (paths.length > 0) {
    const named = paths.slice(0, DIRTY_NAMED).join(", ");
    const more = paths.length > DIRTY_NAMED ? ` and ${paths.length - DIRTY_NAMED} more` : "";
    stderr(
      `[finishline] warning: the working tree has uncommitted changes (${named}${more}). ` +
        `They stay yours: the report lists them apart from what the run leaves. ` +
        `To give the agent a clean checkout of HEAD instead, run with --worktree.\n`,
    );
  }
  return dirty;
}

/** `--worktree`: a new worktree and branch named after the issue, project or run. */
async function openWorktree(plan: RunPlan): Promise<Worktree> {
  const { flags, mainRepo, cwd } = plan;
  if (!mainRepo) {
    throw new UsageError(`Flag "--worktree" needs a git repository, and "${cwd}" is not in one`);
  }
  const id = flags.issue
    ? `issue-${flags.issue}`
    : flags.project
    ? `project-${flags.project}`
    : plan.runId.slice(0, 8);
  return await createWorktree(mainRepo, {
    agent: plan.definition.name,
    id,
    baseBranch: flags.baseBranch,
  });
}

/** The run's record in the history: created, or reopened for a resume. */
async function recordRun(
  plan: RunPlan,
  workspace: Workspace,
  stderr: (text: string) => void,
): Promise<void> {
  const { store, log, git, worktree, cleanup } = workspace;
  const { runId } = plan;
  if (plan.resume) {
    // An iteration cut short by an interrupt is re-run, like one cut short by a crash.
    const last = store.iterations(runId).at(-1);
    if (last?.verdict === "interrupted") store.discardIteration(runId, last.number);
    const recorded = store.iterations(runId).at(-1)?.number;
    // Before the status changes: the segment that ended (or died) is closed from the record.
    startSegment(workspace, runId, {
      resumed: true,
      lastHeardAt: await lastLogTime(store.segments(runId).at(-1)?.logFile),
    });
    store.setRunStatus(runId, "running", null);
    store.clearFinish(runId);
    store.updateCleanup(runId, cleanup);
    log.event("run_resumed", { runId, after: store.iterations(runId).length });
    stderr(`[finishline] ${resumingLine(runId, recorded)}\n`);
  } else {
    workspace.baseline = git ? await git.head() : null;
    store.createRun({
      id: runId,
      agent: plan.definition.name,
      handler: plan.handler.type,
      argv: plan.command.argv,
      cwd: plan.cwd,
      startedAt: new Date().toISOString(),
      baseline: workspace.baseline,
      branch: worktree?.branch ?? null,
      maxIterations: plan.maxIterations,
      cleanup,
    });
    startSegment(workspace, runId, { resumed: false });
  }
  try {
    store.setRunPid(runId, Deno.pid);
  } catch (error) {
    // The pid only speeds up "runs"; a history that stops taking writes is reported at the end.
    workspace.storeFault ??= firstLine(error);
    log.event("store_failed", { step: "pid", error: firstLine(error) });
  }
  if (worktree) {
    log.event("worktree", { ...worktree });
    stderr(`[finishline] working in worktree ${worktree.path} on branch ${worktree.branch}\n`);
  }
}

/** Record this process's segment of the run; a history that refuses is reported at the end. */
function startSegment(
  workspace: Workspace,
  runId: string,
  options: { resumed: boolean; lastHeardAt?: string },
): void {
  const { store, log } = workspace;
  try {
    const number = store.startSegment(runId, {
      startedAt: new Date().toISOString(),
      logFile: log.path,
      reportFile: workspace.reportFile,
      ...options,
    });
    const afterIteration = store.segments(runId).at(-1)?.afterIteration ?? 0;
    workspace.segment = { number, afterIteration };
  } catch (error) {
    workspace.storeFault ??= firstLine(error);
    log.event("store_failed", { step: "segment", error: firstLine(error) });
  }
}

/**
 * When a log was last written to: the timestamp of its last line.
 *
 * @param path The JSONL log.
 * @returns The ISO timestamp, or undefined when the log is missing or unreadable.
 */
async function lastLogTime(path: string | null | undefined): Promise<string | undefined> {
  if (!path) return undefined;
  try {
    using file = await Deno.open(path);
    const size = (await file.stat()).size;
    const tail = new Uint8Array(Math.min(size, 64 * 1024));
    await file.seek(size - tail.length, Deno.SeekMode.Start);
    let read = 0;
    while (read < tail.length) {
      const count = await file.read(tail.subarray(read));
      if (count === null) break;
      read += count;
    }
    const lines = new TextDecoder().decode(tail.subarray(0, read)).trim().split("\n");
    const ts = JSON.parse(lines.at(-1) ?? "").ts;
    return typeof ts === "string" ? ts : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuse to start, before anything is written, when the history would not
 * take the run's record: locked by another process, or read-only.
 */
function checkWritable(store: SqliteStore): void {
  try {
    store.checkWritable();
  } catch (error) {
    const reason = firstLine(error);
    const cause = /locked|busy/i.test(reason)
      ? "another process holds its write lock"
      : "it cannot be written";
    throw new UsageError(
      `The run history "${store.path}" does not take writes (${reason}): ${cause}; ` +
        "wait for it, or choose another file with --store PATH",
    );
  }
}

/**
 * Paths relative to the repository root that finishline itself writes.
 *
 * @param root The repository root.
 * @param dirs Absolute folders.
 * @returns Those inside the repository, relative and with a trailing slash.
 */
export function finishlinePaths(root: string, dirs: string[]): string[] {
  return dirs
    .map((dir) => relative(root, dir))
    .filter((path) => path !== "" && !path.startsWith(".."))
    .map((path) => `${path.replaceAll("\\", "/")}/`);
}

/**
 * Keep finishline's own files out of `git status` (and so out of the agent's
 * commits) through the repository's local exclude file.
 *
 * @param git The repository.
 * @param paths Paths relative to the root.
 */
export async function excludeFromGit(git: GitRepo, paths: string[]): Promise<void> {
  if (paths.length === 0) return;
  const info = await git.exec(["rev-parse", "--git-path", "info/exclude"]);
  if (info.code !== 0) return;
  const file = resolve(git.cwd, info.stdout.trim());
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch {
    // no exclude file yet
  }
  const lines = new Set(text.split("\n").map((line) => line.trim()));
  const missing = paths.map((path) => `/${path}`).filter((line) => !lines.has(line));
  if (missing.length === 0) return;
  await Deno.mkdir(resolve(file, ".."), { recursive: true });
  const prefix = text === "" || text.endsWith("\n") ? "" : "\n";
  await Deno.writeTextFile(file, `${prefix}# finishline's own files\n${missing.join("\n")}\n`, {
    append: true,
  });
}

/**
 * What a resumed run says first: after which recorded iteration it goes
 * on, or that it starts from the beginning when none was recorded.
 *
 * @param runId The run.
 * @param recorded The number of the last iteration recorded, if any.
 * @returns The line, without the `[finishline]` prefix.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resumingLine } from "./workspace.ts";
 *
 * assert.equal(resumingLine("1a2b", 2), "resuming run 1a2b after iteration 2");
 * assert.equal(
 *   resumingLine("1a2b", undefined),
 *   "resuming run 1a2b from the start: no iteration was recorded",
 * );
 * ```
 */
export function resumingLine(runId: string, recorded: number | undefined): string {
  return recorded === undefined
    ? `resuming run ${runId} from the start: no iteration was recorded`
    : `resuming run ${runId} after iteration ${recorded}`;
}
