/**
 * Command-line parsing for the iterator: flags -> validated options. Parsing
 * happens in two passes, because the agent's own parameters (and so its
 * flags) are only known once its definition is loaded.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { AgentDefinition, ParameterSpec } from "../common/definition/types.ts";
import { UsageError } from "../common/errors.ts";

/** Flags that do not depend on the agent definition. */
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

/** Every option of a run. */
export interface RunFlags extends BaseFlags {
  /** `--issue/-i N`. */
  issue?: number;
  /** `--project/-p N`. */
  project?: number;
  /** `--iterate-max/-m N`. */
  iterateMax?: number;
  /** `--keyword K`. */
  keyword?: string;
  /** `--task/-t TEXT`. */
  task?: string;
  /** `--repo owner/name`. */
  repo?: string;
  /** `--owner LOGIN` (projects). */
  owner?: string;
  /** `--label NAME` (projects). */
  label?: string;
  /** `--model M`. */
  model?: string;
  /** `--max-turns N`. */
  maxTurns?: number;
  /** `--max-budget-usd X`. */
  maxBudgetUsd?: number;
  /** `--max-wait SECONDS`: longest wait for a rate limit to reset. */
  maxWait?: number;
  /** `--permission-mode M`. */
  permissionMode?: "default" | "acceptEdits" | "plan";
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
  /** Definition parameters, keyed by parameter name. */
  params: Record<string, string | number | boolean>;
}

type OptionSpec = { type: "string" | "boolean"; short?: string };

const BASE_OPTIONS: Record<string, OptionSpec> = {
  agent: { type: "string", short: "a" },
  cwd: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  list: { type: "boolean" },
  "list-checks": { type: "boolean" },
  init: { type: "string" },
  store: { type: "string" },
  "github-actions": { type: "boolean" },
  "trigger-label": { type: "string" },
};

const RUN_OPTIONS: Record<string, OptionSpec> = {
  ...BASE_OPTIONS,
  issue: { type: "string", short: "i" },
  project: { type: "string", short: "p" },
  "iterate-max": { type: "string", short: "m" },
  keyword: { type: "string" },
  task: { type: "string", short: "t" },
  repo: { type: "string", short: "R" },
  owner: { type: "string" },
  label: { type: "string" },
  model: { type: "string" },
  "max-turns": { type: "string" },
  "max-budget-usd": { type: "string" },
  "max-wait": { type: "string" },
  "permission-mode": { type: "string" },
  "dangerously-skip-permissions": { type: "boolean" },
  "dry-run": { type: "boolean" },
  worktree: { type: "boolean" },
  "base-branch": { type: "string" },
  "create-pr": { type: "boolean" },
  json: { type: "boolean" },
  "no-learnings": { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  verbose: { type: "boolean", short: "v" },
};

/** Flags the CLI itself defines (parameters may not reuse them). */
export const RESERVED_FLAGS: readonly string[] = Object.keys(RUN_OPTIONS);

/** The usage text printed by `--help`. */
export const HELP_TEXT =
  `finishline iterator: run a coding agent in iterations until its work is finished

Usage:
  deno run -A agents/iterator/main.ts [flags] [agent parameters]

Which handler decides "finished":
  -i, --issue N            GitHub issue handler: done when issue N is closed
  -p, --project N          GitHub project handler: done when project N is done
  -R, --repo OWNER/NAME    repository of the issue (default: the working directory's)
      --owner LOGIN        owner of the project (default: the repository's owner; @me allowed)
      --label NAME         only project items with this label count
      --keyword K          manual handler: done when the agent says K
  (none of these)          the agent definition's completionType (iterate for the built-in agent)

Run:
  -a, --agent NAME         agent in .agent/NAME/ or a built-in agent (default: iterator)
  -t, --task TEXT          the task, for iterate and manual runs ({uv-task})
  -m, --iterate-max N      iteration cap for every handler; the target for iterate
      --model M            model for the agent
      --max-turns N        turn cap per iteration
      --max-budget-usd X   cost cap for the whole run
      --max-wait SECONDS   longest wait for a rate limit to reset (default 900)
      --permission-mode M  default | acceptEdits | plan
      --dangerously-skip-permissions
                           run the agent with bypassPermissions (refused as root)
      --cwd DIR            repository to work in (default: the current directory)

Worktrees:
      --worktree           work in a new git worktree on branch finishline/<agent>/<issue or run>
      --base-branch NAME   create it from NAME (default: the current branch)
      --create-pr          open a pull request (gh pr create) when the run completes

History:
      --resume [RUN_ID]    continue the latest unfinished run of the agent (or RUN_ID)
      --no-learnings       do not put learnings of earlier runs into the first prompt
      --store PATH         the run history (default: .agent/.finishline/state.db in the repository)
  runs [show RUN_ID]       recent runs, or one run's iterations, verdicts and costs
  learnings search QUERY   learnings of earlier runs, best match first
  finish RUN_ID            complete an interrupted finish workflow (idempotent)

Output:
      --dry-run            print handler, system prompt and first prompt; call no model
      --json               print one JSON object with the result on stdout at the end
  -q, --quiet              only errors and the final lines on stderr
  -v, --verbose            also stream the agent's text and tool calls

Other:
      --list               list the agents found (local and built-in)
      --list-checks        print the repository's detected checks and run them once
                           (also: the "checks" subcommand)
      --init NAME          scaffold .agent/NAME/ (agent.json, prompts, a custom handler)
      --github-actions     with --init: also write .github/workflows/finishline.yml
      --trigger-label L    the issue label that starts the workflow (default: finishline)
  -h, --help               this text
      --version            finishline's version

Exit codes: 0 completed, 1 failed, 2 bad input, 3 iteration cap reached,
4 stalled, 5 blocked, 6 budget exhausted, 130 interrupted.`;

/**
 * First pass: the flags needed to find the agent, ignoring the rest.
 *
 * @param argv Command-line arguments.
 * @returns The base flags.
 * @example
 * ```ts
 * import { parseBaseFlags } from "./cli.ts";
 * console.assert(parseBaseFlags(["-a", "reviewer", "--issue", "3"]).agent === "reviewer");
 * ```
 */
export function parseBaseFlags(argv: string[]): BaseFlags {
  const { values } = parseArgs({
    args: argv,
    options: BASE_OPTIONS,
    strict: false,
    allowPositionals: true,
  });
  const agent = values.agent;
  if (agent === true) {
    throw new UsageError(`Flag "--agent" needs a value: an agent name`);
  }
  const cwd = values.cwd;
  if (cwd === true) {
    throw new UsageError(`Flag "--cwd" needs a value: a directory`);
  }
  const init = values.init;
  if (init === true) {
    throw new UsageError(`Flag "--init" needs a value: the new agent's name`);
  }
  const store = values.store;
  if (store === true) {
    throw new UsageError(`Flag "--store" needs a value: the run history database file`);
  }
  return {
    agent: typeof agent === "string" ? agent : "iterator",
    cwd: typeof cwd === "string" ? cwd : undefined,
    help: values.help === true,
    version: values.version === true,
    list: values.list === true,
    listChecks: values["list-checks"] === true,
    init: typeof init === "string" ? init : undefined,
    store: typeof store === "string" ? store : undefined,
    githubActions: values["github-actions"] === true,
    triggerLabel: typeof values["trigger-label"] === "string" ? values["trigger-label"] : undefined,
  };
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
 * import { parameterFlag } from "./cli.ts";
 * console.assert(parameterFlag("targetDecisions", { type: "number" } as never) === "--target-decisions");
 * ```
 */
export function parameterFlag(name: string, spec: ParameterSpec): string {
  if (spec.cli) return spec.cli;
  return `--${name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").replace(/_/g, "-").toLowerCase()}`;
}

/**
 * Second pass: every flag, strictly, with the definition's parameters.
 *
 * @param argv Command-line arguments.
 * @param definition The loaded agent definition (for its parameters).
 * @returns The run flags.
 * @throws {UsageError} For unknown flags, bad values and conflicts.
 * @example
 * ```ts
 * import { parseRunFlags } from "./cli.ts";
 * const flags = parseRunFlags(["--iterate-max", "3"], { name: "x", parameters: {} } as never);
 * console.assert(flags.iterateMax === 3);
 * ```
 */
export function parseRunFlags(
  argv: string[],
  definition: AgentDefinition,
): RunFlags {
  const options: Record<string, OptionSpec> = { ...RUN_OPTIONS };
  const paramByFlag = new Map<string, [string, ParameterSpec]>();
  for (const [name, spec] of Object.entries(definition.parameters)) {
    const flag = parameterFlag(name, spec).replace(/^--/, "");
    if (flag in RUN_OPTIONS) {
      throw new UsageError(
        `Agent "${definition.name}": parameter "${name}" uses the flag "--${flag}", which finishline reserves; set "parameters.${name}.cli" to another flag`,
      );
    }
    const taken = paramByFlag.get(flag);
    if (taken) {
      throw new UsageError(
        `Agent "${definition.name}": parameters "${
          taken[0]
        }" and "${name}" both use the flag "--${flag}"; set "parameters.${name}.cli" to another flag`,
      );
    }
    paramByFlag.set(flag, [name, spec]);
    options[flag] = { type: spec.type === "boolean" ? "boolean" : "string" };
  }

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw parseError(error);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const base = parseBaseFlags(argv);

  const flags: RunFlags = {
    ...base,
    issue: positiveInt(values.issue, "--issue", "an issue number"),
    project: positiveInt(values.project, "--project", "a project number"),
    iterateMax: positiveInt(
      values["iterate-max"],
      "--iterate-max",
      "the number of iterations",
    ),
    keyword: nonEmpty(values.keyword, "--keyword", "the completion keyword"),
    task: nonEmpty(values.task, "--task", "the task text"),
    repo: repository(values.repo),
    owner: nonEmpty(values.owner, "--owner", "a user or organisation login, or @me"),
    label: nonEmpty(values.label, "--label", "a label name"),
    model: nonEmpty(values.model, "--model", "a model name"),
    maxTurns: positiveInt(values["max-turns"], "--max-turns", "the turn cap"),
    maxBudgetUsd: positiveNumber(
      values["max-budget-usd"],
      "--max-budget-usd",
      "a cost in USD",
    ),
    maxWait: seconds(values["max-wait"], "--max-wait"),
    permissionMode: permissionMode(values["permission-mode"]),
    dangerouslySkipPermissions: values["dangerously-skip-permissions"] === true,
    dryRun: values["dry-run"] === true,
    worktree: values.worktree === true,
    baseBranch: nonEmpty(values["base-branch"], "--base-branch", "a branch name"),
    createPr: values["create-pr"] === true,
    json: values.json === true,
    noLearnings: values["no-learnings"] === true,
    quiet: values.quiet === true,
    verbose: values.verbose === true,
    params: {},
  };

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
  for (
    const [flag, given] of [["--base-branch", flags.baseBranch !== undefined], [
      "--create-pr",
      flags.createPr,
    ]] as const
  ) {
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

  for (const [flag, [name, spec]] of paramByFlag) {
    const raw = values[flag];
    const value = raw === undefined ? spec.default : parameterValue(raw, `--${flag}`, spec);
    if (value === undefined) {
      if (spec.required) {
        throw new UsageError(
          `Flag "--${flag}" is required by agent "${definition.name}": ${
            spec.description || `parameter "${name}"`
          }`,
        );
      }
      continue;
    }
    flags.params[name] = value;
  }
  return flags;
}

function parseError(error: unknown): UsageError {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const flag = message.match(/'(-{1,2}[^' ]+)/)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    return new UsageError(
      `Unknown flag "${flag ?? message}": run with --help to see the flags`,
    );
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const arg = message.match(/'([^']*)'/)?.[1] ?? "";
    return new UsageError(
      `Unexpected argument "${arg}": flags take their values as "--flag value"; run with --help`,
    );
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = message.match(/--([a-z0-9-]+)/)?.[0] ?? "flag";
    if (message.includes("does not take an argument")) {
      return new UsageError(
        `Flag "${name}" takes no value: give it alone, as "${name}"`,
      );
    }
    if (message.includes("argument is ambiguous")) {
      return new UsageError(
        `Flag "${name}" needs a value: to give one that starts with "-", write "${name}=VALUE"`,
      );
    }
    return new UsageError(
      `Flag "${name}" needs a value: ${firstSentence(message)}`,
    );
  }
  return new UsageError(`Bad command line: ${firstSentence(message)}`);
}

function firstSentence(message: string): string {
  return message.split("\n")[0].replace(/\.$/, "");
}

function positiveInt(
  raw: string | boolean | undefined,
  flag: string,
  what: string,
): number | undefined {
  if (raw === undefined) return undefined;
  if (
    typeof raw !== "string" || !/^\d+$/.test(raw.trim()) || Number(raw) < 1 ||
    !Number.isSafeInteger(Number(raw))
  ) {
    throw new UsageError(
      `Flag "${flag}" expects ${what} (a whole number of 1 or more), got "${raw}"`,
    );
  }
  return Number(raw);
}

function positiveNumber(
  raw: string | boolean | undefined,
  flag: string,
  what: string,
): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `Flag "${flag}" expects ${what} (a number above 0), got "${raw}"`,
    );
  }
  return value;
}

function seconds(raw: string | boolean | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value < 0) {
    throw new UsageError(`Flag "${flag}" expects a number of seconds (0 or more), got "${raw}"`);
  }
  return value;
}

function nonEmpty(
  raw: string | boolean | undefined,
  flag: string,
  what: string,
): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw.trim() === "") {
    throw new UsageError(`Flag "${flag}" expects ${what}, got an empty value`);
  }
  return raw;
}

function repository(raw: string | boolean | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (
    typeof raw !== "string" || !/^[A-Za-z0-9][A-Za-z0-9-]*\/(?!\.\.?$)[A-Za-z0-9_.-]+$/.test(raw)
  ) {
    throw new UsageError(`Flag "--repo" expects owner/name (e.g. "octo/demo"), got "${raw}"`);
  }
  return raw;
}

function permissionMode(
  raw: string | boolean | undefined,
): RunFlags["permissionMode"] {
  if (raw === undefined) return undefined;
  if (raw === "default" || raw === "acceptEdits" || raw === "plan") return raw;
  if (raw === "bypassPermissions") {
    throw new UsageError(
      `Flag "--permission-mode" does not take "bypassPermissions": use --dangerously-skip-permissions`,
    );
  }
  throw new UsageError(
    `Flag "--permission-mode" expects one of "default", "acceptEdits", "plan", got "${raw}"`,
  );
}

function parameterValue(
  raw: string | boolean,
  flag: string,
  spec: ParameterSpec,
): string | number | boolean {
  if (spec.type === "boolean") return raw === true;
  if (typeof raw !== "string") {
    throw new UsageError(`Flag "${flag}" needs a value`);
  }
  let value: string | number = raw;
  if (spec.type === "number") {
    value = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(value)) {
      throw new UsageError(`Flag "${flag}" expects a number, got "${raw}"`);
    }
  }
  const rules = spec.validation;
  if (rules) {
    if (typeof value === "number") {
      if (rules.min !== undefined && value < rules.min) {
        throw new UsageError(
          `Flag "${flag}" expects a number of at least ${rules.min}, got ${value}`,
        );
      }
      if (rules.max !== undefined && value > rules.max) {
        throw new UsageError(
          `Flag "${flag}" expects a number of at most ${rules.max}, got ${value}`,
        );
      }
    }
    if (
      typeof value === "string" && rules.pattern &&
      !new RegExp(rules.pattern).test(value)
    ) {
      throw new UsageError(
        `Flag "${flag}" expects a value matching /${rules.pattern}/, got "${value}"`,
      );
    }
    if (rules.enum && !rules.enum.includes(value)) {
      throw new UsageError(
        `Flag "${flag}" expects one of ${
          rules.enum.map((item) => `"${item}"`).join(", ")
        }, got "${value}"`,
      );
    }
  }
  return value;
}

/**
 * The run's arguments as handlers and templates see them: built-in flags in
 * camelCase (`iterateMax`) and parameters by name.
 *
 * @param flags The parsed flags.
 * @returns The arguments (unset flags left out).
 * @example
 * ```ts
 * import { runArgs } from "./cli.ts";
 * const args = runArgs({ agent: "x", iterateMax: 2, params: { topic: "t" } } as never);
 * console.assert(args.iterateMax === 2 && args.topic === "t");
 * ```
 */
export function runArgs(flags: RunFlags): Record<string, unknown> {
  const args: Record<string, unknown> = {
    agent: flags.agent,
    issue: flags.issue,
    project: flags.project,
    iterateMax: flags.iterateMax,
    keyword: flags.keyword,
    task: flags.task,
    repo: flags.repo,
    owner: flags.owner,
    label: flags.label,
    model: flags.model,
    maxTurns: flags.maxTurns,
    maxBudgetUsd: flags.maxBudgetUsd,
    permissionMode: flags.permissionMode,
    ...flags.params,
  };
  for (const key of Object.keys(args)) {
    if (args[key] === undefined) delete args[key];
  }
  return args;
}

/**
 * Apply the flags to the definition: handler selection (`--issue`,
 * `--project`, `--keyword`), the cap, model, turns, budget and permissions.
 *
 * @param definition The loaded definition.
 * @param flags The parsed flags.
 * @returns A new definition; the input is not changed.
 * @example
 * ```ts
 * import { applyFlags } from "./cli.ts";
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
  if (flags.maxTurns !== undefined) behavior.maxTurns = flags.maxTurns;
  if (flags.maxBudgetUsd !== undefined) {
    behavior.maxBudgetUsd = flags.maxBudgetUsd;
  }
  if (flags.permissionMode !== undefined) {
    behavior.permissionMode = flags.permissionMode;
  }
  return { ...definition, behavior };
}
