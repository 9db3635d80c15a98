/**
 * The history subcommands: `runs`, `runs show RUN_ID`, `runs stats`, `learnings search
 * [QUERY]` and `finish RUN_ID` (its model steps on the model the run
 * recorded), all with `--json` (costs rounded to a
 * millionth of a dollar there, to four decimals in text).
 *
 * @module
 */

import { ClaudeBackend } from "../../backends/claude.ts";
import { countTools, jsonWithCosts, seconds, shortId, usd } from "../../support/format.ts";
import { UsageError } from "../../support/errors.ts";
import { GitRepo } from "../../git/repo.ts";
import { loadDefinition } from "../../definition/load.ts";
import type { EmbeddingsConfig } from "../../definition/definition_types.ts";
import type {
  FinishRecord,
  FinishUsage,
  FoundLearning,
  RunSegment,
  RunStore,
  SkillRecord,
  SqliteStore,
  StoredIteration,
  StoredRun,
} from "../../store/mod.ts";
import type { HistoryCommand } from "../flags/command_line.ts";
import { runFinish } from "../../finish/workflow.ts";
import { lockRun } from "../run/locks.ts";
import type { CommandIO } from "../run/command.ts";
import { cleanUpRun } from "../run/end.ts";
import { commandLine, resumeCommand } from "../run/report_facts.ts";
import type { CleanupFacts } from "../run/workspace.ts";
import { openStore, workingDirectory } from "../places.ts";
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
      case "finish":
        return await finishCommand(store, command.runId, json, io);
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
  if (options.json) {
    io.stdout(`${jsonWithCosts(runs)}\n`);
    return 0;
  }
  if (runs.length === 0) io.stdout("No runs recorded yet.\n");
  for (const run of runs) {
    io.stdout(
      `${shortId(run.id)}  ${run.startedAt.slice(0, 16).replace("T", " ")}  ${
        run.agent.padEnd(12)
      } ${run.handler.padEnd(8)} ${run.status.padEnd(16)} ${
        String(run.iterations).padStart(3)
      } it  ${usd(run.costUsd)}  ${run.reason ?? ""}\n`,
    );
  }
  return 0;
}

/**
 * The seed's success metrics summed over the runs. A run that recorded none at
 * its end (still going, killed, or recorded before metrics) is counted from its
 * stored iterations and status.
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
  if (options.json) {
    io.stdout(
      `${
        JSON.stringify({
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
  const lines = describeMetrics(totals);
  if (unrecorded.length > 0) {
    lines.push(
      `(${unrecorded.length} of the runs recorded no metrics at their end: still going, killed, or older than metrics; counted from their stored iterations)`,
    );
  }
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

function showRun(store: RunStore, id: string, json: boolean, io: CommandIO): number {
  const run = findRun(store, id);
  const iterations = store.iterations(run.id);
  const finish = store.getFinish(run.id);
  const skills = store.skills(run.id);
  const segments = store.segments(run.id);
  if (json) {
    io.stdout(`${jsonWithCosts({ run, iterations, finish, skills, segments })}\n`);
    return 0;
  }
  const lines = [
    `Run ${run.id} (${run.agent}, ${run.handler})`,
    `Status:     ${run.status}${run.reason ? `: ${run.reason}` : ""}`,
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

async function finishCommand(
  store: SqliteStore,
  id: string,
  json: boolean,
  io: CommandIO,
): Promise<number> {
  const run = findRun(store, id);
  // Never while the run is still going: its own finish holds this lock too.
  const lock = await lockRun(store.path, run.id);
  const facts = run.cleanup as CleanupFacts;
  // A run recorded before the finish had model steps has no settings for them: they fall back.
  const backend = facts.finish ? io.backend ?? new ClaudeBackend() : undefined;
  let report;
  try {
    report = await runFinish({
      store,
      runId: run.id,
      ...facts.finish,
      backend,
      cwd: run.cwd,
      cleanup: async () => {
        await cleanUpRun(facts, { cwd: run.cwd, stderr: io.stderr });
      },
    });
  } finally {
    await backend?.release?.();
    await lock.release();
  }
  if (json) {
    io.stdout(`${JSON.stringify({ runId: run.id, ...report })}\n`);
  } else if (report.failed) {
    io.stderr(
      `finishline: the finish workflow of run ${run.id} stopped at "${report.failed.step}": ${report.failed.error}\n`,
    );
  } else {
    io.stdout(
      report.ran.length > 0
        ? `Finished run ${run.id}: ${report.ran.join(", ")}\n`
        : `Run ${run.id} was already finished (${report.steps.join(", ")})\n`,
    );
  }
  return report.failed ? 1 : 0;
}
