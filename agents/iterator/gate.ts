/**
 * Evidence by default: the repository's detected checks as the gate of a
 * run, the preflight that makes sure a run can finish, the refusal of the
 * agent's own `gh issue close`, and the pull request's checks as the last
 * gate.
 *
 * @module
 */

import path from "node:path";
import type { AgentDefinition } from "../common/definition/types.ts";
import type { CommandRefusal, SessionPermissionMode } from "../common/backends/types.ts";
import { detectChecks, type Detection, formatDetection } from "../common/checks/detect.ts";
import { describeRun, runRepoCheck } from "../common/checks/check_run.ts";
import { RepoChecksChecker } from "../common/checks/repo_checks.ts";
import type { VerificationRecord } from "../common/checks/types.ts";
import type { IterationSummary, RunOutcome } from "../common/completion/types.ts";
import { UsageError } from "../common/errors.ts";
import type { GitRepo } from "../common/git.ts";
import type { GitHubCli, PullRequestChecks } from "../common/github.ts";
import type { RunLog } from "../common/log.ts";
import type { Worktree } from "../common/worktree.ts";
import type { PullRequestGate, RunResult } from "./runner.ts";

/** The agent may not close the issue itself: the runner does once the evidence passes. */
export const ISSUE_CLOSE_REFUSAL: CommandRefusal = {
  pattern: String.raw`(^|[\s;&|(])gh\s+(?:\S+\s+)*?issue\s+close\b`,
  reason:
    "finishline closes the issue itself once the evidence passes, so it refused this command. Do not close the issue: call the complete_task tool with status success when the work is done.",
};

/** The repository's checks as a run uses them. */
export interface RunChecks {
  /** What detection found, when it ran. */
  detection?: Detection;
  /** The gate, when there is at least one check. */
  gate?: RepoChecksChecker;
}

/**
 * Detect the repository's checks when the definition configures none
 * (`verify.checks` empty and `verify.detect` on) and build the gate.
 *
 * @param definition The agent definition.
 * @param root The repository root (or working directory).
 * @returns The detection and the gate.
 */
export async function prepareChecks(
  definition: AgentDefinition,
  root: string,
): Promise<RunChecks> {
  const verify = definition.verify;
  if (verify.checks.length > 0 || !verify.detect) return {};
  const detection = await detectChecks(root);
  if (detection.checks.length === 0) return { detection };
  const gate = new RepoChecksChecker({
    checks: detection.checks.map((check) => ({
      name: check.name,
      command: check.command,
      ...(check.runner ? { runner: check.runner } : {}),
    })),
    timeoutMs: verify.checkTimeoutSeconds * 1000,
    protect: verify.protect,
    configFiles: detection.configFiles,
  });
  return { detection, gate };
}

/**
 * What `--dry-run` and the report say about the checks.
 *
 * @param definition The agent definition.
 * @param checks The detection, when it ran.
 * @returns Lines of text.
 */
export function describeChecks(definition: AgentDefinition, checks: RunChecks): string {
  const verify = definition.verify;
  if (verify.checks.length > 0) {
    return `Configured in "verify.checks" (detection is off): ${
      verify.checks.map((check) => check.name ?? check.type).join(", ")
    }`;
  }
  if (!verify.detect) return `Detection is off ("verify.detect": false); no checks gate the run`;
  if (!checks.detection) return "No checks";
  const lines = [formatDetection(checks.detection)];
  if (checks.gate) {
    lines.push(
      verify.baseline
        ? "Baseline: each check runs on the starting commit in a detached worktree beside the first session"
        : `Baseline: off ("verify.baseline": false)`,
    );
  }
  return lines.join("\n");
}

/** What {@linkcode preflight} checks. */
export interface PreflightInput {
  /** The agent definition. */
  definition: AgentDefinition;
  /** Where the definition came from, for messages. */
  displayPath: string;
  /** The detected checks. */
  checks: RunChecks;
  /** The session's permission mode. */
  permissionMode: SessionPermissionMode;
  /** Whether the agent is expected to change code (an issue, or checks to satisfy). */
  changesCode: boolean;
  /** `--create-pr`: the repository must have a remote and gh must be logged in. */
  createPr?: { repo: GitRepo; github: GitHubCli };
  /** PATH to look executables up in. @default Deno.env.get("PATH") */
  path?: string;
}

const SHELL_BUILTINS = new Set([
  "cd",
  "test",
  "[",
  "echo",
  "printf",
  "true",
  "false",
  "exit",
  "export",
  "set",
  ":",
  ".",
  "source",
  "exec",
  "command",
  "if",
  "for",
  "while",
  "!",
]);

/**
 * Before any session: can this run finish? A check whose command cannot
 * start, tools that cannot run the checks or edit files, and `--create-pr`
 * without a remote or a logged-in gh are usage errors; nothing is spent.
 *
 * @param input The definition, checks, permissions and pull request settings.
 * @returns Resolves when the run can finish.
 * @throws {UsageError} Naming what is missing and what to do.
 */
export async function preflight(input: PreflightInput): Promise<void> {
  const { definition, displayPath, checks, permissionMode } = input;
  const searchPath = input.path ?? Deno.env.get("PATH") ?? "";
  const commands: Array<{ name: string; executable: string; source: string }> = [];
  for (const check of checks.detection?.checks ?? []) {
    commands.push({ name: check.name, executable: check.executable, source: check.source });
  }
  for (const [index, check] of definition.verify.checks.entries()) {
    if (check.type !== "command") continue;
    const first = check.command.trim().match(/^[A-Za-z0-9_.\/+-]+(?=\s|$)/)?.[0];
    if (!first || SHELL_BUILTINS.has(first)) continue;
    commands.push({
      name: check.name ?? check.command,
      executable: first,
      source: `"verify.checks[${index}].command" in "${displayPath}"`,
    });
  }
  for (const command of commands) {
    if (!(await findExecutable(command.executable, searchPath))) {
      throw new UsageError(
        `Check "${command.name}" (from ${command.source}) cannot start: "${command.executable}" is not installed or not on PATH; install it, or configure "verify.checks" (or "verify.detect": false) in "${displayPath}"`,
      );
    }
  }
  const bypass = permissionMode === "bypassPermissions";
  const tools = definition.behavior.allowedTools;
  const hasBash = tools.some((tool) => tool === "Bash" || tool.startsWith("Bash("));
  if (!bypass && commands.length > 0 && !hasBash) {
    throw new UsageError(
      `"behavior.allowedTools" in "${displayPath}" has no "Bash", so the agent cannot run the checks (${
        commands.map((command) => `"${command.name}"`).join(", ")
      }) it must make pass: add "Bash"`,
    );
  }
  const canEdit = bypass || permissionMode === "acceptEdits" || hasBash ||
    tools.some((tool) => ["Edit", "Write", "MultiEdit", "NotebookEdit"].includes(tool));
  if (input.changesCode && !canEdit) {
    throw new UsageError(
      `"behavior.allowedTools" in "${displayPath}" lets the agent edit no file (no "Edit", "Write" or "Bash", and permission mode "${permissionMode}"), but this run expects code changes: add "Edit" and "Write"`,
    );
  }
  if (input.createPr) {
    const remotes = await input.createPr.repo.exec(["remote"]);
    if (remotes.code !== 0 || remotes.stdout.trim() === "") {
      throw new UsageError(
        `Flag "--create-pr" needs a remote to push to, and "${input.createPr.repo.root}" has none: add one with "git remote add origin URL"`,
      );
    }
    const pushUrl = await input.createPr.repo.exec(["remote", "get-url", "--push", "origin"]);
    if (pushUrl.code !== 0) {
      throw new UsageError(
        `Flag "--create-pr" pushes to the remote "origin", and "${input.createPr.repo.root}" has no such remote: add it with "git remote add origin URL"`,
      );
    }
    await input.createPr.github.preflight();
  }
}

async function findExecutable(executable: string, searchPath: string): Promise<boolean> {
  const candidates = executable.includes("/")
    ? [executable]
    : searchPath.split(":").filter((dir) => dir !== "").map((dir) => path.join(dir, executable));
  for (const candidate of candidates) {
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // not here
    }
  }
  return false;
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

/**
 * The evidence section of a pull request body or report: each check against
 * the baseline, declarations of out-of-scope checks and changed tests.
 *
 * @param summary The last iteration's summary.
 * @returns Markdown lines (empty when there is no check evidence).
 */
export function evidenceMarkdown(summary: IterationSummary | undefined): string[] {
  const evidence = summary?.checks;
  if (!evidence) return [];
  const lines = ["| check | baseline | final | failing tests |", "|---|---|---|---|"];
  for (const check of evidence.checks) {
    lines.push(
      `| \`${check.name}\` | ${check.baseline} | ${check.now}${
        check.flaky ? " (flaky once)" : ""
      } | ${check.failing.slice(0, 5).join(", ") || "–"} |`,
    );
  }
  if (evidence.outOfScope.length > 0) {
    lines.push("", "**Declared out of scope by the agent:**");
    for (const entry of evidence.outOfScope) lines.push(`- \`${entry.check}\`: ${entry.reason}`);
  }
  if (evidence.testsChanged.length > 0) {
    lines.push(
      "",
      `**Tests changed by the agent** (the original versions ${
        evidence.originalsPass ? "still pass" : "fail"
      } against the new code):`,
    );
    for (const entry of evidence.testsChanged) {
      lines.push(`- \`${entry.path}\` (${entry.change}): ${entry.reason ?? "no reason given"}`);
    }
  }
  return lines;
}

/** Options of {@linkcode GitHubPullRequestGate}. */
export interface PullRequestGateOptions {
  /** The run's worktree: its branch is pushed. */
  worktree: Worktree;
  /** The repository of the worktree. */
  git: GitRepo;
  /** The gh port. */
  github: GitHubCli;
  /** How long to wait for the checks, in milliseconds. */
  timeoutMs: number;
  /** Poll interval in milliseconds. @default 15000 */
  intervalMs?: number;
  /** The run log. */
  log?: RunLog;
  /** Progress lines. */
  stderr?: (text: string) => void;
}

/**
 * The pull request's CI as the last gate: push the branch, open the pull
 * request once, wait for its checks, and feed failing checks back with the
 * tail of their logs.
 */
export class GitHubPullRequestGate implements PullRequestGate {
  #options: PullRequestGateOptions;
  #url: string | undefined;

  /**
   * Create the gate.
   *
   * @param options Worktree, gh port and time budget.
   */
  constructor(options: PullRequestGateOptions) {
    this.#options = options;
  }

  /**
   * The pull request, once opened.
   *
   * @returns Its URL.
   */
  get url(): string | undefined {
    return this.#url;
  }

  /**
   * Push, open the pull request if needed, and wait for its checks.
   *
   * @param summary The iteration that passed the local checks.
   * @param signal Aborts the wait.
   * @returns The URL and the verification.
   */
  async check(
    summary: IterationSummary,
    signal: AbortSignal,
  ): Promise<{ url?: string; verification: VerificationRecord }> {
    const problem = await this.#publish(summary);
    if (problem) return { url: this.#url, verification: prFault(problem) };
    const { github, log } = this.#options;
    const checks = await github.waitForPullRequestChecks(this.#url!, {
      timeoutMs: this.#options.timeoutMs,
      intervalMs: this.#options.intervalMs,
      signal,
    });
    log?.event("pull_request_checks", { url: this.#url, ...checks });
    return { url: this.#url, verification: await this.#verdict(checks) };
  }

  /** Push the branch and open the pull request once; says what failed, if anything. */
  async #publish(summary: IterationSummary): Promise<string | undefined> {
    const { worktree, git, github, log } = this.#options;
    const push = await git.exec(["push", "-u", "origin", worktree.branch]);
    if (push.code !== 0) {
      const why = push.stderr.split("\n").find((line) => line.trim()) ?? `exit code ${push.code}`;
      log?.event("pull_request_failed", { step: "push", error: why });
      return `finishline could not push "${worktree.branch}": ${why}`;
    }
    if (this.#url) return undefined;
    this.#url = await github.createPullRequest({
      base: worktree.base,
      head: worktree.branch,
      title: summary.completeTask?.summary.split("\n")[0].slice(0, 72) ||
        `finishline: ${worktree.branch}`,
      body: [
        `Opened by finishline: the local checks passed in iteration ${summary.iteration}; it completes once this pull request's checks pass.`,
        "",
        summary.completeTask ? `**Summary:** ${summary.completeTask.summary}` : "",
        "",
        ...evidenceMarkdown(summary),
      ].join("\n"),
    });
    log?.event(this.#url ? "pull_request" : "pull_request_failed", {
      url: this.#url,
      step: "create",
    });
    if (!this.#url) return "finishline could not open the pull request";
    this.#options.stderr?.(`[finishline] opened pull request ${this.#url}\n`);
    return undefined;
  }

  /** The verification the pull request's checks give: passed, timed out, or failed with logs. */
  async #verdict(
    checks: PullRequestChecks & { timedOut: boolean },
  ): Promise<VerificationRecord> {
    if (checks.state === "pass" || checks.state === "none") {
      return {
        passed: true,
        checker: "pull_request",
        feedback: checks.state === "none"
          ? "The pull request has no checks"
          : `The pull request's ${checks.checks.length} checks passed`,
        trigger: "pull_request",
      };
    }
    if (checks.timedOut) {
      const pending = checks.checks.filter((check) => check.state === "pending");
      return prFault(
        `The pull request's checks did not finish within ${
          Math.round(this.#options.timeoutMs / 1000)
        } s (still pending: ${pending.map((check) => check.name).join(", ")})`,
      );
    }
    const failing = checks.checks.filter((check) =>
      check.state === "fail" || check.state === "cancel"
    );
    const parts = [
      `The pull request's checks failed: ${failing.map((check) => `"${check.name}"`).join(", ")}.`,
    ];
    for (const check of failing.slice(0, 3)) {
      const logTail = check.runId
        ? await this.#options.github.failedRunLog(check.runId, 40)
        : undefined;
      if (logTail) parts.push(`Last lines of the failed log of "${check.name}":\n${logTail}`);
    }
    parts.push("Fix the code (not the CI configuration), commit, and call complete_task again.");
    return {
      passed: false,
      checker: "pull_request",
      feedback: parts.join("\n\n"),
      trigger: "pull_request",
    };
  }
}

/** A pull request step that failed for reasons the agent cannot fix: a fault. */
function prFault(feedback: string): VerificationRecord {
  return {
    passed: false,
    checker: "pull_request",
    feedback,
    trigger: "pull_request",
    faulted: true,
  };
}

/**
 * `checks`: print the detected checks and run each once on the working tree.
 *
 * @param root The repository root.
 * @param definition The agent definition (for `verify`).
 * @param write Output.
 * @returns 0 when every check passed, 1 otherwise.
 */
export async function listAndRunChecks(
  root: string,
  definition: AgentDefinition,
  write: (text: string) => void,
): Promise<number> {
  const checks = await prepareChecks(definition, root);
  write(`${describeChecks(definition, checks)}\n`);
  if (!checks.gate) return 0;
  let failed = 0;
  for (const check of checks.gate.checks) {
    write(`\nrunning ${check.command} ...\n`);
    const run = await runRepoCheck(check, {
      cwd: root,
      timeoutMs: definition.verify.checkTimeoutSeconds * 1000,
    });
    if (run.green) {
      write(
        `green  ${check.name} (${(run.durationMs / 1000).toFixed(1)} s${
          run.testsRun !== undefined ? `, ${run.testsRun} tests` : ""
        })\n`,
      );
    } else {
      failed++;
      write(`red    ${check.name}${describeRun(run)}\n`);
    }
  }
  write(`\n${checks.gate.checks.length - failed} green, ${failed} red\n`);
  return failed === 0 ? 0 : 1;
}
