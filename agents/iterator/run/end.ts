/**
 * Finish once: after the loop, the outcome is recorded, the finish workflow
 * runs (summary, learnings, skills, next actions, persist, cleanup), and the report and the
 * result are written. The cleanup is one path, whether the run just ended or
 * is finished later with `finish RUN_ID` from its recorded facts.
 *
 * @module
 */

import { blockquote } from "../../support/markdown.ts";
import { unsafeToWrite } from "./log_folder.ts";
import { resultRecord } from "../commands/run_record.ts";
import type { AgentBackend } from "../../backends/port.ts";
import type { CompletionHandler, RunOutcome } from "../../completion/handler_contract.ts";
import { GitRepo } from "../../git/repo.ts";
import { describeGitSettings, type GitSettingsChange } from "../../git/settings.ts";
import { GitHubCli } from "../../github/port.ts";
import { firstLine } from "../../support/errors.ts";
import { redactorOfProcess } from "../../support/redact.ts";
import { writeRedactedFile } from "../../support/sinks.ts";
import { jsonWithCosts, roundUsd } from "../../support/format.ts";
import type { RunLog } from "../../support/log.ts";
import { removeWorktreeIfClean, type Worktree } from "../../git/worktree.ts";
import { runFinish } from "../../finish/workflow.ts";
import type { FinishAhead } from "../../finish/ahead.ts";
import { finalLine } from "../terminal/progress.ts";
import { renderReport, type ReportInput } from "./report.ts";
import { liveFacts, reportInput, resumeCommand } from "./report_facts.ts";
import { EXIT_CODES, type RunResult } from "../../loop/runner.ts";
import { type RunMetrics, runMetrics } from "../../record/run_metrics.ts";
import type { RunPlan } from "./plan.ts";
import type { CleanupFacts, Workspace } from "./workspace.ts";

/** Where the finish writes. */
export interface FinishIO {
  /** Standard output. */
  stdout: (text: string) => void;
  /** Standard error. */
  stderr: (text: string) => void;
}

/**
 * The finish of a live run: record the outcome, run the finish workflow,
 * write the report, print the result.
 *
 * @param plan The prepared run.
 * @param workspace Its workspace.
 * @param result How the loop ended.
 * @param options Backend, output, the terminal's columns (the final line
 * fits them) when stderr is one, and the finish model's conversation opened ahead.
 * @returns The exit code.
 */
export async function endRun(
  plan: RunPlan,
  workspace: Workspace,
  result: RunResult,
  options: { backend: AgentBackend; io: FinishIO; columns?: number; finishAhead?: FinishAhead },
): Promise<number> {
  const { store, log } = workspace;
  const { io, finishAhead } = options;
  // After an interrupt the user wants out quickly, and a model that just failed would fail
  // again (or wait for retries): no model session then.
  const skipModel = result.status === "interrupted"
    ? "the run was interrupted"
    : result.modelFailure !== undefined
    ? "the run ended because the model could not be used"
    : undefined;
  // Not wanted: its process exits while the run ends (awaited below). Not opened yet (the run
  // ended early): opened now, its start overlaps the run's end.
  if (skipModel) void finishAhead?.close();
  else finishAhead?.open("run ended");
  // A history that cannot be written (locked, read-only) never crashes the finish:
  // the run ends with its exit code, and says its outcome is only in the log.
  let storeFault: string | undefined;
  const write = (what: string, work: () => void) => {
    try {
      work();
    } catch (error) {
      storeFault ??= firstLine(error);
      log.event("store_failed", { step: what, error: firstLine(error) });
    }
  };
  // The outcome is recorded at once, so a run whose finish workflow dies is never resumed.
  write("outcome", () => store.setRunStatus(plan.runId, result.status, result.completionReason));
  const metrics = runMetrics(result);
  write("metrics", () => store.setRunMetrics(plan.runId, metrics));
  write("pid", () => store.setRunPid(plan.runId, null));
  write("segment", () => endSegment(workspace, result));
  // While the finish model is asked: the git settings put back before finishline's own git
  // calls of the finish (the push, the worktree's removal) and before the user runs git again,
  // and the facts gathered before the cleanup, which may remove the worktree.
  const prepared = (async () => {
    const gitSettings = await restoreGitSettings(workspace, io);
    return { ...await liveFacts(workspace), gitSettings };
  })();
  let worktreeReport: WorktreeReport | undefined;
  const finishOptions: Parameters<typeof runFinish>[0] = {
    store,
    runId: plan.runId,
    outcome: { status: result.status, reason: result.completionReason },
    ...workspace.cleanup.finish,
    skipModel,
    opened: finishAhead && (() => finishAhead.take()),
    backend: options.backend,
    cwd: workspace.workDir,
    onEvent: (kind, data) => log.event(kind, data),
    cleanup: async () => {
      await prepared;
      await publishIfDone(plan, workspace, result, io);
      worktreeReport = await cleanUpRun(workspace.cleanup, {
        cwd: plan.cwd,
        stderr: io.stderr,
        log,
        handler: plan.handler,
        outcome: await outcomeOf(result, workspace),
        worktree: workspace.worktree,
        pullRequest: result.pullRequest,
      });
    },
  };
  let finish: Awaited<ReturnType<typeof runFinish>>;
  if (storeFault) {
    // Without a history the steps cannot be checkpointed; the cleanup still runs.
    finish = { steps: [], ran: [] };
    await finishOptions.cleanup?.().catch((error) =>
      log.event("cleanup_failed", { error: firstLine(error) })
    );
  } else {
    try {
      finish = await runFinish(finishOptions);
    } catch (error) {
      log.event("store_failed", { step: "finish", error: firstLine(error) });
      finish = { steps: [], ran: [], failed: { step: "summary", error: firstLine(error) } };
    }
  }
  // A conversation the finish did not take (nothing left to ask) ends with the backend's processes.
  await Promise.all([finishAhead?.close(), options.backend.release?.()]);
  if (storeFault) {
    io.stderr(
      `[finishline] the run history could not be written (${storeFault}): this run's outcome is not recorded there; the log has it: ${log.path}\n`,
    );
  } else if (workspace.storeFault) {
    io.stderr(
      `[finishline] the run history could not be written (${workspace.storeFault}): some of this run's iterations are not recorded there; the log has them: ${log.path}\n`,
    );
  }
  if (!storeFault && finish.failed) {
    io.stderr(
      `[finishline] the finish workflow stopped at "${finish.failed.step}": ${finish.failed.error}; run "finish ${plan.runId}" to complete it\n`,
    );
  }
  const facts = await prepared;
  const reportError = await writeReport(workspace, reportInput(plan, { workspace, result, facts }));
  const reported = reportError === undefined;
  if (reportError) io.stderr(`[finishline] the report could not be written (${reportError})\n`);
  if (log.failedWrites > 0) {
    io.stderr(`[finishline] ${log.failedWrites} log line(s) could not be written: ${log.path}\n`);
  }
  try {
    store.close();
  } catch {
    // a history that failed is closed with the process
  }
  log.close();
  const resume = result.status === "interrupted" ? resumeCommand(plan.runId) : undefined;
  io.stderr(
    `${
      finalLine(result, options.columns, {
        ...(reported ? { report: workspace.reportFile } : { log: log.path }),
        resume,
      })
    }\n`,
  );
  if (plan.flags.json) {
    io.stdout(
      `${
        jsonWithCosts(resultJson(workspace, result, { worktree: worktreeReport, metrics, plan }))
      }\n`,
    );
  }
  return EXIT_CODES[result.status];
}

/**
 * Put back the git settings (`.git/config`, hooks, ...) that changed during
 * the run, and say so in the log and on stderr.
 */
async function restoreGitSettings(
  workspace: Workspace,
  io: FinishIO,
): Promise<GitSettingsChange[]> {
  if (!workspace.gitSettings) return [];
  try {
    const changes = await workspace.gitSettings.restore();
    if (changes.length > 0) {
      workspace.log.event("git_config_restored", { changes });
      io.stderr(
        `[finishline] git settings changed during the run, restored: ${
          describeGitSettings(changes)
        }\n`,
      );
    }
    return changes;
  } catch (error) {
    workspace.log.event("git_config_restore_failed", { error: firstLine(error) });
    io.stderr(
      `[finishline] cannot restore the git settings as the run found them: ${firstLine(error)}\n`,
    );
    return [];
  }
}

/** The worktree part of the `--json` result. */
export interface WorktreeReport {
  /** The branch holding the work. */
  branch: string;
  /** The worktree's folder. */
  path: string;
  /** The branch it started from. */
  base: string;
  /** Whether it was removed (only a clean worktree is). */
  removed?: boolean;
  /** The pull request, when one was opened. */
  pullRequest?: string;
}

/** Options of {@linkcode cleanUpRun}. */
export interface CleanupOptions {
  /** Where gh runs. */
  cwd: string;
  /** Notes for the user. */
  stderr: (text: string) => void;
  /** The run log, for a live run. */
  log?: RunLog;
  /** The handler of a live run: its `onRunEnd` manages the labels (and closes an issue). */
  handler?: CompletionHandler;
  /** The run's outcome, for the handler. */
  outcome?: RunOutcome;
  /** The worktree as the live run knows it. */
  worktree?: Worktree;
  /** The pull request of the worktree's branch, for the report. */
  pullRequest?: string;
}

/**
 * Clean up after a run: the handler's `onRunEnd` (or, for a run finished
 * later, the in-progress label from the recorded facts), then the worktree,
 * removed only when clean.
 *
 * @param facts What was recorded at the start of the run.
 * @param options Output, and the live run's handler and outcome.
 * @returns The worktree's report, when the run had one.
 */
export async function cleanUpRun(
  facts: CleanupFacts,
  options: CleanupOptions,
): Promise<WorktreeReport | undefined> {
  if (options.handler && options.outcome) {
    try {
      await options.handler.onRunEnd?.(options.outcome);
    } catch (error) {
      options.log?.event("handler_hook_failed", {
        hook: "onRunEnd",
        error: error instanceof Error ? error.message : String(error),
      });
    }
  } else if (facts.issue && facts.labels?.inProgress) {
    const github = new GitHubCli({ cwd: options.cwd, repo: facts.repo, attempts: 2 });
    await github.editLabel(facts.issue, { remove: facts.labels.inProgress });
  }
  if (!facts.worktreePath || !facts.worktreeBranch || !facts.mainRepo) return undefined;
  const worktree = options.worktree ??
    { path: facts.worktreePath, branch: facts.worktreeBranch, base: "", reused: true };
  const report: WorktreeReport = {
    branch: worktree.branch,
    path: worktree.path,
    base: worktree.base,
    ...(options.pullRequest ? { pullRequest: options.pullRequest } : {}),
  };
  const repo = await GitRepo.open(facts.mainRepo);
  report.removed = repo ? await removeWorktreeIfClean(repo, worktree) : false;
  options.log?.event("worktree_done", { ...report });
  options.stderr(
    `[finishline] branch ${worktree.branch} holds the work; worktree ${
      report.removed
        ? "removed"
        : `kept at ${worktree.path} (it has uncommitted changes, or is missing)`
    }\n`,
  );
  return report;
}

/** With `--create-pr` and no pull request gate, a completed run opens its pull request now. */
async function publishIfDone(
  plan: RunPlan,
  workspace: Workspace,
  result: RunResult,
  io: FinishIO,
): Promise<void> {
  const { worktree } = workspace;
  if (!worktree || !plan.mainRepo || result.pullRequest) return;
  // An unverified run's work is published too, for a person to check: its body says so.
  if (!["completed", "unverified"].includes(result.status) || !plan.flags.createPr) return;
  result.pullRequest = await openPullRequest(worktree, result, {
    cwd: workspace.workDir,
    repo: plan.flags.repo,
    log: workspace.log,
    stderr: io.stderr,
  });
}

/** The outcome the handler's `onRunEnd` gets, with the evidence of a completed run. */
async function outcomeOf(result: RunResult, workspace: Workspace): Promise<RunOutcome> {
  return {
    status: result.status,
    reason: result.completionReason,
    ...(result.status === "completed"
      ? {
        evidence: await runEvidence(
          result,
          workspace.git,
          result.baseline?.commit ?? workspace.baseline,
        ),
      }
      : {}),
  };
}

/**
 * Push the worktree's branch and open a pull request with the run summary.
 *
 * @param worktree The worktree.
 * @param result The completed run.
 * @param options Where gh runs, the repository, the log.
 * @returns The pull request URL, or undefined when it could not be opened.
 */
async function openPullRequest(
  worktree: Worktree,
  result: RunResult,
  options: { cwd: string; repo?: string; log: RunLog; stderr: (text: string) => void },
): Promise<string | undefined> {
  const repo = await GitRepo.open(options.cwd);
  const why = repo ? await repo.push(worktree.branch) : "not a repository";
  if (why) {
    options.log.event("pull_request_failed", { step: "push", error: why });
    options.stderr(`[finishline] cannot push ${worktree.branch}: ${why}\n`);
    return undefined;
  }
  const last = result.summaries.at(-1);
  // Redacted before it is cut: a secret cut in two would no longer be recognised.
  const summary = last?.completeTask ? redactorOfProcess().redact(last.completeTask.summary) : "";
  const body = [
    `Opened by finishline after run \`${result.runId}\`: ${result.completionReason}.`,
    "",
    ...(result.unverified
      ? [
        `**unverified: ${result.unverified}.** Nothing checked this work (no check passed on it, no held-out test ran): review it before merging.`,
        "",
      ]
      : []),
    // The agent's words, quoted: no markup, closing keyword or mention of their own.
    ...(summary ? ["**Summary:**", "", ...blockquote(summary)] : []),
    "",
    `Iterations: ${result.iterations}; cost: $${result.costUsd.toFixed(4)}; duration: ${
      (result.durationMs / 1000).toFixed(1)
    } s.`,
  ].join("\n");
  const github = new GitHubCli({ cwd: options.cwd, repo: options.repo, attempts: 2 });
  const url = await github.createPullRequest({
    base: worktree.base,
    head: worktree.branch,
    title: pullRequestTitle(summary) || `finishline: ${worktree.branch}`,
    body,
  });
  options.log.event(url ? "pull_request" : "pull_request_failed", { url, step: "create" });
  if (url) options.stderr(`[finishline] opened pull request ${url}\n`);
  return url;
}

/** A pull request's title from the agent's summary: its first line, at most 72 characters. */
function pullRequestTitle(summary: string): string {
  const line = summary.split("\n").find((text) => text.trim() !== "")?.trim() ?? "";
  return line.length <= 72 ? line : `${line.slice(0, 71).trimEnd()}…`;
}

/**
 * Record how this process's segment of the run ended: its time, and its cost
 * without that of the iterations it resumed after.
 */
function endSegment(workspace: Workspace, result: RunResult): void {
  const segment = workspace.segment;
  if (!segment) return;
  const resumedCost = result.summaries.slice(0, segment.afterIteration)
    .reduce((sum, summary) => sum + summary.costUsd, 0);
  workspace.store.endSegment(result.runId, {
    number: segment.number,
    status: result.status,
    reason: result.completionReason,
    durationMs: result.durationMs,
    costUsd: roundUsd(Math.max(0, result.costUsd - resumedCost)),
  });
}

/** Write the Markdown report; a failure is logged, never fatal. Returns why it was not written. */
async function writeReport(workspace: Workspace, input: ReportInput): Promise<string | undefined> {
  const unsafe = workspace.logDirReal &&
    await unsafeToWrite(workspace.reportFile, workspace.logDirReal);
  if (unsafe) {
    workspace.log.event("report_failed", { error: unsafe });
    return `not written: ${unsafe}`;
  }
  try {
    await writeRedactedFile(workspace.reportFile, renderReport(input));
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    workspace.log.event("report_failed", { error: message });
    // A report cut short by a full disk is no report.
    await Deno.remove(workspace.reportFile).catch(() => {});
    return message;
  }
}

/** The one JSON object `--json` prints at the end. */
function resultJson(
  workspace: Workspace,
  result: RunResult,
  extra: { worktree?: WorktreeReport; metrics: RunMetrics; plan: RunPlan },
): Record<string, unknown> {
  const { worktree, metrics } = extra;
  return {
    status: result.status,
    completionReason: result.completionReason,
    iterations: result.iterations,
    costUsd: result.costUsd,
    durationMs: result.durationMs,
    runId: result.runId,
    sessionIds: result.sessionIds,
    logFile: result.logFile,
    store: workspace.store.path,
    report: workspace.reportFile,
    metrics,
    ...(result.unverified ? { unverified: result.unverified } : {}),
    ...resultRecord(extra.plan, result),
    ...(result.finalRescue ? { finalRescue: result.finalRescue } : {}),
    ...(worktree ? { worktree } : {}),
  };
}

/**
 * The evidence a completed run hands to the handler's `onRunEnd`: the checks
 * that passed on the final state, the run's commits and the pull request.
 *
 * @param result The run's result.
 * @param git The repository the agent worked in.
 * @param baseline The commit the run started from.
 * @returns The evidence.
 */
export async function runEvidence(
  result: RunResult,
  git: GitRepo | undefined,
  baseline: string | null,
): Promise<NonNullable<RunOutcome["evidence"]>> {
  const last = result.summaries.at(-1);
  const checks =
    last?.checks?.checks.filter((check) => check.now === "green").map((check) => check.name) ?? [];
  let commits: string[] = [];
  if (git && baseline) {
    const log = await git.exec(["log", "--reverse", "--format=%h %s", `${baseline}..HEAD`]);
    if (log.code === 0) commits = log.stdout.split("\n").filter((line) => line.trim() !== "");
  }
  return { checks, commits, ...(result.pullRequest ? { pullRequest: result.pullRequest } : {}) };
}
