/**
 * What check detection finds: the checks, the CI commands shown as hints,
 * the candidates skipped, and the files that define the checks. The types
 * alone, shared by the detectors and `detect.ts`.
 *
 * @module
 */

import type { TestRunner } from "../run/test_report.ts";
import type { BuildSystem } from "../run/build_folder.ts";

/** One check found in the repository. */
export interface DetectedCheck {
  /** Unique name, usually the command itself ("npm test", "deno task check"); "pytest" for `python3 -m pytest`. */
  name: string;
  /** Shell command run with `sh -c` at the repository root. */
  command: string;
  /** Where it came from, e.g. `package.json scripts.test`, `go.mod` or `.github/workflows/ci.yml job "test" step "Check"`. */
  source: string;
  /** Why it was chosen, one line, e.g. `package.json has scripts.test; pnpm-lock.yaml names pnpm`. */
  why: string;
  /** The executable the command starts first, for a preflight that checks it is on PATH. */
  executable: string;
  /** The test runner whose output names failing tests, when the script text tells it; absent otherwise. */
  runner?: TestRunner;
  /**
   * The build system whose build folder the command keeps in
   * `$FINISHLINE_BUILD_DIR` when finishline sets it (in its copies), so that
   * a claim's build starts from the baseline's; absent for every other check.
   */
  buildFolder?: BuildSystem;
  /** The command's configure and build steps alone, in the same folder: no tests run. */
  buildOnly?: string;
  /**
   * What kind of check it is: `build` for a build CI runs (its failure fails
   * CI), `gate` for a script or target that runs several checks (`check`,
   * `verify`, `all`).
   */
  kind: "test" | "lint" | "typecheck" | "build" | "gate";
  /**
   * When it runs: `claim` at every claim (the inner loop's commands),
   * `final` once before the run ends (slow variants CI runs); set by
   * ranking, after detection.
   */
  tier?: "claim" | "final";
  /** Why it has its tier, one line. */
  tierWhy?: string;
}

/** A CI command shown to the user as a hint, never run: finishline does not know what it does. */
export interface CheckHint {
  /** Repository-relative path of the workflow file. */
  file: string;
  /** The job's id. */
  job: string;
  /** The step's name, or the first line of its `run:` when it has none. */
  step: string;
  /** The command (or the whole `run:` text when it could not be split into commands). */
  run: string;
  /** Why it is not run. */
  why?: string;
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
  /**
   * The checks, in the order they run: deno, package.json, Makefile, Python,
   * Cargo, Go, then the CI gate's (each before the first check CI runs after it).
   */
  checks: DetectedCheck[];
  /** CI commands finishline does not know (hints only). */
  hints: CheckHint[];
  /** Candidates that were looked at and skipped, with why. */
  skipped: SkippedCandidate[];
  /** Repository-relative paths of the existing files that define the checks, so the runner can protect them. */
  configFiles: string[];
}
