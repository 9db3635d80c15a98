/**
 * The complete_task tool's names and the payload of a call, as plain values
 * and types. The handler and checker contracts use them; this module imports
 * nothing, so code that needs only the contracts downloads no npm package.
 *
 * @module
 */

/** The MCP server that offers complete_task. */
export const COMPLETE_TASK_SERVER = "finishline";

/** The tool's own name on its server. */
export const COMPLETE_TASK_NAME = "complete_task";

/** The name of the complete_task tool as Claude Code reports it. */
export const COMPLETE_TASK_TOOL: string = `mcp__${COMPLETE_TASK_SERVER}__${COMPLETE_TASK_NAME}`;

/** The payload of a `complete_task` call. */
export interface CompleteTaskCall {
  /** success, blocked or partial. */
  status: "success" | "blocked" | "partial";
  /** The agent's restatement of the original request. */
  original_request_summary: string;
  /** What was accomplished. */
  summary: string;
  /** What is left, for blocked or partial. */
  remaining_work?: string;
  /** What the agent learned. */
  learned?: string[];
  /** Skills that helped. */
  skills_used?: string[];
  /** Skills the agent wished it had. */
  new_skills_needed?: string[];
  /** Files the agent changed. */
  files_modified?: string[];
  /** What to do next. */
  next_steps?: string;
  /** Checks that were red before the run and stay red, declared outside the task, each with why. */
  out_of_scope?: Array<{ check: string; reason: string }>;
  /** Test files or check configuration the agent changed on purpose, each with why. */
  tests_changed?: Array<{ path: string; reason: string }>;
  /** For a bug fix that must come with a failing-then-passing test: why no test can show it. */
  no_test?: string;
  /** When a held-out acceptance test fails and the agent is sure the test is wrong for the task: why. */
  held_out_wrong?: string;
}
