/**
 * The rescue phase: work that looks finished must be committed. The agent is
 * asked to commit; with `git.autoCommit` the runner commits what is left,
 * only the files the agent changed.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";
import type { SummaryBuilder } from "./summary_builder.ts";
import type { AgentSessions } from "./agent_sessions.ts";
import type { RunState } from "./state.ts";

/** The prompt that asks the agent to commit its uncommitted work. */
export const RESCUE_PROMPT: string =
  "COMMIT RESCUE: your work is not committed yet. Review `git status` and `git diff`, then commit the changes " +
  "that belong to the task with a clear conventional commit message (for example `feat: ...` or `fix: ...`). " +
  "Do not discard, stash, reset or force-push anything. Reply with one line saying what you committed.";

/**
 * Commit rescue: ask the agent to commit (when allowed), then, with
 * `git.autoCommit`, commit what is left.
 *
 * @param state The run.
 * @param sessions The run's agent sessions.
 * @param builder The summary builder of the iteration (its session is resumed).
 * @param askAgent Whether to ask the agent (`git.rescue`).
 * @returns The files still uncommitted.
 */
export async function rescue(
  state: RunState,
  sessions: AgentSessions,
  builder: SummaryBuilder,
  askAgent: boolean,
): Promise<string[]> {
  const iteration = builder.current.iteration;
  let left = await state.agentChanges();
  if (left.length === 0) return left;
  const record: NonNullable<IterationSummary["rescue"]> = { files: left, by: "none", clean: false };
  builder.current.rescue = record;
  if (askAgent && builder.current.sessionId && !state.signal.aborted) {
    await sessions.followUp(
      builder,
      RESCUE_PROMPT,
      state.definition.probe.probeTimeoutSeconds * 1000,
    );
    left = await state.agentChanges();
    record.by = "agent";
    state.emit({ type: "rescue", iteration, by: "agent", clean: left.length === 0, left });
  }
  if (left.length > 0 && state.definition.git.autoCommit) {
    const commit = await state.options.git!.commitPaths(
      left,
      autoCommitMessage(state, iteration, left),
    );
    left = await state.agentChanges();
    record.by = "runner";
    state.emit({ type: "rescue", iteration, by: "runner", clean: left.length === 0, left, commit });
  }
  record.clean = left.length === 0;
  return left;
}

function autoCommitMessage(state: RunState, iteration: number, files: string[]): string {
  return `chore(finishline): commit work left uncommitted by run ${
    state.runId.slice(0, 8)
  }, iteration ${iteration}\n\nAgent: ${state.definition.name}\nRun: ${state.runId}\nFiles: ${
    files.join(", ")
  }`;
}
