/**
 * `custom` checkers: a module in the agent folder whose default export is a
 * checker object or a factory `(options) => checker`.
 *
 * @module
 */

import { importAgentModule, runFactory } from "../agent_module.ts";
import { UsageError } from "../errors.ts";
import type { TaskCompletionChecker } from "./types.ts";

/**
 * Load a custom checker.
 *
 * @param path Module path relative to the agent folder.
 * @param options Agent folder, cwd, the checker's options and its name.
 * @returns The checker.
 * @throws {UsageError} For a module that cannot load or has the wrong shape.
 */
export async function loadCustomChecker(
  path: string,
  options: {
    agentDir: URL;
    cwd: string;
    options?: Record<string, unknown>;
    name?: string;
    field: string;
  },
): Promise<TaskCompletionChecker> {
  const module = await importAgentModule(path, "checker", options);
  let candidate = module.exports.default;
  if (typeof candidate === "function") {
    const factory = candidate;
    candidate = await runFactory(module, () => factory(options.options ?? {}));
  }
  if (
    typeof candidate !== "object" || candidate === null ||
    typeof (candidate as { check?: unknown }).check !== "function"
  ) {
    throw new UsageError(
      `Cannot load custom checker "${module.shown}": expected a default export that is a checker ({ check(context) }) or a factory (options) => checker`,
    );
  }
  const checker = candidate as { name?: unknown; check: TaskCompletionChecker["check"] };
  return {
    name: options.name ??
      (typeof checker.name === "string" && checker.name ? checker.name : `custom:${path}`),
    check: (context) => checker.check.call(checker, context),
  };
}
