/**
 * The complete_task tool: its name, the input the agent sends, the
 * description and schema the agent reads, and what the system prompt says
 * about it. The backend offers it; the completion guard enforces it.
 *
 * @module
 */

import { z } from "zod";
import type { AgentDefinition } from "./definition/types.ts";

export {
  COMPLETE_TASK_NAME,
  COMPLETE_TASK_SERVER,
  COMPLETE_TASK_TOOL,
  type CompleteTaskCall,
} from "./complete_task_call.ts";

/** The tool's answer when no prompt asked for complete_task (a status probe, say). */
export const COMPLETE_TASK_NOT_NOW =
  "finishline did not ask for complete_task at this point; answer the question you were asked.";

/** The tool description the agent reads. */
export const COMPLETE_TASK_DESCRIPTION =
  "Call this to finish the task. Required before you stop. Restate the original request, say what you did, and pick a status: " +
  "success (every part of the request is done and committed), blocked (an obstacle you cannot remove; say what in remaining_work), " +
  "or partial (some parts done; say what is left in remaining_work). With success, finishline verifies the work at once and the " +
  "result tells you whether the checks passed; if they did not, fix the problems and call complete_task again.";

/** The tool's input schema, field by field, as the agent reads it ({@linkcode CompleteTaskCall}). */
export const COMPLETE_TASK_SHAPE: z.ZodRawShape = {
  status: z.enum(["success", "blocked", "partial"]).describe("success, blocked or partial"),
  original_request_summary: z.string().describe("Restate what was asked, in your own words"),
  summary: z.string().describe("What you accomplished"),
  remaining_work: z.string().optional().describe("For blocked or partial: what is left, and why"),
  learned: z.array(z.string()).optional().describe("What you learned that would help next time"),
  skills_used: z.array(z.string()).optional().describe("Skills or techniques that helped"),
  new_skills_needed: z.array(z.string()).optional().describe("Skills you wished you had"),
  files_modified: z.array(z.string()).optional().describe("Files you changed"),
  next_steps: z.string().optional().describe("What should happen next"),
  out_of_scope: z.array(z.object({
    check: z.string().describe("The check's name, as finishline reported it"),
    reason: z.string().describe("Why fixing it is outside this task"),
  })).optional().describe(
    "Checks that were already failing before you started and that this task does not cover, each with a reason",
  ),
  tests_changed: z.array(z.object({
    path: z.string().describe("The test or check configuration file"),
    reason: z.string().describe("Why the change was needed"),
  })).optional().describe(
    "Test files or check configuration you changed or deleted on purpose, each with a reason",
  ),
  no_test: z.string().optional().describe(
    "Only when finishline asks for a test that fails before your fix and passes after it and no such test can be written: why",
  ),
  held_out_wrong: z.string().optional().describe(
    "Only when finishline reports a held-out acceptance test failing and you are sure the test, not your code, contradicts the task: why (a reviewer who sees the test decides)",
  ),
};

/**
 * What the system prompt says about complete_task.
 *
 * @param definition The agent definition.
 * @returns Instructions, or an empty string when complete_task is not required.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 * import { completeTaskInstructions } from "./complete_task.ts";
 *
 * const definition = parseDefinition(
 *   `{ "name": "docs", "behavior": { "completionType": "manual",
 *      "completionConfig": { "completionKeyword": "DONE" } } }`,
 *   { displayPath: "agent.json" },
 * );
 * assert.match(completeTaskInstructions(definition), /call the `complete_task` tool/);
 * ```
 */
export function completeTaskInstructions(definition: AgentDefinition): string {
  if (!definition.behavior.requireCompleteTask) return "";
  return [
    "## Finishing a session: the complete_task tool",
    "",
    "Before you stop, always call the `complete_task` tool (from the finishline MCP server):",
    "restate the original request, say what you did, and choose a status: `success` when",
    "every part of the request is done and committed, `blocked` when an obstacle you cannot",
    "remove stops you (say what in remaining_work), or `partial` when only some parts are",
    "done. With success, finishline verifies the work at once; if the checks fail, the tool",
    "result says why: fix it and call complete_task again.",
  ].join("\n");
}
