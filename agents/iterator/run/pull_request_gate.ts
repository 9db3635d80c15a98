/**
 * The pull request's CI as the last gate of a `--create-pr` run: push the
 * branch, open the pull request once, wait for its checks, and feed failing
 * checks back with the tail of their logs.
 *
 * @module
 */

import { redactorOfProcess } from "../../support/redact.ts";
import { blockquote } from "../../support/markdown.ts";
import type { VerificationRecord } from "../../checks/checker_contract.ts";
import type { IterationSummary } from "../../record/iteration.ts";
import type { GitRepo } from "../../git/repo.ts";
import type { GitHubCli, PullRequestChecks } from "../../github/port.ts";
import type { RunLog } from "../../support/log.ts";
import type { Worktree } from "../../git/worktree.ts";
import { evidenceMarkdown } from "./report.ts";
import type { PullRequestGate } from "../../loop/runner.ts";

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
  ): Promise<{ url?: string; verification: VerificationRecord; checksPassed?: number }> {
    const problem = await this.#publish(summary);
    if (problem) return { url: this.#url, verification: prFault(problem) };
    const { github, log } = this.#options;
    const checks = await github.waitForPullRequestChecks(this.#url!, {
      timeoutMs: this.#options.timeoutMs,
      intervalMs: this.#options.intervalMs,
      signal,
    });
    log?.event("pull_request_checks", { url: this.#url, ...checks });
    const checksPassed = checks.state === "pass"
      ? checks.checks.filter((check) => check.state === "pass").length
      : 0;
    return { url: this.#url, verification: await this.#verdict(checks), checksPassed };
  }

  /** Push the branch and open the pull request once; says what failed, if anything. */
  async #publish(summary: IterationSummary): Promise<string | undefined> {
    const { worktree, git, github, log } = this.#options;
    const why = await git.push(worktree.branch);
    if (why) {
      log?.event("pull_request_failed", { step: "push", error: why });
      return `finishline could not push "${worktree.branch}": ${why}`;
    }
    if (this.#url) return undefined;
    this.#url = await github.createPullRequest({
      base: worktree.base,
      head: worktree.branch,
      // Redacted before it is cut: a secret cut in two would no longer be recognised.
      title: redactorOfProcess().redact(summary.completeTask?.summary ?? "").split("\n")[0]
        .slice(0, 72) ||
        `finishline: ${worktree.branch}`,
      body: [
        openedBecause(summary),
        "",
        ...(summary.completeTask
          ? ["**Summary:**", "", ...blockquote(summary.completeTask.summary)]
          : []),
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

/**
 * The first line of the pull request's body: what the local evidence said.
 * Nothing is said to have passed when nothing checked the work.
 */
function openedBecause(summary: IterationSummary): string {
  const local = summary.verification;
  if (!local || local.unverified) {
    return `Opened by finishline, **unverified: ${
      local?.unverified ?? "no checks found"
    }**: no local check verified the work of iteration ${summary.iteration}; it completes only if this pull request's checks run and pass.`;
  }
  return `Opened by finishline: the local checks passed in iteration ${summary.iteration}; it completes once this pull request's checks pass.`;
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
