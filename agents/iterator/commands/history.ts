/**
 * The history subcommands: `runs`, `runs show RUN_ID`, `runs stats`, `learnings search
 * [QUERY]` and `finish RUN_ID` (its model steps on the model the run
 * recorded), all with `--json` (costs rounded to a
 * millionth of a dollar there, to four decimals in text).
 *
 * @module
 */

import { countTools, jsonWithCosts, seconds, shortId, usd } from "../../support/format.ts";
import { UsageError } from "../../support/errors.ts";
import { GitRepo } from "../../git/repo.ts";
import type { EmbeddingsConfig } from "../../definition/definition_types.ts";
import type {
  FinishRecord,
  FinishUsage,
  FoundLearning,
  RunSegment,
  RunStore,
  SkillRecord,
  StoredIteration,
  StoredRun,
} from "../../store/mod.ts";
import type { HistoryCommand } from "../flags/command_line.ts";
import type { CommandIO } from "../run/command.ts";
import { commandLine, resumeCommand } from "../run/report_facts.ts";
import { openStore, workingDirectory } from "../places.ts";
import { type RunRecord, runRecord } from "./run_record.ts";
import { noColour, outcomeColour, type Paint } from "../terminal/colour.ts";
import {
  describeMetrics,
  FALSE_ABORT_TARGET,
  runMetrics,
  sumMetrics,
} from "../../record/run_metrics.ts";

/**
 * Run a history subcommand.
 *
 * @param command The parsed subcommand.
 * @param io Output.
 * @returns The exit code.
 */
export async function historyCommand(command: HistoryCommand, io: CommandIO): Promise<number> {
  const cwd = await workingDirectory(command.cwd);
  const repo = await GitRepo.open(cwd);
  const store = openStore(command.store, repo?.root ?? cwd, {
    embeddings: command.kind === "learnings search"
      ? await searchSettings(command, cwd)
      : undefined,
    stderr: io.stderr,
  });
  try {
    const { json, limit } = command;
    switch (command.kind) {
      case "runs":
        return listRuns(store, { json, limit, agent: command.agent }, io);
      case "runs show":
        return showRun(store, command.runId, json, io);
      case "runs stats":
        return runStats(store, { json, limit, agent: command.agent }, io);
      case "learnings search":
        return searchLearnings(store, command.query, { json, limit }, io);
      case "finish": {
        const { finishCommand } = await import("./finish_command.ts");
        return await finishCommand(store, command.runId, json, io);
      }
    }
  } finally {
    store.close();
  }
}

/**
 * The `learnings.embeddings` that `learnings search` uses: those of `--agent`,
 * else of the default agent, iterator (when its definition loads; keyword search when not).
 */
async function searchSettings(
  command: HistoryCommand,
  cwd: string,
): Promise<EmbeddingsConfig | undefined> {
  // Only here: the definitions' schema takes longer to load than `runs` to answer.
  const { loadDefinition } = await import("../../definition/load.ts");
  if (command.agent) {
    return (await loadDefinition(command.agent, { cwd })).definition.learnings.embeddings;
  }
  try {
    return (await loadDefinition("iterator", { cwd })).definition.learnings.embeddings;
  } catch {
    return undefined;
  }
}

function findRun(store: RunStore, id: string): StoredRun {
  const run = store.getRun(id);
  if (!run) {
    throw new UsageError(
      `No run "${id}" in the history (or the prefix matches several): see "runs"`,
    );
  }
  return run;
}

function listRuns(
  store: RunStore,
  options: { json: boolean; limit: number; agent?: string },
  io: CommandIO,
): number {
  const runs = store.listRuns({ limit: options.limit, agent: options.agent });
  const records = runs.map((run) =>
    runRecord(run, { iterations: store.iterations(run.id), segments: store.segments(run.id) })
  );
  if (options.json) {
    // The record's fields are the stable ones; the stored row's (`id`, `reason`, `argv`,
    // `metrics`, ...) are kept beside them, as before 0.2.
    io.stdout(`${jsonWithCosts(runs.map((run, index) => ({ ...run, ...records[index] })))}\n`);
    return 0;
  }
  if (runs.length === 0) {
    io.stdout("No runs recorded yet.\n");
    return 0;
  }
  io.stdout(`${runsTable(records, io.paint ?? noColour, terminalColumns(io)).join("\n")}\n`);
  return 0;
}

/**
 * The runs as a table: one line each (its id, start, outcome, iterations,
 * cost, time, and what it worked on, last and cut to the terminal), then the
 * totals.
 *
 * @param records The runs, newest first.
 * @param paint Colours the outcomes.
 * @param width The terminal's width; on a pipe, none: the task is never cut.
 * @returns The lines.
 */
export function runsTable(records: RunRecord[], paint: Paint, width?: number): string[] {
  const header = `${"RUN".padEnd(8)}  ${"STARTED".padEnd(16)}  ${"OUTCOME".padEnd(16)} ${
    "ITER".padStart(4)
  }  ${"COST".padStart(8)}  ${"TIME".padStart(7)}  TASK`;
  const lines = [paint("bold", header)];
  for (const record of records) {
    const head = `${shortId(record.runId)}  ${record.startedAt.slice(0, 16).replace("T", " ")}  ${
      paint(outcomeColour(record.status), record.status.padEnd(16))
    } ${String(record.iterations).padStart(4)}  ${usd(record.costUsd).padStart(8)}  ${
      (record.durationMs === null ? "–" : seconds(record.durationMs)).padStart(7)
    }  `;
    const room = width === undefined ? Infinity : Math.max(20, width - header.length + 4);
    const subject = subjectOfRecord(record);
    lines.push(`${head}${subject.length > room ? `${subject.slice(0, room - 1)}…` : subject}`);
  }
  const byStatus = new Map<string, number>();
  for (const record of records) byStatus.set(record.status, (byStatus.get(record.status) ?? 0) + 1);
  const time = records.reduce((sum, record) => sum + (record.durationMs ?? 0), 0);
  const cost = records.reduce((sum, record) => sum + record.costUsd, 0);
  const iterations = records.reduce((sum, record) => sum + record.iterations, 0);
  lines.push(
    "",
    `${records.length} run${records.length === 1 ? "" : "s"} (${
      [...byStatus].sort(byOutcome).map(([status, count]) => `${count} ${status}`).join(", ")
    }): ${iterations} iteration${iterations === 1 ? "" : "s"}, ${usd(cost)}, ${seconds(time)}`,
  );
  return lines;
}

/** The width of this process's own stdout when it is a terminal. */
function terminalColumns(io: CommandIO): number | undefined {
  // Only for the CLI's own stdout (a test's captured output gets no painter).
  if (!io.paint || io.paint === noColour || !Deno.stdout.isTerminal()) return undefined;
  try {
    return Deno.consoleSize().columns;
  } catch {
    return undefined;
  }
}

/** Completed runs first, then the other outcomes by name. */
function byOutcome([a]: [string, number], [b]: [string, number]): number {
  return Number(b === "completed") - Number(a === "completed") || a.localeCompare(b);
}

function subjectOfRecord(record: RunRecord): string {
  if (record.issue !== null) return `issue #${record.issue}`;
  if (record.project !== null) return `project #${record.project}`;
  return record.task ?? `(agent ${record.agent}, no task)`;
}

/**
 * What the runs came to, in the user's terms (how many finished, what they
 * cost and took), then the completion detection's own metrics. A run that
 * recorded none at its end (still going, killed, or recorded before
 * metrics) is counted from its stored iterations and status.
 */
function runStats(
  store: RunStore,
  options: { json: boolean; limit: number; agent?: string },
  io: CommandIO,
): number {
  const runs = store.listRuns({ limit: options.limit, agent: options.agent });
  const unrecorded = runs.filter((run) => !run.metrics);
  const totals = sumMetrics(runs.map((run) =>
    run.metrics ?? runMetrics({
      status: run.status,
      summaries: store.iterations(run.id).map((iteration) => iteration.summary),
    })
  ));
  const records = runs.map((run) =>
    runRecord(run, { iterations: store.iterations(run.id), segments: store.segments(run.id) })
  );
  const outcomes = outcomeTotals(records);
  if (options.json) {
    io.stdout(
      `${
        JSON.stringify({
          ...outcomes,
          ...totals,
          fromIterations: unrecorded.length,
          target: { falseAbortRate: FALSE_ABORT_TARGET },
        })
      }\n`,
    );
    return 0;
  }
  if (runs.length === 0) {
    io.stdout("No runs recorded yet.\n");
    return 0;
  }
  const lines = [
    ...describeOutcomes(outcomes),
    "",
    "How well finishline told done from not done (completion detection):",
    ...describeMetrics(totals).map((line) => `  ${line}`),
  ];
  if (unrecorded.length > 0) {
    lines.push(
      `  (${unrecorded.length} of the runs recorded no metrics at their end: still going, killed, or older than metrics; counted from their stored iterations)`,
    );
  }
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

/** The runs' outcomes and what they spent, as `runs stats --json` prints them. */
interface OutcomeTotals {
  /** Runs counted. */
  runs: number;
  /** Runs by status. */
  byStatus: Record<string, number>;
  /** Runs that completed with the evidence passing. */
  completed: number;
  /** Money spent, in US dollars. */
  costUsd: number;
  /** Time spent, in milliseconds. */
  durationMs: number;
  /** Iterations a completed run took, on average; null with none completed. */
  iterationsPerCompletedRun: number | null;
  /** What a completed run cost, on average; null with none completed. */
  costPerCompletedRunUsd: number | null;
}

function outcomeTotals(records: RunRecord[]): OutcomeTotals {
  const byStatus: Record<string, number> = {};
  for (const record of records) byStatus[record.status] = (byStatus[record.status] ?? 0) + 1;
  const done = records.filter((record) => record.status === "completed");
  const average = (values: number[]) =>
    values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    runs: records.length,
    byStatus,
    completed: done.length,
    costUsd: records.reduce((sum, record) => sum + record.costUsd, 0),
    durationMs: records.reduce((sum, record) => sum + (record.durationMs ?? 0), 0),
    iterationsPerCompletedRun: average(done.map((record) => record.iterations)),
    costPerCompletedRunUsd: average(done.map((record) => record.costUsd)),
  };
}

function describeOutcomes(totals: OutcomeTotals): string[] {
  const share = Math.round((totals.completed / Math.max(1, totals.runs)) * 100);
  return [
    `Finished:   ${totals.completed} of ${totals.runs} run${
      totals.runs === 1 ? "" : "s"
    } completed with the evidence passing (${share} %)`,
    `Outcomes:   ${
      Object.entries(totals.byStatus).map(([status, count]) => `${count} ${status}`).join(", ")
    }`,
    `Spent:      ${usd(totals.costUsd)} and ${seconds(totals.durationMs)} in all`,
    `Per done:   ${
      totals.iterationsPerCompletedRun === null
        ? "n/a (none completed)"
        : `${totals.iterationsPerCompletedRun.toFixed(1)} iterations and ${
          usd(totals.costPerCompletedRunUsd!)
        } a completed run, on average`
    }`,
  ];
}

function showRun(store: RunStore, id: string, json: boolean, io: CommandIO): number {
  const run = findRun(store, id);
  const iterations = store.iterations(run.id);
  const finish = store.getFinish(run.id);
  const skills = store.skills(run.id);
  const segments = store.segments(run.id);
  const record = runRecord(run, { iterations, segments });
  if (json) {
    // `run` is the stored row, as before 0.2; the record's fields are the stable ones.
    io.stdout(`${jsonWithCosts({ ...record, run, iterations, finish, skills, segments })}\n`);
    return 0;
  }
  const paint = io.paint ?? noColour;
  const lines = [
    paint("bold", `Run ${shortId(run.id)}: ${subjectOfRecord(record)}`),
    `Id:         ${run.id} (${run.agent}, ${run.handler}${
      record.model ? `, ${record.model}` : ""
    })`,
    `Status:     ${paint(outcomeColour(run.status), run.status)}${
      run.reason ? `: ${run.reason}` : ""
    }`,
    ...evidenceLines(record),
    `Started:    ${run.startedAt}${run.endedAt ? `, ended ${run.endedAt}` : ""}`,
    ...timeLines(segments),
    `Command:    ${commandLine(run.argv)}`,
    `Directory:  ${run.cwd}`,
    ...(["interrupted", "running"].includes(run.status)
      ? [`Resume:     ${resumeCommand(run.id)}`]
      : []),
    `Totals:     ${run.iterations} iterations, ${
      usd(run.costUsd)
    }, ${run.tokensInput} input / ${run.tokensOutput} output tokens, ${run.turns} turns`,
    `Finish:     ${finish.steps.join(", ") || "not run"}${
      finish.error ? ` (stopped: ${finish.error})` : ""
    }${finishCost(finish.usage)}`,
    "",
    " #  verdict                          duration  cost     commits  tools",
  ];
  lines.push(...iterationLines(iterations));
  lines.push(...finishLines(finish, skills));
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

/** The checks at both ends, and the held-out test, as of the last claim. */
function evidenceLines(record: RunRecord): string[] {
  const { evidence } = record;
  if (evidence.checks.length === 0 && !evidence.heldOut) {
    return [`Evidence:   ${evidence.passed === null ? "no claim was checked" : "no checks"}`];
  }
  const lines = evidence.checks.map((check, index) =>
    `${
      index === 0 ? "Evidence:   " : "            "
    }${check.name}: ${check.baseline} -> ${check.final}${
      check.failingTests.length > 0 ? ` (failing: ${check.failingTests.join(", ")})` : ""
    }`
  );
  if (evidence.heldOut) {
    lines.push(
      `            held-out test: ${evidence.heldOut.passed ? "passed" : "failed"} (${
        evidence.heldOut.tests.join(", ")
      })`,
    );
  }
  return lines;
}

/** What the finish workflow found: the outcome, what remains, the skills, the next actions. */
function finishLines(finish: FinishRecord, skills: SkillRecord[]): string[] {
  const lines: string[] = [];
  if (finish.summary) {
    lines.push("", `Outcome:    ${finish.summary.outcome}: ${finish.summary.reason}`);
    if (finish.summary.remainingWork) lines.push(`Remaining:  ${finish.summary.remainingWork}`);
  }
  if (skills.length > 0) {
    lines.push(
      `Skills:     ${
        skills.map((skill) =>
          `${skill.name} (${
            skill.kind === "update" ? "to update" : skill.kind
          }, ${skill.lifecycle})`
        ).join(", ")
      }`,
    );
  }
  finish.nextActions.forEach((action, index) =>
    lines.push(`${index === 0 ? "Next:      " : "           "} - ${action}`)
  );
  return lines;
}

/** What the finish's model steps cost, after the steps. */
function finishCost(usage: FinishUsage | null): string {
  if (!usage) return "";
  const tokens = usage.tokens.input + usage.tokens.cacheRead + usage.tokens.cacheCreation;
  return `; model ${usage.model}: ${usage.requests} request${
    usage.requests === 1 ? "" : "s"
  }, ${tokens} input / ${usage.tokens.output} output tokens, ${usd(usage.costUsd)}`;
}

/** One line per iteration, with its failed verification and complete_task report. */
function iterationLines(iterations: StoredIteration[]): string[] {
  const lines: string[] = [];
  for (const { number, verdict, summary } of iterations) {
    lines.push(
      `${String(number).padStart(2)}  ${verdict.slice(0, 32).padEnd(32)} ${
        seconds(summary.durationMs).padStart(8)
      }  ${usd(summary.costUsd)}  ${String(summary.git?.newCommits ?? "-").padStart(7)}  ${
        countTools(summary.toolsUsed) || "none"
      }`,
    );
    if (summary.verification && !summary.verification.passed) {
      lines.push(
        `    verification failed (${summary.verification.checker}): ${
          summary.verification.feedback.split("\n")[0]
        }`,
      );
    }
    if (summary.completeTask) {
      lines.push(
        `    complete_task ${summary.completeTask.status}: ${summary.completeTask.summary}`,
      );
    }
  }
  return lines;
}

/** The run's time over its segments, and each segment when it was resumed. */
function timeLines(segments: RunSegment[]): string[] {
  if (segments.length === 0) return [];
  const ended = segments.filter((segment) => segment.durationMs !== null);
  const time = ended.reduce((sum, segment) => sum + segment.durationMs!, 0);
  const open = segments.length - ended.length;
  const lines = [
    `Time:       ${seconds(time)}${segments.length > 1 ? ` over ${segments.length} segments` : ""}${
      open > 0 ? " (a segment has no end recorded: still going, or its process died)" : ""
    }`,
  ];
  if (segments.length < 2) return lines;
  for (const segment of segments) {
    lines.push(
      `  ${segment.number}. ${segment.startedAt}  ${
        segment.durationMs === null ? "?" : seconds(segment.durationMs)
      }  ${segment.costUsd === null ? "?" : usd(segment.costUsd)}  ${segment.status}${
        segment.reason ? `: ${segment.reason}` : ""
      }${segment.logFile ? `  (log ${segment.logFile})` : ""}`,
    );
  }
  return lines;
}

function searchLearnings(
  store: RunStore,
  query: string,
  options: { json: boolean; limit: number },
  io: CommandIO,
): number {
  const found = query.trim()
    ? store.searchLearnings(query, { limit: options.limit })
    : store.recentLearnings({ limit: options.limit });
  if (options.json) {
    io.stdout(`${JSON.stringify(found)}\n`);
    return 0;
  }
  if (found.length === 0) {
    io.stdout(query.trim() ? `No learnings match "${query}".\n` : "No learnings recorded yet.\n");
  }
  for (const learning of found) io.stdout(`${learningLine(learning)}\n`);
  return 0;
}

/** `- text (technique; run 1f0c2a9e; agent; seen in 3 runs, last 2026-11-22)`. */
function learningLine(learning: FoundLearning): string {
  const extra = [
    learning.technique,
    `run ${shortId(learning.runId)}`,
    learning.agent,
    learning.seen > 1
      ? `seen in ${learning.seen} runs, last ${learning.lastSeenAt.slice(0, 10)}`
      : `seen ${learning.lastSeenAt.slice(0, 10)}`,
  ].filter(Boolean).join("; ");
  return `- ${learning.text} (${extra})`;
}
