/**
 * The finish tool (the user's finish tool design): the agent calls `finish`
 * next to complete_task to end the task and run the finish workflow at once.
 * The description and schema the agent reads; the names, the request and the
 * response are in `finish_call.ts`. The backend offers it; the loop's finish
 * tool route answers it.
 *
 * @module
 */

import { z } from "zod";

export {
  alwaysActions,
  FINISH_NAME,
  FINISH_TOOL,
  type FinishToolAnswer,
  type FinishToolCall,
  withAlwaysActions,
} from "./finish_call.ts";

/** The tool description the agent reads. */
export const FINISH_DESCRIPTION =
  "Finish the task: records the outcome like complete_task and runs the finish workflow (summary, learnings, skills, " +
  "next actions) at once. success true: every part of the request is done and committed; finishline verifies it " +
  "first, and a failed check answers status failed with what to fix. The run ends only when its completion criteria " +
  "are met too: otherwise status is continuing and next_actions says what the run waits for. success false: you are " +
  "blocked; say why in summary, and the run ends. The answer is JSON: session_id, status, summary_updated, " +
  "skills_updated, history_saved, next_actions.";

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
