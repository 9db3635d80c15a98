/**
 * What the detectors share: the scan of one repository (its root, the names
 * of its root files, the result so far), reading files without throwing,
 * JSON and INI helpers, and the probe that asks the machine a question.
 *
 * @module
 */

import { join, normalize } from "node:path";
import { parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import type { ToolResult } from "../../support/process.ts";
import type { DetectedCheck, Detection } from "./detected.ts";
import type { TestRunner } from "../run/test_report.ts";

/** What kind of check it is. */
export type Kind = DetectedCheck["kind"];

/** Runs a short command on the machine (`python3 --version`), never throwing. */
export type Probe = (executable: string, args: string[]) => Promise<ToolResult>;

/** One detection in progress. */
export interface Scan {
  /** The repository root. */
  root: string;
  /** The names of the files (not folders) at the root. */
  files: Set<string>;
  /** The result so far. */
  detection: Detection;
  /**
   * Each check under the names it is known by, so that a CI step that runs
   * `npm run test` finds the `npm test` already detected: `pkg:<dir>:<script>`,
   * `make:<dir>:<target>`, `cargo:<dir>:<subcommand>`, `go:<dir>:<subcommand>`,
   * `deno:<dir>:<task or subcommand>`, `py:<dir>:pytest` and `cmd:<command>`.
   */
  keys: Map<string, DetectedCheck>;
  /** Asks the machine; its answers are cached in `probed`. */
  probe: Probe;
  /** Answers of the probe by command line. */
  probed: Map<string, Promise<ToolResult>>;
  /** The PATH executables are looked up in. */
  path: string;
  /** Whether an executable is on `path`, by name. */
  found: Map<string, Promise<boolean>>;
}

const RUNNER_PATTERNS: ReadonlyArray<readonly [TestRunner, RegExp]> = [
  ["deno", /\bdeno\s+test\b/],
  ["node", /\b(?:node|tsx)\s+(?:[^\s;&|]+\s+)*?--test(?=\s|$)/],
  ["vitest", /\bvitest\b/],
  ["jest", /\bjest\b/],
  ["mocha", /\bmocha\b/],
  ["pytest", /\bpytest\b/],
  ["go", /\bgo\s+test\b/],
  ["cargo", /\bcargo\s+(?:\+\S+\s+)?test\b/],
];

/**
 * A loader whose result is kept per detection and folder, so that each file
 * is read once however many rules ask for it.
 *
 * @param load Reads one folder's file.
 * @returns The same loader, memoised.
 */
export function oncePerScan<T>(
  load: (scan: Scan, dir: string) => Promise<T>,
): (scan: Scan, dir: string) => Promise<T> {
  const caches = new WeakMap<Scan, Map<string, Promise<T>>>();
  return (scan, dir) => {
    let cache = caches.get(scan);
    if (cache === undefined) caches.set(scan, cache = new Map());
    let loaded = cache.get(dir);
    if (loaded === undefined) cache.set(dir, loaded = load(scan, dir));
    return loaded;
  };
}

/** The runner a script starts, when exactly one is named (two runners make the output ambiguous). */
export function runnerOf(script: string): TestRunner | undefined {
  const found = RUNNER_PATTERNS.filter(([, pattern]) => pattern.test(script));
  return found.length === 1 ? found[0][0] : undefined;
}

/** Whether a value is a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A value in double quotes, escaped as JSON. */
export function quote(value: string): string {
  return JSON.stringify(value);
}

/** The check, with `runner` only when there is one (so `"runner" in check` tells). */
export function withRunner(
  fields: Omit<DetectedCheck, "runner">,
  runner: TestRunner | undefined,
): DetectedCheck {
  return runner === undefined ? fields : { ...fields, runner };
}

/** Record a skipped candidate once (a guide may name the same command twice). */
export function skip(scan: Scan, source: string, why: string): void {
  const { skipped } = scan.detection;
  if (!skipped.some((entry) => entry.source === source && entry.why === why)) {
    skipped.push({ source, why });
  }
}

/** The check already known by one of these keys (or its command), if any. */
export function knownCheck(scan: Scan, keys: string[]): DetectedCheck | undefined {
  for (const key of keys) {
    const found = scan.keys.get(key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Remember a check under its keys and its command. */
export function registerKeys(scan: Scan, check: DetectedCheck, keys: string[]): void {
  for (const key of [...keys, `cmd:${check.command}`]) {
    if (!scan.keys.has(key)) scan.keys.set(key, check);
  }
}

/**
 * Add a check unless one with the same command or key exists (then it is
 * recorded as skipped). Aliases are names it also answers to without being
 * the only one (every workspace package's test answers to
 * `pkg:workspaces:test`), so they do not make another check a duplicate.
 *
 * @returns Whether it was added.
 */
export function addCheck(
  scan: Scan,
  check: DetectedCheck,
  keys: string[] = [],
  aliases: string[] = [],
): boolean {
  const same = knownCheck(scan, [`cmd:${check.command}`, ...keys]);
  if (same !== undefined) {
    skip(
      scan,
      check.source,
      same.command === check.command
        ? `same command as ${same.source}: ${quote(check.command)}`
        : `same check as ${same.source}: ${quote(same.command)}`,
    );
    return false;
  }
  scan.detection.checks.push(check);
  registerKeys(scan, check, [...keys, ...aliases]);
  return true;
}

/** Protect a file that defines a check, once, when it exists. */
export async function addConfigFile(scan: Scan, path: string): Promise<void> {
  if (scan.detection.configFiles.includes(path)) return;
  const exists = path.includes("/")
    ? await Deno.stat(join(scan.root, path)).then((info) => info.isFile, () => false)
    : scan.files.has(path);
  if (exists) scan.detection.configFiles.push(path);
}

/** The text of a root file, or undefined when it is absent or unreadable (recorded in skipped). */
export async function read(scan: Scan, name: string): Promise<string | undefined> {
  if (!scan.files.has(name)) return undefined;
  // Listed at the root, so not finding it is a fault (a dangling link), not an absence.
  return await readPath(scan, name, { listed: true });
}

/**
 * The text of a repository-relative file, or undefined when it is absent, a
 * folder, or unreadable (the last recorded in skipped).
 */
export async function readPath(
  scan: Scan,
  path: string,
  options: { listed?: boolean } = {},
): Promise<string | undefined> {
  try {
    // Editors on Windows may save a byte order mark; it is not part of the text.
    return (await Deno.readTextFile(join(scan.root, path))).replace(/^\uFEFF/, "");
  } catch (error) {
    const absent = error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.IsADirectory;
    if (options.listed || !absent) {
      skip(scan, path, `cannot read it: ${messageOf(error)}`);
    }
    return undefined;
  }
}

/**
 * A repository-relative folder in normal form ("." for the root), or
 * undefined when it leaves the repository.
 */
export function inRepository(...parts: string[]): string | undefined {
  if (parts.some((part) => part.startsWith("/"))) return undefined;
  const path = normalize(join(".", ...parts)).replace(/\/+$/, "");
  if (path === ".." || path.startsWith("../")) return undefined;
  return path === "" ? "." : path;
}

/** A path inside folder `dir` ("." for the root). */
export function within(dir: string, path: string): string {
  return dir === "." ? path : `${dir}/${path}`;
}

/** `cd dir && command`, or the command itself at the root. */
export function inFolder(dir: string, command: string): string {
  return dir === "." ? command : `cd ${/^[\w./-]+$/.test(dir) ? dir : quote(dir)} && ${command}`;
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
export function parseObject(
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

/** The first line of an INI or TOML text that opens a matching section, without its comment. */
export function sectionOf(text: string | undefined, section: RegExp): string | undefined {
  if (text === undefined) return undefined;
  return text.split(/\r?\n/)
    .map((line) => line.replace(/\s*[#;].*$/, "").trim())
    .find((line) => section.test(line));
}

/** Ask the machine once per detection; the same question gets the same answer. */
export function probeOnce(scan: Scan, executable: string, args: string[]): Promise<ToolResult> {
  const key = [executable, ...args].join(" ");
  let answer = scan.probed.get(key);
  if (answer === undefined) {
    answer = scan.probe(executable, args);
    scan.probed.set(key, answer);
  }
  return answer;
}

const TROUBLE: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\b(?:npm|pnpm|yarn)\s+publish\b|\bsemantic-release\b|\bchangeset\s+publish\b|\blerna\s+publish\b/,
    "publishes packages",
  ],
  [
    /\b(?:vercel|netlify|surge|gh-pages)\b|\bwrangler\s+(?:deploy|publish)\b|\bfirebase\s+deploy\b/,
    "deploys",
  ],
  [/\bgit\s+push\b/, "pushes to a remote"],
  [/\b(?:codecov|coveralls)\b/, "uploads coverage"],
  [/\b(?:docker|docker-compose|podman)\b/, "needs docker"],
  [/\bsudo\b|\bapt(?:-get)?\s+install\b|\bbrew\s+install\b/, "installs system packages"],
  [/\b(?:curl|wget)\s/, "downloads from the network"],
  [/\bplaywright\s+test\b|\bcypress\s+run\b/, "needs a browser that CI installs"],
  [/\s--watch\b|\bwatch\s/, "watches for changes and never exits"],
  [
    /\b(?:prettier|biome\s+format)\b[^;&|]*\s(?:--write|-w)\b|\beslint\b[^;&|]*\s--fix\b|\bbiome\b[^;&|]*\s--(?:write|apply)\b/,
    "rewrites files",
  ],
];

/**
 * Why a command text (a script, a recipe) must not run as a check: it
 * publishes, deploys, uploads, needs docker or a browser CI installs,
 * installs system packages, downloads, never exits, or rewrites files.
 */
export function commandTrouble(text: string): string | undefined {
  for (const [pattern, why] of TROUBLE) if (pattern.test(text)) return why;
  return undefined;
}

async function findExecutable(executable: string, searchPath: string): Promise<boolean> {
  const candidates = executable.includes("/")
    ? [executable]
    : searchPath.split(":").filter((dir) => dir !== "").map((dir) => join(dir, executable));
  for (const candidate of candidates) {
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // Not in this folder.
    }
  }
  return false;
}

/** Whether an executable is on the scan's PATH, looked up once per detection. */
export function onPath(scan: Scan, executable: string): Promise<boolean> {
  let answer = scan.found.get(executable);
  if (answer === undefined) {
    answer = findExecutable(executable, scan.path);
    scan.found.set(executable, answer);
  }
  return answer;
}
