/**
 * A CI job whose commands finishline does not know (`./scripts/smoke.sh`,
 * `ruby -Ilib bin/selftest`) runs as one check: the job's commands in CI's
 * order, setup left out, each in its folder. Only when the job needs no
 * secrets, services or network, and every program it starts is installed
 * here or is a file of the repository; otherwise its commands stay listed
 * as not run, with why. Test, lint and type-check commands the job also runs
 * are checks of their own and are not repeated in it.
 *
 * @module
 */

import { join } from "node:path";
import { inFolder, knownCheck, onPath, type Scan } from "./_detect_scan.ts";
import type { Meaning } from "./_ci_commands.ts";
import type { DetectedCheck } from "./detected.ts";

/** One command of a job, as the composite reads it. */
export interface JobCommand {
  /** The command as written. */
  text: string;
  /** The folder it runs in, repository-relative. */
  dir: string;
  /** What it means. */
  meaning: Meaning;
}

/** Reasons a job's skipped step makes the whole job unfit to run here. */
const NEEDS_AWAY =
  /secrets|\bsecret\b|network|docker|deploy|publish|uploads|\$\{\{|services|CI sets|browser|installs system/;

/** Words sh reads itself. */
const SHELL_WORDS = new Set([
  "for",
  "if",
  "while",
  "until",
  "case",
  "{",
  "(",
  "set",
  "export",
  "cd",
  "test",
  "[",
]);

/** The first program of a command, without assignments and `env`, `time`, `sudo`. */
function programOf(text: string): string | undefined {
  const words = text.trim().split(/\s+/);
  while (
    words.length > 0 &&
    (/^[A-Za-z_]\w*=/.test(words[0]) || ["time", "env", "command"].includes(words[0]))
  ) {
    words.shift();
  }
  return words[0]?.replace(/^["']|["']$/g, "");
}

/**
 * The composite check of a job's unknown commands, or why there is none.
 *
 * @param scan The detection.
 * @param job The job's file, id and commands in order.
 * @returns The check, or the reason its unknown commands stay hints.
 */
export async function compositeCheck(
  scan: Scan,
  job: { file: string; id: string; commands: JobCommand[] },
): Promise<{ check: DetectedCheck } | { why: string } | undefined> {
  const unknown = job.commands.filter((command) => command.meaning.type === "unknown");
  if (unknown.length === 0) return undefined;
  const away = job.commands.find((command) =>
    command.meaning.type === "skip" && NEEDS_AWAY.test(command.meaning.why)
  );
  if (away !== undefined && away.meaning.type === "skip") {
    return { why: `the job needs what is not here (${away.meaning.why})` };
  }
  const noGit = unknown.find((command) =>
    command.meaning.type === "unknown" && /has no \.git$/.test(command.meaning.why)
  );
  if (noGit !== undefined && noGit.meaning.type === "unknown") {
    return {
      why: `the job runs ${JSON.stringify(noGit.text.trim().split("\n")[0])}: ${noGit.meaning.why}`,
    };
  }
  // `cargo miri`, `cargo fuzz`, `go generate`: a known tool's subcommand is a plugin or
  // toolchain CI installs (or a command that rewrites files), not a program to run as it is.
  const plugin = unknown.find((command) =>
    command.meaning.type === "unknown" &&
    /is not a check finishline knows|is not a script run|CI installs/.test(command.meaning.why)
  );
  if (plugin !== undefined) {
    return {
      why: `the job runs ${
        JSON.stringify(plugin.text.trim().split("\n")[0])
      }, a tool's subcommand or plugin that CI installs`,
    };
  }
  const last = job.commands.lastIndexOf(unknown[unknown.length - 1]);
  const parts: string[] = [];
  for (const command of job.commands.slice(0, last + 1)) {
    const { meaning } = command;
    if (meaning.type === "check" && ["test", "lint", "typecheck"].includes(meaning.check.kind)) {
      continue;
    }
    // CI's steps of a check already made (cmake, ctest, rake): that check runs them.
    if (meaning.type === "same") {
      const known = knownCheck(scan, meaning.keys);
      if (known === undefined || ["test", "lint", "typecheck"].includes(known.kind)) continue;
    }
    if (!["check", "same", "unknown"].includes(meaning.type)) continue;
    if (meaning.type === "unknown") {
      const program = programOf(command.text);
      if (program === undefined) continue;
      // Shell syntax (a loop CI could not split) is sh's own, not a program to find.
      const syntax = SHELL_WORDS.has(program);
      const local = program.includes("/");
      const found = syntax
        ? true
        : local
        ? await Deno.stat(join(scan.root, command.dir, program)).then(
          (info) => info.isFile,
          () => false,
        )
        : await onPath(scan, program);
      if (!found) {
        return {
          why: `the job runs ${program}, which is ${
            local ? "not a file of the repository" : "not installed here"
          }`,
        };
      }
    }
    const text = command.text.trim();
    // A command of several lines (a script CI could not split) runs as sh would run it.
    const line = /\n/.test(text) ? `{\n${text}\n}` : text;
    parts.push(command.dir === "." ? line : `(${inFolder(command.dir, line)})`);
  }
  const names = unknown.map((command) => command.text.trim().split("\n")[0]);
  return {
    check: {
      name: `CI job ${JSON.stringify(job.id)} (${job.file})`,
      command: parts.join(" && "),
      source: `${job.file} job ${JSON.stringify(job.id)}`,
      why: `CI runs commands finishline does not know (${
        names.join(", ")
      }): the job's commands run as one check, in CI's order, setup and its own test, lint and type checks left out`,
      executable: "sh",
      kind: "gate",
    },
  };
}
