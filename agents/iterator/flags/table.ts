/**
 * The table of finishline's words: every flag (name, short form, kind of
 * value, help text, section), every command (its arguments, its flags) and
 * every exit code. Parsing, the reserved names, `--help`, each command's
 * `--help`, the shell completions and docs/cli.md all come from it.
 * Private to the iterator's command line.
 *
 * @module
 */

import { BACKEND_NAMES } from "../../backends/presets.ts";
import type { FlagKind } from "./values.ts";

/** The sections of `--help`, in order. */
export type FlagGroup =
  | "handler"
  | "run"
  | "worktrees"
  | "fleet"
  | "history"
  | "output"
  | "other";

/**
 * When a flag is read: `base` before the agent's definition is loaded, `run`
 * once it is, `own` by the one command that takes it (`--resume`, `--limit`).
 */
export type FlagPass = "base" | "run" | "own";

/** One flag of the command line. */
export interface FlagSpec {
  /** The long name, without dashes. */
  name: string;
  /** The one-letter form, without the dash. */
  short?: string;
  /** The field of the parsed flags it fills. */
  key: string;
  /** The kind of its value (its parser). */
  kind: FlagKind;
  /** What the value is, for messages. */
  what?: string;
  /** The value's placeholder in `--help` ("N"). */
  placeholder?: string;
  /** Its lines in `--help` (joined, then wrapped to the terminal's width). */
  help: string[];
  /** What docs/cli.md adds to the help text (Markdown). */
  more?: string;
  /** What the shell completions offer for its value (the kinds with fixed values offer those). */
  complete?: "directory" | "file" | "agent";
  /** Its section of `--help`; none keeps it out of `--help`. */
  group?: FlagGroup;
  /** When it is read. */
  pass: FlagPass;
}

/** Every flag, in the order of `--help`. */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: "issue",
    short: "i",
    key: "issue",
    kind: "positiveInteger",
    what: "an issue number",
    placeholder: "N",
    help: [
      "GitHub issue handler: done when the agent reports success and the evidence passes;",
      "finishline then closes issue N",
    ],
    more:
      'With `github.closeIssue: "agent"` in the definition: done when the agent closes the issue, and the evidence passes.',
    group: "handler",
    pass: "run",
  },
  {
    name: "project",
    short: "p",
    key: "project",
    kind: "positiveInteger",
    what: "a project number",
    placeholder: "N",
    help: ["GitHub project handler: done when every item of project N is done and a review passed"],
    group: "handler",
    pass: "run",
  },
  {
    name: "repo",
    short: "R",
    key: "repo",
    kind: "repo",
    placeholder: "OWNER/NAME",
    help: ["repository of the issue or project (default: the working directory's)"],
    group: "handler",
    pass: "run",
  },
  {
    name: "owner",
    key: "owner",
    kind: "nonEmpty",
    what: "a user or organisation login, or @me",
    placeholder: "LOGIN",
    help: ["with --project: its owner (default: the repository's owner; @me allowed)"],
    group: "handler",
    pass: "run",
  },
  {
    name: "label",
    key: "label",
    kind: "nonEmpty",
    what: "a label name",
    placeholder: "NAME",
    help: [
      "with --project: only items with this label count; with fleet: the open issues with this label",
    ],
    group: "handler",
    pass: "run",
  },
  {
    name: "keyword",
    key: "keyword",
    kind: "nonEmpty",
    what: "the completion keyword",
    placeholder: "K",
    help: ["manual handler: done in the iteration whose response contains K"],
    group: "handler",
    pass: "run",
  },
  {
    name: "agent",
    short: "a",
    key: "agent",
    kind: "text",
    what: "an agent name",
    placeholder: "NAME",
    help: ["agent in .agent/NAME/, else the built-in agent of that name (default: iterator)"],
    more: "`--list` shows them; `--agent NAME --help` shows the agent's parameters.",
    complete: "agent",
    group: "run",
    pass: "base",
  },
  {
    name: "task",
    short: "t",
    key: "task",
    kind: "nonEmpty",
    what: "the task text",
    placeholder: "TEXT",
    help: [
      "the task ({uv-task}); alone, the run ends when the agent reports success",
      "and the repository's checks pass (at most the cap)",
    ],
    group: "run",
    pass: "run",
  },
  {
    name: "iterate-max",
    short: "m",
    key: "iterateMax",
    kind: "positiveInteger",
    what: "the number of iterations",
    placeholder: "N",
    help: [
      "iteration cap for every handler; with --task, exactly N iterations",
      "(iterate; default cap: the definition's maxIterations, else 10)",
    ],
    more: "A run is never unbounded.",
    group: "run",
    pass: "run",
  },
  {
    name: "model",
    key: "model",
    kind: "nonEmpty",
    what: "a model name",
    placeholder: "M",
    help: ["model for the agent (default: the definition's, else the backend's)"],
    group: "run",
    pass: "run",
  },
  {
    name: "backend",
    key: "backend",
    kind: "backend",
    what: "a backend name",
    placeholder: "NAME",
    help: [`agent backend: ${BACKEND_NAMES.join(", ")} (default: the definition's, else claude)`],
    more: "`claude` is the Claude Agent SDK; the others are presets of the Agent Client Protocol.",
    group: "run",
    pass: "run",
  },
  {
    name: "max-turns",
    key: "maxTurns",
    kind: "positiveInteger",
    what: "the turn cap",
    placeholder: "N",
    help: ["turn cap per iteration (default: the definition's, else none)"],
    group: "run",
    pass: "run",
  },
  {
    name: "max-budget-usd",
    key: "maxBudgetUsd",
    kind: "positiveNumber",
    what: "a cost in USD",
    placeholder: "X",
    help: ["cost cap for the whole run (with fleet: for each run)"],
    group: "run",
    pass: "run",
  },
  {
    name: "max-wait",
    key: "maxWait",
    kind: "seconds",
    placeholder: "SECONDS",
    help: ["longest wait for a rate limit to reset, and for API retries in all (default 900)"],
    more: "Longer waits end the run, to resume later.",
    group: "run",
    pass: "run",
  },
  {
    name: "permission-mode",
    key: "permissionMode",
    kind: "permissionMode",
    placeholder: "M",
    help: ["default, acceptEdits or plan (default: the definition's, else acceptEdits)"],
    group: "run",
    pass: "run",
  },
  {
    name: "dangerously-skip-permissions",
    key: "dangerouslySkipPermissions",
    kind: "boolean",
    help: ["run the agent with bypassPermissions (Claude Code refuses it as root)"],
    more: "The only way to bypass permissions: agent.json cannot.",
    group: "run",
    pass: "run",
  },
  {
    name: "cwd",
    key: "cwd",
    kind: "text",
    what: "a directory",
    placeholder: "DIR",
    help: ["repository to work in (default: the current directory)"],
    complete: "directory",
    group: "run",
    pass: "base",
  },
  {
    name: "worktree",
    key: "worktree",
    kind: "boolean",
    help: ["work in a new git worktree on branch finishline/<agent>/<issue or run>"],
    more:
      "The worktree is under `.agent/.finishline/worktrees/`; it is removed at the end when it is clean, and the branch keeps the commits.",
    group: "worktrees",
    pass: "run",
  },
  {
    name: "base-branch",
    key: "baseBranch",
    kind: "nonEmpty",
    what: "a branch name",
    placeholder: "NAME",
    help: ["with --worktree: create the branch from NAME (default: the current branch)"],
    group: "worktrees",
    pass: "run",
  },
  {
    name: "create-pr",
    key: "createPr",
    kind: "boolean",
    help: [
      "with --worktree: push the branch and open a pull request (gh pr create) once the",
      "evidence passes, then wait for its checks",
    ],
    more:
      'With `"verify": { "prChecks": false }`: only once the run has completed, without waiting.',
    group: "worktrees",
    pass: "run",
  },
  {
    name: "issues",
    key: "issues",
    kind: "issueList",
    placeholder: "LIST",
    help: ["with fleet: these issues (e.g. 4,7,9), in this order, instead of --label"],
    group: "fleet",
    pass: "own",
  },
  {
    name: "parallel",
    key: "parallel",
    kind: "positiveInteger",
    what: "the number of runs at once",
    placeholder: "N",
    help: ["with fleet: at most N runs at once (default 2; capped by free memory)"],
    group: "fleet",
    pass: "own",
  },
  {
    name: "resume",
    key: "resume",
    kind: "text",
    what: "a run id",
    placeholder: "[RUN_ID]",
    help: [
      "continue the latest unfinished run (of --agent, when given), or RUN_ID,",
      "with the arguments it was started with",
    ],
    group: "history",
    pass: "own",
  },
  {
    name: "no-learnings",
    key: "noLearnings",
    kind: "boolean",
    help: ["do not put learnings of earlier runs into the first prompt"],
    group: "history",
    pass: "run",
  },
  {
    name: "store",
    key: "store",
    kind: "text",
    what: "the run history database file",
    placeholder: "PATH",
    help: ["the run history (default: .agent/.finishline/state.db in the repository)"],
    complete: "file",
    group: "history",
    pass: "base",
  },
  {
    name: "limit",
    key: "limit",
    kind: "positiveInteger",
    placeholder: "N",
    help: [
      "with runs and learnings search: show at most N (default 20); with runs stats: the latest N runs;",
      "with fleet: take at most N issues",
    ],
    group: "history",
    pass: "own",
  },
  {
    name: "dry-run",
    key: "dryRun",
    kind: "boolean",
    help: ["print handler, system prompt and first prompt; call no model"],
    group: "output",
    pass: "run",
  },
  {
    name: "json",
    key: "json",
    kind: "boolean",
    help: ["print one JSON object with the result on stdout at the end"],
    more: "See [`--json` output](#--json-output).",
    group: "output",
    pass: "run",
  },
  {
    name: "quiet",
    short: "q",
    key: "quiet",
    kind: "boolean",
    help: ["only errors and the final lines on stderr"],
    group: "output",
    pass: "run",
  },
  {
    name: "verbose",
    short: "v",
    key: "verbose",
    kind: "boolean",
    help: ["also stream the agent's text and tool calls"],
    group: "output",
    pass: "run",
  },
  {
    name: "list",
    key: "list",
    kind: "boolean",
    help: ["list the agents found (local and built-in)"],
    group: "other",
    pass: "base",
  },
  {
    name: "list-checks",
    key: "listChecks",
    kind: "boolean",
    help: [
      "print the repository's detected checks, with why, and run each once on the working tree",
      "(exit 1 when one fails; also: the checks command)",
    ],
    group: "other",
    pass: "base",
  },
  {
    name: "init",
    key: "init",
    kind: "text",
    what: "the new agent's name",
    placeholder: "NAME",
    help: [
      "scaffold .agent/NAME/ (agent.json, prompts, an example custom handler);",
      "refuses to overwrite",
    ],
    group: "other",
    pass: "base",
  },
  {
    name: "github-actions",
    key: "githubActions",
    kind: "boolean",
    help: ["with --init: also write .github/workflows/finishline.yml"],
    group: "other",
    pass: "base",
  },
  {
    name: "trigger-label",
    key: "triggerLabel",
    kind: "text",
    what: "a label name",
    placeholder: "L",
    help: ["with --github-actions: the issue label that starts the workflow (default: finishline)"],
    group: "other",
    pass: "base",
  },
  {
    name: "help",
    short: "h",
    key: "help",
    kind: "boolean",
    help: [
      "this text; after a command, that command's flags; with --agent NAME, also the",
      "agent's parameters",
    ],
    group: "other",
    pass: "base",
  },
  {
    name: "version",
    key: "version",
    kind: "boolean",
    help: ["finishline's version"],
    group: "other",
    pass: "base",
  },
];

/** A flag by its long name (without dashes). */
export function flagNamed(name: string): FlagSpec {
  const flag = FLAGS.find((spec) => spec.name === name);
  if (!flag) throw new RangeError(`No flag "--${name}" in the table`);
  return flag;
}

/** A positional argument of a command. */
export interface ArgumentSpec {
  /** Its placeholder in usage lines ("RUN_ID"). */
  name: string;
  /** What it is, in messages and `--help`. */
  what: string;
  /** Whether it may be left out. */
  optional?: boolean;
  /** Whether it takes the rest of the words. */
  rest?: boolean;
  /** Its values, when they are a fixed set (offered by the completions). */
  values?: readonly string[];
}

/** A command of the command line: a run, a subcommand, or a flag that is a command. */
export interface CommandSpec {
  /** Its words ("runs show"); "" for a run; a flag for a command that is one ("--resume"). */
  name: string;
  /** What it does, in one line. */
  summary: string;
  /** Its positional arguments, in order. */
  args?: readonly ArgumentSpec[];
  /** The flags it takes, by name, in the order of its `--help`. */
  flags: readonly string[];
  /** Whether it takes the agent's parameters as flags too. */
  parameters?: boolean;
  /** Its own help for a flag, where the table's says more than it needs. */
  flagHelp?: Readonly<Record<string, string>>;
  /** Its section of the general `--help`; none keeps it to its own `--help`. */
  group?: FlagGroup;
}

/** The shells `completions` writes a script for. */
export const SHELLS: readonly string[] = ["bash", "zsh", "fish"];

const RUN_ID: ArgumentSpec = {
  name: "RUN_ID",
  what: 'a run id (any unique prefix; "runs" lists them)',
};

/** The run flags `fleet` passes on to every run it starts, as given. */
export const FLEET_FORWARDED: readonly string[] = [
  "model",
  "iterate-max",
  "max-turns",
  "max-budget-usd",
  "max-wait",
  "permission-mode",
  "dangerously-skip-permissions",
  "no-learnings",
];

/** Every command, a run first. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "",
    summary: "run a coding agent in iterations until its work is finished",
    flags: FLAGS.filter((flag) => flag.pass !== "own").map((flag) => flag.name),
    parameters: true,
  },
  {
    name: "--resume",
    summary:
      "continue the latest unfinished run (of --agent, when given), or RUN_ID, with the arguments it was started with",
    args: [{ ...RUN_ID, optional: true }],
    flags: ["json", "store", "cwd", "agent", "help"],
    flagHelp: { agent: "only this agent's runs" },
  },
  {
    name: "fleet",
    summary:
      "work on several open issues at once (--label L or --issues LIST), each in its own worktree, each ending in a pull request",
    flags: [
      "label",
      "issues",
      "parallel",
      "limit",
      "agent",
      "repo",
      "base-branch",
      "store",
      "cwd",
      "json",
      "quiet",
      "dry-run",
      "worktree",
      "create-pr",
      ...FLEET_FORWARDED,
      "help",
    ],
    parameters: true,
    flagHelp: {
      label: "the open issues with this label",
      issues: "these issues (e.g. 4,7,9), in this order, instead of --label",
      parallel: "at most N runs at once (default 2; capped by free memory)",
      limit: "take at most N issues",
      repo: "the repository of the issues (default: the working directory's)",
      "base-branch": "create the runs' branches from NAME (default: the current branch)",
      json: "print one JSON object with the fleet's result on stdout at the end",
      quiet: "only the outcomes",
      "dry-run": "print the issues in order and each run's command line; run nothing",
      worktree: "(implied: each run has its own worktree)",
      "create-pr": "(implied: each run ends in a pull request)",
      "max-budget-usd": "cost cap for each run",
    },
    group: "fleet",
  },
  {
    name: "fleet --resume",
    summary: "continue the unfinished runs of the latest unfinished fleet, or of FLEET_ID",
    args: [{ name: "FLEET_ID", what: "a fleet id", optional: true }],
    flags: ["parallel", "json", "quiet", "store", "cwd", "help"],
    flagHelp: { parallel: "a new limit for the rest of the fleet", quiet: "only the outcomes" },
    group: "fleet",
  },
  {
    name: "runs",
    summary: "the latest runs, newest first",
    flags: ["json", "store", "cwd", "agent", "limit", "help"],
    flagHelp: {
      json: "print one JSON array of the runs",
      agent: "only this agent's runs",
      limit: "show at most N (default 20)",
    },
    group: "history",
  },
  {
    name: "runs show",
    summary: "one run: its segments, iterations, verdicts, costs, and how to resume it",
    args: [RUN_ID],
    flags: ["json", "store", "cwd", "help"],
    flagHelp: { json: "print one JSON object: the run, its iterations, finish and segments" },
    group: "history",
  },
  {
    name: "runs stats",
    summary:
      "completion detection's success metrics summed over the runs: false abort rate, rescue success rate, probes per iteration, probe timeout rate",
    flags: ["json", "store", "cwd", "agent", "limit", "help"],
    flagHelp: {
      json: "print one JSON object: the sums and the rates (null where nothing was counted)",
      agent: "only this agent's runs",
      limit: "only the latest N runs (default: every run)",
    },
    group: "history",
  },
  {
    name: "learnings search",
    summary: "learnings of earlier runs: the best match for QUERY first, or the latest",
    args: [{ name: "QUERY", what: "the words to search for", optional: true, rest: true }],
    flags: ["json", "store", "cwd", "agent", "limit", "help"],
    flagHelp: {
      json: "print one JSON array of the learnings",
      agent: "the agent whose learnings.embeddings the search uses",
      limit: "show at most N (default 20)",
    },
    group: "history",
  },
  {
    name: "finish",
    summary: "complete an interrupted finish workflow (idempotent)",
    args: [RUN_ID],
    flags: ["json", "store", "cwd", "help"],
    flagHelp: { json: "print one JSON object with the steps on stdout" },
    group: "history",
  },
  {
    name: "checks",
    summary:
      "print the repository's detected checks (or the agent's configured ones) and run each once",
    flags: ["cwd", "agent", "help"],
    flagHelp: { agent: "use this agent's configured checks (default: iterator)" },
    group: "other",
  },
  {
    name: "completions",
    summary: "print the shell completion script for bash, zsh or fish",
    args: [{ name: "SHELL", what: "the shell (bash, zsh or fish)", values: SHELLS }],
    flags: ["help"],
    group: "other",
  },
];

/** A command by its name ("" for a run). */
export function commandNamed(name: string): CommandSpec {
  const command = COMMANDS.find((spec) => spec.name === name);
  if (!command) throw new RangeError(`No command "${name}" in the table`);
  return command;
}

/** The flags a command takes, from the table. */
export function flagsOf(command: CommandSpec): FlagSpec[] {
  return command.flags.map(flagNamed);
}

/** The first words of the subcommands ("fleet", "runs", ...), in the table's order. */
export const COMMAND_WORDS: readonly string[] = [
  ...new Set(
    COMMANDS.filter((command) => /^[a-z]/.test(command.name)).map((command) =>
      command.name.split(" ")[0]
    ),
  ),
];

/** One exit code: the run status (or what else) it stands for. */
export interface ExitCodeSpec {
  /** The status, as `--json` gives it; in parentheses when no run status. */
  status: string;
  /** The exit code. */
  code: number;
  /** Its word in `--help`. */
  short: string;
  /** What it means. */
  meaning: string;
}

/** Every exit code of the CLI (tests hold them to the runner's `EXIT_CODES`). */
export const EXIT_CODE_TABLE: readonly ExitCodeSpec[] = [
  {
    status: "completed",
    code: 0,
    short: "completed",
    meaning:
      "the handler is satisfied and the evidence passed (iterate: all iterations ran, said unverified when nothing checked them)",
  },
  {
    status: "failed",
    code: 1,
    short: "failed",
    meaning: "an unrecoverable error during the run (agent session or handler failed)",
  },
  {
    status: "(usage)",
    code: 2,
    short: "bad input",
    meaning: "bad flags, bad definition, bad template or handler; nothing was run",
  },
  {
    status: "max_iterations",
    code: 3,
    short: "iteration cap reached",
    meaning: "the cap was reached before completion",
  },
  { status: "stalled", code: 4, short: "stalled", meaning: "no progress (circuit breaker)" },
  {
    status: "blocked",
    code: 5,
    short: "blocked",
    meaning: "the agent or handler declared the task blocked",
  },
  {
    status: "budget_exhausted",
    code: 6,
    short: "budget exhausted",
    meaning: "the cost budget is spent",
  },
  {
    status: "unverified",
    code: 7,
    short: "unverified",
    meaning:
      "the agent called the work done but nothing could check it (no check found, configured or passed; no held-out test): nothing is closed",
  },
  {
    status: "interrupted",
    code: 130,
    short: "interrupted",
    meaning: "SIGINT/SIGTERM: the agent session is aborted; a second Ctrl-C exits at once",
  },
];

/** The sections of the general `--help`: title, and what else they hold besides flags. */
export const GROUPS: ReadonlyArray<{ group: FlagGroup; title: string; rows?: string[][] }> = [
  {
    group: "handler",
    title: 'Which handler decides "finished" (the evidence must pass too):',
    rows: [[
      "(none of these)",
      "the built-in agent with --task: done when the agent reports success and the checks pass; otherwise the agent definition's completionType",
    ]],
  },
  { group: "run", title: "Run:" },
  { group: "worktrees", title: "Worktrees:" },
  {
    group: "fleet",
    title: "Fleet (several issues at once, each run ending in a pull request):",
  },
  { group: "history", title: "History:" },
  { group: "output", title: "Output:" },
  { group: "other", title: "Other:" },
];
