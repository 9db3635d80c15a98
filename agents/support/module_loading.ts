/**
 * Modules from the agent folder: custom completion handlers and custom
 * checkers are imported only from inside `.agent/<name>/`, symlinks
 * included, and every failure is a {@linkcode UsageError} naming the file.
 *
 * @module
 */

import { confinePath } from "./confine.ts";
import { firstLine, UsageError } from "./errors.ts";
import { displayPathOf } from "./resource.ts";

/** Where a module path comes from, for the messages. */
export interface AgentModuleOptions {
  /** The agent folder URL (trailing slash). */
  agentDir: URL;
  /** The working directory, to show paths relative to it. */
  cwd: string;
  /** The agent.json field that names the module. */
  field: string;
}

/** A module imported from the agent folder. */
export interface AgentModule {
  /** The module's exports. */
  exports: Record<string, unknown>;
  /** Its path as messages show it. */
  shown: string;
  /** What it holds (`handler`, `checker`), as messages name it. */
  kind: string;
}

/**
 * Resolve a module path from agent.json inside the agent folder, refusing
 * anything that leaves it (also through symlinks), with {@linkcode confinePath}.
 *
 * @param agentDir The agent folder URL (trailing slash).
 * @param path The relative path from agent.json.
 * @param options The definition field and the working directory, for messages.
 * @returns The module URL.
 * @throws {UsageError} For a path outside the folder, a missing file or a folder.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveInsideAgentDir } from "./module_loading.ts";
 *
 * const agentDir = new URL("https://example.com/.agent/x/");
 * const url = await resolveInsideAgentDir(agentDir, "checks/size.ts", {
 *   field: "verify.checks[0].path",
 *   cwd: "/work",
 * });
 * assert.equal(url.href, "https://example.com/.agent/x/checks/size.ts");
 * await assert.rejects(
 *   resolveInsideAgentDir(agentDir, "../y/size.ts", { field: "path", cwd: "/work" }),
 *   /must stay inside the agent folder/,
 * );
 * ```
 */
export async function resolveInsideAgentDir(
  agentDir: URL,
  path: string,
  options: { field: string; cwd: string },
): Promise<URL> {
  return (await confinePath(agentDir, path, options)).url;
}

/**
 * Import a module from inside the agent folder.
 *
 * @param path The module path relative to the agent folder.
 * @param kind What it holds (`handler`, `checker`), for messages.
 * @param options The agent folder, the working directory and the agent.json field.
 * @returns The module's exports and its path as shown.
 * @throws {UsageError} For a path outside the folder, a missing file or a module that fails to load.
 */
export async function importAgentModule(
  path: string,
  kind: string,
  options: AgentModuleOptions,
): Promise<AgentModule> {
  const url = await resolveInsideAgentDir(options.agentDir, path, options);
  const shown = displayPathOf(url, options.cwd);
  try {
    return { exports: await import(url.href), shown, kind };
  } catch (error) {
    throw new UsageError(`Cannot load custom ${kind} "${shown}": ${firstLine(error)}`, {
      cause: error,
    });
  }
}

/**
 * Run the factory an agent module exports, turning its failure into a
 * {@linkcode UsageError} that names the module.
 *
 * @param module The module the factory comes from.
 * @param build Calls the factory.
 * @returns What the factory built.
 * @throws {UsageError} When the factory throws or rejects.
 */
export async function runFactory<T>(module: AgentModule, build: () => T | Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (error) {
    throw new UsageError(
      `Custom ${module.kind} factory "${module.shown}" failed: ${firstLine(error)}`,
      { cause: error },
    );
  }
}
