/**
 * The finish tool (the user's finish tool design): the agent calls `finish`
 * next to complete_task to end the task and run the finish workflow at once.
 * Its name, the request the agent sends, the response it reads back (the
 * design's `FinishResponse`, key for key), and the next actions every answer
 * carries. The backend offers it; the loop's finish tool route answers it.
 *
 * @module
 */

import { z } from "zod";
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
  /** completed, failed (checks failed, or `success: false`), or cancelled (interrupted). */
  status: "completed" | "cancelled" | "failed";
  /** Whether the run summary was written to the history. */
  summary_updated: boolean;
  /** Whether at least one skill record was stored. */
  skills_updated: boolean;
  /** Whether the history took every write. */
  history_saved: boolean;
  /** What to do next; never empty. */
  next_actions: string[];
}

/** The tool description the agent reads. */
export const FINISH_DESCRIPTION =
  "Finish the task: records the outcome like complete_task and runs the finish workflow (summary, learnings, skills, " +
  "next actions) at once. success true: every part of the request is done and committed; finishline verifies it " +
  "first, and a failed check answers status failed with what to fix. success false: you are blocked; say why in " +
  "summary, and the run ends. The answer is JSON: session_id, status, summary_updated, skills_updated, history_saved, " +
  "next_actions.";

/** The tool's input schema, field by field ({@linkcode FinishToolCall}). */
export const FINISH_SHAPE: z.ZodRawShape = {
  session_id: z.string().optional().describe("The session to finish; leave out for this one"),
  success: z.boolean().describe("true when every part of the request is done and committed"),
  summary: z.string().describe("What you accomplished, or what blocks you"),
  learned: z.array(z.string()).optional().describe("What you learned that would help next time"),
  skills_used: z.array(z.string()).optional().describe("Skills or techniques that helped"),
  new_skills_needed: z.array(z.string()).optional().describe("Skills you wished you had"),
  files_modified: z.array(z.string()).optional().describe("Files you changed"),
  next_steps: z.string().optional().describe("What should happen next"),
};

/** The tool's answer when no prompt offers it (a status probe, or `finish.tool` off). */
export const FINISH_NOT_NOW =
  "finishline did not ask for finish at this point; answer the question you were asked.";

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
 * import { alwaysActions } from "./finish_tool.ts";
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
