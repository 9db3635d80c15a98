/**
 * The probe phase: ask, don't guess. When a session ends with background
 * work running, or with neither a commit nor a complete_task call (files it
 * changed and did not commit included: done and forgot to commit, or still
 * at it?), the agent is asked for its status, again while it says waiting or
 * working. Git stays the source of truth: before every probe after the
 * first, the commits are counted again, and new ones end the probing.
 *
 * @module
 */

import type { SummaryBuilder } from "./summary_builder.ts";
import { parseProbeStatus, PROBE_PROMPT, type ProbeStatus } from "./status_probe.ts";
import type { AgentSessions } from "./agent_sessions.ts";
import { abortableSleep } from "./faults.ts";
import type { RunState } from "./state.ts";

/**
 * What the probes of an iteration came to, for the circuit breaker:
 * `not_probed` (no probe ran), `progress` (commits appeared between probes),
 * `blocked` (the agent said so), `active` (some answer was waiting or working,
 * or said agents were active), `timeout` (no answer was parseable, or none
 * came within the timeout: the seed's genuine timeout), `complete` (the agent
 * said complete).
 */
export type ProbeResult = "not_probed" | "progress" | "complete" | "active" | "timeout" | "blocked";

/** What the probe found. */
export interface ProbeOutcome {
  /** Whether the agent was asked at all. */
  ran: boolean;
  /** Every answer, in order. */
  answers: ProbeStatus[];
  /** Its last answer. */
  last?: ProbeStatus;
  /** It still said waiting or working after `probe.maxProbes` probes. */
  exhausted: boolean;
  /** What the answers came to. */
  result: ProbeResult;
}

const NO_ANSWER: ProbeStatus = {
  status: "unknown",
  message: "the probe timed out or failed",
  tasksCompleted: [],
  tasksPending: [],
  nextAction: "",
};

const NOT_PROBED: ProbeOutcome = {
  ran: false,
  answers: [],
  exhausted: false,
  result: "not_probed",
};

/**
 * Whether an answer says the agent is still at it: waiting, working, or
 * with agents active. Such an iteration never counts as stalled.
 *
 * @param answer A probe answer.
 * @returns True when active.
 */
export function activeAnswer(answer: ProbeStatus): boolean {
  return answer.status === "waiting" || answer.status === "working" ||
    answer.agentsActive === true;
}

/**
 * Probe the agent when the evidence is unclear.
 *
 * @param state The run.
 * @param sessions The run's agent sessions.
 * @param builder The iteration's summary builder.
 * @param evidence Background tasks left running, and how to count the
 *   iteration's new commits again (null when unknown).
 * @returns What the probe found.
 */
export async function probeIfUnclear(
  state: RunState,
  sessions: AgentSessions,
  builder: SummaryBuilder,
  evidence: {
    backgroundTasks: number;
    newCommits?: () => Promise<number | null>;
  },
): Promise<ProbeOutcome> {
  const settings = state.definition.probe;
  const summary = builder.current;
  const iteration = summary.iteration;
  if (!settings.enabled || !summary.sessionId || state.signal.aborted) return NOT_PROBED;
  // Changed files without a commit or a claim are unclear: the answer decides whether they are
  // finished work to rescue (whatever requireCompleteTask is) or work still going on.
  const hasCommits = (summary.git?.newCommits ?? 0) > 0;
  if (evidence.backgroundTasks === 0 && (hasCommits || summary.completeTask)) return NOT_PROBED;
  const answers: ProbeStatus[] = [];
  let exhausted = false;
  let committed = false;
  for (let attempt = 1; attempt <= settings.maxProbes; attempt++) {
    // The first probe follows the runner's look at the repository; the others look again.
    const newCommits = attempt > 1 ? await evidence.newCommits?.() : undefined;
    if (newCommits) {
      committed = true;
      state.emit({ type: "probe_skipped", iteration, reason: "commits", newCommits });
      break;
    }
    const reply = await sessions.followUp(
      builder,
      PROBE_PROMPT,
      settings.probeTimeoutSeconds * 1000,
    );
    const status = reply === undefined ? { ...NO_ANSWER } : parseProbeStatus(reply);
    answers.push(status);
    state.emit({ type: "probe", iteration, status, attempt });
    if (status.status !== "waiting" && status.status !== "working") break;
    if (attempt === settings.maxProbes) {
      exhausted = true;
      break;
    }
    await (state.options.sleep ?? abortableSleep)(
      settings.probeIntervalSeconds * 1000,
      state.signal,
    );
    if (state.signal.aborted) break;
  }
  summary.probes = answers.map((answer) => ({ ...answer }));
  const last = answers.at(-1);
  return {
    ran: true,
    answers,
    last,
    exhausted,
    result: committed
      ? "progress"
      : last?.status === "blocked"
      ? "blocked"
      : answers.some(activeAnswer)
      ? "active"
      : answers.every((answer) => answer.status === "unknown")
      ? "timeout"
      : "complete",
  };
}
