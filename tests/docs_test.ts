/**
 * The documentation holds: README.md and every page of docs/. Their links
 * reach files and headings that exist; the commands in their shell blocks
 * name real tasks, files, subcommands and flags (read by the CLI's own
 * parser), and the cheap ones (`--help`, `--version`, `--dry-run`, `--init`)
 * run for real; their TypeScript examples type-check; a long page opens with
 * its contents.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import config from "../deno.json" with { type: "json" };
import { parseCommandLine, parseRunFlags } from "../agents/iterator/flags/command_line.ts";
import { scaffoldAgent } from "../agents/iterator/commands/init.ts";
import { loadDefinition } from "../agents/definition/load.ts";
import { runCli, tempDir, tempRepo } from "./_helpers.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** One Markdown page, split into its fenced blocks and its prose. */
interface Page {
  /** Path from the repository root (`docs/evidence.md`). */
  path: string;
  /** Its lines. */
  lines: string[];
  /** Its fenced code blocks. */
  fences: Fence[];
  /** Its lines outside fences, each with its 1-based number. */
  prose: { line: number; text: string }[];
}

/** One fenced code block. */
interface Fence {
  /** The info string's first word (`sh`, `ts`, ...), or "". */
  lang: string;
  /** The rest of the info string. */
  info: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The lines between the fences. */
  body: string[];
}

/** A command line shown in a page. */
interface DocCommand {
  /** Where: `page:line`. */
  at: string;
  /** The words, as a shell would split them. */
  words: string[];
  /** The output shown under it (console blocks), "..." lines dropped. */
  output: string[];
}

/** README.md and every docs/*.md, read once. */
async function pages(): Promise<Page[]> {
  const paths = ["README.md"];
  for await (const entry of Deno.readDir(`${ROOT}docs`)) {
    if (entry.isFile && entry.name.endsWith(".md")) paths.push(`docs/${entry.name}`);
  }
  return await Promise.all(
    paths.sort().map(async (path) => {
      return parsePage(path, await Deno.readTextFile(`${ROOT}${path}`));
    }),
  );
}

function parsePage(path: string, text: string): Page {
  const lines = text.split("\n");
  const fences: Fence[] = [];
  const prose: Page["prose"] = [];
  let open: { marker: string; fence: Fence } | undefined;
  lines.forEach((line, index) => {
    const trimmed = line.trimStart();
    if (open) {
      const close = trimmed.match(/^(`{3,}|~{3,})\s*$/);
      if (close && close[1][0] === open.marker[0] && close[1].length >= open.marker.length) {
        open = undefined;
      } else {
        open.fence.body.push(line.slice(Math.min(line.length - trimmed.length, 4)));
      }
      return;
    }
    const start = trimmed.match(/^(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/);
    if (start) {
      const fence = { lang: start[2], info: start[3], line: index + 1, body: [] };
      fences.push(fence);
      open = { marker: start[1], fence };
      return;
    }
    prose.push({ line: index + 1, text: line });
  });
  assert.equal(open, undefined, `${path}: a fence opened at line ${open?.fence.line} never closes`);
  return { path, lines, fences, prose };
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** The anchors of a page's headings, repeats numbered as GitHub numbers them. */
function anchors(page: Page): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const { text } of page.prose) {
    const heading = text.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!heading) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The Markdown links of a page's prose (code spans left out), with their lines. */
function links(page: Page): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  // Prose paragraphs joined, so that a link whose text wraps is still one link.
  let paragraph: { line: number; text: string }[] = [];
  const flush = () => {
    const text = paragraph.map((part) => part.text).join("\n").replace(/(`+)[\s\S]*?\1/g, "");
    for (const match of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const offset = text.slice(0, match.index).split("\n").length - 1;
      found.push({ line: paragraph[offset]?.line ?? paragraph[0].line, target: match[1] });
    }
    paragraph = [];
  };
  let last = 0;
  for (const part of page.prose) {
    if (part.text.trim() === "" || part.line !== last + 1) flush();
    if (part.text.trim() !== "") paragraph.push(part);
    last = part.line;
  }
  flush();
  return found;
}

/** Split one shell command line into words (quotes, backslashes, `#` comments). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (char === "'") {
      const end = line.indexOf("'", i + 1);
      assert.notEqual(end, -1, `unclosed quote in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (char === '"') {
      word ??= "";
      for (i++; line[i] !== '"'; i++) {
        assert.ok(i < line.length, `unclosed quote in: ${line}`);
        const escaped = line[i] === "\\" && /["\\$`]/.test(line[i + 1] ?? "");
        word += escaped ? line[++i] : line[i];
      }
    } else if (char === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "#" && word === undefined) {
      break;
    } else {
      word = (word ?? "") + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The commands of a page's shell blocks: every line of sh/bash/shell, `$ ` lines of console. */
function commands(page: Page): DocCommand[] {
  const found: DocCommand[] = [];
  for (const fence of page.fences) {
    const console = fence.lang === "console";
    if (!console && !["sh", "bash", "shell"].includes(fence.lang)) continue;
    let current: DocCommand | undefined;
    let pending = "";
    fence.body.forEach((line, index) => {
      if (console && !line.startsWith("$ ") && pending === "") {
        if (current && line.trim() !== "..." && line.trim() !== "") current.output.push(line);
        return;
      }
      const text = pending + (console && pending === "" ? line.slice(2) : line);
      if (text.endsWith("\\")) {
        pending = text.slice(0, -1);
        return;
      }
      pending = "";
      const at = `${page.path}:${fence.line + 1 + index}`;
      // `a && b`, `a; b`: each its own command.
      let words: string[] = [];
      for (const word of [...shellWords(text), "&&"]) {
        if (["&&", "||", ";", "|"].includes(word)) {
          if (words.length > 0) found.push(current = { at, words, output: [] });
          words = [];
        } else {
          words.push(word);
        }
      }
    });
  }
  return found;
}

/** The CLI's arguments in a command (`deno run -A agents/iterator/main.ts ...`, `finishline ...`). */
function cliArgs(words: string[]): string[] | undefined {
  if (words[0] === "finishline") return words.slice(1);
  if (words[0] !== "deno" || words[1] !== "run") return undefined;
  const script = words.findIndex((word, index) => index > 1 && !word.startsWith("-"));
  const target = words[script];
  const cli = target === "agents/iterator/main.ts" ||
    /^jsr:@finishline\/agents(@[^/]+)?\/iterator$/.test(target);
  return cli ? words.slice(script + 1) : undefined;
}

/** Every command of every page. */
async function allCommands(): Promise<DocCommand[]> {
  return (await pages()).flatMap(commands);
}

Deno.test("every relative link of README.md and docs/ reaches a file, and a heading of it", async () => {
  const all = await pages();
  const byPath = new Map(all.map((page) => [page.path, page]));
  const broken: string[] = [];
  let checked = 0;
  for (const page of all) {
    const folder = page.path.includes("/") ? page.path.replace(/[^/]*$/, "") : "";
    for (const { line, target } of links(page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      checked++;
      const [file, anchor] = target.split("#", 2);
      const path = file === "" ? page.path : new URL(file, `file:///${folder}`).pathname.slice(1);
      const stat = await Deno.stat(`${ROOT}${path}`).catch(() => undefined);
      if (!stat) {
        broken.push(`${page.path}:${line}: ${target}: no file ${path}`);
        continue;
      }
      if (anchor === undefined) continue;
      const linked = byPath.get(path) ??
        (path.endsWith(".md")
          ? parsePage(path, await Deno.readTextFile(`${ROOT}${path}`))
          : undefined);
      if (!linked) {
        broken.push(`${page.path}:${line}: ${target}: an anchor in a file that is not Markdown`);
      } else if (!anchors(linked).has(anchor)) {
        broken.push(`${page.path}:${line}: ${target}: no heading "#${anchor}" in ${path}`);
      }
    }
  }
  assert.ok(checked > 50, `only ${checked} relative links found: is the link reader broken?`);
  assert.deepEqual(broken, []);
});

Deno.test("the link reader finds wrapped links and GitHub's anchors, and skips code", () => {
  const page = parsePage(
    "x.md",
    [
      "# Issue handler (`--issue N`)",
      "## The complete_task tool",
      "## Evidence: the repository's own checks",
      "## Evidence: the repository's own checks",
      "See [the",
      "handler](y.md#a) and `[code](no.md)`.",
      "```sh",
      "[fenced](no.md)",
      "```",
    ].join("\n"),
  );
  assert.deepEqual(links(page), [{ line: 5, target: "y.md#a" }]);
  assert.deepEqual([...anchors(page)], [
    "issue-handler---issue-n",
    "the-complete_task-tool",
    "evidence-the-repositorys-own-checks",
    "evidence-the-repositorys-own-checks-1",
  ]);
});

Deno.test("docs/README.md lists every page of docs/, and README.md links it", async () => {
  const all = await pages();
  const index = all.find((page) => page.path === "docs/README.md");
  assert.ok(index, "docs/README.md is the table of contents");
  const listed = new Set(links(index).map((link) => link.target.split("#")[0]));
  const unlisted = all
    .filter((page) => page.path.startsWith("docs/") && page.path !== "docs/README.md")
    .map((page) => page.path.slice("docs/".length))
    .filter((name) => !listed.has(name));
  assert.deepEqual(unlisted, [], "pages missing from docs/README.md");
  const readme = all.find((page) => page.path === "README.md")!;
  assert.ok(links(readme).some((link) => link.target === "docs/README.md"));
});

Deno.test("README.md fits a screen or so: at most about 200 lines", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const count = readme.split("\n").length;
  assert.ok(count <= 220, `README.md has ${count} lines`);
});

Deno.test("a page longer than 150 lines opens with a contents list of its sections", async () => {
  const missing: string[] = [];
  for (const page of await pages()) {
    if (page.lines.length <= 150) continue;
    const first = page.prose.findIndex((part) => part.text.startsWith("## "));
    const head = page.prose.slice(0, first);
    const contents = new Set(
      links({ ...page, prose: head }).map((link) => link.target).filter((t) => t.startsWith("#")),
    );
    for (const { text } of page.prose.slice(first)) {
      const heading = text.match(/^## (.*)$/);
      if (heading && !contents.has(`#${slug(heading[1])}`)) {
        missing.push(`${page.path}: "${heading[1]}"`);
      }
    }
  }
  assert.deepEqual(missing, [], "sections missing from their page's contents list");
});

Deno.test("the shell blocks run real tasks and files, and the CLI's own parser accepts them", async () => {
  await using repo = await tempRepo();
  const problems: string[] = [];
  const seen = { cli: 0, task: 0 };
  for (const command of await allCommands()) {
    const { at, words } = command;
    if (words[0] === "deno" && words[1] === "task") {
      seen.task++;
      if (!(words[2] in config.tasks)) problems.push(`${at}: no task "${words[2]}" in deno.json`);
      continue;
    }
    const args = cliArgs(words);
    if (args === undefined) {
      const script = words[0] === "deno" && words[1] === "run"
        ? words.find((word, index) => index > 1 && !word.startsWith("-"))
        : undefined;
      if (script && !/^[a-z]+:/.test(script) && !await exists(`${ROOT}${script}`)) {
        problems.push(`${at}: no file ${script}`);
      }
      continue;
    }
    seen.cli++;
    try {
      await acceptedByTheCli(args, repo.path);
    } catch (error) {
      problems.push(`${at}: ${words.join(" ")}: ${(error as Error).message}`);
    }
  }
  assert.ok(seen.cli >= 15 && seen.task >= 4, `too few commands read: ${JSON.stringify(seen)}`);
  assert.deepEqual(problems, []);
});

Deno.test("the commands named in the text run real tasks and files, and the CLI accepts them", async () => {
  await using repo = await tempRepo();
  const problems: string[] = [];
  let seen = 0;
  for (const page of await pages()) {
    for (const { line, text } of page.prose) {
      for (const [, span] of text.matchAll(/(?<!`)`([^`]+)`(?!`)/g)) {
        const words = shellWords(span);
        if (words[0] !== "deno" || !["task", "run"].includes(words[1]) || words.includes("...")) {
          continue;
        }
        seen++;
        const at = `${page.path}:${line}: \`${span}\``;
        const script = words.find((word, index) => index > 1 && !word.startsWith("-"));
        if (words[1] === "task" && !(words[2] in config.tasks)) {
          problems.push(`${at}: no task "${words[2]}" in deno.json`);
        } else if (words[1] === "run" && script && !await exists(`${ROOT}${script}`)) {
          problems.push(`${at}: no file ${script}`);
        } else if (cliArgs(words)) {
          await acceptedByTheCli(cliArgs(words)!, repo.path).catch((error) => {
            problems.push(`${at}: ${(error as Error).message}`);
          });
        }
      }
    }
  }
  assert.ok(seen >= 20, `only ${seen} commands found in the text`);
  assert.deepEqual(problems, []);
});

/**
 * Parse the arguments as the CLI does: the command, then for a run its every
 * flag against the agent's definition (an agent the docs name that is not
 * built in is the one `--init NAME` scaffolds).
 */
async function acceptedByTheCli(args: string[], cwd: string): Promise<void> {
  const command = parseCommandLine(args);
  if (command.kind !== "run") return;
  const agent = command.flags.agent;
  if (agent !== "iterator" && !await exists(`${cwd}/.agent/${agent}`)) {
    await scaffoldAgent(agent, { cwd });
  }
  const { definition } = await loadDefinition(agent, { cwd });
  parseRunFlags(command, definition);
}

Deno.test("the command checker refuses a mistyped flag, a missing task and a missing file", async () => {
  await using repo = await tempRepo();
  await assert.rejects(acceptedByTheCli(["--iterate-mx", "3", "--task", "t"], repo.path));
  await assert.rejects(acceptedByTheCli(["--issue", "4", "--keyword", "K"], repo.path));
  await assert.rejects(acceptedByTheCli(["runs", "shwo", "1a"], repo.path));
  await assert.rejects(acceptedByTheCli(["--agent", "reviewer", "--gaol", "x"], repo.path));
  await acceptedByTheCli(["--agent", "reviewer", "--goal", "x"], repo.path);
  const page = parsePage("x.md", "```console\n$ deno task nope --x\nout\n...\n```\n");
  assert.deepEqual(commands(page), [{
    at: "x.md:2",
    words: ["deno", "task", "nope", "--x"],
    output: ["out"],
  }]);
  assert.deepEqual(shellWords(`deno run -A a.ts --task "it's \\"x\\"" 'a b' # note`), [
    "deno",
    "run",
    "-A",
    "a.ts",
    "--task",
    `it's "x"`,
    "a b",
  ]);
  assert.deepEqual(
    cliArgs(["deno", "run", "-A", "jsr:@finishline/agents@1.2.3/iterator", "-i", "4"]),
    ["-i", "4"],
  );
  assert.equal(cliArgs(["deno", "run", "-A", "bench/fleet_bench.ts"]), undefined);
});

Deno.test("the cheap commands of the docs run: --help, --version, --dry-run and --init", async () => {
  const ran: string[] = [];
  const failed: string[] = [];
  const done = new Set<string>();
  for (const { at, words, output } of await allCommands()) {
    const args = cliArgs(words);
    if (!args || done.has(args.join("\0")) || !cheap(args)) continue;
    done.add(args.join("\0"));
    await using repo = await tempRepo();
    await using home = await tempDir("finishline-home-");
    const run = await runCli(args, { cwd: repo.path, home: home.path });
    ran.push(args.join(" "));
    const printed = `${run.stdout}\n${run.stderr}`;
    if (run.code !== 0) {
      failed.push(`${at}: exit ${run.code}: ${run.stderr.trim().split("\n").at(-1)}`);
    }
    for (const line of output) {
      if (!printed.includes(line.trimEnd())) {
        failed.push(`${at}: the page shows "${line}", the CLI did not print it`);
      }
    }
  }
  assert.ok(ran.some((args) => args.includes("--dry-run")), `ran: ${ran.join("; ")}`);
  assert.deepEqual(failed, []);
});

/** A command that needs no network, no model and no GitHub. */
function cheap(args: string[]): boolean {
  if (args.some((arg) => ["--help", "-h", "--version"].includes(arg))) return true;
  const command = parseCommandLine(args);
  if (command.kind === "init") return true;
  if (command.kind !== "run" || !command.dryRun) return false;
  // The GitHub handlers read the issue or project through gh even for --dry-run.
  return command.flags.agent === "iterator" &&
    !args.some((arg) => ["--issue", "-i", "--project", "-p"].includes(arg));
}

Deno.test("every TypeScript example of README.md and docs/ type-checks, and deno test --doc covers them", async () => {
  const all = await pages();
  const examples = all.flatMap((page) =>
    page.fences.filter((fence) => ["ts", "typescript", "tsx"].includes(fence.lang))
      .map((fence) => ({ page, fence }))
  );
  assert.ok(examples.length >= 2, "the pages have TypeScript examples");
  const ignored = examples.filter(({ fence }) => /\bignore\b/.test(fence.info));
  assert.deepEqual(
    ignored.map(({ page, fence }) => `${page.path}:${fence.line}`),
    [],
    "an ignored block is never checked",
  );
  // The test task runs the doc tests of the whole repository (no paths, no exclusions), so
  // it type-checks every page of docs/ as well as README.md.
  assert.match(config.tasks.test, /^deno test (?:-\S+ )*--doc(?: -\S+)*$/);
  assert.equal((config as Record<string, unknown>).test, undefined, "deno.json narrows deno test");
  const paths = [...new Set(examples.map(({ page }) => page.path))];
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--doc-only", ...paths],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, text);
});

Deno.test("deno check --doc-only type-checks a ts block of a Markdown page (a fresh error fails it)", async () => {
  await using dir = await tempDir("finishline-doc-check-");
  // A new text every time, so that no cached check can pass it.
  const page = `# x\n\n\`\`\`ts\nconst id: number = "${crypto.randomUUID()}";\n\`\`\`\n`;
  await Deno.writeTextFile(`${dir.path}/page.md`, page);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--doc-only", "--no-config", "page.md"],
    cwd: dir.path,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 1);
  assert.match(new TextDecoder().decode(output.stderr), /TS2322.*not assignable to type 'number'/s);
});

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
