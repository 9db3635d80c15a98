/**
 * finishline's own sessions beside the worker's: the verifier, who writes
 * the held-out reproduction test, and the reviewer, who judges the worker's
 * declarations. A scripted server tells them by the marker in their system
 * prompt, plays their own scripts, and gives them no index among the
 * worker's sessions, so that a test scripting the worker is not shifted by
 * them.
 *
 * @module
 */

import { REVIEWER_MARKER } from "../loop/review.ts";
import { VERIFIER_MARKER } from "../loop/reproduce.ts";
import type { ScriptedTurn, SessionScript, TurnContext } from "./script.ts";

/** One of finishline's sessions beside the worker's. */
export type SessionRole = "verifier" | "reviewer";

/** Scripts of the verifier and reviewer sessions. */
export interface RoleScripts {
  /**
   * The verifier's session.
   *
   * @default {[textTurn("No reproduction test: ...")]} (it writes none)
   */
  verifier?: SessionScript;
  /**
   * Each reviewer session (one per reviewed claim).
   *
   * @default {[acceptDeclarations()]}
   */
  reviewer?: SessionScript;
}

/**
 * Which of finishline's sessions a system prompt belongs to.
 *
 * @param system The request's system prompt (any JSON of it).
 * @returns The role, or undefined for the worker's sessions.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { roleOf } from "@finishline/agents/testing";
 *
 * assert.equal(roleOf("You are ...\n[finishline verifier session]\nYou are the verifier"), "verifier");
 * assert.equal(roleOf("You are Claude Code"), undefined);
 * ```
 */
export function roleOf(system: string): SessionRole | undefined {
  if (system.includes(VERIFIER_MARKER)) return "verifier";
  if (system.includes(REVIEWER_MARKER)) return "reviewer";
  return undefined;
}

/**
 * A reviewer turn that gives every declaration of its prompt one verdict.
 *
 * @param accept Whether to accept them.
 * @param reason The reason given with each.
 * @returns The step.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceptDeclarations } from "@finishline/agents/testing";
 *
 * const prompt = "1. out_of_scope \"npm run lint\"\n   The worker's reason: ...\n2. no_test\n";
 * const turn = acceptDeclarations(false, "No.")({ lastUserText: prompt } as never);
 * assert.deepEqual(JSON.parse((turn as { text: string }).text), {
 *   verdicts: [{ id: 1, accept: false, reason: "No." }, { id: 2, accept: false, reason: "No." }],
 * });
 * ```
 */
export function acceptDeclarations(
  accept = true,
  reason = "The scripted reviewer accepts it.",
): (ctx: TurnContext) => ScriptedTurn {
  return (ctx) => {
    const count = [...ctx.lastUserText.matchAll(
      /^(\d+)\. (?:tests_changed|out_of_scope|no_test|held_out_wrong|worker_test)/gm,
    )]
      .length;
    const verdicts = Array.from({ length: count }, (_, index) => ({
      id: index + 1,
      accept,
      reason,
    }));
    return { text: JSON.stringify({ verdicts }) };
  };
}

/** What the roles play unless a test scripts them. */
const DEFAULTS: Required<RoleScripts> = {
  verifier: [{
    text: "No reproduction test: the scripted verifier writes none.",
  }],
  reviewer: [acceptDeclarations()],
};

/**
 * The script a role's session plays.
 *
 * @param role The role.
 * @param scripts The test's role scripts.
 * @returns The test's script for the role, else the default.
 */
export function roleScript(role: SessionRole, scripts: RoleScripts | undefined): SessionScript {
  return scripts?.[role] ?? DEFAULTS[role];
}
