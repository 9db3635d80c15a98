/**
 * Building the configured checkers (`verify` in agent.json) and running
 * them as one verification.
 *
 * @module
 */

import type { VerifyConfig } from "../definition/definition_types.ts";
import { CommandChecker } from "./command.ts";
import { CompositeChecker } from "./composite.ts";
import { loadCustomChecker } from "./custom.ts";
import { FilesChecker } from "./files.ts";
import { GitChecker } from "./git_checker.ts";
import { JudgeChecker } from "./judge.ts";
import { PlanChecker } from "./plan.ts";
import type {
  TaskCompletionChecker,
  TaskCompletionContext,
  VerificationRecord,
} from "./checker_contract.ts";

/** Options of {@linkcode buildVerifier}. */
export interface BuildVerifierOptions {
  /** The agent folder, for custom checkers. */
  agentDir: URL;
  /** Working directory. */
  cwd: string;
  /** Paths the git checker ignores (finishline's own files). @default [] */
  ignore?: string[];
}

/**
 * Build the composite checker a `verify` config describes.
 *
 * @param config The `verify` section.
 * @param options Agent folder and cwd.
 * @returns The composite (empty when no checks are configured).
 * @throws {UsageError} For a custom checker that cannot be loaded.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildVerifier } from "./verifier.ts";
 *
 * const verifier = await buildVerifier(
 *   { mode: "all", checks: [{ type: "files", paths: ["README.md"] }, { type: "plan" }] },
 *   { agentDir: new URL("file:///nonexistent/"), cwd: Deno.cwd() },
 * );
 * assert.deepEqual(verifier.checkers.map((checker) => checker.name), ["files", "plan"]);
 * assert.equal(verifier.allMustPass, true);
 * ```
 */
export async function buildVerifier(
  config: Pick<VerifyConfig, "mode" | "checks">,
  options: BuildVerifierOptions,
): Promise<CompositeChecker> {
  const checkers: TaskCompletionChecker[] = [];
  for (const [index, check] of config.checks.entries()) {
    switch (check.type) {
      case "command":
        checkers.push(
          new CommandChecker({
            command: check.command,
            timeoutSeconds: check.timeoutSeconds,
            name: check.name,
          }),
        );
        break;
      case "git":
        checkers.push(
          new GitChecker({
            minCommits: check.minCommits,
            cleanTree: check.cleanTree,
            ignore: options.ignore,
            name: check.name,
          }),
        );
        break;
      case "files":
        checkers.push(new FilesChecker(check.paths, check.name));
        break;
      case "plan":
        checkers.push(new PlanChecker({ planType: "TodoWrite", name: check.name }));
        break;
      case "judge":
        checkers.push(
          new JudgeChecker({
            criteria: check.criteria,
            model: check.model,
            timeoutSeconds: check.timeoutSeconds,
            name: check.name,
          }),
        );
        break;
      case "custom":
        checkers.push(
          await loadCustomChecker(check.path, {
            agentDir: options.agentDir,
            cwd: options.cwd,
            options: check.options,
            name: check.name,
            field: `verify.checks[${index}].path`,
          }),
        );
        break;
    }
  }
  return new CompositeChecker(checkers, { allMustPass: config.mode === "all" });
}

/**
 * Run a verifier; a checker that throws counts as incomplete with the error
 * as feedback.
 *
 * @param verifier The composite checker.
 * @param context The evidence.
 * @param trigger What asked for the verification.
 * @returns The record for the summary and the log.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CompositeChecker, incomplete } from "@finishline/agents";
 * import { verify } from "./verifier.ts";
 *
 * const verifier = new CompositeChecker([
 *   { name: "tests", check: () => incomplete("2 tests fail") },
 * ]);
 * // This checker looks at no evidence, so an empty context will do.
 * const record = await verify(verifier, {} as never, "complete_task");
 * assert.deepEqual(record, {
 *   passed: false,
 *   checker: "tests",
 *   feedback: "2 tests fail",
 *   trigger: "complete_task",
 * });
 * ```
 */
export async function verify(
  verifier: CompositeChecker,
  context: TaskCompletionContext,
  trigger: VerificationRecord["trigger"],
): Promise<VerificationRecord> {
  try {
    const result = await verifier.check(context);
    return {
      passed: result.complete,
      checker: result.decidedBy,
      feedback: result.feedback ?? "",
      trigger,
      ...(result.faulted ? { faulted: true } : {}),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return {
      passed: false,
      checker: "error",
      feedback: `A checker failed to run: ${message}`,
      trigger,
      faulted: true,
    };
  }
}
