/**
 * Before any session: can this run finish? A check whose command cannot
 * start, tools that cannot run the checks or edit files, and `--create-pr`
 * without a remote or a logged-in gh are usage errors, with nothing spent.
 *
 * @module
 */

import path from "node:path";
import type { SessionPermissionMode } from "../../backends/port.ts";
import type { AgentDefinition } from "../../definition/definition_types.ts";
import { UsageError } from "../../support/errors.ts";
import type { GitRepo } from "../../git/repo.ts";
import type { GitHubCli } from "../../github/port.ts";
import type { RunChecks } from "./checks_setup.ts";

/** What {@linkcode preflight} checks. */
export interface PreflightInput {
  /** The agent definition. */
  definition: AgentDefinition;
  /** Where the definition came from, for messages. */
  displayPath: string;
  /** The detected checks. */
  checks: RunChecks;
  /** The session's permission mode. */
  permissionMode: SessionPermissionMode;
  /** Whether the agent is expected to change code (an issue, or checks to satisfy). */
  changesCode: boolean;
  /** `--create-pr`: the repository must have a remote and gh must be logged in. */
  createPr?: { repo: GitRepo; github: GitHubCli };
  /** PATH to look executables up in. @default Deno.env.get("PATH") */
  path?: string;
}

const SHELL_BUILTINS = new Set([
  "cd",
  "test",
  "[",
  "echo",
  "printf",
  "true",
  "false",
  "exit",
  "export",
  "set",
  ":",
  ".",
  "source",
  "exec",
  "command",
  "if",
  "for",
  "while",
  "!",
]);

/**
 * Before any session: can this run finish? A check whose command cannot
 * start, tools that cannot run the checks or edit files, and `--create-pr`
 * without a remote or a logged-in gh are usage errors; nothing is spent.
 *
 * @param input The definition, checks, permissions and pull request settings.
 * @returns Resolves when the run can finish.
 * @throws {UsageError} Naming what is missing and what to do.
 */
export async function preflight(input: PreflightInput): Promise<void> {
  const { definition, displayPath, checks, permissionMode } = input;
  const searchPath = input.path ?? Deno.env.get("PATH") ?? "";
  const commands: Array<{ name: string; executable: string; source: string }> = [];
  for (const check of checks.detection?.checks ?? []) {
    commands.push({ name: check.name, executable: check.executable, source: check.source });
  }
  for (const [index, check] of definition.verify.checks.entries()) {
    if (check.type !== "command") continue;
    const first = check.command.trim().match(/^[A-Za-z0-9_.\/+-]+(?=\s|$)/)?.[0];
    if (!first || SHELL_BUILTINS.has(first)) continue;
    commands.push({
      name: check.name ?? check.command,
      executable: first,
      source: `"verify.checks[${index}].command" in "${displayPath}"`,
    });
  }
  for (const command of commands) {
    if (!(await findExecutable(command.executable, searchPath))) {
      throw new UsageError(
        `Check "${command.name}" (from ${command.source}) cannot start: "${command.executable}" is not installed or not on PATH; install it, or configure "verify.checks" (or "verify.detect": false) in "${displayPath}"`,
      );
    }
  }
  const bypass = permissionMode === "bypassPermissions";
  const tools = definition.behavior.allowedTools;
  const hasBash = tools.some((tool) => tool === "Bash" || tool.startsWith("Bash("));
  if (!bypass && commands.length > 0 && !hasBash) {
    throw new UsageError(
      `"behavior.allowedTools" in "${displayPath}" has no "Bash", so the agent cannot run the checks (${
        commands.map((command) => `"${command.name}"`).join(", ")
      }) it must make pass: add "Bash"`,
    );
  }
  const canEdit = bypass || permissionMode === "acceptEdits" || hasBash ||
    tools.some((tool) => ["Edit", "Write", "MultiEdit", "NotebookEdit"].includes(tool));
  if (input.changesCode && !canEdit) {
    throw new UsageError(
      `"behavior.allowedTools" in "${displayPath}" lets the agent edit no file (no "Edit", "Write" or "Bash", and permission mode "${permissionMode}"), but this run expects code changes: add "Edit" and "Write"`,
    );
  }
  if (input.createPr) {
    const remotes = await input.createPr.repo.exec(["remote"]);
    if (remotes.code !== 0 || remotes.stdout.trim() === "") {
      throw new UsageError(
        `Flag "--create-pr" needs a remote to push to, and "${input.createPr.repo.root}" has none: add one with "git remote add origin URL"`,
      );
    }
    const pushUrl = await input.createPr.repo.exec(["remote", "get-url", "--push", "origin"]);
    if (pushUrl.code !== 0) {
      throw new UsageError(
        `Flag "--create-pr" pushes to the remote "origin", and "${input.createPr.repo.root}" has no such remote: add it with "git remote add origin URL"`,
      );
    }
    await input.createPr.github.preflight();
  }
}

async function findExecutable(executable: string, searchPath: string): Promise<boolean> {
  const candidates = executable.includes("/")
    ? [executable]
    : searchPath.split(":").filter((dir) => dir !== "").map((dir) => path.join(dir, executable));
  for (const candidate of candidates) {
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // not here
    }
  }
  return false;
}
