/**
 * What the run report tells beyond the loop's result, gathered at the end of
 * a run: the task and the command line, the start, the model and the branch,
 * the commits and changed files, the segments (start and resumes) and the
 * logs. Everything is gathered before the finish cleans up, since the
 * cleanup may remove the worktree.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { shellQuote } from "../../support/format.ts";
import type { GitRepo } from "../../git/repo.ts";
import type { GitSettingsChange } from "../../git/settings.ts";
import type { BackendSetting } from "../../backends/presets.ts";
import type { RunSegment, RunStore } from "../../store/mod.ts";
import type { RunFlags } from "../flags/command_line.ts";
import type { ChangedFile, ReportInput, RunChanges } from "./report.ts";
import type { RunResult } from "../../loop/runner.ts";
import type { RunPlan } from "./plan.ts";
import type { Workspace } from "./workspace.ts";

/** What git's one-letter change codes mean. */
const CHANGES: Record<string, string> = {
  A: "added",
  M: "modified",
  D: "deleted",
  T: "type changed",
  C: "copied",
  R: "renamed",
};

/**
 * The command line that runs finishline with these arguments, quoted so
 * that it can be pasted into a shell: `deno run -A <the CLI> ARGS`.
 *
 * @param argv The arguments.
 * @returns One line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandLine } from "./report_facts.ts";
 *
 * assert.match(commandLine(["--task", "Fix it"]), /^deno run -A \S+main\.ts --task 'Fix it'$/);
 * ```
 */
export function commandLine(argv: readonly string[]): string {
  return shellQuote([
    "deno",
    "run",
    "-A",
    cliSpecifier(new URL("../main.ts", import.meta.url)),
    ...argv,
  ]);
}

/**
 * The command that resumes a run, for the final line, Ctrl-C, the report
 * and `runs show`: the one place that names it.
 *
 * @param runId The run.
 * @returns One line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resumeCommand } from "./report_facts.ts";
 *
 * assert.match(resumeCommand("1a2b"), /^deno run -A \S+main\.ts --resume 1a2b$/);
 * ```
 */
export function resumeCommand(runId: string): string {
  return commandLine(["--resume", runId]);
}

/**
 * How to name the CLI entry to `deno run`: a local path, or the package's
 * `jsr:` export when it runs from JSR.
 *
 * @param main The entry's URL.
 * @returns The specifier.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cliSpecifier } from "./report_facts.ts";
 *
 * assert.equal(
 *   cliSpecifier(new URL("https://jsr.io/@finishline/agents/0.2.0/agents/iterator/main.ts")),
 *   "jsr:@finishline/agents@0.2.0/iterator",
 * );
 * assert.equal(cliSpecifier(new URL("file:///opt/fl/agents/iterator/main.ts")), "/opt/fl/agents/iterator/main.ts");
 * ```
 */
export function cliSpecifier(main: URL): string {
  if (main.protocol === "file:") return fileURLToPath(main);
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/agents\/iterator\/main\.ts$/.exec(
    main.href,
  );
  return jsr ? `jsr:${jsr[1]}@${jsr[2]}/iterator` : main.href;
}

/** An issue run's title: its number and the issue's own title, as read at the start. */
function issueTitle(plan: RunPlan): string | undefined {
  const issue = (plan.handler as { issue?: { number?: unknown; title?: unknown } }).issue;
  if (plan.handler.type !== "issue" || typeof issue?.title !== "string") return undefined;
  return `#${issue.number}: ${issue.title}`;
}

/**
 * What a run was asked to do, in words: the `--task` text, else the issue or project.
 *
 * @param flags The run's flags.
 * @returns The task, or undefined when the agent's own prompt says it.
 */
export function taskOf(flags: Pick<RunFlags, "task" | "issue" | "project" | "repo" | "owner">):
  | string
  | undefined {
  if (flags.task) return flags.task;
  if (flags.issue) return `GitHub issue #${flags.issue}${flags.repo ? ` in ${flags.repo}` : ""}`;
  if (flags.project) {
    return `GitHub project #${flags.project}${flags.owner ? ` of ${flags.owner}` : ""}`;
  }
  return undefined;
}

/**
 * The run's commits and changed files since its starting commit, and what
 * is left uncommitted: by the run, and by the user before it (untouched).
 *
 * @param git The repository the agent worked in.
 * @param baseline The commit the run started from.
 * @param ignorePaths finishline's own paths, left out of the uncommitted files.
 * @param dirtyAtStart The files uncommitted when the run started (path → signature).
 * @returns The changes, or undefined outside a repository or when git cannot tell.
 */
export async function runChanges(
  git: GitRepo | undefined,
  baseline: string | null,
  ignorePaths: string[] = [],
  dirtyAtStart: Record<string, string> = {},
): Promise<RunChanges | undefined> {
  if (!git || !baseline) return undefined;
  const log = await git.exec(["log", "--reverse", "--format=%h%x09%s", `${baseline}..HEAD`]);
  if (log.code !== 0) return undefined;
  const commits = log.stdout.split("\n").filter((line) => line.trim() !== "").map((line) => {
    const [hash, ...subject] = line.split("\t");
    return { hash, subject: subject.join("\t") };
  });
  const now = await git.snapshot(ignorePaths) ?? new Map<string, string>();
  const untouched = (path: string) => dirtyAtStart[path] === now.get(path);
  return {
    baseline,
    commits,
    files: await changedFiles(git, baseline),
    uncommitted: [...now.keys()].filter((path) => !untouched(path)),
    dirtyBefore: [...now.keys()].filter(untouched),
  };
}

/** The files changed between the baseline and HEAD, with their line counts. */
async function changedFiles(git: GitRepo, baseline: string): Promise<ChangedFile[]> {
  const names = await git.exec(["diff", "--name-status", "--no-renames", "-z", baseline, "HEAD"]);
  const counts = await git.exec(["diff", "--numstat", "--no-renames", "-z", baseline, "HEAD"]);
  if (names.code !== 0) return [];
  const lines = new Map<string, { added: number | null; deleted: number | null }>();
  for (const entry of counts.code === 0 ? counts.stdout.split("\0") : []) {
    const [added, deleted, path] = entry.split("\t");
    if (path === undefined) continue;
    lines.set(path, {
      added: added === "-" ? null : Number(added),
      deleted: deleted === "-" ? null : Number(deleted),
    });
  }
  const fields = names.stdout.split("\0");
  const files: ChangedFile[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const path = fields[index + 1];
    files.push({
      path,
      change: CHANGES[fields[index][0]] ?? fields[index],
      ...(lines.get(path) ?? { added: null, deleted: null }),
    });
  }
  return files;
}

/**
 * The model the agent ran on: as the agent reported it, else as configured.
 *
 * @param summaries The run's iterations.
 * @param configured The definition's or `--model`'s model.
 * @param backend The backend setting, to name whose default it was.
 * @returns The models, in order of first use, or a note that the agent chose.
 */
export function modelOf(
  summaries: ReadonlyArray<{ model?: string }>,
  configured: string | undefined,
  backend: BackendSetting = "claude",
): string {
  const used = [...new Set(summaries.flatMap((summary) => summary.model ? [summary.model] : []))];
  const agent = backend === "claude" ? "Claude Code" : typeof backend === "string" ? backend : "";
  const model = used.length > 0
    ? used.join(", ")
    : configured ?? (agent ? `${agent}'s default` : "the agent's default");
  if (backend === "claude") return model;
  return `${model} (ACP backend${agent ? ` ${agent}` : ""})`;
}

/** The facts of a live run's report gathered before the finish: git, branch, model. */
export interface LiveFacts {
  /** The commits and changed files. */
  changes?: RunChanges;
  /** The branch the work is on. */
  branch?: string;
  /** The git settings that changed during the run and were restored. */
  gitSettings?: GitSettingsChange[];
}

/**
 * Gather what the report needs from git while the worktree still exists.
 *
 * @param workspace The run's workspace.
 * @returns The changes and the branch.
 */
export async function liveFacts(workspace: Workspace): Promise<LiveFacts> {
  try {
    const { git, worktree } = workspace;
    return {
      changes: await runChanges(
        git,
        workspace.baseline,
        workspace.ignorePaths,
        workspace.dirtyAtStart,
      ),
      branch: worktree?.branch ?? (await git?.branch()) ?? undefined,
    };
  } catch {
    return {};
  }
}

/**
 * The report of a live run, from its plan, workspace, result and history.
 *
 * @param plan The prepared run.
 * @param run Its workspace, how the loop ended, and what was gathered before the finish.
 * @returns The report's input.
 */
export function reportInput(
  plan: RunPlan,
  run: { workspace: Workspace; result: RunResult; facts: LiveFacts },
): ReportInput {
  const { workspace, result, facts } = run;
  const recorded = readHistory(workspace.store, plan.runId);
  return {
    result,
    agent: plan.definition.name,
    handler: `${plan.handler.type} (${plan.criteria.short})`,
    learnings: recorded.learnings,
    nextActions: recorded.nextActions,
    branch: facts.branch,
    worktree: workspace.worktree?.path,
    checks: plan.checksText,
    isolation: plan.isolation,
    pullRequest: result.pullRequest,
    task: taskOf(plan.flags),
    title: issueTitle(plan),
    // The recorded arguments are redacted; the live ones may hold a secret.
    command: recorded.argv ? commandLine(recorded.argv) : undefined,
    cwd: plan.cwd,
    startedAt: recorded.startedAt,
    model: modelOf(
      result.summaries,
      plan.definition.behavior.model,
      plan.definition.behavior.backend,
    ),
    changes: facts.changes,
    gitSettings: facts.gitSettings,
    segments: recorded.segments,
    logFile: workspace.log.path,
    reportFile: workspace.reportFile,
    resumeCommand: result.status === "interrupted" ? resumeCommand(plan.runId) : undefined,
  };
}

/** The run's record, segments, learnings and next actions; what cannot be read is left out. */
function readHistory(store: RunStore, runId: string): {
  argv?: string[];
  startedAt?: string;
  segments?: RunSegment[];
  learnings: string[];
  nextActions: string[];
} {
  const read = <T>(work: () => T): T | undefined => {
    try {
      return work();
    } catch {
      return undefined;
    }
  };
  const run = read(() => store.getRun(runId));
  return {
    argv: run?.argv,
    startedAt: run?.startedAt,
    segments: read(() => store.segments(runId)),
    learnings: read(() => store.learningsOf(runId).map((learning) => learning.text)) ?? [],
    nextActions: read(() => store.getFinish(runId).nextActions) ?? [],
  };
}
