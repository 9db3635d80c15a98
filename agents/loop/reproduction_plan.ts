/**
 * What reproduction evidence a run asks for (the verifier's held-out test,
 * the worker's own fail-to-pass test, both or none), and how it is recorded.
 *
 * @module
 */

import type { Reproduction } from "../evidence/held_out/reproduction.ts";
import type { CompletionHandler } from "../completion/handler_contract.ts";
import type { AgentDefinition, ReproduceMode } from "../definition/definition_types.ts";
import type { IndependentCost } from "./independent_cost.ts";

/** The verifier's cost, for the report: apart from the worker's. */
export type VerifierCost = Omit<IndependentCost, "sessions">;

/** The reproduction of a run, as the log and the report record it. */
export type ReproductionRecord = Reproduction & { cost: VerifierCost };

/** What a run's reproduction evidence is: the verifier's held-out test, the worker's own, both or none. */
export interface ReproductionPlan {
  /** The mode in effect: `verify.reproduce`, or the default for the run's handler. */
  mode: ReproduceMode;
  /** Whether a verifier writes a held-out test. */
  heldOut: boolean;
  /** Why the worker's own fail-to-pass test is required, when it is. */
  workerTest?: string;
}

/**
 * The reproduction evidence of a run. Unset, `verify.reproduce` is `both`
 * for issue runs (the worker's own test only when the issue carries one of
 * `verify.bugLabels`), `held-out` for project runs and `off` otherwise; set
 * to `worker` or `both`, the worker's own test is required of every run.
 *
 * @param definition The agent definition.
 * @param handler The run's completion handler (an issue handler knows its labels).
 * @returns The plan.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 * import { reproductionPlan } from "./reproduction_plan.ts";
 *
 * const definition = parseDefinition(
 *   '{ "name": "fixer", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
 *   { displayPath: "agent.json" },
 * );
 * const issue = { type: "issue", issue: { number: 7, labels: ["Bug"] } } as never;
 * assert.deepEqual(reproductionPlan(definition, issue), {
 *   mode: "both",
 *   heldOut: true,
 *   workerTest: 'issue #7 is labelled "Bug"',
 * });
 * assert.deepEqual(reproductionPlan(definition, { type: "iterate" } as never), {
 *   mode: "off",
 *   heldOut: false,
 * });
 * ```
 */
export function reproductionPlan(
  definition: AgentDefinition,
  handler: CompletionHandler,
): ReproductionPlan {
  const verify = definition.verify;
  const mode = verify.reproduce ??
    (handler.type === "issue" ? "both" : handler.type === "project" ? "held-out" : "off");
  const heldOut = mode === "held-out" || mode === "both";
  if (mode !== "worker" && mode !== "both") return { mode, heldOut };
  if (verify.reproduce) return { mode, heldOut, workerTest: `"verify.reproduce" is "${mode}"` };
  const issue = (handler as { issue?: { number?: unknown; labels?: unknown } }).issue;
  const labels = handler.type === "issue" && Array.isArray(issue?.labels) ? issue.labels : [];
  const wanted = new Set(verify.bugLabels.map((label) => label.toLowerCase()));
  const bug = labels.find((label) => typeof label === "string" && wanted.has(label.toLowerCase()));
  return bug ? { mode, heldOut, workerTest: `issue #${issue?.number} is labelled "${bug}"` } : {
    mode,
    heldOut,
  };
}
