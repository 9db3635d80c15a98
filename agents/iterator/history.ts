/**
 * The history subcommands: `runs`, `runs show RUN_ID`, `learnings search
 * QUERY` and `finish RUN_ID`, all with `--json`.
 *
 * @module
 */

import { countTools, seconds, shortId, usd } from "../common/format.ts";
import { UsageError } from "../common/errors.ts";
import { GitRepo } from "../common/git.ts";
import type { RunStore, SqliteStore, StoredRun } from "../common/store/mod.ts";
import type { HistoryCommand } from "./command_line.ts";
import { runFinish } from "./finish.ts";
import { lockRun } from "./run_locks.ts";
import type { CommandIO } from "./run_command.ts";
import { cleanUpRun } from "./finish_run.ts";
import { type CleanupFacts, openStore, workingDirectory } from "./workspace.ts";

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
  const store = openStore(command.store, repo?.root ?? cwd);
  try {
    const { json, limit } = command;
    switch (command.kind) {
      case "runs":
        return listRuns(store, { json, limit, agent: command.agent }, io);
      case "runs show":
        return showRun(store, command.runId, json, io);
      case "learnings search":
        return searchLearnings(store, command.query, { json, limit }, io);
      case "finish":
        return await finishRun(store, command.runId, json, io);
    }
  } finally {
    store.close();
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
    io.stdout(`${JSON.stringify(runs)}\n`);
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

function showRun(store: RunStore, id: string, json: boolean, io: CommandIO): number {
  const run = findRun(store, id);
  const iterations = store.iterations(run.id);
  const finish = store.getFinish(run.id);
  const skills = store.skills(run.id);
  if (json) {
    io.stdout(`${JSON.stringify({ run, iterations, finish, skills })}\n`);
    return 0;
  }
  const lines = [
    `Run ${run.id} (${run.agent}, ${run.handler})`,
    `Status:     ${run.status}${run.reason ? `: ${run.reason}` : ""}`,
    `Started:    ${run.startedAt}${run.endedAt ? `, ended ${run.endedAt}` : ""}`,
    `Command:    ${run.argv.join(" ") || "(defaults)"}`,
    `Totals:     ${run.iterations} iterations, ${
      usd(run.costUsd)
    }, ${run.tokensInput} input / ${run.tokensOutput} output tokens, ${run.turns} turns`,
    `Finish:     ${finish.steps.join(", ") || "not run"}${
      finish.error ? ` (stopped: ${finish.error})` : ""
    }`,
    "",
    " #  verdict                          duration  cost     commits  tools",
  ];
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
  if (finish.summary) {
    lines.push("", `Outcome:    ${finish.summary.outcome}: ${finish.summary.reason}`);
    if (finish.summary.remainingWork) lines.push(`Remaining:  ${finish.summary.remainingWork}`);
  }
  if (skills.length > 0) {
    lines.push(
      `Skills:     ${skills.map((skill) => `${skill.name} (${skill.status})`).join(", ")}`,
    );
  }
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

function searchLearnings(
  store: RunStore,
  query: string,
  options: { json: boolean; limit: number },
  io: CommandIO,
): number {
  const found = store.searchLearnings(query, { limit: options.limit });
  if (options.json) {
    io.stdout(`${JSON.stringify(found)}\n`);
    return 0;
  }
  if (found.length === 0) io.stdout(`No learnings match "${query}".\n`);
  for (const learning of found) {
    const extra = [learning.technique, `run ${shortId(learning.runId)}`, learning.agent].filter(
      Boolean,
    ).join("; ");
    io.stdout(`- ${learning.text} (${extra})\n`);
  }
  return 0;
}

async function finishRun(
  store: SqliteStore,
  id: string,
  json: boolean,
  io: CommandIO,
): Promise<number> {
  const run = findRun(store, id);
  // Never while the run is still going: its own finish holds this lock too.
  const lock = await lockRun(store.path, run.id);
  let report;
  try {
    report = await runFinish({
      store,
      runId: run.id,
      cleanup: async () => {
        await cleanUpRun(run.cleanup as CleanupFacts, { cwd: run.cwd, stderr: io.stderr });
      },
    });
  } finally {
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
