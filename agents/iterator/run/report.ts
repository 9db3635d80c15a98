/**
 * The Markdown run report written next to the log at the end of every run:
 * outcome and reason, the task and the command line, start, time, cost,
 * model and branch, the iterations, the commits and changed files, the
 * interruptions and resumes, the verification failures (those the agent
 * fixed in the same session too) and evidence, every
 * complete_task report, the learnings captured and the next actions.
 *
 * Everything in it that finishline did not write itself (the task, the
 * agent's words, check output, commit subjects, paths, names) goes through
 * `agents/support/markdown.ts`: it is shown as written and can add no markup, heading or
 * HTML of its own.
 *
 * @module
 */

import { basename, dirname, relative } from "node:path";
import type { CheckRun } from "../../evidence/run/check_run.ts";
import { describeDeclaration } from "../../evidence/judge/declarations.ts";
import { proofFindings, proofSummary } from "../../evidence/proof/proof_text.ts";
import type {
  CheckEvidence,
  IterationSummary,
  ReviewedDeclaration,
  TestCounts,
} from "../../record/iteration.ts";
import { describeGitSettings, type GitSettingsChange } from "../../git/settings.ts";
import { countTools, seconds, usd } from "../../support/format.ts";
import type { RunSegment } from "../../store/mod.ts";
import type { RunResult } from "../../loop/runner.ts";
import { blockquote, codeBlock, codeSpan, inline, tableCell } from "../../support/markdown.ts";
import { iterationCharts } from "./_mermaid.ts";

/** A file the run changed, between its starting commit and its last. */
export interface ChangedFile {
  /** The path, relative to the repository root. */
  path: string;
  /** `added`, `modified`, `deleted`, ... */
  change: string;
  /** Lines added (null for a binary file). */
  added: number | null;
  /** Lines deleted (null for a binary file). */
  deleted: number | null;
}

/** The run's work in git: its commits and changed files since the starting commit. */
export interface RunChanges {
  /** The commit the run started from. */
  baseline: string;
  /** The run's commits, oldest first. */
  commits: Array<{ hash: string; subject: string }>;
  /** The files those commits changed. */
  files: ChangedFile[];
  /** Files the run left uncommitted at the end (new, or changed since the start). */
  uncommitted: string[];
  /** Files that were uncommitted before the run and that it did not touch: the user's. */
  dirtyBefore?: string[];
}

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
    & Partial<
      Pick<
        RunResult,
        "baseline" | "reproduction" | "review" | "reviews" | "modelFailure" | "unverified"
      >
    >;
  /** Agent name. */
  agent: string;
  /** Completion handler type and criteria. */
  handler: string;
  /** Learnings captured by the finish workflow. */
  learnings?: string[];
  /** What to do next, from the finish workflow. */
  nextActions?: string[];
  /** The branch the work is on. */
  branch?: string;
  /** The worktree the run worked in, with `--worktree`. */
  worktree?: string;
  /** The pull request, if one was opened. */
  pullRequest?: string;
  /** What was detected as the run's checks, and why. */
  checks?: string;
  /** What the run was asked to do: the `--task` text, or the issue or project. */
  task?: string;
  /** The report's title, when better than the task's first line (an issue's number and title). */
  title?: string;
  /** The command line that started the run, quoted for a shell. */
  command?: string;
  /** The working directory the command ran in. */
  cwd?: string;
  /** For an interrupted run: the command line that resumes it. */
  resumeCommand?: string;
  /** When the run started (ISO timestamp); for a resumed run, its first start. */
  startedAt?: string;
  /** The model the agent ran on. */
  model?: string;
  /** The commits and changed files since the starting commit. */
  changes?: RunChanges;
  /** Git settings (`.git/config`, hooks, ...) that changed during the run and were restored. */
  gitSettings?: GitSettingsChange[];
  /** The run's segments, the current one ended: its start and each resume. */
  segments?: RunSegment[];
  /** This segment's JSONL log. */
  logFile?: string;
  /** Where the report is written: links to logs are relative to it. */
  reportFile?: string;
  /** The agent sessions' sandbox and network. */
  isolation?: string;
}

const STATUS_MARK: Record<string, string> = {
  completed: "✅",
  failed: "❌",
  max_iterations: "⏹️",
  stalled: "🛑",
  blocked: "⛔",
  budget_exhausted: "💸",
  unverified: "❔",
  interrupted: "⏸️",
};

/** How many commits and files the report lists before it says how many more there are. */
const LIST_LIMIT = { commits: 50, files: 100 };

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
  // The answer first: the outcome, what is not verified, the evidence; then how the run went.
  const lines = [
    `# ${inline(reportTitle(input), { limit: 200 })}`,
    "",
    `${STATUS_MARK[result.status] ?? ""} **${result.status}**: ${
      // An unverified reason starts with the status's own word: said once.
      inline(result.completionReason.replace(/^unverified: /, ""))}`.trim(),
    ...unverifiedLines(result.unverified),
    ...unverifiedSection(input),
    ...evidenceSection(input),
    "",
    "## The run",
    "",
    `- Run: ${codeSpan(result.runId)}`,
    ...factLines(input),
    ...taskSection(input),
    ...resumeSection(input),
    "",
    "## Iterations",
    "",
    "| # | duration | cost | tokens in/out | tools | commits | verdict |",
    "|---|---|---|---|---|---|---|",
    ...result.summaries.map(iterationRow),
    ...chartLines(result.summaries),
    ...changesSection(input.changes),
    ...segmentsSection(input),
    ...failuresSection(result.summaries),
    ...agentReportsSection(result.summaries),
    "",
    "## Learnings captured",
    "",
  ];
  if (input.learnings?.length) {
    for (const learning of input.learnings) lines.push(`- ${oneLine(learning)}`);
  } else {
    lines.push("(none)");
  }
  if (input.nextActions?.length) {
    lines.push("", "## Next actions", "");
    for (const action of input.nextActions) lines.push(`- ${oneLine(action)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** No evidence is not success: said right under the outcome, in the words the final line uses. */
function unverifiedLines(unverified: string | undefined): string[] {
  if (!unverified) return [];
  return [
    "",
    `> **unverified: ${
      inline(unverified)
    }.** Nothing checked this work: no check passed on it and no held-out test ran, so finishline closed and completed nothing on its authority. Check the work yourself, or give the repository a check (a test its runner runs, or \`verify.checks\`) and run again.`,
  ];
}

/** How many iterations make the charts worth their room: with fewer, the table says it all. */
const CHART_MIN_ITERATIONS = 4;

/**
 * The report's title: what the run was asked (the task's first line, the
 * issue), not its id.
 *
 * @param input The report's input.
 * @returns The title.
 */
export function reportTitle(input: Pick<ReportInput, "title" | "task" | "result">): string {
  const text = (input.title ?? input.task ?? "").split("\n").find((line) => line.trim() !== "");
  if (!text) return `finishline run ${input.result.runId}`;
  const line = text.trim();
  return line.length <= 100 ? line : `${line.slice(0, 99).trimEnd()}…`;
}

/**
 * What the run did not verify, right under the outcome: no check found, a
 * held-out test the verifier could not write, work left uncommitted.
 */
function unverifiedSection(input: ReportInput): string[] {
  const { result } = input;
  const items: string[] = [];
  const last = result.summaries.findLast((summary) => summary.checks)?.checks;
  // The unverified outcome says it louder above.
  if (last && last.checks.length === 0 && !last.heldOut && !result.unverified) {
    items.push("no check of the repository ran at the last claim");
  }
  if (result.reproduction && !result.reproduction.kept) {
    items.push(`no held-out test: ${oneLine(result.reproduction.why)}`);
  }
  if (input.changes?.uncommitted.length) {
    items.push(
      `left uncommitted, so never checked: ${input.changes.uncommitted.map(codeSpan).join(", ")}`,
    );
  }
  if (items.length === 0) return [];
  return ["", "**Not verified:**", "", ...items.map((item) => `- ${item}`)];
}

/** The run's time and cost: the sums over its segments when it has them. */
function totals(input: ReportInput): { durationMs: number; costUsd: number; segments: number } {
  const segments = input.segments ?? [];
  const known = segments.every((segment) =>
    segment.durationMs !== null && segment.costUsd !== null
  );
  if (segments.length === 0 || !known) {
    return { durationMs: input.result.durationMs, costUsd: input.result.costUsd, segments: 1 };
  }
  return {
    durationMs: segments.reduce((sum, segment) => sum + segment.durationMs!, 0),
    costUsd: segments.reduce((sum, segment) => sum + segment.costUsd!, 0),
    segments: segments.length,
  };
}

function factLines(input: ReportInput): string[] {
  const { result } = input;
  const total = totals(input);
  const interrupts = (input.segments ?? []).slice(0, -1).length;
  const lines = [
    `- Agent: ${codeSpan(input.agent)}, handler: ${inline(input.handler)}`,
    `- Iterations: ${result.iterations}; duration: ${seconds(total.durationMs)}${
      total.segments > 1
        ? ` over ${total.segments} segments (stopped ${interrupts} time${
          interrupts === 1 ? "" : "s"
        } and resumed)`
        : ""
    }; cost: ${usd(total.costUsd)}`,
  ];
  if (input.startedAt) lines.push(`- Started: ${timestamp(input.startedAt)}`);
  if (input.model) lines.push(`- Model: ${inline(input.model)}`);
  if (input.isolation) lines.push(`- Sandbox: ${inline(input.isolation)}`);
  if (input.branch) {
    lines.push(
      `- Branch: ${codeSpan(input.branch)}${
        input.worktree ? ` (worktree ${codeSpan(input.worktree)})` : ""
      }`,
    );
  }
  if (input.pullRequest) lines.push(`- Pull request: ${inline(input.pullRequest)}`);
  if (input.gitSettings?.length) {
    lines.push(
      `- Git settings changed during the run, restored at its end: ${
        inline(describeGitSettings(input.gitSettings), { limit: 1000 })
      }`,
    );
  }
  if (result.modelFailure !== undefined) {
    lines.push(
      "- Finish: no model was asked, since the run ended because the model could not be used; " +
        "the summary and next actions come from the run's record",
    );
  }
  if (input.logFile) lines.push(`- Log: ${fileLink(input.logFile, input.reportFile)}`);
  return lines;
}

function taskSection(input: ReportInput): string[] {
  if (!input.task && !input.command) return [];
  const lines = ["", "## Task", ""];
  if (input.task) lines.push(...blockquote(input.task), "");
  if (input.command) {
    lines.push(
      `Started with${input.cwd ? ` (in ${codeSpan(input.cwd)})` : ""}:`,
      "",
      ...codeBlock(input.command, { language: "sh" }),
    );
  }
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function resumeSection(input: ReportInput): string[] {
  if (!input.resumeCommand) return [];
  return ["", "Resume it with:", "", ...codeBlock(input.resumeCommand, { language: "sh" })];
}

function iterationRow(summary: IterationSummary): string {
  // Tool names come from the agent's session (MCP servers name their own).
  const tools = countTools(summary.toolsUsed) || "none";
  const commits = summary.git ? String(summary.git.newCommits ?? "?") : "-";
  const verdict = summary.verdict ?? "-";
  return `| ${summary.iteration} | ${seconds(summary.durationMs)} | ${
    usd(summary.costUsd)
  } | ${summary.tokens.input}/${summary.tokens.output} | ${cell(tools)} | ${commits} | ${
    cell(verdict)
  } |`;
}

/** Time and cost per iteration as charts, once there are enough iterations to compare. */
function chartLines(summaries: IterationSummary[]): string[] {
  return summaries.length < CHART_MIN_ITERATIONS ? [] : ["", ...iterationCharts(summaries)];
}

function changesSection(changes: RunChanges | undefined): string[] {
  if (!changes) return [];
  const base = codeSpan(changes.baseline.slice(0, 12));
  const lines = ["", "## Commits and changed files", ""];
  const { commits, files } = changes;
  lines.push(
    commits.length === 0
      ? `No commits since ${base}.`
      : `${commits.length} commit${commits.length === 1 ? "" : "s"} since ${base}:`,
  );
  if (commits.length > 0) lines.push("");
  for (const commit of commits.slice(0, LIST_LIMIT.commits)) {
    lines.push(`- ${codeSpan(commit.hash)} ${oneLine(commit.subject)}`);
  }
  if (commits.length > LIST_LIMIT.commits) {
    lines.push(`- ... and ${commits.length - LIST_LIMIT.commits} more`);
  }
  if (files.length > 0) {
    lines.push("", `Files changed (${files.length}):`, "");
    for (const file of files.slice(0, LIST_LIMIT.files)) {
      const lineCounts = file.added === null ? "binary" : `+${file.added} −${file.deleted}`;
      lines.push(`- ${codeSpan(file.path)} (${inline(file.change)}, ${lineCounts})`);
    }
    if (files.length > LIST_LIMIT.files) {
      lines.push(`- ... and ${files.length - LIST_LIMIT.files} more`);
    }
  }
  if (changes.uncommitted.length > 0) {
    lines.push(
      "",
      `Left uncommitted: ${changes.uncommitted.map(codeSpan).join(", ")}`,
    );
  }
  if (changes.dirtyBefore?.length) {
    lines.push(
      "",
      `Uncommitted before the run, untouched by it (yours): ${
        changes.dirtyBefore.map(codeSpan).join(", ")
      }`,
    );
  }
  return lines;
}

function segmentsSection(input: ReportInput): string[] {
  const segments = input.segments ?? [];
  if (segments.length < 2) return [];
  const lines = [
    "",
    "## Interruptions and resumes",
    "",
    "| # | started | duration | cost | iterations | how it ended | log |",
    "|---|---|---|---|---|---|---|",
  ];
  segments.forEach((segment, index) => {
    const last = segments[index + 1]?.afterIteration ?? input.result.iterations;
    const first = segment.afterIteration + 1;
    const iterations = last < first ? "–" : first === last ? String(first) : `${first}–${last}`;
    const ended = `${segment.status}${segment.reason ? `: ${oneLine(segment.reason)}` : ""}`;
    lines.push(
      `| ${segment.number} | ${timestamp(segment.startedAt)} | ${
        segment.durationMs === null ? "?" : seconds(segment.durationMs)
      } | ${segment.costUsd === null ? "?" : usd(segment.costUsd)} | ${iterations} | ${
        tableCell(ended)
      } | ${segment.logFile ? fileLink(segment.logFile, input.reportFile) : "–"} |`,
    );
  });
  return lines;
}

function failuresSection(summaries: IterationSummary[]): string[] {
  const failures = summaries.flatMap(failureLines);
  return failures.length === 0 ? [] : ["", "## Verification failures", "", ...failures];
}

/** An iteration's failed checks: those the agent fixed in the same session, then the last one if it failed; the checks' output as a code block. */
function failureLines(summary: IterationSummary): string[] {
  const lines = (summary.fixedChecks ?? []).flatMap((fixed) => [
    `- Iteration ${summary.iteration}, ${
      inline(fixed.checker)
    } (at complete_task; fixed in the same iteration):`,
    "",
    ...codeBlock(fixed.feedback),
    "",
  ]);
  const last = summary.verification;
  if (last && !last.passed) {
    lines.push(
      `- Iteration ${summary.iteration}, ${inline(last.checker)}:`,
      "",
      ...codeBlock(last.feedback),
      "",
    );
  }
  return lines;
}

function evidenceSection(input: ReportInput): string[] {
  if (!input.checks) return [];
  const { result } = input;
  // The table first: how each check was at the start and at the last claim.
  const gated = evidenceMarkdown(result.summaries.findLast((summary) => summary.checks), {
    declarations: false,
  });
  const lines = ["", "## Evidence: the repository's checks"];
  if (gated.length > 0) lines.push("", ...gated);
  // What was detected comes from the repository's own files (script names, commands).
  lines.push("", "Detected:", "", ...codeBlock(input.checks));
  const baseline = result.baseline;
  if (baseline) {
    lines.push(
      "",
      baseline.error
        ? `Baseline on ${codeSpan(baseline.commit.slice(0, 12))}: could not run (${
          oneLine(baseline.error)
        })`
        : `Baseline on ${codeSpan(baseline.commit.slice(0, 12))} (${
          seconds(baseline.durationMs)
        }): ${
          baseline.runs.map((run) =>
            `${codeSpan(run.name)} ${
              run.green
                ? "green"
                : `red${run.failing.length ? ` (${failingTests(run.failing)})` : ""}${
                  secondRun(baseline.retries?.find((retry) => retry.name === run.name))
                }`
            }`
          ).join(", ")
        }`,
    );
  }
  const reproduction = result.reproduction;
  if (reproduction) {
    const cost = reproduction.cost;
    const spent = `verifier: ${cost.requests} model ${
      cost.requests === 1 ? "request" : "requests"
    }, ${cost.tokens.input + cost.tokens.output} tokens, $${cost.costUsd.toFixed(4)}, ${
      seconds(cost.durationMs)
    }`;
    const last = result.summaries.findLast((summary) => summary.checks?.heldOut)?.checks?.heldOut;
    lines.push(
      "",
      reproduction.kept
        ? `Held-out reproduction test: ${
          failingTests(reproduction.test.tests)
        } failed on the starting commit${
          last
            ? `; on the last claim ${
              last.passed
                ? "it passed"
                : last.overruled
                ? "it failed, and the reviewer accepted the worker's case that it contradicts the task"
                : "it failed"
            }`
            : ""
        } (${spent})`
        : `Held-out reproduction test: none, ${
          oneLine(reproduction.why)
        }; done rests on the other evidence (${spent})`,
      ...reproduction.notes.map((note) => `- verifier: ${oneLine(note)}`),
    );
  }
  const review = result.review;
  if (review && review.sessions > 0) {
    lines.push(
      "",
      `Reviewer of declarations: ${review.sessions} ${
        review.sessions === 1 ? "session" : "sessions"
      }, ${review.requests} model ${review.requests === 1 ? "request" : "requests"}, ${
        review.tokens.input + review.tokens.output
      } tokens, $${review.costUsd.toFixed(4)}, ${seconds(review.durationMs)}`,
    );
  }
  if (result.reviews?.length) {
    lines.push("", `**Declarations, reviewed independently** (${REVIEWER_SAW}):`);
    for (const review of result.reviews) {
      lines.push(
        ...review.declarations.map((entry) =>
          `${declarationLine(entry)} (on ${codeSpan(review.commit.slice(0, 12))})`
        ),
      );
    }
  }
  return lines;
}

/** Every complete_task call, one per iteration that made one; the request only when it changed. */
function agentReportsSection(summaries: IterationSummary[]): string[] {
  const reported = summaries.filter((summary) => summary.completeTask);
  if (reported.length === 0) return [];
  const lines = ["", "## The agent's reports (complete_task)"];
  let request: string | undefined;
  for (const summary of reported) {
    const report = summary.completeTask!;
    lines.push("", `### Iteration ${summary.iteration}: ${report.status}`, "");
    if (report.original_request_summary !== request) {
      request = report.original_request_summary;
      lines.push(`- Request: ${oneLine(request)}`);
    }
    lines.push(`- Summary: ${oneLine(report.summary)}`);
    if (report.remaining_work) lines.push(`- Remaining work: ${oneLine(report.remaining_work)}`);
    if (report.files_modified?.length) {
      lines.push(`- Files: ${report.files_modified.map(codeSpan).join(", ")}`);
    }
    if (report.next_steps) lines.push(`- Next steps: ${oneLine(report.next_steps)}`);
  }
  return lines;
}

/** Outside text on one line of the report, escaped, and cut where it would run on. */
function oneLine(text: string): string {
  return inline(text, { limit: 400 });
}

/** Outside text for a table cell. */
function cell(text: string): string {
  return tableCell(oneLine(text));
}

/** The first failing tests of a check, by name as the test runner printed them. */
/** How a check red at the baseline did when it ran again. */
function secondRun(retry: CheckRun | undefined): string {
  if (!retry) return "";
  return retry.green
    ? ", green when run again"
    : `, red again${retry.failing.length ? ` (${failingTests(retry.failing)})` : ""}`;
}

function failingTests(names: string[]): string {
  return names.slice(0, 5).map((name) => inline(name)).join(", ");
}

/**
 * A check's test counts at the baseline and now, so a suite made green by
 * skipping tests shows: "1 passed, 2 failed → 1 passed, 2 ignored".
 */
function testsCell(check: CheckEvidence): string {
  const before = countsText(check.baselineCounts ?? { run: check.baselineTestsRun });
  const now = countsText(check.counts ?? { run: check.testsRun });
  if (before === undefined && now === undefined) return "–";
  return `${before ?? "?"} → ${now ?? "?"}`;
}

function countsText(counts: TestCounts): string | undefined {
  const parts: string[] = [];
  if (counts.passed !== undefined) parts.push(`${counts.passed} passed`);
  else if (counts.run !== undefined) parts.push(`${counts.run} run`);
  for (const kind of ["failed", "skipped", "ignored", "todo"] as const) {
    const count = counts[kind];
    if (count !== undefined && (count > 0 || (kind === "failed" && parts.length === 0))) {
      parts.push(`${count} ${kind}`);
    }
  }
  return parts.length > 0 ? parts.join(", ") : undefined;
}

/** `2026-11-22 13:24:20 UTC` from an ISO timestamp. */
function timestamp(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/** A Markdown link to a file, relative to the report when its place is known. */
function fileLink(file: string, reportFile: string | undefined): string {
  const target = reportFile ? relative(dirname(reportFile), file) || basename(file) : file;
  // encodeURI leaves parentheses, and a `)` in the path would end the link.
  const href = encodeURI(target.replaceAll("\\", "/")).replace(
    /[()]/g,
    (paren) => paren === "(" ? "%28" : "%29",
  );
  return `[${inline(basename(file))}](${href})`;
}

/**
 * The evidence section of a pull request body or report: each check against
 * the baseline, declarations of out-of-scope checks and changed tests.
 *
 * @param summary The last iteration's summary.
 * @returns Markdown lines (empty when there is no check evidence).
 */
export function evidenceMarkdown(
  summary: IterationSummary | undefined,
  options: { declarations?: boolean } = {},
): string[] {
  const evidence = summary?.checks;
  if (!evidence) return [];
  const lines = [
    "| check | baseline | final | tests (baseline → final) | failing tests |",
    "|---|---|---|---|---|",
  ];
  for (const check of evidence.checks) {
    lines.push(
      `| ${tableCell(codeSpan(check.name))} | ${check.baseline} | ${check.now}${
        check.flaky ? " (flaky once)" : ""
      } | ${testsCell(check)} | ${tableCell(failingTests(check.failing)) || "–"} |`,
    );
  }
  if (evidence.outOfScope.length > 0) {
    lines.push("", "**Declared out of scope by the agent:**");
    for (const entry of evidence.outOfScope) {
      lines.push(`- ${codeSpan(entry.check)}: ${inline(entry.reason)}`);
    }
  }
  if (evidence.rerun?.length) {
    // A narrowed run never passes a claim: the table above is the full suite's unless one still failed.
    lines.push("", "**The last claim's failing tests, re-run first:**");
    for (const entry of evidence.rerun) {
      lines.push(
        `- ${codeSpan(entry.check)}: ${tableCell(failingTests(entry.tests))}: ${entry.outcome}${
          entry.why ? ` (${inline(entry.why)})` : ""
        }${entry.command ? `, with ${codeSpan(entry.command)}` : ""}`,
      );
    }
  }
  if (evidence.testsChanged.length > 0) {
    lines.push(
      "",
      `**Tests changed by the agent** (the original versions ${
        evidence.originalsPass ? "still pass" : "fail"
      } against the new code):`,
    );
    for (const entry of evidence.testsChanged) {
      lines.push(
        `- ${codeSpan(entry.path)} (${entry.change}${
          entry.from ? ` from ${codeSpan(entry.from)}` : ""
        }${entry.why ? `, ${inline(entry.why)}` : ""}): ${
          entry.reason === undefined ? "no reason given" : inline(entry.reason)
        }`,
      );
    }
  }
  const worker = evidence.workerTest;
  if (worker) {
    lines.push(
      "",
      `**The agent's own test of the fix** (needed: ${inline(worker.required)}): ${
        worker.tests.length > 0 && worker.files.length === 0
          ? `the repository's own ${
            tableCell(failingTests(worker.tests))
          }, red at the baseline, pass${
            worker.tests.length === 1 ? "es" : ""
          } unchanged on the final one`
          : worker.tests.length > 0
          ? `${tableCell(failingTests(worker.tests))} failed on the starting commit and pass${
            worker.tests.length === 1 ? "es" : ""
          } on the final one`
          : worker.noTest
          ? `none; the agent declared no_test: ${inline(worker.noTest)}`
          : worker.files.length > 0
          ? `none of the tests in ${
            worker.files.map(codeSpan).join(", ")
          } fails on the starting commit`
          : "the agent added or changed no test file"
      }`,
    );
  }
  if (evidence.declarations?.length && options.declarations !== false) {
    lines.push("", `**Declarations, reviewed independently** (${REVIEWER_SAW}):`);
    lines.push(...evidence.declarations.map(declarationLine));
  }
  lines.push(...cleanCopyLines(evidence), ...canaryLines(evidence), ...proofLines(evidence));
  return lines;
}

/** Proof of the change: its figures, the changed lines no test runs and the surviving mutants. */
function proofLines(evidence: NonNullable<IterationSummary["checks"]>): string[] {
  const proof = evidence.changeProof;
  if (!proof) return [];
  const findings = proofFindings(proof);
  return [
    "",
    `**Proof of the change** (finishline's measure of the final claim, in ${
      seconds(proof.durationMs)
    }): ${inline(proofSummary(proof))}`,
    ...findings.map((line) => `- ${inline(line)}`),
  ];
}

/** finishline's canary per runner: whether the runner failed what must fail. */
function canaryLines(evidence: NonNullable<IterationSummary["checks"]>): string[] {
  if (!evidence.canary?.length) return [];
  const said = evidence.canary.map((result) =>
    `${inline(result.runner)} ${result.outcome}${result.why ? ` (${inline(result.why)})` : ""}`
  );
  return [
    "",
    `**Canary** (finishline's own tests that must fail, random per run): ${said.join("; ")}`,
  ];
}

/** Who the reviewer of declarations is, as the report and the pull request say it. */
const REVIEWER_SAW = "the reviewer saw the diff, the task and the reasons, not the agent's session";

/** One reviewed declaration, as a list item. */
function declarationLine(entry: ReviewedDeclaration): string {
  return `- ${inline(describeDeclaration(entry))}: **${entry.verdict}**: ${
    inline(entry.why)
  } (the agent's reason: ${inline(entry.reason)})`;
}

/** Where the checks ran, and what kept them from running or changed how they ran. */
function cleanCopyLines(evidence: NonNullable<IterationSummary["checks"]>): string[] {
  const lines: string[] = [];
  if (evidence.commit) {
    lines.push(
      "",
      `Checked on a clean copy of ${codeSpan(evidence.commit.slice(0, 12))}${
        evidence.setupMs !== undefined ? ` (prepared in ${seconds(evidence.setupMs)})` : ""
      }, never the working tree.`,
    );
  }
  if (evidence.uncommitted?.length) {
    lines.push(
      "",
      `**Not verified, uncommitted:** ${evidence.uncommitted.map(codeSpan).join(", ")}`,
    );
  }
  if (evidence.dependencyChanges?.length) {
    lines.push(
      "",
      `**Dependency folders changed by the agent** (the checks did not run): ${
        evidence.dependencyChanges.map((change) => inline(change)).join(", ")
      }`,
    );
  }
  for (const note of evidence.dependencyNotes ?? []) {
    lines.push("", `Dependencies: ${inline(note)}`);
  }
  const flaky = evidence.checks.filter((check) => check.baselineFlaky);
  if (flaky.length > 0) {
    lines.push("", "**Flaky at the baseline** (failed at its first run, passed when run again):");
    for (const check of flaky) {
      const tests = check.baselineFlaky ?? [];
      lines.push(`- ${codeSpan(check.name)}${tests.length ? `: ${failingTests(tests)}` : ""}`);
    }
  }
  return lines;
}
