/**
 * The commands a contributing guide shows (CONTRIBUTING.md at the root, in
 * `.github` or in `docs`): its shell code blocks and the inline code that
 * names a known tool, each mapped to what it means locally.
 *
 * @module
 */

import { join } from "node:path";
import { meaningOf } from "./_ci_commands.ts";
import type { Sequence } from "./_ci_meaning.ts";
import { readPath, type Scan } from "./_detect_scan.ts";
import { splitShell } from "../_shell_words.ts";

const GUIDE_TOOLS = /^(?:npm|pnpm|yarn|bun|npx|make|cargo|go|deno|pytest|tox|nox)\s/;

const SHELL_LANGUAGES = new Set([
  "",
  "sh",
  "bash",
  "shell",
  "console",
  "zsh",
  "shell-session",
  "sh-session",
  "terminal",
]);

/** The commands a Markdown guide shows: shell code blocks (prompt lines only when prompts are shown), and inline code naming a known tool. */
export function guideCommands(text: string): Array<{ line: number; text: string }> {
  const commands: Array<{ line: number; text: string }> = [];
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const open = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[index]);
    if (open === null) {
      for (const span of lines[index].matchAll(/`([^`]+)`/g)) {
        if (GUIDE_TOOLS.test(`${span[1].trim()} `)) {
          commands.push({ line: index + 1, text: span[1].trim() });
        }
      }
      continue;
    }
    const fence = open[1];
    const body: Array<{ line: number; text: string }> = [];
    let end = index + 1;
    while (end < lines.length && !lines[end].trim().startsWith(fence)) {
      body.push({ line: end + 1, text: lines[end] });
      end++;
    }
    index = end;
    if (!SHELL_LANGUAGES.has(open[2].toLowerCase())) continue;
    const prompted = body.some((entry) => /^\s*[$%]\s/.test(entry.text));
    let joined: { line: number; text: string } | undefined;
    for (const entry of body) {
      if (prompted && joined === undefined && !/^\s*[$%]\s/.test(entry.text)) continue;
      const textOf = joined === undefined ? entry.text.replace(/^\s*[$%]\s/, "") : entry.text;
      const current = joined === undefined
        ? { line: entry.line, text: textOf }
        : { line: joined.line, text: `${joined.text} ${textOf.trim()}` };
      if (/\\\s*$/.test(current.text)) {
        joined = { line: current.line, text: current.text.replace(/\\\s*$/, "") };
        continue;
      }
      joined = undefined;
      if (current.text.trim() !== "") {
        commands.push({ line: current.line, text: current.text.trim() });
      }
    }
  }
  return commands;
}

/** Read the contributing guides (CONTRIBUTING.md at the root, in .github or docs): one sequence each. */
export async function readGuides(scan: Scan, sequences: Sequence[]): Promise<void> {
  const paths: string[] = [];
  const guide = /^contributing(?:\.md|\.markdown)?$/i;
  for (const name of [...scan.files].sort()) if (guide.test(name)) paths.push(name);
  for (const folder of [".github", "docs"]) {
    try {
      const names: string[] = [];
      for await (const entry of Deno.readDir(join(scan.root, folder))) {
        if (entry.isFile && guide.test(entry.name)) names.push(entry.name);
      }
      paths.push(...names.sort().map((name) => `${folder}/${name}`));
    } catch {
      // No such folder: no guide there.
    }
  }
  for (const file of paths) {
    const text = await readPath(scan, file);
    if (text === undefined) continue;
    const sequence: Sequence = { file, job: "", guide: true, items: [] };
    for (const command of guideCommands(text)) {
      const split = splitShell(command.text);
      if ("unsupported" in split) continue;
      for (const unit of split.units) {
        // A guide's `cd` is into the clone it just made: the repository itself.
        const meaning = await meaningOf(scan, unit, ".", {});
        if (meaning.type === "cd") continue;
        sequence.items.push({
          source: `${file} line ${command.line}`,
          place: file,
          step: "",
          text: unit.text,
          dir: ".",
          meaning,
        });
      }
    }
    sequences.push(sequence);
  }
}
