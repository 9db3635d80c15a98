/**
 * Proof of the change: for the lines a claim changed in the repository's
 * own source, which ones the tests run (the ecosystems' coverage tools, see
 * {@linkcode openCoverageProbe}) and which small wrong versions of them the
 * tests notice (finishline's mutator, see {@linkcode lineMutants}). Computed
 * once, in the clean copy of the final claim, with the checks that passed
 * there, and time-boxed: mutants are tried until their runs would pass a
 * multiple of the suite's own time, and the rest are counted as untried.
 *
 * @module
 */

import * as path from "node:path";
import type { GitReader } from "../../git/hardened.ts";
import type {
  ChangeProof,
  FileProof,
  MutantTally,
  SurvivingMutant,
} from "../../record/iteration.ts";
import { type CheckRun, type RepoCheck, runRepoCheck } from "../run/check_run.ts";
import { inertLine } from "./_coverage_formats.ts";
import { programLanguage } from "../judge/plain_source.ts";
import { changedLines } from "./changed_lines.ts";
import { openCoverageProbe } from "./coverage_probe.ts";
import { applyMutant, lineMutants, type Mutant, revertMutants, spreadByLine } from "./mutants.ts";

export type { ChangeProof, FileProof, MutantTally, SurvivingMutant };

/** What {@linkcode proveChange} needs. */
export interface ProveChangeOptions {
  /** The clean copy of the claim's commit. */
  root: string;
  /** A reader of its objects (hardened git). */
  git: GitReader;
  /** The starting commit. */
  base: string;
  /** The claim's commit. */
  head: string;
  /** The checks to run (those that passed on the claim). */
  checks: RepoCheck[];
  /** Whether a changed path is the repository's own source (not a test, not configuration). */
  isSource: (file: string) => boolean;
  /** Each check's timeout. */
  timeoutMs: number;
  /** The mutants' time box, as a multiple of the suite's own time. @default 2 */
  budgetFactor?: number;
  /** The suite's own time (the claim's check run); by default the time of the coverage run. */
  suiteMs?: number;
  /** Stops the proof (what is done is reported). */
  signal?: AbortSignal;
  /**
   * The kept build folder of a check in the copy (`FINISHLINE_BUILD_DIR`):
   * the coverage run and each mutant build from the claim's build, as the
   * suite whose time sets the box did, not from nothing.
   */
  buildFolder?: (check: RepoCheck) => Promise<string | undefined>;
}

/** A Go mutant that did not compile: its tests never ran. */
const BUILD_FAILED = /\[build failed\]|\[setup failed\]|^# \S+\n.*\.go:\d+:\d+: /m;

async function runChecks(
  checks: RepoCheck[],
  options: {
    cwd: string;
    timeoutMs: number;
    env?: Record<string, string>;
    signal?: AbortSignal;
    buildFolder?: (check: RepoCheck) => Promise<string | undefined>;
  },
  stopAtFailure: boolean,
): Promise<CheckRun[]> {
  const runs: CheckRun[] = [];
  for (const check of checks) {
    if (options.signal?.aborted) break;
    const run = await runRepoCheck(check, {
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
      env: options.env,
      signal: options.signal,
      buildDir: await options.buildFolder?.(check),
    });
    runs.push(run);
    if (stopAtFailure && !run.green) break;
  }
  return runs;
}

/**
 * Compute the proof of a claim's change in its clean copy.
 *
 * @param options The copy, the commits, the checks and the time box.
 * @returns The figures, or undefined when the change touches no source file.
 */
export async function proveChange(options: ProveChangeOptions): Promise<ChangeProof | undefined> {
  const started = performance.now();
  const { root, checks, timeoutMs, signal } = options;
  const changed = (await changedLines(options.git, options.base, options.head) ?? [])
    // The repository's own source in any language (its change can be undone); documentation
    // and data are not proof's.
    .filter((file) => options.isSource(file.path) && programLanguage(file.path) !== undefined);
  if (changed.length === 0 || checks.length === 0) return undefined;
  const sources = new Map<string, string>();
  for (const file of changed) {
    const text = await Deno.readTextFile(path.join(root, file.path)).catch(() => undefined);
    if (text !== undefined) sources.set(path.join(root, file.path), text);
  }
  // One run of the suite with every runtime recording what ran.
  const probe = await openCoverageProbe(root);
  let suiteMs: number;
  let measured: Awaited<ReturnType<typeof probe.collect>>;
  try {
    const suiteStarted = performance.now();
    await runChecks(checks, {
      cwd: root,
      timeoutMs,
      env: probe.env,
      signal,
      buildFolder: options.buildFolder,
    }, false);
    suiteMs = options.suiteMs ?? Math.round(performance.now() - suiteStarted);
    measured = await probe.collect(sources);
  } finally {
    await probe.dispose();
  }
  const files: FileProof[] = [];
  const toMutate: Mutant[] = [];
  // Each hunk undone: tests that pass with it undone do not pin the change.
  const undo: Mutant[] = [];
  for (const file of changed) {
    const absolute = path.join(root, file.path);
    const source = sources.get(absolute);
    if (source === undefined) continue;
    undo.push(...revertMutants(file.path, source, file.hunks));
    if (file.lines.length === 0) continue;
    const lines = source.split("\n");
    const code = file.lines.filter((line) => !inertLine(lines[line - 1] ?? ""));
    const coverage = measured.coverage.get(absolute);
    if (!coverage) {
      files.push({ path: file.path, changed: code.length, neverRun: [] });
      // Not measured: its code lines are mutated, whether the tests run them or not.
      toMutate.push(...lineMutants(file.path, source, code));
      continue;
    }
    const executable = code.filter((line) => coverage.executable.has(line));
    const ran = executable.filter((line) => coverage.run.has(line));
    files.push({
      path: file.path,
      changed: executable.length,
      run: ran.length,
      neverRun: executable.filter((line) => !coverage.run.has(line)),
      measuredBy: measured.runtimeOf.get(absolute),
    });
    toMutate.push(...lineMutants(file.path, source, ran));
  }
  // Each changed line's first mutant, then each hunk undone, then the lines' other mutants.
  const spread = spreadByLine(toMutate);
  const lineCount = new Set(toMutate.map((mutant) => `${mutant.path}:${mutant.line}`)).size;
  const ordered = [...spread.slice(0, lineCount), ...undo, ...spread.slice(lineCount)];
  const mutants = await tryMutants(ordered, {
    root,
    checks,
    timeoutMs: Math.min(timeoutMs, Math.max(30_000, suiteMs * 3)),
    budgetMs: suiteMs * (options.budgetFactor ?? 2),
    signal,
    buildFolder: options.buildFolder,
  });
  const measuredFiles = files.filter((file) => file.run !== undefined);
  const executable = measuredFiles.reduce((sum, file) => sum + file.changed, 0);
  const ran = measuredFiles.reduce((sum, file) => sum + (file.run ?? 0), 0);
  return {
    files,
    ...(executable > 0 ? { coverage: ran / executable } : {}),
    ...(mutants.tried > 0 ? { mutationScore: mutants.killed / mutants.tried } : {}),
    mutants,
    measuredBy: measured.recorded,
    suiteMs,
    durationMs: Math.round(performance.now() - started),
  };
}

async function tryMutants(
  mutants: Mutant[],
  options: {
    root: string;
    checks: RepoCheck[];
    timeoutMs: number;
    budgetMs: number;
    signal?: AbortSignal;
    buildFolder?: (check: RepoCheck) => Promise<string | undefined>;
  },
): Promise<MutantTally> {
  const tally: MutantTally = {
    generated: mutants.length,
    tried: 0,
    killed: 0,
    survived: [],
    invalid: 0,
    untried: 0,
  };
  const started = performance.now();
  let longest = 0;
  for (let index = 0; index < mutants.length; index++) {
    const elapsed = performance.now() - started;
    // The next mutant must fit in the box (at the pace of the slowest so far); the first always runs.
    if (options.signal?.aborted || (index > 0 && elapsed + longest > options.budgetMs)) {
      tally.untried = mutants.length - index;
      break;
    }
    const mutant = mutants[index];
    const file = path.join(options.root, mutant.path);
    const original = await Deno.readTextFile(file);
    const runStarted = performance.now();
    let runs: CheckRun[];
    try {
      await Deno.writeTextFile(file, applyMutant(original, mutant));
      runs = await runChecks(options.checks, {
        cwd: options.root,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        buildFolder: options.buildFolder,
      }, true);
    } finally {
      await Deno.writeTextFile(file, original);
    }
    longest = Math.max(longest, performance.now() - runStarted);
    if (options.signal?.aborted) {
      tally.untried = mutants.length - index;
      break;
    }
    const failed = runs.find((run) => !run.green);
    if (failed && BUILD_FAILED.test(failed.tail)) {
      tally.invalid++;
      continue;
    }
    tally.tried++;
    if (failed) tally.killed++;
    else tally.survived.push({ path: mutant.path, line: mutant.line, change: mutant.description });
  }
  return tally;
}
