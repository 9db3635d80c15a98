/**
 * The `fleet` command line: `fleet --label L | --issues LIST [--parallel N]
 * [--limit N] [run flags]` and `fleet --resume [FLEET_ID]`. Read in two
 * passes like a run's: the agent, folder and history first, then (once the
 * agent's definition is loaded, for its parameters) every flag strictly.
 *
 * @module
 */

import type { ParameterSpec } from "../../definition/definition_types.ts";
import { UsageError } from "../../support/errors.ts";
import { lenientParse, readFlags, strictParse, type Values } from "../flags/_parse.ts";
import { commandNamed, FLAGS, flagsOf, type FlagSpec, FLEET_FORWARDED } from "../flags/table.ts";

/** `fleet ...`: the flags read before the agent's definition is loaded. */
export interface FleetCommand {
  /** The command. */
  kind: "fleet";
  /** The arguments after `fleet`. */
  argv: string[];
  /** `--agent`. @default "iterator" */
  agent: string;
  /** `--cwd`. */
  cwd?: string;
  /** `--store`. */
  store?: string;
}

/** `fleet --resume [FLEET_ID]`: continue a fleet's unfinished runs. */
export interface FleetResumeCommand {
  /** The command. */
  kind: "fleet resume";
  /** The fleet to continue; the latest unfinished one when absent. */
  fleetId?: string;
  /** `--cwd`. */
  cwd?: string;
  /** `--store`. */
  store?: string;
  /** `--parallel`: a new limit for the rest of the fleet. */
  parallel?: number;
  /** `--json`. */
  json: boolean;
  /** `--quiet`. */
  quiet: boolean;
}

/** Every option of a fleet, read strictly with the agent's parameters. */
export interface FleetFlags {
  /** `--agent`. */
  agent: string;
  /** `--cwd`. */
  cwd?: string;
  /** `--store`. */
  store?: string;
  /** `--repo`. */
  repo?: string;
  /** `--label`: the open issues with this label. */
  label?: string;
  /** `--issues`: these issues, in this order. */
  issues?: number[];
  /** `--parallel`. @default 2 */
  parallel: number;
  /** `--limit`: at most this many issues. */
  limit?: number;
  /** `--base-branch`. */
  baseBranch?: string;
  /** `--json`. */
  json: boolean;
  /** `--quiet`. */
  quiet: boolean;
  /** `--dry-run`: print the selection and the runs' command lines; run nothing. */
  dryRun: boolean;
  /** The flags every run gets as given (model, caps, permissions, the agent's parameters). */
  runArgs: string[];
}

/** How many runs go at once when `--parallel` is not given. */
export const DEFAULT_PARALLEL = 2;

function named(...names: string[]): FlagSpec[] {
  return names.map((name) => FLAGS.find((flag) => flag.name === name)!);
}

/** Flags passed on to every run, as given. */
const FORWARDED = named(...FLEET_FORWARDED);
const withoutHelp = (flags: FlagSpec[]) => flags.filter((flag) => flag.name !== "help");
/** Every flag of `fleet`, from the table (`--help` is read before). */
const FLEET_FLAGS = withoutHelp(flagsOf(commandNamed("fleet")));
/** Flags the fleet reads itself (`--worktree` and `--create-pr` are implied, so allowed). */
const OWN = FLEET_FLAGS.filter((flag) => !FORWARDED.includes(flag));
const BASE = named("agent", "cwd", "store");
const RESUME = withoutHelp(flagsOf(commandNamed("fleet --resume")));

const UNKNOWN = (flag: string) =>
  new UsageError(
    `Flag "${flag}" does not go with "fleet": it takes ${
      OWN.filter((spec) => !["worktree", "create-pr"].includes(spec.name))
        .map((spec) => `--${spec.name}`).join(", ")
    }, the run flags ${
      FORWARDED.map((spec) => `--${spec.name}`).join(", ")
    } and the agent's parameters`,
  );

/**
 * First pass over `fleet ...`: the agent, folder and history (or a resume).
 *
 * @param argv The arguments after `fleet`.
 * @returns The fleet command, or the resume command.
 * @throws {UsageError} For a bad `--resume` line or a base flag without its value.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseFleetCommand } from "./flags.ts";
 * assert.equal(parseFleetCommand(["--label", "agent:go", "-a", "fixer"]).kind, "fleet");
 * assert.deepEqual(parseFleetCommand(["--resume", "1a2b3c4d", "--json"]), {
 *   kind: "fleet resume", fleetId: "1a2b3c4d", json: true, quiet: false,
 *   cwd: undefined, store: undefined, parallel: undefined,
 * });
 * ```
 */
export function parseFleetCommand(argv: readonly string[]): FleetCommand | FleetResumeCommand {
  const at = argv.indexOf("--resume");
  if (at !== -1) return parseResume(argv, at);
  const { values } = lenientParse(argv, BASE);
  const base = readFlags(values, BASE) as { agent?: string; cwd?: string; store?: string };
  return { kind: "fleet", argv: [...argv], ...base, agent: base.agent ?? "iterator" };
}

function parseResume(argv: readonly string[], at: number): FleetResumeCommand {
  const next = argv[at + 1];
  const fleetId = next !== undefined && !next.startsWith("-") ? next : undefined;
  const rest = [...argv.slice(0, at), ...argv.slice(at + (fleetId ? 2 : 1))];
  const { values } = strictParse(rest, RESUME, {
    command: "fleet --resume",
    unknown: (flag) =>
      new UsageError(
        `"fleet --resume" continues a fleet with the flags it was started with; it takes only --parallel, --json, --quiet, --store and --cwd, not "${flag}"`,
      ),
  });
  return { kind: "fleet resume", fleetId, ...readFlags(values, RESUME) } as FleetResumeCommand;
}

/**
 * Second pass: every flag of the fleet, strictly, with the agent's parameters.
 *
 * @param command The fleet command.
 * @param parameters The agent's parameters by flag name (without dashes).
 * @returns The fleet's flags.
 * @throws {UsageError} For unknown flags, bad values, conflicts and a missing selection.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseFleetCommand, parseFleetFlags, type FleetCommand } from "./flags.ts";
 * const command = parseFleetCommand(["--issues", "4,7", "--model", "m", "--parallel", "3"]);
 * const flags = parseFleetFlags(command as FleetCommand, new Map());
 * assert.deepEqual([flags.issues, flags.parallel, flags.runArgs], [[4, 7], 3, ["--model", "m"]]);
 * ```
 */
export function parseFleetFlags(
  command: FleetCommand,
  parameters: Map<string, [string, ParameterSpec]>,
): FleetFlags {
  for (const flag of parameters.keys()) {
    if (OWN.some((spec) => spec.name === flag)) {
      throw new UsageError(
        `Agent "${command.agent}": a parameter uses the flag "--${flag}", which fleet reserves; set its "cli" to another flag`,
      );
    }
  }
  const { values } = strictParse(command.argv, FLEET_FLAGS, {
    parameters,
    command: "fleet",
    unknown: UNKNOWN,
  });
  const own = readFlags(values, OWN) as Omit<FleetFlags, "runArgs">;
  readFlags(values, FORWARDED); // checks the values: one line naming a bad one
  if (own.label !== undefined && own.issues !== undefined) {
    throw new UsageError(
      `Flags "--label" and "--issues" conflict: give one (the issues with a label, or these issues)`,
    );
  }
  if (own.label === undefined && own.issues === undefined) {
    throw new UsageError(
      `"fleet" needs the issues to work on: --label NAME (the open issues with that label) or --issues LIST (e.g. 4,7,9)`,
    );
  }
  return {
    ...own,
    agent: own.agent ?? "iterator",
    parallel: own.parallel ?? DEFAULT_PARALLEL,
    runArgs: rawArgs(values, [...FORWARDED.map((spec) => spec.name), ...parameters.keys()]),
  };
}

/** The flags as given, in a fixed order, for a run's command line. */
function rawArgs(values: Values, names: string[]): string[] {
  return names.flatMap((name) => {
    const value = values[name];
    if (value === undefined || value === false) return [];
    return value === true ? [`--${name}`] : [`--${name}`, value];
  });
}
