/**
 * The finish tool's names, the request the agent sends, the response it
 * reads back (the design's `FinishResponse`, key for key), and the next
 * actions every answer carries, as plain values and types. This module
 * imports nothing, so the contracts that name it download no npm package.
 *
 * @module
 */

import { COMPLETE_TASK_SERVER } from "./complete_task_call.ts";

/** The tool's own name on the finishline MCP server. */
export const FINISH_NAME = "finish";

/** The name of the finish tool as Claude Code reports it. */
export const FINISH_TOOL: string = `mcp__${COMPLETE_TASK_SERVER}__${FINISH_NAME}`;

/** The design's `FinishRequest`; `session_id` is optional (the runner knows the session). */
export interface FinishToolCall {
  /** The session to finish; the current one when absent. */
  session_id?: string;
  /** Whether the task was completed: false ends the run as blocked. */
  success: boolean;
  /** What was accomplished (or, without success, what blocks it). */
  summary: string;
  /** What was learned. */
  learned?: string[];
  /** Skills that were useful. */
  skills_used?: string[];
  /** Skills the agent wished it had. */
  new_skills_needed?: string[];
  /** Files that were changed. */
  files_modified?: string[];
  /** What to do next. */
  next_steps?: string;
}

/** The design's `FinishResponse`: exactly these keys. */
export interface FinishToolAnswer {
  /** The agent session the answer is about. */
  session_id: string;
  /**
   * completed (the run ends completed with this iteration, as far as the runner can tell),
   * continuing (the checks passed but the completion handler is not satisfied: the run goes
   * on, `next_actions` says until what), failed (checks failed, `success: false`, or the last
   * iteration ends the run not completed), or cancelled (interrupted).
   */
  status: "completed" | "continuing" | "cancelled" | "failed";
  /** Whether the run summary was written to the history. */
  summary_updated: boolean;
  /** Whether at least one skill record was stored. */
  skills_updated: boolean;
  /** Whether the history took every write. */
  history_saved: boolean;
  /** What to do next; never empty. */
  next_actions: string[];
}

/**
 * The actions every finish answer ends with, as the design's
 * `_generate_next_actions` always offers them: resume this session, and
 * start a new one in the workspace (and resume the run, when it was interrupted).
 *
 * @param facts The agent session, the run's folder and, for an interrupted run, its id.
 * @returns The actions.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { alwaysActions } from "./finish_call.ts";
 *
 * assert.deepEqual(alwaysActions({ sessionId: "s1", cwd: "/work" }), [
 *   "Resume this session later: claude --resume s1",
 *   "Start new session in /work",
 * ]);
 * ```
 */
export function alwaysActions(
  facts: { sessionId?: string | null; cwd: string; interruptedRun?: string },
): string[] {
  return [
    ...(facts.interruptedRun ? [`Resume the run: --resume ${facts.interruptedRun}`] : []),
    facts.sessionId
      ? `Resume this session later: claude --resume ${facts.sessionId}`
      : "Resume this session later",
    `Start new session in ${facts.cwd}`,
  ];
}

/**
 * Join action lists: each action once, in order, at most ten, and the
 * always-present ones kept when the others are many.
 *
 * @param actions The actions found.
 * @param always The actions that must be there.
 * @returns The list.
 */
export function withAlwaysActions(actions: string[], always: string[]): string[] {
  const kept = [...new Set(actions.map((action) => action.trim()).filter(Boolean))]
    .filter((action) => !always.includes(action));
  return [...kept.slice(0, 10 - always.length), ...always];
}
