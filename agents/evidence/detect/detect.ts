/**
 * Finding a repository's own checks (the commands that say "the code works")
 * so that "done" can be gated on them with no configuration, run the way its
 * maintainers run them.
 *
 * The sources, in order: deno.json tasks; package.json scripts (and, for
 * the scripts the root lacks, each npm, yarn, bun or pnpm workspace
 * package's); the Makefile's `test` target; pytest, or tox on the
 * environment of the interpreter at hand (`tox -e py311`), or nox; `cargo
 * test` (`--workspace` for a Cargo workspace); `go test ./...` for the root
 * module and each module of a go.work (without one, each module below the
 * root whose requirements are here); CMake (configure, build and ctest in
 * a temp folder), Meson, autotools (`make check`), the Rakefile's test task,
 * in it or in `rakelib/*.rake` (`bundle exec rake test` when the Gemfile's
 * gems are installed), and
 * Gradle and Maven offline when their caches exist. Then the gate the maintainers run:
 * the commands of the workflows that run on push and pull requests, and of
 * the contributing guide, that are package scripts, make targets, or cargo,
 * go, deno or pytest commands and need no secrets, services or network
 * (`npm run check`, `make all`, `cargo clippy`, `go vet ./...`, `deno task
 * ok`). Every candidate that is not used is recorded with the reason; the
 * CI commands finishline does not know are kept as hints, never run.
 *
 * Detection reads files, and asks the machine two things when a tox
 * configuration needs them: `tox --version` and `python3 --version`.
 *
 * @example Detect the checks of a small npm package
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectChecks, formatDetection } from "./detect.ts";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.writeTextFile(`${root}/package.json`, '{ "scripts": { "test": "node --test" } }');
 *   await Deno.writeTextFile(`${root}/package-lock.json`, "{}");
 *   const detection = await detectChecks(root);
 *   assert.equal(
 *     formatDetection(detection),
 *     [
 *       "Checks, in the order they run:",
 *       "  npm test  (package.json has scripts.test; package-lock.json names npm)",
 *     ].join("\n"),
 *   );
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 *
 * @module
 */

import { runTool, type ToolResult } from "../../support/process.ts";
import { detectCiGate } from "./_ci_gate.ts";
import { detectDeno } from "./_detect_deno.ts";
import { detectMakefile } from "./_detect_make.ts";
import { detectAutotools, detectCmake, detectMeson } from "./_detect_native.ts";
import { detectGradle, detectMaven } from "./_detect_jvm.ts";
import { detectRuby } from "./_detect_ruby.ts";
import { detectPackageJson } from "./_detect_node.ts";
import { detectPython } from "./_detect_python.ts";
import { detectCargo, detectGo } from "./_detect_rust_go.ts";
import { quote, type Scan } from "./_detect_scan.ts";

export type { CheckHint, DetectedCheck, Detection, SkippedCandidate } from "./detected.ts";
import type { Detection } from "./detected.ts";

/** Options of {@linkcode detectChecks}. */
export interface DetectOptions {
  /**
   * Runs a short command and returns how it exited and what it printed;
   * asked `tox --version` and `python3 --version`, and `cargo clippy
   * --version` when CI runs clippy.
   * @default runTool at the root with a 10 s timeout
   */
  probe?: (executable: string, args: string[]) => Promise<ToolResult>;
  /**
   * PATH to look executables up in: a command CI or the contributing guide
   * runs with a tool this machine lacks is skipped rather than made a check
   * that cannot start.
   * @default Deno.env.get("PATH")
   */
  path?: string;
}

/** How long a question to the machine may take. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Detects the checks a repository defines, and the gate its CI and
 * contributing guide run.
 *
 * Nothing in the repository is run. Malformed files and unusable candidates
 * are recorded in `skipped`, never thrown.
 *
 * @param root The repository root.
 * @param options How to ask the machine about tox and python3, and where its executables are.
 * @returns The checks (in the order they run), the CI hints, the skipped
 * candidates and the files that define the checks.
 * @throws {Deno.errors.NotFound} When `root` is not a folder.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectChecks } from "./detect.ts";
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
export async function detectChecks(root: string, options: DetectOptions = {}): Promise<Detection> {
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
    keys: new Map(),
    probe: options.probe ??
      ((executable, args) => runTool(executable, args, { cwd: root, timeoutMs: PROBE_TIMEOUT_MS })),
    probed: new Map(),
    path: options.path ?? Deno.env.get("PATH") ?? "",
    found: new Map(),
  };
  await detectDeno(scan);
  await detectPackageJson(scan);
  await detectMakefile(scan);
  await detectPython(scan);
  await detectCargo(scan);
  await detectGo(scan);
  await detectCmake(scan);
  await detectMeson(scan);
  await detectAutotools(scan);
  await detectRuby(scan);
  await detectGradle(scan);
  await detectMaven(scan);
  await detectCiGate(scan);
  return scan.detection;
}

/**
 * Formats a detection for `checks`, `--dry-run` and reports: every candidate,
 * with why it was chosen or not.
 *
 * Three sections, each only when it has lines: the checks in the order they
 * run (`npm test  (why)`, or `pytest: python3 -m pytest  (why)` when a check's
 * name is not its command), the CI commands finishline does not run, and the
 * skipped candidates. When there is no check the first line is `No checks found`.
 *
 * @param detection What {@linkcode detectChecks} found.
 * @returns The lines, joined with newlines, without a trailing newline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDetection } from "./detect.ts";
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
 *   hints: [{
 *     file: ".github/workflows/ci.yml",
 *     job: "test",
 *     step: "Smoke",
 *     run: "./smoke.sh",
 *     why: "./smoke.sh is not a package manager, make, cargo, go, deno or a Python test runner",
 *   }],
 *   skipped: [{ source: "Makefile", why: 'no "test" target' }],
 *   configFiles: ["package.json"],
 * });
 * assert.equal(
 *   text,
 *   [
 *     "Checks, in the order they run:",
 *     "  pnpm test  (package.json has scripts.test; pnpm-lock.yaml names pnpm)",
 *     "CI commands not run:",
 *     '  ./smoke.sh  (.github/workflows/ci.yml, job "test", step "Smoke": ./smoke.sh is not a package manager, make, cargo, go, deno or a Python test runner)',
 *     "Skipped:",
 *     '  Makefile  (no "test" target)',
 *   ].join("\n"),
 * );
 * ```
 */
export function formatDetection(detection: Detection): string {
  const lines: string[] = [];
  if (detection.checks.length === 0) lines.push("No checks found");
  else lines.push("Checks, in the order they run:");
  for (const found of detection.checks) {
    const label = found.name === found.command ? found.name : `${found.name}: ${found.command}`;
    lines.push(`  ${label}  (${found.why})`);
  }
  if (detection.hints.length > 0) lines.push("CI commands not run:");
  for (const hint of detection.hints) {
    const [first, ...rest] = hint.run.trim().split("\n");
    const run = rest.length > 0 ? `${first} ...` : first;
    const where = `${hint.file}, job ${quote(hint.job)}, step ${quote(hint.step)}`;
    lines.push(`  ${run}  (${hint.why === undefined ? where : `${where}: ${hint.why}`})`);
  }
  if (detection.skipped.length > 0) lines.push("Skipped:");
  for (const entry of detection.skipped) lines.push(`  ${entry.source}  (${entry.why})`);
  return lines.join("\n");
}
