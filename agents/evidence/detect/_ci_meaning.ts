/**
 * What one command of CI means locally (see `_ci_commands.ts`): the types
 * (a command's meaning, and the sequences of commands of a job or a guide),
 * and the few helpers every command reader uses to say it (a check, setup,
 * an excerpt of a script, a package manager's option).
 *
 * @module
 */

import type { TestRunner } from "../run/test_report.ts";
import { type Kind, quote } from "./_detect_scan.ts";

/** A command that is a check. */
export interface GateCheck {
  /** The shell command, run at the repository root. */
  command: string;
  /** The executable it starts (for the preflight). */
  executable: string;
  /** What kind of check it is. */
  kind: Kind;
  /** The runner whose output names failing tests. */
  runner?: TestRunner;
  /** What the repository says about it, e.g. `package.json has scripts.check ("tsc && eslint .")`. */
  facts: string;
  /** The names it is known by (see `Scan.keys`). */
  keys: string[];
  /** Files that define it. */
  configFiles: string[];
  /** The script or target name, for telling a gate from a build in a guide. */
  task: string;
  /** Other executables it starts (a make recipe's commands), which must be installed too. */
  requires?: string[];
}

/** What a command means. */
export type Meaning =
  | { type: "check"; check: GateCheck }
  | { type: "cd"; dir: string }
  | { type: "setup"; why: string }
  | { type: "quiet" }
  | { type: "same"; keys: string[]; why: string }
  | { type: "skip"; why: string }
  | { type: "unknown"; why: string };

/** One command of a sequence, with where it was written and what it means. */
export interface Item {
  /** For skipped entries and new checks' sources: `file job "x" step "y"` or `CONTRIBUTING.md line 3`. */
  source: string;
  /** For why: `.github/workflows/ci.yml, job "x"` or `CONTRIBUTING.md`. */
  place: string;
  /** The step's name (for hints). */
  step: string;
  /** The command as written. */
  text: string;
  /** The folder it runs in, repository-relative. */
  dir: string;
  meaning: Meaning;
}

/** The commands of one job, or of one guide, in order. */
export interface Sequence {
  file: string;
  job: string;
  guide: boolean;
  items: Item[];
}

/** Why a command that installs or prepares is not a check. */
export const SETUP_WHY: string = "is setup (it installs or prepares), not a check";

/** A command that is a check, with the runner that names its failing tests when there is one. */
export function check(fields: Omit<GateCheck, "runner">, runner: TestRunner | undefined): Meaning {
  return { type: "check", check: runner === undefined ? fields : { ...fields, runner } };
}

/** A short quotation of a script for the why. */
export function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return quote(line.length > 60 ? `${line.slice(0, 57)}...` : line);
}

/** Split `--name=value`, `--name value` and `-n value` options a package manager takes. */
export function takeOption(args: string[], index: number, names: string[]): string | undefined {
  const word = args[index];
  for (const name of names) {
    if (word === name) return args[index + 1];
    if (name.startsWith("--") && word.startsWith(`${name}=`)) return word.slice(name.length + 1);
  }
  return undefined;
}
