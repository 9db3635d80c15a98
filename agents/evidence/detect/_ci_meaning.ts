/**
 * What one command of CI means locally (see `_ci_commands.ts`): the types
 * alone, shared by the command readers.
 *
 * @module
 */

import type { TestRunner } from "../run/test_report.ts";
import type { Kind } from "./_detect_scan.ts";

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
