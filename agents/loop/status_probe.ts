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
}

/** Marks the probe prompt, so scripted models can tell it apart. */
export const PROBE_MARKER = "STATUS PROBE";

/** The prompt that asks the agent for its status. */
export const PROBE_PROMPT =
  `${PROBE_MARKER}: reply with one JSON object only, no other text and no tool calls:
{
  "status": "complete" | "waiting" | "working" | "blocked",
  "message": "one line on where you are",
  "tasks_completed": ["..."],
  "tasks_pending": ["..."],
  "next_action": "what should happen next"
}
Use "complete" only when every part of the task is done, "waiting" when you wait for background work
you started, "working" when you still have work to do, "blocked" when something outside your control stops you.`;

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
 * ```
 */
export function parseProbeStatus(text: string): ProbeStatus {
  const object = extractJsonObject(text);
  const raw = typeof object?.status === "string" ? object.status.trim().toLowerCase() : "";
  const status = (STATES as string[]).includes(raw) ? raw as ProbeState : "unknown";
  const list = (value: unknown) => Array.isArray(value) ? value.map(String) : [];
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
  };
}
