/**
 * Helpers shared by the detection tests: temp repositories from a map of
 * files, and a machine that answers `tox --version` and `python3 --version`
 * as told.
 *
 * @module
 */

import { dirname, join } from "node:path";
import {
  detectChecks,
  type Detection,
  type DetectOptions,
} from "../../../agents/evidence/detect/detect.ts";
import type { ToolResult } from "../../../agents/support/process.ts";
import { type TempDir, tempDir } from "../../_helpers.ts";

/**
 * A temp repository holding the given files (paths relative to its root).
 *
 * @param files Text by path.
 * @returns The folder, removed when disposed.
 */
export async function repo(files: Record<string, string>): Promise<TempDir> {
  const dir = await tempDir("finishline-detect-");
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(dir.path, path)), { recursive: true });
    await Deno.writeTextFile(join(dir.path, path), text);
  }
  return dir;
}

/** What the pretend machine has installed. */
export interface Machine {
  /** `tox --version` output, or undefined when tox is not installed. */
  tox?: string;
  /** `python3 --version` output, or undefined when python3 is not installed. */
  python?: string;
  /** Cargo components installed (`clippy`, `fmt`). @default ["clippy", "fmt"] */
  cargo?: string[];
  /** Executables not on PATH; every one of {@linkcode TOOLS} else is. @default [] */
  missing?: string[];
}

/** The tools a pretend machine has on its PATH unless told otherwise. */
export const TOOLS: readonly string[] = [
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "bun",
  "bunx",
  "make",
  "cargo",
  "go",
  "deno",
  "python3",
  "tox",
  "nox",
];

/**
 * A folder of stand-in executables, one for each tool the machine has, for
 * {@linkcode DetectOptions.path}.
 *
 * @param machine What is installed.
 * @returns The folder, removed when disposed.
 */
export async function binFolder(machine: Machine): Promise<TempDir> {
  const dir = await tempDir("finishline-detect-bin-");
  for (const tool of TOOLS.filter((name) => !(machine.missing ?? []).includes(name))) {
    await Deno.writeTextFile(join(dir.path, tool), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  }
  return dir;
}

/** A machine with Python 3.11 and no tox: what these tests assume unless told. */
export const NO_TOX: Machine = { python: "Python 3.11.7" };

/**
 * A probe that answers as the machine is described, and records the questions.
 *
 * @param machine What is installed.
 * @returns The probe and the questions asked.
 */
export function machine(
  machine: Machine,
): { probe: NonNullable<DetectOptions["probe"]>; asked: string[] } {
  const asked: string[] = [];
  const answer = (stdout: string | undefined): ToolResult =>
    stdout === undefined
      ? { code: 127, stdout: "", stderr: "command not found" }
      : { code: 0, stdout, stderr: "" };
  const probe = (executable: string, args: string[]): Promise<ToolResult> => {
    asked.push([executable, ...args].join(" "));
    if (executable === "tox") return Promise.resolve(answer(machine.tox));
    if (executable === "python3") return Promise.resolve(answer(machine.python));
    if (executable === "cargo") {
      const component = args.find((arg) => !arg.startsWith("+") && arg !== "--version");
      const installed = machine.cargo ?? ["clippy", "fmt"];
      return Promise.resolve(
        answer(component === undefined || installed.includes(component) ? "1.0.0" : undefined),
      );
    }
    return Promise.resolve(answer(undefined));
  };
  return { probe, asked };
}

/**
 * Detect in a temp repository of the given files, on a pretend machine.
 *
 * @param files Text by path.
 * @param on The machine. @default NO_TOX
 * @returns The detection.
 */
export async function detectIn(
  files: Record<string, string>,
  on: Machine = NO_TOX,
): Promise<Detection> {
  await using dir = await repo(files);
  await using bin = await binFolder(on);
  return await detectChecks(dir.path, { probe: machine(on).probe, path: bin.path });
}
