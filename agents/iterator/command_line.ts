/**
 * The iterator's command line, parsed in one place: argv -> a typed
 * {@linkcode Command}. A run is parsed in two passes, because the agent's own
 * parameters (and so its flags) are only known once its definition is
 * loaded: {@linkcode parseCommandLine} reads the command and the base flags,
 * {@linkcode parseRunFlags} the rest. Every flag comes from one table, which
 * also makes `--help`.
 *
 * @module
 */

import type { AgentBehavior, AgentDefinition, ParameterSpec } from "../common/definition/types.ts";
import type { RunInputs } from "../common/completion/run_inputs.ts";
import { UsageError } from "../common/errors.ts";
import { lenientParse, readFlags, strictParse } from "./_flag_parse.ts";
import { FLAGS, type FlagSpec, helpText } from "./_flag_table.ts";
import { type FlagPermissionMode, parameterValue } from "./_flag_values.ts";
import { type FleetCommand, type FleetResumeCommand, parseFleetCommand } from "./fleet/flags.ts";

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
   * `--agent`: only its runs (for `runs`); the agent whose `learnings.embeddings`
   * `learnings search` uses.
   */
  agent?: string;
  /** `--limit`. @default 20 */
  limit: number;
}

/**
 * `runs`, `runs show RUN_ID`, `learnings search [QUERY]` (an empty query
 * lists the latest) or `finish RUN_ID`.
 */
export type HistoryCommand =
  | ({ kind: "runs" } & HistoryOptions)
  | ({ kind: "runs show"; runId: string } & HistoryOptions)
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
  | { kind: "help" }
  | { kind: "version" };

/** The usage text printed by `--help`. */
export const HELP_TEXT: string = helpText();

/** Flags the CLI itself defines (parameters may not reuse them). */
export const RESERVED_FLAGS: readonly string[] = FLAGS
  .filter((flag) => flag.pass !== "own")
  .map((flag) => flag.name);

/** The first words of the history subcommands. */
const HISTORY_WORDS = ["runs", "learnings", "finish"];

function flagsNamed(...names: string[]): FlagSpec[] {
  return names.map((name) => FLAGS.find((flag) => flag.name === name)!);
}

const BASE_FLAGS = FLAGS.filter((flag) => flag.pass === "base");
const RUN_FLAGS = FLAGS.filter((flag) => flag.pass === "run");
const HISTORY_FLAGS = flagsNamed("json", "store", "cwd", "agent", "limit");
const RESUME_FLAGS = flagsNamed("json", "store", "cwd", "agent");
const CHECKS_FLAGS = flagsNamed("cwd", "agent");

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
  if (HISTORY_WORDS.includes(argv[0])) return parseHistory(argv);
  if (argv[0] === "fleet") {
    const help = argv.includes("--help") || argv.includes("-h");
    return help ? { kind: "help" } : parseFleetCommand(argv.slice(1));
  }
  if (argv[0] === "checks") return parseChecks(argv.slice(1));
  const resumeAt = argv.indexOf("--resume");
  if (resumeAt !== -1) return parseResume(argv, resumeAt);
  const flags = parseBaseFlags(argv);
  if (flags.help) return { kind: "help" };
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

function parseChecks(argv: readonly string[]): Command {
  const { values: raw, other } = lenientParse(argv, CHECKS_FLAGS);
  if (other) {
    throw new UsageError(`The "checks" command takes only --cwd and --agent, not "${other}"`);
  }
  const values = readFlags(raw, CHECKS_FLAGS);
  return {
    kind: "checks",
    agent: (values.agent as string | undefined) ?? "iterator",
    cwd: values.cwd as string | undefined,
  };
}

function parseResume(argv: readonly string[], at: number): ResumeCommand {
  const next = argv[at + 1];
  const runId = next !== undefined && !next.startsWith("-") ? next : undefined;
  const rest = [...argv.slice(0, at), ...argv.slice(at + (runId ? 2 : 1))];
  const { values, other } = lenientParse(rest, RESUME_FLAGS);
  if (other) {
    throw new UsageError(
      `Flag "--resume" continues a run with the arguments it was started with; it takes only --json, --store, --cwd and --agent, not "${other}"`,
    );
  }
  return { kind: "resume", runId, ...readFlags(values, RESUME_FLAGS) } as ResumeCommand;
}

function parseHistory(argv: readonly string[]): HistoryCommand {
  const unknown = (flag: string) =>
    new UsageError(
      `Unknown flag "${flag}" for "${argv[0]}": it takes --json, --store, --cwd, --agent, --limit`,
    );
  const { values, positionals } = strictParse(argv, HISTORY_FLAGS, { positionals: true, unknown });
  const read = readFlags(values, HISTORY_FLAGS) as Omit<HistoryOptions, "limit"> & {
    limit?: number;
  };
  const options: HistoryOptions = { ...read, limit: read.limit ?? 20 };
  const [word, ...rest] = positionals;
  if (word === "runs" && rest.length === 0) return { kind: "runs", ...options };
  if (word === "runs" && rest[0] === "show" && rest.length === 2) {
    return { kind: "runs show", runId: rest[1], ...options };
  }
  if (word === "learnings" && rest[0] === "search") {
    return { kind: "learnings search", query: rest.slice(1).join(" "), ...options };
  }
  if (word === "finish" && rest.length === 1) return { kind: "finish", runId: rest[0], ...options };
  throw new UsageError(
    `Unknown command "${
      positionals.join(" ")
    }": expected "runs", "runs show RUN_ID", "learnings search [QUERY]" or "finish RUN_ID"`,
  );
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
  const { values } = strictParse(command.argv, [...BASE_FLAGS, ...RUN_FLAGS], { parameters });
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
