/**
 * The finishline iterator CLI: flags -> agent definition -> completion
 * handler -> iteration loop on Claude Code -> finish workflow -> exit code.
 *
 * ```sh
 * deno run -A agents/iterator/main.ts --issue 42
 * deno run -A agents/iterator/main.ts --iterate-max 3 --task "Tidy the README"
 * deno run -A agents/iterator/main.ts --resume
 * deno run -A agents/iterator/main.ts runs show 1a2b3c4d
 * deno run -A agents/iterator/main.ts fleet --label agent:go --parallel 3
 * ```
 *
 * @module
 */

import type { AgentBackend } from "../backends/port.ts";
import { UsageError } from "../support/errors.ts";
import {
  type Command,
  type HelpCommand,
  parameterFlag,
  parseCommandLine,
  parseRunCommand,
  type ResumeCommand,
} from "./flags/command_line.ts";
import { commandHelp, NO_ARGUMENTS_HINT, parametersHelp } from "./flags/help.ts";
import { commandNamed } from "./flags/table.ts";
import { completedProgram, completionScript } from "./flags/completions.ts";
import { invokedAs } from "./flags/invoked_as.ts";
import type { CommandIO } from "./run/command.ts";
import { noColour, painterFor } from "./terminal/colour.ts";
import { VERSION } from "../support/version.ts";

// Only the flags and the help are loaded at start, and no `node:` module (the
// first one starts Deno's Node layer, tens of ms): `--help`, `--version`,
// `completions` and `runs` never load the run's machinery (the loop, the
// evidence gate, the agent SDK), which each command below imports when it runs
// (and, with deno.json's "lazy-dynamic-imports", not before: else `deno run`
// reads every command's modules before it starts).

export { VERSION } from "../support/version.ts";

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
 * Whether {@linkcode main} went past the fixed text: from there a command may
 * load Node's layer (the Agent SDK does, and registers its exit hook there).
 */
let pastFixedText = false;

/**
 * Run the CLI.
 *
 * @param argv Command-line arguments.
 * @param io Output streams, backend and abort signal.
 * @returns The process exit code.
 */
export async function main(argv: string[], io: MainIO = {}): Promise<number> {
  const raw = {
    stdout: io.stdout ?? ((text: string) => writeAll(Deno.stdout, encoder.encode(text))),
    stderr: io.stderr ?? ((text: string) => writeAll(Deno.stderr, encoder.encode(text))),
  };
  // Every line the CLI prints is redacted, whatever printed it; the redaction
  // (secretlint's rules) is loaded only for output that is not finishline's
  // own fixed text.
  let writers: Promise<Pick<CommandIO, "stdout" | "stderr" | "stderrLive">> | undefined;
  const redacting = () =>
    writers ??= import("../support/sinks.ts").then(({ redactingWriter, terminalWriter }) => ({
      // Terminal controls from outside text are dropped too; the live line alone draws
      // with escapes (it strips the text it is given).
      stdout: terminalWriter(raw.stdout),
      stderr: terminalWriter(raw.stderr),
      stderrLive: redactingWriter(raw.stderr),
    }));
  try {
    const fixed = fixedText(argv);
    if (fixed) {
      raw[fixed.stream](fixed.text);
      return fixed.code;
    }
    pastFixedText = true;
    const { stdout, stderr, stderrLive } = await redacting();
    const stderrIsTerminal = io.stderr === undefined && Deno.stderr.isTerminal();
    // Colour only on this process's own streams (a terminal, NO_COLOR and FORCE_COLOR honoured).
    const paint = io.stdout === undefined ? painterFor("stdout") : noColour;
    const paintError = io.stderr === undefined ? painterFor("stderr") : noColour;
    return await dispatch(parseCommandLine(argv), {
      ...io,
      stdout,
      stderr,
      stderrIsTerminal,
      stderrLive,
      paint,
      paintError,
    });
  } catch (error) {
    const { stderr } = await redacting();
    if (error instanceof UsageError) {
      stderr(`finishline: ${error.message}\n`);
      return error.exitCode;
    }
    const unwritable = fileSystemProblem(error);
    const started = (error as { runStarted?: boolean })?.runStarted === true;
    if (unwritable) {
      stderr(
        `finishline: ${unwritable}${
          started ? "; the run had started: it failed, its recorded iterations are kept" : ""
        }\n`,
      );
      // 1 is EXIT_CODES.failed: the loop is not loaded to read it.
      return started ? 1 : 2;
    }
    stderr(
      `finishline: unexpected error: ${
        error instanceof Error ? error.stack ?? error.message : error
      }\n`,
    );
    // EXIT_CODES.failed, without loading the loop to read it.
    return 1;
  }
}

/**
 * The output of a command that prints only finishline's own fixed text (its
 * help, version and completion scripts, made from the flag table): no user
 * data, nothing to redact, and no module beyond the flags loaded.
 */
function fixedText(
  argv: string[],
): { stream: "stdout" | "stderr"; text: string; code: number } | undefined {
  if (argv.length === 0) {
    // A run with nothing asked would start an autonomous run on a guess.
    const text = `${commandHelp(commandNamed(""), invokedAs())}\n\n${NO_ARGUMENTS_HINT}\n`;
    return { stream: "stderr", text, code: 2 };
  }
  const command = parseCommandLine(argv);
  switch (command.kind) {
    case "help":
      if (command.agent !== undefined) return undefined;
      return {
        stream: "stdout",
        text: `${commandHelp(commandNamed(command.command), invokedAs())}\n`,
        code: 0,
      };
    case "completions":
      return {
        stream: "stdout",
        text: completionScript(command.shell, completedProgram(invokedAs())),
        code: 0,
      };
    case "version":
      return { stream: "stdout", text: `finishline ${VERSION}\n`, code: 0 };
    default:
      return undefined;
  }
}

async function dispatch(command: Command, io: CommandIO): Promise<number> {
  switch (command.kind) {
    case "help":
      io.stdout(`${await help(command)}\n`);
      return 0;
    case "completions":
    case "version":
      // Answered by fixedText.
      return 0;
    case "list":
      return await listCommand(command, io);
    case "init": {
      const { workingDirectory } = await import("./places.ts");
      const { scaffoldAgent, nextSteps } = await import("./commands/init.ts");
      const cwd = await workingDirectory(command.cwd);
      const { githubActions, triggerLabel } = command;
      const created = await scaffoldAgent(command.name, { cwd, githubActions, triggerLabel });
      for (const path of created) io.stdout(`created ${path}\n`);
      io.stdout(nextSteps(command.name, { githubActions, program: invokedAs() }));
      return 0;
    }
    case "checks":
      return await checksCommand(command, io);
    case "resume":
      return await resume(command, io);
    case "run": {
      // The agent's SDK loads while the run's own modules do (a dry run needs none).
      if (!io.backend && !command.dryRun) {
        import("../backends/claude.ts").then(({ ClaudeBackend }) => new ClaudeBackend().preload())
          .catch(() => {
            // the run's own backend reports it
          });
      }
      const { runCommand } = await import("./run/command.ts");
      return await runCommand(command, io);
    }
    case "fleet": {
      const { fleetCommand } = await import("./fleet/command.ts");
      return await fleetCommand(command, io);
    }
    case "fleet resume": {
      const { fleetResumeCommand } = await import("./fleet/command.ts");
      return await fleetResumeCommand(command, io);
    }
    default: {
      const { historyCommand } = await import("./commands/history.ts");
      return await historyCommand(command, io);
    }
  }
}

/**
 * `--help`: the general help or a command's, as the user runs finishline;
 * with `--agent NAME`, the agent's parameters too.
 */
async function help(command: HelpCommand): Promise<string> {
  const text = commandHelp(commandNamed(command.command), invokedAs());
  if (command.agent === undefined) return text;
  const { workingDirectory } = await import("./places.ts");
  const { loadDefinition } = await import("../definition/load.ts");
  const cwd = await workingDirectory(command.cwd);
  const { definition, displayPath } = await loadDefinition(command.agent, { cwd });
  // The agent's own parameters first: they are what `--agent X --help` asks about.
  return `${parametersHelp(definition, { displayPath, flagOf: parameterFlag })}\n\n${text}`;
}

/** `--list`: the agents found, local and built-in; with `--json`, as one JSON array. */
async function listCommand(
  command: { cwd?: string; json?: boolean },
  io: CommandIO,
): Promise<number> {
  const { workingDirectory } = await import("./places.ts");
  const { listAgents } = await import("../definition/load.ts");
  const cwd = await workingDirectory(command.cwd);
  const agents = await listAgents({ cwd });
  if (command.json) {
    io.stdout(`${JSON.stringify(agents)}\n`);
    return 0;
  }
  for (const agent of agents) {
    const origin = agent.builtin ? "built-in" : "local";
    const detail = agent.error
      ? `error: ${agent.error}`
      : `${agent.completionType} · ${agent.description}`;
    io.stdout(`${agent.name.padEnd(20)} ${origin.padEnd(9)} ${detail}\n`);
  }
  return 0;
}

/**
 * `checks` / `--list-checks`: the repository's detected checks (or the
 * agent's configured ones), each run once on the working tree.
 */
async function checksCommand(
  command: { agent: string; cwd?: string },
  io: CommandIO,
): Promise<number> {
  const { workingDirectory } = await import("./places.ts");
  const { GitRepo } = await import("../git/repo.ts");
  const { loadDefinition } = await import("../definition/load.ts");
  const { listAndRunChecks } = await import("./run/checks_setup.ts");
  const cwd = await workingDirectory(command.cwd);
  const repo = await GitRepo.open(cwd);
  const { definition } = await loadDefinition(command.agent, { cwd });
  return await listAndRunChecks(repo?.root ?? cwd, definition, io.stdout);
}

/**
 * `--resume [RUN_ID]`: continue the latest unfinished run (of `--agent`, when
 * given) or the named one, with the arguments it was started with.
 */
async function resume(command: ResumeCommand, io: CommandIO): Promise<number> {
  const { runId: id, agent } = command;
  const { openStore, workingDirectory } = await import("./places.ts");
  const { GitRepo } = await import("../git/repo.ts");
  const { lockRun } = await import("./run/locks.ts");
  const { runCommand } = await import("./run/command.ts");
  const cwd = await workingDirectory(command.cwd);
  const repo = await GitRepo.open(cwd);
  const store = openStore(command.store, repo?.root ?? cwd);
  const run = id ? store.getRun(id) : store.latestUnfinished(agent);
  store.close();
  if (!run) {
    throw new UsageError(
      id
        ? `No run "${id}" in the history: see "runs"`
        : `No unfinished run${agent ? ` of agent "${agent}"` : ""} to resume: see "runs"`,
    );
  }
  // The lock, not the recorded pid, says whether the run is still going: a
  // dead process (killed, or a zombie nobody reaps) holds no lock.
  const runLock = await lockRun(store.path, run.id);
  try {
    if (!["running", "interrupted"].includes(run.status)) {
      throw new UsageError(
        `Run ${run.id} already ended (${run.status}): there is nothing to resume`,
      );
    }
    // The recorded folder wins: a --cwd of the recorded command line gives way to it
    // (a flag given twice is refused).
    return await runCommand(parseRunCommand([...withoutCwd(run.argv), "--cwd", run.cwd]), io, {
      resume: run,
      json: command.json,
      storePath: command.store,
      runLock,
    });
  } finally {
    await runLock.release();
  }
}

/** A command line without its `--cwd DIR` (or `--cwd=DIR`). */
function withoutCwd(argv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    if (argv[index] === "--cwd") index++;
    else if (!argv[index].startsWith("--cwd=")) kept.push(argv[index]);
  }
  return kept;
}

/** What the machine's file system refused, by the error's OS code. */
const FILE_SYSTEM_REASONS: Record<number, string> = {
  1: "permission denied",
  13: "permission denied",
  20: "a part of its path is a file, not a folder",
  28: "the disk is full",
  30: "the file system is read-only",
};

/**
 * One line for an error of the file system that reached the top (a
 * read-only checkout, a full disk, `--store` under a file): the path and why.
 *
 * @param error What was thrown.
 * @returns The line, or undefined for any other error.
 */
function fileSystemProblem(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = Number(/\(os error (\d+)\)/.exec(error.message)?.[1]);
  const reason = FILE_SYSTEM_REASONS[code];
  if (!reason) return undefined;
  const path = /'([^']+)'/.exec(error.message)?.[1];
  return `Cannot write${
    path ? ` "${path}"` : ""
  }: ${reason} (choose another place with --store, or run in a writable checkout with room)`;
}

/** A whole buffer to a synchronous stream (one `writeSync` may take only part of it). */
function writeAll(stream: { writeSync(bytes: Uint8Array): number }, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += stream.writeSync(bytes.subarray(written));
}

if (import.meta.main) {
  const code = await main(Deno.args);
  if (pastFixedText) {
    // node's exit, not Deno.exit: only it runs the SDK's exit hook, which
    // stops Claude Code processes still running (a session stopped mid-retry
    // would otherwise go on calling the API after finishline has exited).
    const { default: process } = await import("node:process");
    process.exit(code);
  }
  // The fixed text loaded no `node:` module: importing one would start Node's layer.
  Deno.exit(code);
}
