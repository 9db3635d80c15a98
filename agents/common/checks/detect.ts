/**
 * Finding a repository's own checks (the commands that say "the code works")
 * so that "done" can be gated on them with no configuration.
 *
 * Only the repository root is examined: deno.json, package.json, Makefile,
 * the Python test configurations, Cargo.toml and go.mod. The `run:` steps of
 * `.github/workflows` are returned as hints and never run.
 *
 * @example Detect the checks of a small npm package
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectChecks, formatDetection } from "@finishline/agents";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.writeTextFile(`${root}/package.json`, '{ "scripts": { "test": "node --test" } }');
 *   await Deno.writeTextFile(`${root}/package-lock.json`, "{}");
 *   const detection = await detectChecks(root);
 *   assert.equal(
 *     formatDetection(detection),
 *     "npm test  (package.json has scripts.test; package-lock.json names npm)",
 *   );
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import { parseDocument } from "yaml";
import type { TestRunner } from "./test_report.ts";

/** One check found in the repository. */
export interface DetectedCheck {
  /** Unique name, usually the command itself ("npm test", "deno task check"); "pytest" for `python3 -m pytest`. */
  name: string;
  /** Shell command run with `sh -c` at the repository root. */
  command: string;
  /** Where it came from, e.g. `package.json scripts.test` or `go.mod`. */
  source: string;
  /** Why it was chosen, one line, e.g. `package.json has scripts.test; pnpm-lock.yaml names pnpm`. */
  why: string;
  /** The executable the command starts first, for a preflight that checks it is on PATH. */
  executable: string;
  /** The test runner whose output names failing tests, when the script text tells it; absent otherwise. */
  runner?: TestRunner;
  /** What kind of check it is. */
  kind: "test" | "lint" | "typecheck";
}

/** A CI step shown to the user as a hint, never run. */
export interface CheckHint {
  /** Repository-relative path of the workflow file. */
  file: string;
  /** The job's id. */
  job: string;
  /** The step's name, or the first line of its `run:` when it has none. */
  step: string;
  /** The step's `run:` text, without its trailing newline. */
  run: string;
}

/** A candidate that was looked at and not used. */
export interface SkippedCandidate {
  /** The file, or the file and the field, that was looked at. */
  source: string;
  /** Why it was not used. */
  why: string;
}

/** What detection found. */
export interface Detection {
  /** The checks, in order: deno, package.json, Makefile, Python, Cargo, Go. */
  checks: DetectedCheck[];
  /** `run:` steps of `.github/workflows/*.yml|yaml` (hints only). */
  hints: CheckHint[];
  /** Candidates that were looked at and skipped, with why. */
  skipped: SkippedCandidate[];
  /** Repository-relative paths of the existing files that define the checks, so the runner can protect them. */
  configFiles: string[];
}

type Kind = DetectedCheck["kind"];
type PackageManager = "npm" | "pnpm" | "yarn" | "bun";

/** What the detectors share: the root, the names of its files, and the result so far. */
interface Scan {
  root: string;
  files: Set<string>;
  detection: Detection;
}

const RUNNER_PATTERNS: ReadonlyArray<readonly [TestRunner, RegExp]> = [
  ["deno", /\bdeno\s+test\b/],
  ["node", /\b(?:node|tsx)\s+(?:[^\s;&|]+\s+)*?--test(?=\s|$)/],
  ["vitest", /\bvitest\b/],
  ["jest", /\bjest\b/],
  ["pytest", /\bpytest\b/],
  ["go", /\bgo\s+test\b/],
  ["cargo", /\bcargo\s+(?:\+\S+\s+)?test\b/],
];

/** The runner a script starts, when exactly one is named (two runners make the output ambiguous). */
function runnerOf(script: string): TestRunner | undefined {
  const found = RUNNER_PATTERNS.filter(([, pattern]) => pattern.test(script));
  return found.length === 1 ? found[0][0] : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function addCheck(scan: Scan, check: DetectedCheck): boolean {
  const { detection } = scan;
  const same = detection.checks.find((existing) => existing.command === check.command);
  if (same !== undefined) {
    detection.skipped.push({
      source: check.source,
      why: `same command as ${same.source}: ${quote(check.command)}`,
    });
    return false;
  }
  detection.checks.push(check);
  return true;
}

function addConfigFile(scan: Scan, path: string): void {
  if (scan.files.has(path) && !scan.detection.configFiles.includes(path)) {
    scan.detection.configFiles.push(path);
  }
}

function check(
  fields: Omit<DetectedCheck, "runner">,
  runner: TestRunner | undefined,
): DetectedCheck {
  return runner === undefined ? fields : { ...fields, runner };
}

/** The text of a root file, or undefined when it is absent or unreadable (recorded in skipped). */
async function read(scan: Scan, name: string): Promise<string | undefined> {
  if (!scan.files.has(name)) return undefined;
  try {
    // Editors on Windows may save a byte order mark; it is not part of the text.
    return (await Deno.readTextFile(join(scan.root, name))).replace(/^\uFEFF/, "");
  } catch (error) {
    scan.detection.skipped.push({ source: name, why: `cannot read it: ${messageOf(error)}` });
    return undefined;
  }
}

function describeSyntaxError(text: string, error: ParseError): string {
  const before = text.slice(0, error.offset);
  const line = before.split("\n").length;
  const column = error.offset - (before.lastIndexOf("\n") + 1) + 1;
  // "CloseBraceExpected" reads as "close brace expected".
  const what = printParseErrorCode(error.error).replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase();
  const atEnd = text.slice(error.offset).trim() === "";
  return `line ${line}, column ${column}: ${atEnd ? `unexpected end of file, ${what}` : what}`;
}

/** The top-level object of a JSON (or JSONC) file, or why it cannot be used. */
function parseObject(
  text: string,
  jsonc: boolean,
): { value: Record<string, unknown> } | { error: string } {
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, {
    allowTrailingComma: jsonc,
    disallowComments: !jsonc,
    allowEmptyContent: false,
  });
  if (errors.length > 0) {
    return {
      error: `invalid ${jsonc ? "JSONC" : "JSON"}: ${describeSyntaxError(text, errors[0])}`,
    };
  }
  if (!isObject(value)) return { error: "the top level is not an object" };
  return { value };
}

const DENO_TASKS: ReadonlyArray<readonly [string, Kind]> = [
  ["test", "test"],
  ["check", "typecheck"],
  ["lint", "lint"],
];

async function detectDeno(scan: Scan): Promise<void> {
  const names = ["deno.json", "deno.jsonc"].filter((name) => scan.files.has(name));
  if (names.length === 0) return;
  const [name] = names;
  if (names.length > 1) {
    scan.detection.skipped.push({ source: "deno.jsonc", why: "deno.json takes precedence" });
  }
  const text = await read(scan, name);
  if (text === undefined) return;
  const parsed = parseObject(text, true);
  if ("error" in parsed) {
    scan.detection.skipped.push({ source: name, why: parsed.error });
    return;
  }
  const tasks = parsed.value.tasks;
  if (tasks !== undefined && !isObject(tasks)) {
    scan.detection.skipped.push({ source: name, why: '"tasks" is not an object' });
    return;
  }
  let found = false;
  for (const [task, kind] of DENO_TASKS) {
    const value = tasks?.[task];
    if (value === undefined) continue;
    const source = `${name} tasks.${task}`;
    // A task is a string, or an object whose `command` is optional (it may only run dependencies).
    const script = typeof value === "string"
      ? value
      : isObject(value)
      ? (typeof value.command === "string" ? value.command : "")
      : undefined;
    if (script === undefined) {
      scan.detection.skipped.push({ source, why: "the task is neither a string nor an object" });
      continue;
    }
    const command = `deno task ${task}`;
    found = addCheck(
      scan,
      check(
        {
          name: command,
          command,
          source,
          why: `${name} has tasks.${task}`,
          executable: "deno",
          kind,
        },
        kind === "test" ? runnerOf(script) : undefined,
      ),
    ) || found;
  }
  if (found) {
    addConfigFile(scan, name);
  } else {
    scan.detection.skipped.push({ source: name, why: 'no "test", "check" or "lint" task' });
  }
}

const LOCK_FILES: ReadonlyArray<readonly [string, PackageManager]> = [
  ["package-lock.json", "npm"],
  ["npm-shrinkwrap.json", "npm"],
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lock", "bun"],
  ["bun.lockb", "bun"],
];

/** The package manager and the reason, from the lock files, else `packageManager`, else npm. */
function packageManagerOf(
  scan: Scan,
  field: unknown,
): { manager: PackageManager; reason: string } {
  const declared = typeof field === "string"
    ? /^(npm|pnpm|yarn|bun)(?:@|$)/.exec(field)?.[1] as PackageManager | undefined
    : undefined;
  const locks = LOCK_FILES.filter(([file]) => scan.files.has(file));
  if (locks.length > 0) {
    // With several lock files, the one `packageManager` agrees with wins.
    const [file, manager] = locks.find(([, candidate]) => candidate === declared) ?? locks[0];
    const others = locks.filter(([other]) => other !== file).map(([other]) => other);
    const ignored = others.length > 0 ? ` (${others.join(", ")} ignored)` : "";
    return { manager, reason: `${file} names ${manager}${ignored}` };
  }
  if (declared !== undefined) {
    return {
      manager: declared,
      reason: `packageManager ${quote(field as string)} names ${declared}`,
    };
  }
  if (typeof field === "string") {
    return {
      manager: "npm",
      reason: `packageManager ${quote(field)} is not npm, pnpm, yarn or bun; npm by default`,
    };
  }
  return { manager: "npm", reason: "no lock file; npm by default" };
}

function scriptCommand(manager: PackageManager, script: string): string {
  // `bun test` is bun's own test runner, not the script.
  if (script === "test" && manager !== "bun") return `${manager} test`;
  return `${manager} run ${script}`;
}

const PACKAGE_SCRIPTS: ReadonlyArray<readonly [string, Kind]> = [
  ["test", "test"],
  ["typecheck", "typecheck"],
  ["lint", "lint"],
];

const JS_RUNNER_CONFIG = /^(?:jest\.config\.(?:[cm]?[jt]s|json)|vitest\.config\.[cm]?[jt]s)$/;

async function detectPackageJson(scan: Scan): Promise<void> {
  const text = await read(scan, "package.json");
  if (text === undefined) return;
  const parsed = parseObject(text, false);
  if ("error" in parsed) {
    scan.detection.skipped.push({ source: "package.json", why: parsed.error });
    return;
  }
  const scripts = parsed.value.scripts;
  if (scripts !== undefined && !isObject(scripts)) {
    scan.detection.skipped.push({ source: "package.json", why: '"scripts" is not an object' });
    return;
  }
  const { manager, reason } = packageManagerOf(scan, parsed.value.packageManager);
  let found = false;
  let tests = false;
  for (const [script, kind] of PACKAGE_SCRIPTS) {
    const value = scripts?.[script];
    if (value === undefined) continue;
    const source = `package.json scripts.${script}`;
    if (typeof value !== "string") {
      scan.detection.skipped.push({ source, why: "the script is not a string" });
      continue;
    }
    if (value.trim() === "") {
      scan.detection.skipped.push({ source, why: "the script is empty" });
      continue;
    }
    if (/no test specified/i.test(value) && /\bexit 1\b/.test(value)) {
      scan.detection.skipped.push({
        source,
        why: `npm's placeholder test script: ${quote(value)}`,
      });
      continue;
    }
    const command = scriptCommand(manager, script);
    const added = addCheck(
      scan,
      check(
        {
          name: command,
          command,
          source,
          why: `package.json has scripts.${script}; ${reason}`,
          executable: manager,
          kind,
        },
        kind === "test" ? runnerOf(value) : undefined,
      ),
    );
    found ||= added;
    tests ||= added && kind === "test";
  }
  if (!found) {
    if (!scan.detection.skipped.some((entry) => entry.source.startsWith("package.json"))) {
      scan.detection.skipped.push({
        source: "package.json",
        why: 'no "test", "typecheck" or "lint" script',
      });
    }
    return;
  }
  addConfigFile(scan, "package.json");
  if (tests) {
    for (const file of [...scan.files].filter((name) => JS_RUNNER_CONFIG.test(name)).sort()) {
      addConfigFile(scan, file);
    }
  }
}

/** The recipe lines of the first rule whose targets include `test` (not a `test :=` assignment). */
function testRecipe(makefile: string): string | undefined {
  const lines = makefile.split(/\r?\n/);
  const start = lines.findIndex((line) =>
    /^(?:[^\s:#=]+[ \t]+)*test(?:[ \t]+[^\s:#=]+)*[ \t]*::?(?!=)/.test(line)
  );
  if (start === -1) return undefined;
  const recipe: string[] = [];
  // A recipe may sit after a semicolon on the rule line.
  const inline = /;(.*)$/.exec(lines[start].replace(/#.*$/, ""));
  if (inline !== null) recipe.push(inline[1]);
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("\t")) recipe.push(line.slice(1));
    else if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    else break;
  }
  return recipe.join("\n");
}

async function detectMakefile(scan: Scan): Promise<void> {
  // GNU make's own order of preference.
  const name = ["GNUmakefile", "makefile", "Makefile"].find((file) => scan.files.has(file));
  if (name === undefined) return;
  const text = await read(scan, name);
  if (text === undefined) return;
  const recipe = testRecipe(text);
  if (recipe === undefined) {
    scan.detection.skipped.push({ source: name, why: 'no "test" target' });
    return;
  }
  const added = addCheck(
    scan,
    check(
      {
        name: "make test",
        command: "make test",
        source: `${name} target "test"`,
        why: `${name} has a "test" target`,
        executable: "make",
        kind: "test",
      },
      runnerOf(recipe),
    ),
  );
  if (added) addConfigFile(scan, name);
}

/** The first line of an INI or TOML text that opens a matching section, without its comment. */
function sectionOf(text: string | undefined, section: RegExp): string | undefined {
  if (text === undefined) return undefined;
  return text.split(/\r?\n/)
    .map((line) => line.replace(/\s*[#;].*$/, "").trim())
    .find((line) => section.test(line));
}

async function detectPython(scan: Scan): Promise<void> {
  const pyproject = await read(scan, "pyproject.toml");
  const setupCfg = await read(scan, "setup.cfg");
  const toxIni = await read(scan, "tox.ini");

  // Each pytest configuration, as [source, file].
  const pytest: Array<readonly [string, string]> = [];
  if (scan.files.has("pytest.ini")) pytest.push(["pytest.ini", "pytest.ini"]);
  const pytestTable = sectionOf(pyproject, /^\[tool\.pytest(?:\.ini_options)?\]$/);
  if (pytestTable !== undefined) pytest.push([`pyproject.toml ${pytestTable}`, "pyproject.toml"]);
  if (sectionOf(toxIni, /^\[pytest\]$/) !== undefined) pytest.push(["tox.ini [pytest]", "tox.ini"]);
  if (sectionOf(setupCfg, /^\[tool:pytest\]$/) !== undefined) {
    pytest.push(["setup.cfg [tool:pytest]", "setup.cfg"]);
  }
  if (scan.files.has("conftest.py")) pytest.push(["conftest.py", "conftest.py"]);

  // Tools that run pytest in their own environments, as [source, file, command].
  const runners: Array<readonly [string, string, "tox" | "nox"]> = [];
  if (sectionOf(toxIni, /^\[(?:tox|testenv(?::[^\]]*)?)\]$/) !== undefined) {
    runners.push(["tox.ini", "tox.ini", "tox"]);
  } else if (toxIni !== undefined) {
    scan.detection.skipped.push({ source: "tox.ini", why: "no [tox] or [testenv] section" });
  }
  if (!runners.some(([, , command]) => command === "tox")) {
    if (sectionOf(pyproject, /^\[tool\.tox(?:\.[^\]]+)?\]$/) !== undefined) {
      runners.push(["pyproject.toml [tool.tox]", "pyproject.toml", "tox"]);
    }
  }
  if (scan.files.has("noxfile.py")) runners.push(["noxfile.py", "noxfile.py", "nox"]);

  const pytestSource = pytest.length > 0 ? pytest[0][0] : undefined;
  for (const [source, file, command] of runners) {
    const runsPytest = pytestSource === undefined
      ? ""
      : `; ${command} runs pytest in its environments`;
    if (
      addCheck(scan, {
        name: command,
        command,
        source,
        why: `${source} configures ${command}${runsPytest}`,
        executable: command,
        kind: "test",
      })
    ) addConfigFile(scan, file);
  }
  if (pytestSource !== undefined) {
    if (runners.length > 0) {
      const tools = [...new Set(runners.map(([, , command]) => command))].join(" and ");
      scan.detection.skipped.push({
        source: pytestSource,
        why: `${tools} ${
          runners.length > 1 ? "run" : "runs"
        } pytest, so pytest is not run directly`,
      });
    } else {
      const why = pytestSource === "conftest.py"
        ? "conftest.py is at the root"
        : `${pytestSource} configures pytest`;
      addCheck(scan, {
        name: "pytest",
        command: "python3 -m pytest",
        source: pytestSource,
        why,
        executable: "python3",
        runner: "pytest",
        kind: "test",
      });
    }
  }
  if (scan.detection.checks.some((found) => ["pytest", "tox", "nox"].includes(found.name))) {
    for (const [, file] of pytest) addConfigFile(scan, file);
  }
}

function detectCargo(scan: Scan): void {
  if (!scan.files.has("Cargo.toml")) return;
  if (
    addCheck(scan, {
      name: "cargo test",
      command: "cargo test",
      source: "Cargo.toml",
      why: "Cargo.toml is at the root",
      executable: "cargo",
      runner: "cargo",
      kind: "test",
    })
  ) addConfigFile(scan, "Cargo.toml");
}

function detectGo(scan: Scan): void {
  if (!scan.files.has("go.mod")) return;
  if (
    addCheck(scan, {
      name: "go test ./...",
      command: "go test ./...",
      source: "go.mod",
      why: "go.mod is at the root",
      executable: "go",
      runner: "go",
      kind: "test",
    })
  ) addConfigFile(scan, "go.mod");
}

async function detectWorkflows(scan: Scan): Promise<void> {
  const folder = ".github/workflows";
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(scan.root, folder))) {
      if (!entry.isDirectory && /\.ya?ml$/.test(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      scan.detection.skipped.push({ source: folder, why: `cannot list it: ${messageOf(error)}` });
    }
    return;
  }
  for (const name of names.sort()) {
    const file = `${folder}/${name}`;
    let data: unknown;
    try {
      const document = parseDocument(
        (await Deno.readTextFile(join(scan.root, file))).replace(/^\uFEFF/, ""),
      );
      if (document.errors.length > 0) {
        // The message's first line holds the reason and the position; the rest is a code frame.
        const [first] = document.errors[0].message.split("\n");
        scan.detection.skipped.push({
          source: file,
          why: `invalid YAML: ${first.replace(/:$/, "")}`,
        });
        continue;
      }
      data = document.toJS();
    } catch (error) {
      scan.detection.skipped.push({ source: file, why: `cannot read it: ${messageOf(error)}` });
      continue;
    }
    if (!isObject(data) || !isObject(data.jobs)) {
      scan.detection.skipped.push({ source: file, why: 'no "jobs" mapping' });
      continue;
    }
    for (const [job, definition] of Object.entries(data.jobs)) {
      if (!isObject(definition) || !Array.isArray(definition.steps)) continue;
      for (const step of definition.steps) {
        if (!isObject(step) || typeof step.run !== "string") continue;
        const run = step.run.trimEnd();
        const name = typeof step.name === "string" && step.name.trim() !== ""
          ? step.name
          : run.trimStart().split("\n")[0];
        scan.detection.hints.push({ file, job, step: name, run });
      }
    }
  }
}

/**
 * Detects the checks a repository defines at its root, and the CI steps worth showing as hints.
 *
 * Nothing in the repository is run. Malformed files and unusable candidates
 * are recorded in `skipped`, never thrown.
 *
 * @param root The repository root.
 * @returns The checks (in the order deno, package.json, Makefile, Python, Cargo, Go; tests
 * first), the workflow hints, the skipped candidates and the files that define the checks.
 * @throws {Deno.errors.NotFound} When `root` is not a folder.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectChecks } from "@finishline/agents";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.writeTextFile(`${root}/deno.json`, '{ "tasks": { "test": "deno test -A" } }');
 *   await Deno.writeTextFile(`${root}/go.mod`, "module example.com/demo\n");
 *   const detection = await detectChecks(root);
 *   assert.deepEqual(detection.checks.map((check) => [check.command, check.runner]), [
 *     ["deno task test", "deno"],
 *     ["go test ./...", "go"],
 *   ]);
 *   assert.deepEqual(detection.configFiles, ["deno.json", "go.mod"]);
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function detectChecks(root: string): Promise<Detection> {
  const files = new Set<string>();
  try {
    for await (const entry of Deno.readDir(root)) {
      if (!entry.isDirectory) files.add(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      throw new Deno.errors.NotFound(`Cannot detect checks in ${quote(root)}: no such folder`, {
        cause: error,
      });
    }
    throw error;
  }
  const scan: Scan = {
    root,
    files,
    detection: { checks: [], hints: [], skipped: [], configFiles: [] },
  };
  await detectDeno(scan);
  await detectPackageJson(scan);
  await detectMakefile(scan);
  await detectPython(scan);
  detectCargo(scan);
  detectGo(scan);
  await detectWorkflows(scan);
  return scan.detection;
}

/**
 * Formats a detection for `--dry-run` and reports: one line per check, then hints, then skipped candidates.
 *
 * A check reads `npm test  (why)`, or `pytest: python3 -m pytest  (why)` when its name
 * is not its command; hints start with `hint: ` and skipped candidates with `skipped: `.
 * When there is no check the first line is `No checks found`.
 *
 * @param detection What {@linkcode detectChecks} found.
 * @returns The lines, joined with newlines, without a trailing newline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDetection } from "@finishline/agents";
 *
 * const text = formatDetection({
 *   checks: [{
 *     name: "pnpm test",
 *     command: "pnpm test",
 *     source: "package.json scripts.test",
 *     why: "package.json has scripts.test; pnpm-lock.yaml names pnpm",
 *     executable: "pnpm",
 *     runner: "vitest",
 *     kind: "test",
 *   }],
 *   hints: [{ file: ".github/workflows/ci.yml", job: "test", step: "Test", run: "pnpm test" }],
 *   skipped: [{ source: "Makefile", why: 'no "test" target' }],
 *   configFiles: ["package.json"],
 * });
 * assert.equal(
 *   text,
 *   [
 *     "pnpm test  (package.json has scripts.test; pnpm-lock.yaml names pnpm)",
 *     'hint: pnpm test  (.github/workflows/ci.yml, job "test", step "Test")',
 *     'skipped: Makefile  (no "test" target)',
 *   ].join("\n"),
 * );
 * ```
 */
export function formatDetection(detection: Detection): string {
  const lines: string[] = [];
  if (detection.checks.length === 0) lines.push("No checks found");
  for (const found of detection.checks) {
    const label = found.name === found.command ? found.name : `${found.name}: ${found.command}`;
    lines.push(`${label}  (${found.why})`);
  }
  for (const hint of detection.hints) {
    const [first, ...rest] = hint.run.trim().split("\n");
    const run = rest.length > 0 ? `${first} ...` : first;
    lines.push(`hint: ${run}  (${hint.file}, job ${quote(hint.job)}, step ${quote(hint.step)})`);
  }
  for (const entry of detection.skipped) lines.push(`skipped: ${entry.source}  (${entry.why})`);
  return lines.join("\n");
}
