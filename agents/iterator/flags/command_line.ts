/**
 * The iterator's command line, parsed in one place: argv -> a typed
 * {@linkcode Command}. A run is parsed in two passes, because the agent's own
 * parameters (and so its flags) are only known once its definition is
 * loaded: {@linkcode parseCommandLine} reads the command and the base flags,
 * {@linkcode parseRunFlags} the rest. Every flag and command comes from one
 * table, which also makes `--help`, the shell completions and docs/cli.md.
 *
 * @module
 */

import type {
  AgentBehavior,
  AgentDefinition,
  ParameterSpec,
} from "../../definition/definition_types.ts";
import type { RunInputs } from "../../completion/run_inputs.ts";
import { UsageError } from "../../support/errors.ts";
import { lenientParse, readFlags, strictParse, unknownFlag } from "./_parse.ts";
import {
  COMMAND_WORDS,
  commandNamed,
  COMMANDS,
  type CommandSpec,
  flagNamed,
  FLAGS,
  flagsOf,
  type FlagSpec,
} from "./table.ts";
import { argumentLabel, commandLabel } from "./help.ts";
import { type FlagPermissionMode, parameterValue } from "./values.ts";
import { closest } from "./_suggest.ts";
import { type FleetCommand, type FleetResumeCommand, parseFleetCommand } from "../fleet/flags.ts";

export { FLAGS, type FlagSpec, type FleetCommand, type FleetResumeCommand };

/** Flags read before the agent definition is loaded. */
export interface BaseFlags {
  /** `--agent/-a`. @default "iterator" */
  agent: string;
  /** `--cwd`. @default Deno.cwd() */
  cwd?: string;
  /** `--help/-h`. */
  help: boolean;
  /** `--version`. */
  version: boolean;
  /** `--list`. */
  list: boolean;
  /** `--list-checks` (or the `checks` subcommand): print the detected checks and run them once. */
  listChecks: boolean;
  /** `--init NAME`. */
  init?: string;
  /** `--store PATH`: the run history database. */
  store?: string;
  /** `--github-actions` (with `--init`): also write the GitHub Actions workflow. */
  githubActions: boolean;
  /** `--trigger-label NAME` (with `--github-actions`). @default "finishline" */
  triggerLabel?: string;
}

/** Every option of a run: the base flags, the run's inputs and how it runs. */
export interface RunFlags extends BaseFlags, RunInputs {
  /** `--agent/-a`. @default "iterator" */
  agent: string;
  /** `--max-wait SECONDS`: longest wait for a rate limit to reset. */
  maxWait?: number;
  /** `--permission-mode M`. */
  permissionMode?: FlagPermissionMode;
  /** `--backend NAME`. */
  backend?: string;
  /** `--dangerously-skip-permissions`. */
  dangerouslySkipPermissions: boolean;
  /** `--dry-run`. */
  dryRun: boolean;
  /** `--worktree`. */
  worktree: boolean;
  /** `--base-branch NAME`. */
  baseBranch?: string;
  /** `--create-pr`. */
  createPr: boolean;
  /** `--json`. */
  json: boolean;
  /** `--no-learnings`: leave `{uv-learnings}` empty. */
  noLearnings: boolean;
  /** `--quiet`: only errors and the final lines. */
  quiet: boolean;
  /** `--verbose`: stream the agent's text and tool calls. */
  verbose: boolean;
}

/** A run: the base flags now, the rest once the definition is loaded ({@linkcode parseRunFlags}). */
export interface RunCommand {
  /** The command. */
  kind: "run";
  /** The run's arguments, as given (recorded for `--resume`). */
  argv: string[];
  /** The flags read before the definition is loaded. */
  flags: BaseFlags;
  /** `--dry-run` is among them: no model will be called (so the SDK need not be preloaded). */
  dryRun: boolean;
}

/** `--resume [RUN_ID]`: continue a recorded run with the arguments it was started with. */
export interface ResumeCommand {
  /** The command. */
  kind: "resume";
  /** The run to continue; the latest unfinished one when absent. */
  runId?: string;
  /** `--agent`: only its runs (when given). */
  agent?: string;
  /** `--cwd`. */
  cwd?: string;
  /** `--store`. */
  store?: string;
  /** `--json`. */
  json: boolean;
}

/** What every history subcommand takes. */
export interface HistoryOptions {
  /** `--json`. */
  json: boolean;
  /** `--store`. */
  store?: string;
  /** `--cwd`. */
  cwd?: string;
  /**
   * `--agent`: only its runs (for `runs` and `runs stats`); the agent whose `learnings.embeddings`
   * `learnings search` uses.
   */
  agent?: string;
  /** `--limit`. @default 20 (`runs stats`: every run) */
  limit: number;
}

/**
 * `runs`, `runs show RUN_ID`, `runs stats`, `learnings search [QUERY]` (an empty query
 * lists the latest) or `finish RUN_ID`.
 */
export type HistoryCommand =
  | ({ kind: "runs" } & HistoryOptions)
  | ({ kind: "runs show"; runId: string } & HistoryOptions)
  | ({ kind: "runs stats" } & HistoryOptions)
  | ({ kind: "learnings search"; query: string } & HistoryOptions)
  | ({ kind: "finish"; runId: string } & HistoryOptions);

/** One parsed command line. */
export type Command =
  | RunCommand
  | ResumeCommand
  | FleetCommand
  | FleetResumeCommand
  | HistoryCommand
  | { kind: "checks"; agent: string; cwd?: string }
  | { kind: "init"; name: string; cwd?: string; githubActions: boolean; triggerLabel?: string }
  | { kind: "list"; cwd?: string; json?: boolean }
  | HelpCommand
  | { kind: "completions"; shell: string }
  | { kind: "version" };

/** `--help`: the general help, or a command's; with `--agent`, the agent's parameters too. */
export interface HelpCommand {
  /** The command. */
  kind: "help";
  /** The command whose help it is, as in the table ("runs show"); "" for a run. */
  command: string;
  /** `--agent`, when given with a command that takes the agent's parameters. */
  agent?: string;
  /** `--cwd`, where the agent is found. */
  cwd?: string;
}

/** Flags the CLI itself defines (parameters may not reuse them). */
export const RESERVED_FLAGS: readonly string[] = FLAGS
  .filter((flag) => flag.pass !== "own")
  .map((flag) => flag.name);

/** The commands that are words and parsed alike: history and completions. */
const WORD_COMMANDS = COMMANDS.filter((command) =>
  ["runs", "learnings", "finish", "completions"].includes(command.name.split(" ")[0])
);

const BASE_FLAGS = FLAGS.filter((flag) => flag.pass === "base");
const RUN_FLAGS = FLAGS.filter((flag) => flag.pass === "run");
const RESUME_FLAGS = flagsOf(commandNamed("--resume"));
const CHECKS_FLAGS = flagsOf(commandNamed("checks"));
const HELP = [flagNamed("help")];

/** The flags a command lists in its messages (all but --help). */
function listed(command: CommandSpec): string[] {
  return command.flags.filter((name) => name !== "help").map((name) => `--${name}`);
}

/** "a, b and c". */
function and(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** "a, b or c". */
function or(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** Whether `--help` or `-h` is among the arguments, as a flag (not another flag's value). */
function asksHelp(argv: readonly string[], flags: readonly FlagSpec[]): boolean {
  return lenientParse(argv, [...flags.filter((flag) => flag.name !== "help"), ...HELP]).values
    .help === true;
}

/** `--agent` when given (not its default). */
function givenAgent(argv: readonly string[]): string | undefined {
  const agent = lenientParse(argv, [flagNamed("agent")]).values.agent;
  return typeof agent === "string" ? agent : undefined;
}

/**
 * Parse a command line into the command it asks for. A run's own flags are
 * read later, by {@linkcode parseRunFlags}.
 *
 * @param argv Command-line arguments.
 * @returns The command.
 * @throws {UsageError} For a bad command line.
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 * console.assert(parseCommandLine(["runs", "show", "1a2b"]).kind === "runs show");
 * console.assert(parseCommandLine(["--issue", "3"]).kind === "run");
 * ```
 */
export function parseCommandLine(argv: readonly string[]): Command {
  const first = argv[0];
  if (first !== undefined && !first.startsWith("-") && !COMMAND_WORDS.includes(first)) {
    const meant = closest(first, COMMAND_WORDS);
    if (meant) throw new UsageError(`Unknown command "${first}": did you mean "${meant}"?`);
  }
  if (
    WORD_COMMANDS.some((command) => command.name.startsWith(`${first} `) || command.name === first)
  ) {
    return parseWords(argv);
  }
  if (first === "fleet") return parseFleet(argv.slice(1));
  if (first === "checks") return parseChecks(argv.slice(1));
  const resumeAt = argv.indexOf("--resume");
  if (resumeAt !== -1) return parseResume(argv, resumeAt);
  const flags = parseBaseFlags(argv);
  if (flags.help) return { kind: "help", command: "", agent: givenAgent(argv), cwd: flags.cwd };
  if (flags.version) return { kind: "version" };
  if (flags.listChecks) return parseChecks(argv.filter((arg) => arg !== "--list-checks"));
  if (flags.list) {
    return { kind: "list", cwd: flags.cwd, ...(argv.includes("--json") ? { json: true } : {}) };
  }
  if ((flags.githubActions || flags.triggerLabel !== undefined) && flags.init === undefined) {
    throw new UsageError(`Flags "--github-actions" and "--trigger-label" go with --init NAME`);
  }
  if (flags.triggerLabel !== undefined && !flags.githubActions) {
    throw new UsageError(
      `Flag "--trigger-label" names the label that starts the GitHub Actions workflow: add --github-actions`,
    );
  }
  if (flags.init !== undefined) {
    const { cwd, githubActions, triggerLabel } = flags;
    return { kind: "init", name: flags.init, cwd, githubActions, triggerLabel };
  }
  return { kind: "run", argv: [...argv], flags, dryRun: argv.includes("--dry-run") };
}

/**
 * The run command of a command line, whatever else it holds (for a run
 * recorded in the history).
 *
 * @param argv The run's arguments.
 * @returns The run command.
 * @example
 * ```ts
 * import { parseRunCommand } from "./command_line.ts";
 * console.assert(parseRunCommand(["-a", "docs", "--task", "t"]).flags.agent === "docs");
 * ```
 */
export function parseRunCommand(argv: readonly string[]): RunCommand {
  return {
    kind: "run",
    argv: [...argv],
    flags: parseBaseFlags(argv),
    dryRun: argv.includes("--dry-run"),
  };
}

/**
 * First pass: the flags needed to find the agent, ignoring the rest.
 *
 * @param argv Command-line arguments.
 * @returns The base flags.
 * @throws {UsageError} For a base flag without its value.
 * @example
 * ```ts
 * import { parseBaseFlags } from "./command_line.ts";
 * console.assert(parseBaseFlags(["-a", "reviewer", "--issue", "3"]).agent === "reviewer");
 * ```
 */
export function parseBaseFlags(argv: readonly string[]): BaseFlags {
  const { values } = lenientParse(argv, BASE_FLAGS);
  const flags = readFlags(values, BASE_FLAGS) as unknown as BaseFlags;
  return { ...flags, agent: flags.agent ?? "iterator" };
}

function parseFleet(argv: readonly string[]): Command {
  const resume = argv.includes("--resume");
  const command = commandNamed(resume ? "fleet --resume" : "fleet");
  if (!asksHelp(argv, flagsOf(command))) return parseFleetCommand(argv);
  const cwd = lenientParse(argv, [flagNamed("cwd")]).values.cwd as string | undefined;
  return { kind: "help", command: command.name, agent: resume ? undefined : givenAgent(argv), cwd };
}

function parseChecks(argv: readonly string[]): Command {
  const command = commandNamed("checks");
  const { values: raw, other } = lenientParse(argv, CHECKS_FLAGS);
  if (raw.help === true) return { kind: "help", command: "checks" };
  if (other) {
    throw unknownFlag(other, {
      known: command.flags,
      command: "checks",
      fallback: () =>
        new UsageError(
          `The "checks" command takes only ${and(listed(command))}, not "${other}"`,
        ),
    });
  }
  const values = readFlags(raw, CHECKS_FLAGS);
  return {
    kind: "checks",
    agent: (values.agent as string | undefined) ?? "iterator",
    cwd: values.cwd as string | undefined,
  };
}

function parseResume(argv: readonly string[], at: number): ResumeCommand | HelpCommand {
  const next = argv[at + 1];
  const runId = next !== undefined && !next.startsWith("-") ? next : undefined;
  const rest = [...argv.slice(0, at), ...argv.slice(at + (runId ? 2 : 1))];
  const command = commandNamed("--resume");
  const { values, other } = lenientParse(rest, RESUME_FLAGS);
  if (values.help === true) return { kind: "help", command: "--resume" };
  if (other) {
    throw unknownFlag(other, {
      known: command.flags,
      command: "--resume",
      fallback: () =>
        new UsageError(
          `Flag "--resume" continues a run with the arguments it was started with; it takes only ${
            and(listed(command))
          }, not "${other}"`,
        ),
    });
  }
  const { help: _, ...read } = readFlags(values, RESUME_FLAGS);
  return { kind: "resume", runId, ...read } as ResumeCommand;
}

/**
 * The command of the table a command line of words names: the longest
 * whose words begin it.
 */
function wordCommand(positionals: readonly string[]): CommandSpec | undefined {
  return WORD_COMMANDS
    .filter((command) => {
      const words = command.name.split(" ");
      return words.every((word, i) => positionals[i] === word);
    })
    .sort((a, b) => b.name.length - a.name.length)[0];
}

/** `runs`, `runs show RUN_ID`, `runs stats`, `learnings search [QUERY]`, `finish RUN_ID`, `completions SHELL`. */
function parseWords(argv: readonly string[]): Command {
  const union = [...new Set(WORD_COMMANDS.flatMap((command) => command.flags))].map(flagNamed);
  const { values: loose, positionals, other } = lenientParse(argv, union);
  const command = wordCommand(positionals);
  const history = WORD_COMMANDS.filter((spec) => spec.group === "history");
  if (!command) {
    const typed = positionals.slice(0, 2).join(" ");
    const meant = closest(typed, WORD_COMMANDS.map((spec) => spec.name));
    throw new UsageError(
      meant
        ? `Unknown command "${typed}": did you mean "${meant}"?`
        : `Unknown command "${typed}": expected ${
          history.map((spec) => `"${commandLabel(spec)}"`).join(", ").replace(
            /, ([^,]*)$/,
            " or $1",
          )
        }`,
    );
  }
  if (loose.help === true) return { kind: "help", command: command.name };
  const unknown = (flag: string) =>
    new UsageError(
      `Unknown flag "${flag}" for "${command.name}": it takes ${
        listed(command).join(", ") || "no flags"
      }`,
    );
  // Before the arguments are counted: an unknown flag's value is not one of them.
  if (other) {
    const flag = other.split("=")[0];
    throw unknownFlag(flag, {
      known: command.flags,
      command: command.name,
      fallback: () => unknown(flag),
    });
  }
  const args = positionals.slice(command.name.split(" ").length);
  const specs = command.args ?? [];
  const extra = args[specs.length];
  if (extra !== undefined && !specs.at(-1)?.rest) {
    // "runs shwo 1a2b": a command word mistyped, not an argument.
    const meant = closest(`${command.name} ${extra}`, WORD_COMMANDS.map((spec) => spec.name));
    if (meant && meant !== command.name) {
      throw new UsageError(`Unknown command "${command.name} ${extra}": did you mean "${meant}"?`);
    }
    throw new UsageError(
      specs.length === 0
        ? `Unknown command "${positionals.join(" ")}": expected ${
          history.map((spec) => `"${commandLabel(spec)}"`).join(", ").replace(
            /, ([^,]*)$/,
            " or $1",
          )
        }`
        : `Unexpected argument "${extra}": "${command.name}" takes ${
          specs.map(argumentLabel).join(" ")
        } (run "${command.name} --help")`,
    );
  }
  specs.forEach((spec, i) => {
    const given = args[i];
    if (given === undefined && !spec.optional) {
      throw new UsageError(`"${command.name}" needs ${spec.name}: ${spec.what}`);
    }
    if (given !== undefined && spec.values && !spec.values.includes(given)) {
      const meant = closest(given, spec.values);
      throw new UsageError(
        `Unknown ${spec.name.toLowerCase()} "${given}" for "${command.name}": ${
          meant ? `did you mean "${meant}"?` : `expected ${or(spec.values)}`
        }`,
      );
    }
  });
  const flags = flagsOf(command).filter((flag) => flag.name !== "help");
  const { values } = strictParse(argv, [...flags, ...HELP], {
    positionals: true,
    command: command.name,
    unknown,
  });
  if (command.name === "completions") return { kind: "completions", shell: args[0] };
  const read = readFlags(values, flags) as Partial<HistoryOptions>;
  const options: HistoryOptions = {
    json: read.json ?? false,
    store: read.store,
    cwd: read.cwd,
    agent: read.agent,
    // The metrics sum the whole history unless told otherwise; the lists show the latest 20.
    limit: read.limit ?? (command.name === "runs stats" ? Number.MAX_SAFE_INTEGER : 20),
  };
  switch (command.name) {
    case "runs":
      return { kind: "runs", ...options };
    case "runs show":
      return { kind: "runs show", runId: args[0], ...options };
    case "runs stats":
      return { kind: "runs stats", ...options };
    case "learnings search":
      return { kind: "learnings search", query: args.join(" "), ...options };
    default:
      return { kind: "finish", runId: args[0], ...options };
  }
}

/**
 * The CLI flag of a definition parameter: its `cli` field, else `--` and
 * its name in kebab case.
 *
 * @param name Parameter name.
 * @param spec Parameter spec.
 * @returns The flag with leading dashes.
 * @example
 * ```ts
 * import { parameterFlag } from "./command_line.ts";
 * console.assert(parameterFlag("targetDecisions", { type: "number" } as never) === "--target-decisions");
 * ```
 */
export function parameterFlag(name: string, spec: ParameterSpec): string {
  if (spec.cli) return spec.cli;
  return `--${name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").replace(/_/g, "-").toLowerCase()}`;
}

/**
 * The definition's parameters by flag name (without dashes); refuses
 * reserved and shared flags.
 *
 * @param definition The loaded agent definition.
 * @returns Parameter name and spec by flag name.
 * @throws {UsageError} When a parameter's flag is reserved or shared.
 */
export function parameterFlags(
  definition: AgentDefinition,
): Map<string, [string, ParameterSpec]> {
  const byFlag = new Map<string, [string, ParameterSpec]>();
  for (const [name, spec] of Object.entries(definition.parameters)) {
    const flag = parameterFlag(name, spec).replace(/^--/, "");
    if (RESERVED_FLAGS.includes(flag)) {
      throw new UsageError(
        `Agent "${definition.name}": parameter "${name}" uses the flag "--${flag}", which finishline reserves; set "parameters.${name}.cli" to another flag`,
      );
    }
    const taken = byFlag.get(flag);
    if (taken) {
      throw new UsageError(
        `Agent "${definition.name}": parameters "${
          taken[0]
        }" and "${name}" both use the flag "--${flag}"; set "parameters.${name}.cli" to another flag`,
      );
    }
    byFlag.set(flag, [name, spec]);
  }
  return byFlag;
}

/**
 * Second pass: every flag of a run, strictly, with the definition's
 * parameters.
 *
 * @param command The run command (its base flags are already read).
 * @param definition The loaded agent definition (for its parameters).
 * @returns The run flags.
 * @throws {UsageError} For unknown flags, bad values and conflicts.
 * @example
 * ```ts
 * import { parseRunCommand, parseRunFlags } from "./command_line.ts";
 * const command = parseRunCommand(["--iterate-max", "3"]);
 * const flags = parseRunFlags(command, { name: "x", parameters: {} } as never);
 * console.assert(flags.iterateMax === 3);
 * ```
 */
export function parseRunFlags(command: RunCommand, definition: AgentDefinition): RunFlags {
  const parameters = parameterFlags(definition);
  const { values } = strictParse(command.argv, [...BASE_FLAGS, ...RUN_FLAGS], {
    parameters,
    unknown: elsewhere,
  });
  const flags = {
    ...command.flags,
    ...readFlags(values, RUN_FLAGS),
    params: {},
  } as RunFlags;
  checkCombinations(flags);
  for (const [flag, [name, spec]] of parameters) {
    const raw = values[flag];
    const value = raw === undefined ? spec.default : parameterValue(raw, `--${flag}`, spec);
    if (value !== undefined) {
      flags.params[name] = value;
    } else if (spec.required) {
      throw new UsageError(
        `Flag "--${flag}" is required by agent "${definition.name}": ${
          spec.description || `parameter "${name}"`
        }`,
      );
    }
  }
  return flags;
}

/** The message for a flag of the table that a run does not take: which commands do. */
function elsewhere(flag: string): UsageError {
  const name = flag.replace(/^--/, "").split("=")[0];
  const takers = COMMANDS.filter((command) => command.name !== "" && command.flags.includes(name));
  if (!flag.startsWith("--") || takers.length === 0) {
    return new UsageError(`Unknown flag "${flag}": run with --help to see the flags`);
  }
  return new UsageError(
    `Flag "--${name}" does not go with a run: it goes with ${
      and(takers.map((command) => `"${command.name}"`))
    }`,
  );
}

function checkCombinations(flags: RunFlags): void {
  const selectors = [
    flags.issue !== undefined && "--issue",
    flags.project !== undefined && "--project",
    flags.keyword !== undefined && "--keyword",
  ].filter((flag): flag is string => typeof flag === "string");
  if (selectors.length > 1) {
    throw new UsageError(
      `Flags ${
        selectors.map((flag) => `"${flag}"`).join(" and ")
      } conflict: each selects a different completion handler; give one`,
    );
  }
  for (const [flag, value] of [["--label", flags.label], ["--owner", flags.owner]] as const) {
    if (value !== undefined && flags.project === undefined) {
      throw new UsageError(`Flag "${flag}" only applies to project runs: add --project N`);
    }
  }
  const worktreeOnly = [["--base-branch", flags.baseBranch !== undefined], [
    "--create-pr",
    flags.createPr,
  ]] as const;
  for (const [flag, given] of worktreeOnly) {
    if (given && !flags.worktree) {
      throw new UsageError(`Flag "${flag}" only applies to worktree runs: add --worktree`);
    }
  }
  if (flags.quiet && flags.verbose) {
    throw new UsageError(`Flags "--quiet" and "--verbose" conflict: give one`);
  }
  if (flags.dangerouslySkipPermissions && flags.permissionMode) {
    throw new UsageError(
      `Flags "--dangerously-skip-permissions" and "--permission-mode" conflict: give one`,
    );
  }
}

/**
 * Apply the flags to the definition: handler selection (`--issue`,
 * `--project`, `--keyword`), the cap, model, turns, budget, permissions and
 * the wait budget (`--max-wait`).
 *
 * @param definition The loaded definition.
 * @param flags The parsed flags.
 * @returns A new definition; the input is not changed.
 * @example
 * ```ts
 * import { applyFlags } from "./command_line.ts";
 * const base = { behavior: { completionType: "iterate", completionConfig: {} } } as never;
 * const result = applyFlags(base, { keyword: "DONE", params: {} } as never);
 * console.assert(result.behavior.completionType === "manual");
 * ```
 */
export function applyFlags(
  definition: AgentDefinition,
  flags: RunFlags,
): AgentDefinition {
  const behavior = {
    ...definition.behavior,
    completionConfig: { ...definition.behavior.completionConfig },
  };
  if (flags.issue !== undefined) behavior.completionType = "issue";
  if (flags.project !== undefined) behavior.completionType = "project";
  if (flags.keyword !== undefined) {
    behavior.completionType = "manual";
    behavior.completionConfig.completionKeyword = flags.keyword;
  }
  if (flags.iterateMax !== undefined) {
    behavior.completionConfig.maxIterations = flags.iterateMax;
  }
  if (flags.model !== undefined) behavior.model = flags.model;
  if (flags.backend !== undefined) behavior.backend = flags.backend as AgentBehavior["backend"];
  if (flags.maxTurns !== undefined) behavior.maxTurns = flags.maxTurns;
  if (flags.maxBudgetUsd !== undefined) {
    behavior.maxBudgetUsd = flags.maxBudgetUsd;
  }
  if (flags.permissionMode !== undefined) {
    behavior.permissionMode = flags.permissionMode;
  }
  const retry = flags.maxWait !== undefined
    ? { ...definition.retry, maxWaitSeconds: flags.maxWait }
    : definition.retry;
  return { ...definition, behavior, retry };
}
