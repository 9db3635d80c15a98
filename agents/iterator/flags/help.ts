/**
 * `--help` from the table of flags and commands: the general help, each
 * command's own, and an agent's parameters. Private to the iterator's
 * command line.
 *
 * @module
 */

import type { AgentDefinition, ParameterSpec } from "../../definition/definition_types.ts";
import {
  type ArgumentSpec,
  COMMANDS,
  type CommandSpec,
  EXIT_CODE_TABLE,
  FLAGS,
  flagsOf,
  type FlagSpec,
  GROUPS,
} from "./table.ts";

/** What a run with no arguments prints after the help, instead of starting a run on a guess. */
export const NO_ARGUMENTS_HINT =
  'Nothing to do: give a task (--task "Fix the failing test") or a GitHub issue (--issue 42)';

/** Where the help text of a row starts. */
const HELP_COLUMN = 27;
/** The width help text is wrapped to. */
const WIDTH = 80;

/**
 * Words to lines of at most `width` characters (a longer word stands alone).
 *
 * @param text The text.
 * @param width The width.
 * @returns The lines.
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return line ? [...lines, line] : lines;
}

function row(label: string, text: string): string[] {
  const indent = " ".repeat(HELP_COLUMN);
  const [first = "", ...rest] = wrap(text, WIDTH - HELP_COLUMN);
  const head = `  ${label}`;
  const out = head.length < HELP_COLUMN - 1
    ? [`${head.padEnd(HELP_COLUMN)}${first}`.trimEnd()]
    : [head, `${indent}${first}`];
  return [...out, ...rest.map((line) => `${indent}${line}`)];
}

/**
 * How a flag is written in help and docs: `-a, --agent NAME`.
 *
 * @param flag The flag.
 * @returns The label.
 */
export function flagLabel(flag: FlagSpec): string {
  const short = flag.short ? `-${flag.short}, ` : "";
  return `${short}--${flag.name}${flag.placeholder ? ` ${flag.placeholder}` : ""}`;
}

/** The label in a help row: long names line up whether or not there is a short form. */
function rowLabel(flag: FlagSpec): string {
  return `${flag.short ? "" : "    "}${flagLabel(flag)}`;
}

/**
 * How an argument is written in a usage line: `RUN_ID`, `[RUN_ID]`.
 *
 * @param arg The argument.
 * @returns The text.
 */
export function argumentLabel(arg: ArgumentSpec): string {
  return arg.optional ? `[${arg.name}]` : arg.name;
}

/**
 * A command with its arguments: `runs show RUN_ID`, `fleet --resume [FLEET_ID]`.
 *
 * @param command The command.
 * @returns The text.
 */
export function commandLabel(command: CommandSpec): string {
  return [command.name, ...(command.args ?? []).map(argumentLabel)].filter(Boolean).join(" ");
}

/**
 * A command's usage after the program's name: `runs show RUN_ID [flags]`.
 *
 * @param command The command.
 * @returns The text.
 */
export function usageOf(command: CommandSpec): string {
  return [commandLabel(command), "[flags]", command.parameters ? "[agent parameters]" : ""]
    .filter(Boolean).join(" ");
}

/**
 * A flag's help for a command: the command's own, else the table's.
 *
 * @param flag The flag.
 * @param command The command.
 * @returns One line of text.
 */
export function flagHelpFor(flag: FlagSpec, command?: CommandSpec): string {
  const own = command?.flagHelp?.[flag.name];
  if (own) return own;
  return command && command.name !== "" && flag.name === "help" ? "this text" : flag.help.join(" ");
}

function exitCodesLine(): string {
  const codes = EXIT_CODE_TABLE.map((exit) => `${exit.code} ${exit.short}`).join(", ");
  return wrap(`Exit codes: ${codes}.`, WIDTH).join("\n");
}

/**
 * The general `--help`.
 *
 * @param invokedAs How the user runs finishline (`finishline`, `deno run -A ...`).
 * @returns The text, without a final newline.
 */
export function helpText(invokedAs: string): string {
  const sections = GROUPS.map(({ group, title, rows }) =>
    [
      title,
      ...COMMANDS.filter((command) => command.group === group).flatMap((command) =>
        row(commandLabel(command), command.summary)
      ),
      ...FLAGS.filter((flag) => flag.group === group).flatMap((flag) =>
        row(rowLabel(flag), flagHelpFor(flag))
      ),
      ...(rows ?? []).flatMap(([label, text]) => row(label, text)),
    ].join("\n")
  );
  return [
    "finishline: run a coding agent in iterations until its work is finished",
    `Usage:\n  ${invokedAs} [flags] [agent parameters]\n  ${invokedAs} COMMAND [flags]`,
    ...sections,
    exitCodesLine(),
    wrap(
      `"${invokedAs} COMMAND --help" shows a command's flags, "${invokedAs} --agent NAME --help" an agent's parameters.`,
      WIDTH,
    ).join("\n"),
  ].join("\n\n");
}

/**
 * A command's own `--help`: usage, arguments and flags. A run's is the
 * general help.
 *
 * @param command The command.
 * @param invokedAs How the user runs finishline.
 * @returns The text, without a final newline.
 */
export function commandHelp(command: CommandSpec, invokedAs: string): string {
  if (command.name === "") return helpText(invokedAs);
  const summary = command.summary[0].toUpperCase() + command.summary.slice(1);
  const args = command.args ?? [];
  return [
    `Usage:\n  ${invokedAs} ${usageOf(command)}`,
    wrap(`${summary}.`, WIDTH).join("\n"),
    ...(args.length > 0
      ? [["Arguments:", ...args.flatMap((arg) => row(argumentLabel(arg), arg.what))].join("\n")]
      : []),
    [
      "Flags:",
      ...flagsOf(command).flatMap((flag) => row(rowLabel(flag), flagHelpFor(flag, command))),
      ...(command.parameters ? row("(agent parameters)", "see --agent NAME --help") : []),
    ].join("\n"),
  ].join("\n\n");
}

/**
 * What a parameter is: its name, type, whether required, default and rules.
 *
 * @param name The parameter's name.
 * @param spec The parameter.
 * @returns A short text.
 */
export function parameterFacts(name: string, spec: ParameterSpec): string {
  const facts = [`${name}: ${spec.type}`];
  if (spec.required) facts.push("required");
  if (spec.default !== undefined) facts.push(`default ${JSON.stringify(spec.default)}`);
  const rules = spec.validation;
  if (rules?.min !== undefined && rules.max !== undefined) {
    facts.push(`${rules.min} to ${rules.max}`);
  } else if (rules?.min !== undefined) {
    facts.push(`at least ${rules.min}`);
  } else if (rules?.max !== undefined) {
    facts.push(`at most ${rules.max}`);
  }
  if (rules?.pattern) facts.push(`matching /${rules.pattern}/`);
  if (rules?.enum) {
    facts.push(`one of ${rules.enum.map((item) => JSON.stringify(item)).join(", ")}`);
  }
  return facts.join(", ");
}

/**
 * An agent's parameters, as flags, for `--agent NAME --help`.
 *
 * @param definition The agent's definition.
 * @param options Where it was loaded from, and each parameter's flag.
 * @returns The text, without a final newline.
 */
export function parametersHelp(
  definition: AgentDefinition,
  options: { displayPath: string; flagOf: (name: string, spec: ParameterSpec) => string },
): string {
  const entries = Object.entries(definition.parameters);
  const title = `Agent "${definition.name}" (${options.displayPath})`;
  if (entries.length === 0) return `${title} takes no parameters.`;
  return [
    `${title}: its parameters, as flags:`,
    ...entries.flatMap(([name, spec]) => {
      const placeholder = { string: " TEXT", number: " N", boolean: "" }[spec.type];
      const facts = `(${parameterFacts(name, spec)})`;
      const label = `    ${options.flagOf(name, spec)}${placeholder}`;
      return row(label, spec.description ? `${spec.description} ${facts}` : facts);
    }),
  ].join("\n");
}
