/**
 * The generated parts of docs/cli.md: the commands, the flags and the exit
 * codes, from the CLI's own table (agents/iterator/flags/table.ts).
 *
 *     deno run -A tools/cli_docs.ts           # rewrite docs/cli.md
 *     deno run -A tools/cli_docs.ts --check   # exit 1 when it is out of date
 *
 * Each part sits between `<!-- begin generated: NAME -->` and
 * `<!-- end generated: NAME -->`; the text around them is written by hand.
 * The page is then formatted as `deno fmt` does, so that the check of the
 * formatting and this tool agree. tests/iterator/flags/cli_docs_test.ts fails when
 * the page and the table differ.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  argumentLabel,
  commandLabel,
  flagHelpFor,
  flagLabel,
  usageOf,
} from "../agents/iterator/flags/help.ts";
import { COMMANDS, EXIT_CODE_TABLE, FLAGS } from "../agents/iterator/flags/table.ts";

/** The page, from the repository root. */
export const CLI_DOCS_PATH: string = fileURLToPath(new URL("../docs/cli.md", import.meta.url));

/** The command that rewrites the page. */
export const CLI_DOCS_FIX = "deno run -A tools/cli_docs.ts";

/** The program's name on the page. */
const PROGRAM = "finishline";

/** Text for a table cell: `|` escaped, flags and `{uv-...}` variables as code. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|")
    .replace(/(^|[\s(])(--[a-z][a-z0-9-]*|\{uv-[a-z_]+\}|\.[\w./<>-]*\/[\w./<>-]*)/g, "$1`$2`");
}

function code(text: string): string {
  return `\`${text}\``;
}

function commandsTable(): string {
  const rows = COMMANDS.map((command) => {
    const usage = code(`${PROGRAM} ${usageOf(command)}`);
    const args = (command.args ?? []).map((arg) =>
      `${code(argumentLabel(arg))}: ${cell(arg.what)}`
    );
    const flags = command.name === ""
      ? "the [flags](#flags) below"
      : command.flags.filter((name) => name !== "help").map((name) => code(`--${name}`)).join(
        ", ",
      ) ||
        "none";
    const what = [`${cell(command.summary)}.`, ...args.map((arg) => `${arg}.`)].join(" ");
    return `| ${usage} | ${what} | ${flags}${
      command.parameters ? ", the agent's parameters" : ""
    } |`;
  });
  return ["| command | what it does | flags |", "| --- | --- | --- |", ...rows].join("\n");
}

function flagsTable(): string {
  const rows = FLAGS.map((flag) => {
    const help = cell(flagHelpFor(flag));
    return `| ${code(flagLabel(flag))} | ${help}${flag.more ? `. ${flag.more}` : ""} |`;
  });
  return [
    "| flag | meaning |",
    "| --- | --- |",
    ...rows,
    "| agent parameters | each entry of `parameters` in the agent's definition is a flag; `--agent NAME --help` lists them |",
  ].join("\n");
}

function commandFlagsList(): string {
  return COMMANDS.filter((command) => command.flagHelp).map((command) => {
    const items = Object.entries(command.flagHelp!).map(([name, text]) =>
      `${code(`--${name}`)}: ${cell(text)}`
    );
    return `- ${code(commandLabel(command))}: ${items.join("; ")}.`;
  }).join("\n");
}

function exitCodesTable(): string {
  return [
    "| status | exit | meaning |",
    "| --- | --- | --- |",
    ...EXIT_CODE_TABLE.map((exit) => `| ${exit.status} | ${exit.code} | ${cell(exit.meaning)} |`),
  ].join("\n");
}

/**
 * The generated parts of the page, by name.
 *
 * @returns Markdown by part name.
 */
export function cliDocParts(): Record<string, string> {
  return {
    commands: commandsTable(),
    "command flags": commandFlagsList(),
    flags: flagsTable(),
    "exit codes": exitCodesTable(),
  };
}

/**
 * The page with its generated parts made anew (not yet formatted).
 *
 * @param text The page as it is.
 * @returns The page with every part replaced.
 * @throws {Error} When a part's markers are missing.
 */
export function withGeneratedParts(text: string): string {
  let page = text;
  for (const [name, markdown] of Object.entries(cliDocParts())) {
    const begin = `<!-- begin generated: ${name} -->`;
    const end = `<!-- end generated: ${name} -->`;
    const from = page.indexOf(begin);
    const to = page.indexOf(end);
    if (from === -1 || to < from) throw new Error(`docs/cli.md has no "${begin}" ... "${end}"`);
    page = `${page.slice(0, from + begin.length)}\n\n${markdown}\n\n${page.slice(to)}`;
  }
  return page;
}

/**
 * Format Markdown as `deno fmt` does (with the repository's settings).
 *
 * @param text The Markdown.
 * @returns The formatted text.
 */
export async function formatMarkdown(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const output = await child.output();
  if (!output.success) {
    throw new Error(`deno fmt failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout);
}

/**
 * The page as it should be: its generated parts from the table, formatted.
 *
 * @param text The page as it is.
 * @returns The page as it should be.
 */
export async function expectedCliDocs(text: string): Promise<string> {
  return await formatMarkdown(withGeneratedParts(text));
}

if (import.meta.main) {
  const text = await Deno.readTextFile(CLI_DOCS_PATH);
  const expected = await expectedCliDocs(text);
  if (Deno.args.includes("--check")) {
    if (text !== expected) {
      console.error(`docs/cli.md is out of date: run ${CLI_DOCS_FIX}`);
      Deno.exit(1);
    }
  } else if (text !== expected) {
    await Deno.writeTextFile(CLI_DOCS_PATH, expected);
    console.error("docs/cli.md rewritten from agents/iterator/flags/table.ts");
  } else {
    console.error("docs/cli.md is up to date");
  }
}
