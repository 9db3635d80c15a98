/**
 * The probe phase: ask, don't guess. When a session ends with background
 * work running, or with neither progress nor a complete_task call, the agent
 * is asked for its status, again while it says waiting or working.
 *
 * @module
 */

import type { SummaryBuilder } from "./summary_builder.ts";
import { parseProbeStatus, PROBE_PROMPT, type ProbeStatus } from "./status_probe.ts";
import type { AgentSessions } from "./agent_sessions.ts";
import { abortableSleep } from "./faults.ts";
import type { RunState } from "./state.ts";

/** What the probe found. */
export interface ProbeOutcome {
  /** Whether the agent was asked at all. */
  ran: boolean;
  /** Its last answer. */
  last?: ProbeStatus;
  /** It still said waiting or working after `probe.maxProbes` probes. */
  exhausted: boolean;
}

const NO_ANSWER: ProbeStatus = {
  status: "unknown",
  message: "the probe timed out or failed",
  tasksCompleted: [],
  tasksPending: [],
  nextAction: "",
};

/**
 * Probe the agent when the evidence is unclear.
 *
 * @param state The run.
 * @param sessions The run's agent sessions.
 * @param builder The iteration's summary builder.
 * @param evidence Background tasks left running, and whether files changed.
 * @returns What the probe found.
 */
export async function probeIfUnclear(
  state: RunState,
  sessions: AgentSessions,
  builder: SummaryBuilder,
  evidence: { backgroundTasks: number; filesChanged: boolean },
): Promise<ProbeOutcome> {
  const settings = state.definition.probe;
  const summary = builder.current;
  const iteration = summary.iteration;
  if (!settings.enabled || !summary.sessionId || state.signal.aborted) {
    return { ran: false, exhausted: false };
  }
  const progressed = (summary.git?.newCommits ?? 0) > 0 ||
    (state.options.git !== undefined && evidence.filesChanged);
  if (evidence.backgroundTasks === 0 && (progressed || summary.completeTask)) {
    return { ran: false, exhausted: false };
  }
  const probes: ProbeStatus[] = [];
  let exhausted = false;
  for (let attempt = 1; attempt <= settings.maxProbes; attempt++) {
    const reply = await sessions.followUp(
      builder,
      PROBE_PROMPT,
      settings.probeTimeoutSeconds * 1000,
    );
    const status = reply === undefined ? { ...NO_ANSWER } : parseProbeStatus(reply);
    probes.push(status);
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
  summary.probes = probes.map((probe) => ({ status: probe.status, message: probe.message }));
  return { ran: true, last: probes.at(-1), exhausted };
}
