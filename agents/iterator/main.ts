/**
 * The finishline iterator CLI: flags -> agent definition -> completion
 * handler -> iteration loop on Claude Code -> finish workflow -> exit code.
 *
 * ```sh
 * deno run -A agents/iterator/main.ts --issue 42
 * deno run -A agents/iterator/main.ts --iterate-max 3 --task "Tidy the README"
 * deno run -A agents/iterator/main.ts --resume
 * deno run -A agents/iterator/main.ts runs show 1a2b3c4d
 * ```
 *
 * @module
 */

import type { AgentBackend } from "../common/backends/types.ts";
import { listAgents, loadDefinition } from "../common/definition/load.ts";
import { UsageError } from "../common/errors.ts";
import { GitRepo } from "../common/git.ts";
import { HELP_TEXT, parseBaseFlags } from "./cli.ts";
import { historyCommand, SUBCOMMANDS } from "./history.ts";
import { listAndRunChecks } from "./gate.ts";
import { scaffoldAgent } from "./init.ts";
import { EXIT_CODES } from "./runner.ts";
import { type CommandIO, openStore, runCommand, workingDirectory } from "./run_command.ts";

/** finishline's version (kept equal to deno.json's). */
export const VERSION = "0.1.0";

/** Where the CLI writes and what it runs on; tests replace parts of it. */
export interface MainIO {
  /** Standard output. @default Deno.stdout */
  stdout?: (text: string) => void;
  /** Standard error. @default Deno.stderr */
  stderr?: (text: string) => void;
  /** The agent backend. @default ClaudeBackend */
  backend?: AgentBackend;
  /** Aborts the run; when absent, SIGINT and SIGTERM do. */
  signal?: AbortSignal;
}

const encoder = new TextEncoder();

/**
 * Run the CLI.
 *
 * @param argv Command-line arguments.
 * @param io Output streams, backend and abort signal.
 * @returns The process exit code.
 */
export async function main(argv: string[], io: MainIO = {}): Promise<number> {
  const stdout = io.stdout ?? ((text: string) => Deno.stdout.writeSync(encoder.encode(text)));
  const stderr = io.stderr ?? ((text: string) => Deno.stderr.writeSync(encoder.encode(text)));
  try {
    const stderrIsTerminal = io.stderr === undefined && Deno.stderr.isTerminal();
    return await dispatch(argv, { ...io, stdout, stderr, stderrIsTerminal });
  } catch (error) {
    if (error instanceof UsageError) {
      stderr(`finishline: ${error.message}\n`);
      return error.exitCode;
    }
    stderr(
      `finishline: unexpected error: ${
        error instanceof Error ? error.stack ?? error.message : error
      }\n`,
    );
    return EXIT_CODES.failed;
  }
}

async function dispatch(argv: string[], io: CommandIO): Promise<number> {
  if (argv.length > 0 && SUBCOMMANDS.includes(argv[0])) return await historyCommand(argv, io);
  if (argv[0] === "checks") return await checksCommand(argv.slice(1), io);
  const resumeAt = argv.indexOf("--resume");
  if (resumeAt !== -1) return await resume(argv, resumeAt, io);
  const base = parseBaseFlags(argv);
  if (base.help) {
    io.stdout(`${HELP_TEXT}\n`);
    return 0;
  }
  if (base.version) {
    io.stdout(`finishline ${VERSION}\n`);
    return 0;
  }
  if (base.listChecks) {
    return await checksCommand(argv.filter((arg) => arg !== "--list-checks"), io);
  }
  if (base.list) {
    const cwd = await workingDirectory(base.cwd);
    for (const agent of await listAgents({ cwd })) {
      const origin = agent.builtin ? "built-in" : "local";
      const detail = agent.error
        ? `error: ${agent.error}`
        : `${agent.completionType} · ${agent.description}`;
      io.stdout(`${agent.name.padEnd(20)} ${origin.padEnd(9)} ${detail}\n`);
    }
    return 0;
  }
  if ((base.githubActions || base.triggerLabel !== undefined) && base.init === undefined) {
    throw new UsageError(`Flags "--github-actions" and "--trigger-label" go with --init NAME`);
  }
  if (base.init !== undefined) {
    const cwd = await workingDirectory(base.cwd);
    const options = { cwd, githubActions: base.githubActions, triggerLabel: base.triggerLabel };
    for (const path of await scaffoldAgent(base.init, options)) io.stdout(`created ${path}\n`);
    return 0;
  }
  return await runCommand(argv, io);
}

/**
 * `checks` / `--list-checks`: the repository's detected checks (or the
 * agent's configured ones), each run once on the working tree.
 */
async function checksCommand(argv: string[], io: CommandIO): Promise<number> {
  const unknown = argv.find((arg, index) =>
    arg.startsWith("-") && !["--cwd", "--agent", "-a"].includes(arg.split("=")[0]) &&
    !(index > 0 && ["--cwd", "--agent", "-a"].includes(argv[index - 1]))
  );
  if (unknown) {
    throw new UsageError(`The "checks" command takes only --cwd and --agent, not "${unknown}"`);
  }
  const base = parseBaseFlags(argv);
  const cwd = await workingDirectory(base.cwd);
  const repo = await GitRepo.open(cwd);
  const { definition } = await loadDefinition(base.agent, { cwd });
  return await listAndRunChecks(repo?.root ?? cwd, definition, io.stdout);
}

/**
 * `--resume [RUN_ID]`: continue the latest unfinished run (of `--agent`, when
 * given) or the named one, with the arguments it was started with.
 */
async function resume(argv: string[], at: number, io: CommandIO): Promise<number> {
  const next = argv[at + 1];
  const id = next !== undefined && !next.startsWith("-") ? next : undefined;
  const rest = [...argv.slice(0, at), ...argv.slice(at + (id ? 2 : 1))];
  const allowed = new Set(["--json", "--store", "--cwd", "--agent", "-a"]);
  const extra = rest.filter((arg, index) =>
    arg.startsWith("-") && !allowed.has(arg.split("=")[0]) &&
    !(index > 0 && ["--store", "--cwd", "--agent", "-a"].includes(rest[index - 1]))
  );
  if (extra.length > 0) {
    throw new UsageError(
      `Flag "--resume" continues a run with the arguments it was started with; it takes only --json, --store, --cwd and --agent, not "${
        extra[0]
      }"`,
    );
  }
  const base = parseBaseFlags(rest);
  const cwd = await workingDirectory(base.cwd);
  const repo = await GitRepo.open(cwd);
  const store = openStore(base.store, repo?.root ?? cwd);
  const agent = rest.some((arg) => arg === "--agent" || arg === "-a" || arg.startsWith("--agent="))
    ? base.agent
    : undefined;
  const run = id ? store.getRun(id) : store.latestUnfinished(agent);
  store.close();
  if (!run) {
    throw new UsageError(
      id
        ? `No run "${id}" in the history: see "runs"`
        : `No unfinished run${agent ? ` of agent "${agent}"` : ""} to resume: see "runs"`,
    );
  }
  if (run.pid && run.pid !== Deno.pid && processAlive(run.pid)) {
    throw new UsageError(
      `Run ${run.id} is still going (process ${run.pid}): wait for it, or stop it first`,
    );
  }
  if (!["running", "interrupted"].includes(run.status)) {
    throw new UsageError(`Run ${run.id} already ended (${run.status}): there is nothing to resume`);
  }
  return await runCommand([...run.argv, "--cwd", run.cwd], io, {
    resume: run,
    json: rest.includes("--json"),
    storePath: base.store,
  });
}

function processAlive(pid: number): boolean {
  try {
    // Signal 0 is not offered; SIGCONT does nothing to a running process and fails for a dead one.
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
