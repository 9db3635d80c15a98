/**
 * The status probe (the user's completion detection design: "ask, don't
 * guess"): when the evidence is unclear, resume the agent's session and ask
 * for its status as JSON.
 *
 * @module
 */

import { extractJsonObject } from "../support/json_extract.ts";

/** What the agent says about its state. */
export type ProbeState = "complete" | "waiting" | "working" | "blocked" | "unknown";

/** A parsed probe reply. */
export interface ProbeStatus {
  /** complete, waiting, working, blocked, or unknown when unparseable. */
  status: ProbeState;
  /** The agent's one-line description. */
  message: string;
  /** Tasks it says are done. */
  tasksCompleted: string[];
  /** Tasks it says are pending. */
  tasksPending: string[];
  /** What it says should happen next. */
  nextAction: string;
  /** Whether it says agents or background work it started are still running (absent when not given). */
  agentsActive?: boolean;
  /** What it says those agents are doing (absent when not given). */
  agentsDetails?: string;
  /** The commits it says it made; recorded only, git decides (absent when not given). */
  commitsMade?: number;
  /** Whether it says the run should go on; recorded only (absent when not given). */
  shouldContinue?: boolean;
}

/** Marks the probe prompt, so scripted models can tell it apart. */
export const PROBE_MARKER = "STATUS PROBE";

/** The prompt that asks the agent for its status. */
export const PROBE_PROMPT =
  `${PROBE_MARKER}: reply with one JSON object only, no other text and no tool calls:
{
  "status": "complete" | "waiting" | "working" | "blocked",
  "message": "one line on where you are",
  "agents_active": true | false,
  "agents_details": "what the agents or background tasks you started are doing",
  "tasks_completed": ["..."],
  "tasks_pending": ["..."],
  "commits_made": 0,
  "should_continue": true | false,
  "next_action": "what should happen next"
}
Use "complete" only when every part of the task is done, "waiting" when you wait for background work
you started, "working" when you still have work to do, "blocked" when something outside your control stops you.
"agents_active" is true while agents or background tasks you started still run; "commits_made" counts
the commits you made for this task; "should_continue" is true when the work should go on.`;

const STATES: ProbeState[] = ["complete", "waiting", "working", "blocked"];

/**
 * Parse a probe reply: JSON bare, fenced or inside prose. Anything
 * unparseable, or with another status, is `unknown` and never complete.
 *
 * @param text The agent's reply.
 * @returns The status.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseProbeStatus } from "./status_probe.ts";
 *
 * const status = parseProbeStatus('Here you go: {"status": "waiting", "message": "tests run"}');
 * assert.equal(status.status, "waiting");
 * assert.equal(status.message, "tests run");
 * assert.equal(parseProbeStatus("I am basically done!").status, "unknown");
 *
 * // The seed's fields; one that is missing or of another type is left out.
 * const seed = parseProbeStatus(
 *   '{"status": "waiting", "agents_active": true, "agents_details": "2 test shards",' +
 *     ' "commits_made": 1, "should_continue": "yes"}',
 * );
 * assert.equal(seed.agentsActive, true);
 * assert.equal(seed.agentsDetails, "2 test shards");
 * assert.equal(seed.commitsMade, 1);
 * assert.equal(seed.shouldContinue, undefined);
 * ```
 */
export function parseProbeStatus(text: string): ProbeStatus {
  const object = extractJsonObject(text);
  const raw = typeof object?.status === "string" ? object.status.trim().toLowerCase() : "";
  const status = (STATES as string[]).includes(raw) ? raw as ProbeState : "unknown";
  const list = (value: unknown) => Array.isArray(value) ? value.map(String) : [];
  const commits = object?.commits_made;
  return {
    status,
    message: typeof object?.message === "string"
      ? object.message
      : object
      ? ""
      : text.trim().slice(0, 200),
    tasksCompleted: list(object?.tasks_completed),
    tasksPending: list(object?.tasks_pending),
    nextAction: typeof object?.next_action === "string" ? object.next_action : "",
    ...(typeof object?.agents_active === "boolean" ? { agentsActive: object.agents_active } : {}),
    ...(typeof object?.agents_details === "string" ? { agentsDetails: object.agents_details } : {}),
    ...(typeof commits === "number" && Number.isInteger(commits) && commits >= 0
      ? { commitsMade: commits }
      : {}),
    ...(typeof object?.should_continue === "boolean"
      ? { shouldContinue: object.should_continue }
      : {}),
  };
}
