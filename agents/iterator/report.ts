/**
 * The Markdown run report written next to the log at the end of every run:
 * outcome and reason, an iterations table, the complete_task summary, the
 * verification failures (those the agent fixed in the same session too) and
 * the learnings captured.
 *
 * @module
 */

import type { IterationSummary } from "../common/completion/types.ts";
import { countTools, seconds, usd } from "../common/format.ts";
import type { RunResult } from "./runner.ts";

/** What a report is made of. */
export interface ReportInput {
  /** The run's result. */
  result:
    & Pick<
      RunResult,
      | "status"
      | "completionReason"
      | "iterations"
      | "costUsd"
      | "durationMs"
      | "runId"
      | "summaries"
    >
    & Partial<Pick<RunResult, "baseline">>;
  /** Agent name. */
  agent: string;
  /** Completion handler type and criteria. */
  handler: string;
  /** Learnings captured by the finish workflow. */
  learnings?: string[];
  /** The worktree branch, if any. */
  branch?: string;
  /** The pull request, if one was opened. */
  pullRequest?: string;
  /** What was detected as the run's checks, and why. */
  checks?: string;
}

const STATUS_MARK: Record<string, string> = {
  completed: "✅",
  failed: "❌",
  max_iterations: "⏹️",
  stalled: "🛑",
  blocked: "⛔",
  budget_exhausted: "💸",
  interrupted: "⏸️",
};

/**
 * Render the run report.
 *
 * @param input The run and what the finish workflow captured.
 * @returns Markdown.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderReport } from "./report.ts";
 * const markdown = renderReport({
 *   result: { status: "completed", completionReason: "Completed 1/1 iterations", iterations: 0, costUsd: 0,
 *     durationMs: 1000, runId: "r1", summaries: [] },
 *   agent: "iterator",
 *   handler: "iterate (1 iteration)",
 * });
 * assert.match(markdown, /^# finishline run r1/);
 * ```
 */
export function renderReport(input: ReportInput): string {
  const { result } = input;
  const lines = [
    `# finishline run ${result.runId}`,
    "",
    `${STATUS_MARK[result.status] ?? ""} **${result.status}**: ${result.completionReason}`.trim(),
    "",
    `- Agent: \`${input.agent}\`, handler: ${input.handler}`,
    `- Iterations: ${result.iterations}; duration: ${seconds(result.durationMs)}; cost: ${
      usd(result.costUsd)
    }`,
  ];
  if (input.branch) lines.push(`- Branch: \`${input.branch}\``);
  if (input.pullRequest) lines.push(`- Pull request: ${input.pullRequest}`);
  lines.push(
    "",
    "## Iterations",
    "",
    "| # | duration | cost | tokens in/out | tools | commits | verdict |",
    "|---|---|---|---|---|---|---|",
  );
  for (const summary of result.summaries) lines.push(iterationRow(summary));
  const failures = result.summaries.flatMap(failureLines);
  if (failures.length > 0) lines.push("", "## Verification failures", "", ...failures);
  if (input.checks) {
    lines.push("", "## Evidence: the repository's checks", "", "```", input.checks, "```");
    const baseline = result.baseline;
    if (baseline) {
      lines.push(
        "",
        baseline.error
          ? `Baseline on \`${baseline.commit.slice(0, 12)}\`: could not run (${baseline.error})`
          : `Baseline on \`${baseline.commit.slice(0, 12)}\` (${seconds(baseline.durationMs)}): ${
            baseline.runs.map((run) =>
              `\`${run.name}\` ${
                run.green
                  ? "green"
                  : `red${run.failing.length ? ` (${run.failing.slice(0, 5).join(", ")})` : ""}`
              }`
            ).join(", ")
          }`,
      );
    }
    const gated = evidenceMarkdown(result.summaries.findLast((summary) => summary.checks));
    if (gated.length > 0) lines.push("", ...gated);
  }
  const report = result.summaries.findLast((summary) => summary.completeTask)?.completeTask;
  if (report) {
    lines.push("", "## The agent's report (complete_task)", "", `- Status: ${report.status}`);
    lines.push(
      `- Request: ${oneLine(report.original_request_summary)}`,
      `- Summary: ${oneLine(report.summary)}`,
    );
    if (report.remaining_work) lines.push(`- Remaining work: ${oneLine(report.remaining_work)}`);
    if (report.files_modified?.length) {
      lines.push(`- Files: ${report.files_modified.map((file) => `\`${file}\``).join(", ")}`);
    }
    if (report.next_steps) lines.push(`- Next steps: ${oneLine(report.next_steps)}`);
  }
  lines.push("", "## Learnings captured", "");
  if (input.learnings?.length) {
    for (const learning of input.learnings) lines.push(`- ${oneLine(learning)}`);
  } else {
    lines.push("(none)");
  }
  return `${lines.join("\n")}\n`;
}

/** An iteration's failed checks: those the agent fixed in the same session, then the last one if it failed. */
function failureLines(summary: IterationSummary): string[] {
  const lines = (summary.fixedChecks ?? []).map((fixed) =>
    `- Iteration ${summary.iteration}, ${fixed.checker} (at complete_task; fixed in the same iteration): ${
      oneLine(fixed.feedback)
    }`
  );
  const last = summary.verification;
  if (last && !last.passed) {
    lines.push(`- Iteration ${summary.iteration}, ${last.checker}: ${oneLine(last.feedback)}`);
  }
  return lines;
}

function iterationRow(summary: IterationSummary): string {
  const tools = countTools(summary.toolsUsed) || "none";
  const commits = summary.git ? String(summary.git.newCommits ?? "?") : "-";
  const verdict = summary.verdict ?? "-";
  return `| ${summary.iteration} | ${seconds(summary.durationMs)} | ${
    usd(summary.costUsd)
  } | ${summary.tokens.input}/${summary.tokens.output} | ${
    tools.replaceAll("|", "\\|")
  } | ${commits} | ${verdict} |`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 400 ? `${flat.slice(0, 400)}...` : flat;
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
