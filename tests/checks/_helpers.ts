/**
 * Helpers shared by the checker tests: definitions, contexts and checkers
 * that count their calls.
 *
 * @module
 */

import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import type {
  TaskCompletionChecker,
  TaskCompletionContext,
  TaskCompletionResult,
} from "../../agents/checks/checker_contract.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { checkerContext } from "../../agents/checks/context.ts";

/** An agent folder that does not exist (checkers that need none). */
export const NOWHERE: URL = new URL("file:///nonexistent/finishline-agent/");

/**
 * A definition parsed the way agent.json files are: an `iterate` agent named
 * `demo` with a cap of 3.
 *
 * @param extra Top-level fields; `behavior` is merged into the default one.
 * @returns The definition.
 */
export function definitionOf(extra: Record<string, unknown> = {}): AgentDefinition {
  const behavior = (extra.behavior ?? {}) as Record<string, unknown>;
  return parseDefinition(
    JSON.stringify({
      name: "demo",
      ...extra,
      behavior: { completionConfig: { maxIterations: 3 }, ...behavior },
    }),
    { displayPath: ".agent/demo/agent.json" },
  );
}

/**
 * A checker context with an empty summary, built the way the runner builds
 * it; override what a test needs (`summary`, `previous`, `cwd` and `git`
 * shape the session and the filesystem too).
 *
 * @param overrides Fields to set.
 * @returns The context.
 */
export function contextOf(overrides: Partial<TaskCompletionContext> = {}): TaskCompletionContext {
  const summary = overrides.summary ?? emptySummary(1);
  const built = checkerContext({
    current: { summary, messages: [] },
    previous: (overrides.previous ?? []).map((earlier) => ({ summary: earlier, messages: [] })),
    definition: overrides.definition ?? definitionOf(),
    cwd: overrides.cwd ?? Deno.cwd(),
    agentDir: overrides.agentDir ?? NOWHERE,
    git: overrides.git,
    backend: overrides.backend,
    stopReason: overrides.stopReason,
    completeTask: overrides.completeTask,
    signal: overrides.signal,
  });
  return { ...built, ...overrides };
}

/** A checker that counts how often it was asked. */
export interface CountingChecker extends TaskCompletionChecker {
  /** How often `check` ran. */
  calls: number;
}

/**
 * A checker that answers `result` (or throws it, when it is an Error) and counts its calls.
 *
 * @param name The checker's name.
 * @param result What it answers.
 * @returns The checker.
 */
export function counting(name: string, result: TaskCompletionResult | Error): CountingChecker {
  const checker: CountingChecker = {
    name,
    calls: 0,
    check() {
      checker.calls++;
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return checker;
}
