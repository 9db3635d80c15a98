/**
 * A checker context for unit tests of checkers: one empty iteration, an
 * in-memory filesystem, no backend; set what the test needs.
 *
 * @module
 */

import { checkerContext } from "../checks/context.ts";
import type { TaskCompletionContext } from "../checks/checker_contract.ts";
import { parseDefinition } from "../definition/parse.ts";
import { emptySummary } from "../record/iteration.ts";
import { InMemoryFilesystem } from "./in_memory_filesystem.ts";

/**
 * A context as the runner would build it for iteration 1 of an agent named
 * `test`, with an empty {@linkcode InMemoryFilesystem} and no adapter;
 * `overrides` replace fields (a `summary` or `previous` given here shapes
 * the session too).
 *
 * @param overrides Fields to set.
 * @returns The context.
 * @example The design's own test, in TypeScript
 * ```ts
 * import assert from "node:assert/strict";
 * import { type TaskCompletionContext, TaskCompletionResult } from "@finishline/agents";
 * import { checkerTestContext, InMemoryFilesystem } from "@finishline/agents/testing";
 *
 * class FileExistsChecker {
 *   #required: string[];
 *   constructor(options: { requiredFiles: string[] }) {
 *     this.#required = options.requiredFiles;
 *   }
 *   check(context: TaskCompletionContext): TaskCompletionResult {
 *     const fs = context.filesystem;
 *     if (fs === undefined) return TaskCompletionResult.ok("No filesystem to check.");
 *     const missing = this.#required.filter((file) => !fs.exists(file));
 *     if (missing.length > 0) {
 *       return TaskCompletionResult.incomplete(`Missing required files: ${missing.join(", ")}`);
 *     }
 *     return TaskCompletionResult.ok("All required files exist.");
 *   }
 * }
 *
 * const context = checkerTestContext({ filesystem: new InMemoryFilesystem() });
 * const result = new FileExistsChecker({ requiredFiles: ["output.txt"] }).check(context);
 * assert.equal(result.complete, false);
 * assert.match(result.feedback ?? "", /output\.txt/);
 * ```
 */
export function checkerTestContext(
  overrides: Partial<TaskCompletionContext> = {},
): TaskCompletionContext {
  const summary = overrides.summary ?? emptySummary(1);
  const built = checkerContext({
    current: { summary, messages: [] },
    previous: (overrides.previous ?? []).map((earlier) => ({ summary: earlier, messages: [] })),
    definition: overrides.definition ??
      parseDefinition(
        '{ "name": "test", "behavior": { "completionConfig": { "maxIterations": 1 } } }',
        { displayPath: "test/agent.json" },
      ),
    cwd: overrides.cwd ?? "/memory",
    agentDir: overrides.agentDir ?? new URL("file:///memory/.agent/test/"),
    stopReason: overrides.stopReason,
    completeTask: overrides.completeTask,
    filesystem: overrides.filesystem ?? new InMemoryFilesystem(),
  });
  return { ...built, ...overrides };
}
