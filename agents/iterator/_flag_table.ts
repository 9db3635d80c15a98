/**
 * The table of finishline's flags: name, short form, kind of value, help text
 * and section. Parsing, the reserved names and `--help` all come from it.
 * Private to the iterator's command line.
 *
 * @module
 */

import type { FlagKind } from "./_flag_values.ts";

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
  /** Its lines in `--help`. */
  help: string[];
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
    help: ["GitHub issue handler: done when issue N is closed"],
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
    help: ["GitHub project handler: done when project N is done"],
    group: "handler",
    pass: "run",
  },
  {
    name: "repo",
    short: "R",
    key: "repo",
    kind: "repo",
    placeholder: "OWNER/NAME",
    help: ["repository of the issue (default: the working directory's)"],
    group: "handler",
    pass: "run",
  },
  {
    name: "owner",
    key: "owner",
    kind: "nonEmpty",
    what: "a user or organisation login, or @me",
    placeholder: "LOGIN",
    help: ["owner of the project (default: the repository's owner; @me allowed)"],
    group: "handler",
    pass: "run",
  },
  {
    name: "label",
    key: "label",
    kind: "nonEmpty",
    what: "a label name",
    placeholder: "NAME",
    help: ["only project items with this label count; with fleet: the issues to take"],
    group: "handler",
    pass: "run",
  },
  {
    name: "keyword",
    key: "keyword",
    kind: "nonEmpty",
    what: "the completion keyword",
    placeholder: "K",
    help: ["manual handler: done when the agent says K"],
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
    help: ["agent in .agent/NAME/ or a built-in agent (default: iterator)"],
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
    help: ["the task, for iterate and manual runs ({uv-task})"],
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
    help: ["iteration cap for every handler; the target for iterate"],
    group: "run",
    pass: "run",
  },
  {
    name: "model",
    key: "model",
    kind: "nonEmpty",
    what: "a model name",
    placeholder: "M",
    help: ["model for the agent"],
    group: "run",
    pass: "run",
  },
  {
    name: "backend",
    key: "backend",
    kind: "backend",
    what: "a backend name",
    placeholder: "NAME",
    help: ["agent backend: claude, codex, gemini, opencode or claude-acp"],
    group: "run",
    pass: "run",
  },
  {
    name: "max-turns",
    key: "maxTurns",
    kind: "positiveInteger",
    what: "the turn cap",
    placeholder: "N",
    help: ["turn cap per iteration"],
    group: "run",
    pass: "run",
  },
  {
    name: "max-budget-usd",
    key: "maxBudgetUsd",
    kind: "positiveNumber",
    what: "a cost in USD",
    placeholder: "X",
    help: ["cost cap for the whole run"],
    group: "run",
    pass: "run",
  },
  {
    name: "max-wait",
    key: "maxWait",
    kind: "seconds",
    placeholder: "SECONDS",
    help: ["longest wait for a rate limit to reset, and for API retries in all (default 900)"],
    group: "run",
    pass: "run",
  },
  {
    name: "permission-mode",
    key: "permissionMode",
    kind: "permissionMode",
    placeholder: "M",
    help: ["default | acceptEdits | plan"],
    group: "run",
    pass: "run",
  },
  {
    name: "dangerously-skip-permissions",
    key: "dangerouslySkipPermissions",
    kind: "boolean",
    help: ["run the agent with bypassPermissions (refused as root)"],
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
    group: "run",
    pass: "base",
  },
  {
    name: "worktree",
    key: "worktree",
    kind: "boolean",
    help: ["work in a new git worktree on branch finishline/<agent>/<issue or run>"],
    group: "worktrees",
    pass: "run",
  },
  {
    name: "base-branch",
    key: "baseBranch",
    kind: "nonEmpty",
    what: "a branch name",
    placeholder: "NAME",
    help: ["create it from NAME (default: the current branch)"],
    group: "worktrees",
    pass: "run",
  },
  {
    name: "create-pr",
    key: "createPr",
    kind: "boolean",
    help: ["open a pull request (gh pr create) when the run completes"],
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
    help: ["continue the latest unfinished run of the agent (or RUN_ID)"],
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
    group: "history",
    pass: "base",
  },
  {
    name: "limit",
    key: "limit",
    kind: "positiveInteger",
    placeholder: "N",
    help: [
      "with runs and learnings search: show at most N (default 20); with fleet: take at most N issues",
    ],
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
      "print the repository's detected checks and run them once",
      '(also: the "checks" subcommand)',
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
    help: ["scaffold .agent/NAME/ (agent.json, prompts, a custom handler)"],
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
    help: ["the issue label that starts the workflow (default: finishline)"],
    group: "other",
    pass: "base",
  },
  {
    name: "help",
    short: "h",
    key: "help",
    kind: "boolean",
    help: ["this text"],
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

/** The sections of `--help`: title, and rows that are not flags. */
const GROUPS: ReadonlyArray<{ group: FlagGroup; title: string; rows?: string[][] }> = [
  {
    group: "handler",
    title: 'Which handler decides "finished":',
    rows: [[
      "(none of these)",
      "the agent definition's completionType (iterate for the built-in agent)",
    ]],
  },
  { group: "run", title: "Run:" },
  { group: "worktrees", title: "Worktrees:" },
  {
    group: "fleet",
    title: "Fleet (several issues at once, each in its own worktree, ending in a pull request):",
    rows: [
      ["fleet --label L | --issues LIST", "work on open issues in parallel (and the run flags)"],
      ["fleet --resume [FLEET_ID]", "continue the unfinished runs of a fleet"],
    ],
  },
  {
    group: "history",
    title: "History:",
    rows: [
      ["runs [show RUN_ID]", "recent runs, or one run's iterations, verdicts and costs"],
      ["learnings search [QUERY]", "learnings of earlier runs: best match first, or the latest"],
      ["finish RUN_ID", "complete an interrupted finish workflow (idempotent)"],
    ],
  },
  { group: "output", title: "Output:" },
  { group: "other", title: "Other:" },
];

/** Where the help text of a row starts. */
const HELP_COLUMN = 27;

function row(label: string, lines: readonly string[]): string[] {
  const indent = " ".repeat(HELP_COLUMN);
  const [first, ...rest] = lines;
  const head = `  ${label}`;
  const out = head.length < HELP_COLUMN - 1
    ? [`${head.padEnd(HELP_COLUMN)}${first}`]
    : [head, `${indent}${first}`];
  return [...out, ...rest.map((line) => `${indent}${line}`)];
}

function flagLabel(flag: FlagSpec): string {
  const short = flag.short ? `-${flag.short}, ` : "    ";
  return `${short}--${flag.name}${flag.placeholder ? ` ${flag.placeholder}` : ""}`;
}

/**
 * The usage text of `--help`, made from {@linkcode FLAGS}.
 *
 * @returns The text, without a final newline.
 */
export function helpText(): string {
  const sections = GROUPS.map(({ group, title, rows }) =>
    [
      title,
      ...FLAGS.filter((flag) => flag.group === group).flatMap((flag) =>
        row(flagLabel(flag), flag.help)
      ),
      ...(rows ?? []).flatMap(([label, text]) => row(label, [text])),
    ].join("\n")
  );
  return [
    "finishline iterator: run a coding agent in iterations until its work is finished",
    "Usage:\n  deno run -A agents/iterator/main.ts [flags] [agent parameters]",
    ...sections,
    "Exit codes: 0 completed, 1 failed, 2 bad input, 3 iteration cap reached,\n" +
    "4 stalled, 5 blocked, 6 budget exhausted, 130 interrupted.",
  ].join("\n\n");
}
