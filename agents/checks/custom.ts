/**
 * `custom` checkers: a module in the agent folder. Its default export is a
 * checker object (`{ check(context) }`), a class (instantiated with the
 * check's `options`: `new Checker(options)`), or a factory
 * `(options) => checker` (which may also return a class instance or a check
 * function). A module without a default export may export `check` itself
 * (and `name`).
 *
 * @module
 */

import { basename, extname } from "node:path";
import { type AgentModule, importAgentModule, runFactory } from "../support/module_loading.ts";
import { UsageError } from "../support/errors.ts";
import type { TaskCompletionChecker } from "./checker_contract.ts";

type CheckFunction = TaskCompletionChecker["check"];

/**
 * Load a custom checker.
 *
 * @param path Module path relative to the agent folder.
 * @param options Agent folder, cwd, the checker's options and its name.
 * @returns The checker, named by `options.name`, else its own `name`, else its file's name.
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
  const settings = options.options ?? {};
  const exported = "default" in module.exports ? module.exports.default : moduleChecker(module);
  let candidate: unknown = exported;
  if (isClass(exported)) {
    candidate = await runFactory(module, () => new exported(settings));
  } else if (typeof exported === "function") {
    candidate = await runFactory(module, () => exported(settings));
  }
  if (typeof candidate === "function") candidate = { check: candidate };
  if (!isChecker(candidate)) {
    throw new UsageError(
      `Cannot load custom checker "${module.shown}": expected a default export that is a checker ({ check(context) }), a class, or a factory (options) => checker`,
    );
  }
  const checker = candidate;
  const own = typeof checker.name === "string" && checker.name ? checker.name : undefined;
  return {
    name: options.name ?? own ?? basename(path, extname(path)),
    check: (context) => checker.check.call(checker, context),
  };
}

/** The module itself as a checker, when it exports `check` (and no default). */
function moduleChecker(module: AgentModule): unknown {
  const { check, name } = module.exports;
  return typeof check === "function" ? { name, check } : undefined;
}

/** Classes (and constructor functions with a `check` method) are instantiated, not called. */
function isClass(value: unknown): value is new (options: Record<string, unknown>) => unknown {
  if (typeof value !== "function") return false;
  if (/^class[\s{]/.test(Function.prototype.toString.call(value))) return true;
  return typeof (value.prototype as { check?: unknown } | undefined)?.check === "function";
}

function isChecker(value: unknown): value is { name?: unknown; check: CheckFunction } {
  return typeof value === "object" && value !== null &&
    typeof (value as { check?: unknown }).check === "function";
}
