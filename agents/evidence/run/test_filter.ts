/**
 * A check narrowed to some of its tests: the check's own command, with the
 * runner's filter for the named tests added where it reaches the runner
 * (`node --test --test-name-pattern`, `deno test --filter`, pytest node ids,
 * `go test -run`, `cargo test -- --exact`, `jest -t`, `vitest -t`, mocha
 * `--grep`). The gate runs it first on a claim that follows a failed one, so
 * that the agent hears at once when a test that failed still fails.
 *
 * Test names come from the agent's test output: every name is escaped for
 * the runner's pattern language and quoted for the shell, and a name the
 * runner's filter cannot address (a leading `-`, a line break) leaves the
 * check unfiltered. A filter may match more tests than named (a substring, a
 * parent test): the gate reads only the named ones from the result.
 *
 * @module
 */

import type { RepoCheck } from "./check_run.ts";
import type { TestRunner } from "./test_report.ts";
import { splitShell, wordsOf } from "../_shell_words.ts";

/** The check's command narrowed to some tests, or why it cannot be. */
export type FilteredCommand = { command: string } | { why: string };

/** Reads a file of the folder the check runs in (package.json, deno.json), or undefined. */
export type ReadFile = (path: string) => Promise<string | undefined>;

/**
 * The arguments that make `runner` run only the tests `names` (as
 * {@linkcode parseTestReport} names them), or why the names cannot be
 * addressed.
 *
 * @param runner The test runner.
 * @param names Failing test names from the runner's output.
 * @returns The words to add to its command line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { filterArgs } from "./test_filter.ts";
 *
 * assert.deepEqual(filterArgs("go", ["TestAdd/small", "TestSub"]), ["-run", "^(?:TestAdd|TestSub)$"]);
 * assert.deepEqual(filterArgs("jest", ["math > adds (1+1)"]), ["-t", "^(?:math adds \\(1\\+1\\))$"]);
 * assert.deepEqual(filterArgs("pytest", ["-p evil"]), { why: 'the test name "-p evil" starts with "-"' });
 * ```
 */
export function filterArgs(runner: TestRunner, names: string[]): string[] | { why: string } {
  const unique = [...new Set(names)];
  if (unique.length === 0) return { why: "no test is named" };
  for (const name of unique) {
    if (name.trim() === "") return { why: "a test name is empty" };
    if (/[\r\n\0]/.test(name)) return { why: `the test name ${JSON.stringify(name)} spans lines` };
  }
  switch (runner) {
    case "node": {
      // Node 20 matches a subtest's own name, later versions its full name: the leaf matches both.
      const leaves = unique.map((name) => escapeJs(leaf(name, " > ")));
      return [`--test-name-pattern=(?:^| )(?:${[...new Set(leaves)].join("|")})$`];
    }
    case "deno": {
      // A filter between slashes is a regular expression (Rust's); it sees top-level names only.
      const tops = [...new Set(unique.map((name) => name.split(" > ")[0]))];
      return ["--filter", `/^(?:${tops.map(escapeRust).join("|")})$/`];
    }
    case "pytest": {
      for (const name of unique) {
        if (name.startsWith("-")) return { why: `the test name "${name}" starts with "-"` };
        const file = name.split("::")[0];
        if (!/\.py$/.test(file)) {
          return { why: `the test name "${name}" is not a pytest node id (file.py::test)` };
        }
      }
      return unique;
    }
    case "go": {
      // -run splits its pattern at slashes, one level each: the top-level test runs its subtests.
      const tops = [...new Set(unique.map((name) => name.split("/")[0]))];
      return ["-run", `^(?:${tops.map(escapeRe2).join("|")})$`];
    }
    case "cargo": {
      for (const name of unique) {
        if (name.startsWith("-")) return { why: `the test name "${name}" starts with "-"` };
      }
      return ["--exact", ...unique];
    }
    case "jest":
    case "vitest":
    case "mocha": {
      // Each matches its pattern against the full title: the describe blocks and the test, spaced.
      const titles = unique.map((name) => escapeJs(name.split(" > ").join(" ")));
      return [runner === "mocha" ? "--grep" : "-t", `^(?:${titles.join("|")})$`];
    }
    case "ctest":
      // ctest -R takes a regular expression (CMake's own: no (?:...) groups).
      return ["-R", `^(${unique.map(escapeCmake).join("|")})$`];
    case "meson":
      // meson test takes test names; "project:suite / name" is printed, the name is matched.
      return [...new Set(unique.map((name) => leaf(name, " / ")))];
    case "minitest":
    case "test-unit": {
      // Through rake's TESTOPTS, which rake passes to a shell unquoted: plain Class#test names only.
      for (const name of unique) {
        if (!/^[A-Za-z_][\w:]*#\w+[?!=]?$/.test(name)) {
          return { why: `the test name ${JSON.stringify(name)} is not a plain Class#test name` };
        }
      }
      // minitest keeps only the last --name, and two names through rake ran no test of test-unit.
      if (unique.length > 1) {
        return { why: `${runner} through rake takes one test name (--name), not a pattern` };
      }
      return [`TESTOPTS=--name=${unique[0]}`];
    }
    default:
      return { why: `finishline adds no test filter for ${runner}` };
  }
}

/**
 * The check's command narrowed to the tests `names`: the filter is added to
 * the command when it runs the runner itself (`pytest`, `go test ./...`,
 * `deno test -A`), or passed through the package manager's script (`npm
 * test`, `pnpm test`, `yarn test`, `deno task test`) when the script is one
 * command that runs the runner. Anything else (several commands, a
 * workspace, make) is not narrowed.
 *
 * @param check The check, with its runner.
 * @param names Failing test names from its last run.
 * @param options `read`: reads package.json or deno.json where the check runs.
 * @returns The narrowed command, or why there is none.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { filteredCommand } from "./test_filter.ts";
 *
 * const scripts = JSON.stringify({ scripts: { test: "vitest" } });
 * const filtered = await filteredCommand(
 *   { name: "npm test", command: "npm test", runner: "vitest" },
 *   ["headers > joins"],
 *   { read: (path) => Promise.resolve(path === "package.json" ? scripts : undefined) },
 * );
 * assert.deepEqual(filtered, { command: "npm test -- -t '^(?:headers joins)$'" });
 * ```
 */
export async function filteredCommand(
  check: RepoCheck,
  names: string[],
  options: { read: ReadFile },
): Promise<FilteredCommand> {
  const { read } = options;
  const runner = check.runner;
  if (!runner) return { why: "its test runner is not known" };
  const args = filterArgs(runner, names);
  if (!Array.isArray(args)) return args;
  const quoted = args.map(shellQuote).join(" ");
  // CMake's check configures and builds before its last command, ctest, which takes the filter.
  if (runner === "ctest") {
    return /(?:^|&& )ctest [^&|;]*$/.test(check.command)
      ? { command: `${check.command} ${quoted}` }
      : { why: "its command does not end with ctest" };
  }
  if (runner === "meson") {
    return /(?:^|&& )meson test [^&|;]*$/.test(check.command)
      ? { command: `${check.command} ${quoted}` }
      : { why: "its command does not end with meson test" };
  }
  if (runner === "minitest" || runner === "test-unit") {
    return /^(?:bundle exec )?rake test$/.test(check.command.trim())
      ? { command: `${check.command.trim()} ${quoted}` }
      : { why: "its command is not rake test" };
  }
  // A module's or crate's folder (`cd v4 && go test ./...`, as detection writes it): the
  // runner's own command after it takes the filter; a package script there is left whole.
  const folder = /^(cd (?:"[^"]*"|[\w./-]+) && )(.*)$/s.exec(check.command);
  if (folder !== null && runnerCommand(folder[2]) === runner) {
    const inner = placed(folder[2], runner, quoted);
    return "command" in inner ? { command: `${folder[1]}${inner.command}` } : inner;
  }
  const direct = runnerCommand(check.command);
  if (direct === runner) {
    return placed(check.command, runner, quoted);
  }
  if (direct !== undefined) return { why: `it runs ${direct}, not ${runner}` };
  const script = await scriptOf(check.command, read);
  if ("why" in script) return script;
  if (runnerCommand(script.text) !== runner) {
    return { why: `its script ${JSON.stringify(script.text)} is not one ${runner} command` };
  }
  // Arguments after a script name reach the end of the script's command line.
  if (runner === "node" && !optionsOnly(script.text, "--test")) {
    return { why: "node --test takes options only before its files" };
  }
  if (wordsOf(script.text).includes("--")) {
    return { why: "its script passes arguments on with --" };
  }
  return { command: `${script.passOn} ${quoted}` };
}

/** The runner's own command with the filter added where the runner reads it. */
function placed(command: string, runner: TestRunner, quoted: string): FilteredCommand {
  const words = wordsOf(command);
  if (runner === "node") {
    // Options must come before node's file arguments: right after --test.
    const at = /(\s)--test(?=\s|$)/.exec(command);
    if (!at) return { why: "its command has no --test" };
    const end = at.index + at[0].length;
    return { command: `${command.slice(0, end)} ${quoted}${command.slice(end)}` };
  }
  if (runner === "cargo") {
    // cargo test's own arguments end at --; the filters are the test binary's.
    return { command: `${command}${words.includes("--") ? "" : " --"} ${quoted}` };
  }
  if (words.includes("--")) return { why: "its command passes arguments on with --" };
  if (runner === "go" && words.includes("-args")) return { why: "its command uses -args" };
  return { command: `${command} ${quoted}` };
}

/** The runner a single shell command starts, after `VAR=value` assignments, `npx` or `cross-env`. */
export function runnerCommand(text: string): TestRunner | undefined {
  const split = splitShell(text);
  if ("unsupported" in split || split.units.length !== 1) return undefined;
  const [unit] = split.units;
  if (unit.pipe || unit.orElse !== undefined) return undefined;
  let words = unit.words;
  for (;;) {
    if (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words = words.slice(1);
    else if (words[0] === "npx" || words[0] === "cross-env") words = words.slice(1);
    else break;
  }
  const [program, next, third] = words;
  if (program === undefined) return undefined;
  const base = program.split("/").pop()!;
  if ((base === "node" || base === "tsx") && words.includes("--test")) return "node";
  if (base === "deno" && next === "test") return "deno";
  if (base === "pytest" || base === "py.test") return "pytest";
  if (/^python[\d.]*$/.test(base) && next === "-m" && third === "pytest") return "pytest";
  if (base === "go" && next === "test") return "go";
  if (base === "cargo" && (next === "test" || (next?.startsWith("+") && third === "test"))) {
    return "cargo";
  }
  if (base === "jest" || base === "vitest" || base === "mocha") return base;
  return undefined;
}

/** Whether every word after `flag` in a one-command script is an option. */
function optionsOnly(text: string, flag: string): boolean {
  const words = wordsOf(text);
  const at = words.indexOf(flag);
  return at >= 0 && words.slice(at + 1).every((word) => word.startsWith("-"));
}

/** How a package script (or deno task) is run with more arguments, and its text. */
export async function scriptOf(
  command: string,
  read: ReadFile,
): Promise<{ text: string; passOn: string } | { why: string }> {
  const split = splitShell(command);
  const words = "units" in split && split.units.length === 1 ? split.units[0].words : [];
  const [manager, verb, name, ...rest] = words;
  if (rest.length > 0 || manager === undefined) {
    return { why: "it is not a runner's command or one package script" };
  }
  if (manager === "deno") {
    if (verb !== "task" || name === undefined) return { why: "it is not a deno task" };
    const tasks = await denoTasks(read);
    const task = tasks?.[name];
    const text = typeof task === "string" ? task : isRecord(task) ? task.command : undefined;
    if (typeof text !== "string") return { why: `deno task "${name}" is not found` };
    return { text, passOn: command };
  }
  if (manager !== "npm" && manager !== "pnpm" && manager !== "yarn") {
    return { why: "it is not a runner's command or one package script" };
  }
  const script = verb === "run" || verb === "run-script" ? name : name === undefined ? verb : "";
  if (!script) return { why: "it is not one package script" };
  const pkg = parseJson(await read("package.json"));
  const scripts = isRecord(pkg) && isRecord(pkg.scripts) ? pkg.scripts : {};
  const text = scripts[script];
  if (typeof text !== "string") return { why: `package.json has no script "${script}"` };
  // npm passes on what follows --; pnpm (7) and yarn what follows the name after `run`.
  return { text, passOn: manager === "npm" ? `${command} --` : `${manager} run ${script}` };
}

async function denoTasks(read: ReadFile): Promise<Record<string, unknown> | undefined> {
  for (const file of ["deno.json", "deno.jsonc"]) {
    const text = await read(file);
    if (text === undefined) continue;
    const { parse } = await import("jsonc-parser");
    const config = parse(text);
    return isRecord(config) && isRecord(config.tasks) ? config.tasks : undefined;
  }
  return undefined;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The last part of a nested name. */
function leaf(name: string, separator: string): string {
  const parts = name.split(separator);
  return parts[parts.length - 1];
}

/** A literal in a JavaScript regular expression (node, jest, vitest, mocha). */
export function escapeJs(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/** A literal in a Rust regular expression (deno's `--filter /.../`), as `regex::escape` writes it. */
export function escapeRust(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$#&~-]/g, "\\$&");
}

/** A literal in a CMake regular expression (ctest's `-R`). */
export function escapeCmake(text: string): string {
  return text.replace(/[\\.+*?()|[\]^$]/g, "\\$&");
}

/** A literal in an RE2 expression (go's `-run`), as `regexp.QuoteMeta` writes it. */
export function escapeRe2(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** One shell word, single-quoted. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
