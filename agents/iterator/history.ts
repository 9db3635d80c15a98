/**
 * The history subcommands: `runs`, `runs show RUN_ID`, `learnings search
 * QUERY` and `finish RUN_ID`, all with `--json`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { countTools, seconds, shortId, usd } from "../common/format.ts";
import { UsageError } from "../common/errors.ts";
import { GitRepo } from "../common/git.ts";
import { GitHubCli } from "../common/github.ts";
import type { RunStore, StoredRun } from "../common/store.ts";
import { removeWorktreeIfClean } from "../common/worktree.ts";
import { runFinish } from "./finish.ts";
import { type CommandIO, openStore, workingDirectory } from "./run_command.ts";

/** The subcommand names. */
export const SUBCOMMANDS: readonly string[] = ["runs", "learnings", "finish"];

/**
 * Run a history subcommand.
 *
 * @param argv Arguments, starting with the subcommand.
 * @param io Output.
 * @returns The exit code.
 */
export async function historyCommand(argv: string[], io: CommandIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        json: { type: "boolean" },
        store: { type: "string" },
        cwd: { type: "string" },
        agent: { type: "string", short: "a" },
        limit: { type: "string" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const flag = (error instanceof Error ? error.message : String(error)).match(/'(-{1,2}[^' ]+)/)
      ?.[1];
    throw new UsageError(
      `Unknown flag "${flag ?? argv.join(" ")}" for "${
        argv[0]
      }": it takes --json, --store, --cwd, --agent, --limit`,
    );
  }
  const { values, positionals } = parsed;
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new UsageError(
      `Flag "--limit" expects a whole number of 1 or more, got "${values.limit}"`,
    );
  }
  const cwd = await workingDirectory(values.cwd);
  const repo = await GitRepo.open(cwd);
  const store = openStore(values.store, repo?.root ?? cwd);
  try {
    const [command, ...rest] = positionals;
    const json = values.json === true;
    if (command === "runs" && rest.length === 0) {
      return listRuns(store, { json, limit, agent: values.agent }, io);
    }
    if (command === "runs" && rest[0] === "show" && rest.length === 2) {
      return showRun(store, rest[1], json, io);
    }
    if (command === "learnings" && rest[0] === "search" && rest.length >= 2) {
      return searchLearnings(store, rest.slice(1).join(" "), { json, limit }, io);
    }
    if (command === "finish" && rest.length === 1) return await finishRun(store, rest[0], json, io);
    throw new UsageError(
      `Unknown command "${
        positionals.join(" ")
      }": expected "runs", "runs show RUN_ID", "learnings search QUERY" or "finish RUN_ID"`,
    );
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
  store: RunStore,
  id: string,
  json: boolean,
  io: CommandIO,
): Promise<number> {
  const run = findRun(store, id);
  const report = await runFinish({
    store,
    runId: run.id,
    cleanup: () => cleanupFromRecord(run, io),
  });
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

/**
 * Step 5 for a run finished after the fact: remove the in-progress label
 * and the worktree (when clean), from the facts recorded at the start.
 *
 * @param run The stored run.
 * @param io Output for notes.
 */
async function cleanupFromRecord(run: StoredRun, io: CommandIO): Promise<void> {
  const facts = run.cleanup as {
    issue?: number;
    repo?: string;
    labels?: { inProgress?: string; blocked?: string };
    worktreePath?: string;
    worktreeBranch?: string;
    mainRepo?: string;
  };
  if (facts.issue && facts.labels?.inProgress) {
    const github = new GitHubCli({ cwd: run.cwd, repo: facts.repo, attempts: 2 });
    await github.editLabel(facts.issue, { remove: facts.labels.inProgress });
  }
  if (facts.worktreePath && facts.worktreeBranch && facts.mainRepo) {
    const repo = await GitRepo.open(facts.mainRepo);
    if (repo) {
      const removed = await removeWorktreeIfClean(repo, {
        path: facts.worktreePath,
        branch: facts.worktreeBranch,
        base: "",
        reused: true,
      });
      if (!removed) {
        io.stderr(`[finishline] worktree ${facts.worktreePath} kept (missing or not clean)\n`);
      }
    }
  }
}
