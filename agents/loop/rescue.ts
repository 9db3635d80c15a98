/**
 * The rescue phase: work that looks finished must be committed, and so must
 * the work a run leaves when it ends. The agent is asked to commit; with
 * `git.autoCommit` the runner commits what is left, only the files the agent
 * changed. Files that were uncommitted before the run are the user's: the
 * prompt names them as such and the runner never commits them.
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

/** What one commit rescue did. */
export interface RescueOutcome {
  /** The agent's uncommitted files it found (the user's excluded). */
  files: string[];
  /** Who committed last: the agent (asked), the runner (`git.autoCommit`), or none. */
  by: "agent" | "runner" | "none";
  /** The agent's files still uncommitted afterwards. */
  left: string[];
  /** The new HEAD when the rescue created a commit, else null. */
  commit: string | null;
}

/**
 * Commit rescue: ask the agent to commit (when allowed), then, with
 * `git.autoCommit`, commit what is left of the agent's own files.
 *
 * @param state The run.
 * @param sessions The run's agent sessions.
 * @param builder The summary builder of the iteration (its session is resumed).
 * @param options `askAgent`: whether to ask the agent; `final`: the run's
 *   final rescue, whose prompt may run after the run's time budget is spent
 *   (bounded by `rescue.timeoutSeconds` alone) and which reports itself in
 *   one `final_rescue` event (the caller's), not in `rescue` events.
 * @returns What the rescue did.
 */
export async function rescue(
  state: RunState,
  sessions: AgentSessions,
  builder: SummaryBuilder,
  options: { askAgent: boolean; final?: boolean },
): Promise<RescueOutcome> {
  const iteration = builder.current.iteration;
  const found = await state.rescuableChanges();
  const outcome: RescueOutcome = {
    files: found.files,
    by: "none",
    left: found.files,
    commit: null,
  };
  if (found.files.length === 0) return outcome;
  const head = await state.options.git!.head();
  const record: NonNullable<IterationSummary["rescue"]> = {
    files: found.files,
    by: "none",
    clean: false,
    commit: null,
  };
  builder.current.rescue = record;
  const newHead = async () => {
    const now = await state.options.git!.head();
    return now !== head ? now : null;
  };
  const report = (by: "agent" | "runner", commit: string | null) => {
    if (options.final) return;
    const { left } = outcome;
    state.emit({ type: "rescue", iteration, by, clean: left.length === 0, left, commit });
  };
  if (options.askAgent && builder.current.sessionId && !state.signal.aborted) {
    await sessions.followUp(
      builder,
      rescuePrompt(found.users),
      state.definition.rescue.timeoutSeconds * 1000,
      { pastTimeBudget: options.final },
    );
    outcome.left = (await state.rescuableChanges()).files;
    outcome.by = "agent";
    outcome.commit = await newHead();
    report("agent", outcome.commit);
  }
  if (outcome.left.length > 0 && state.definition.git.autoCommit) {
    const commit = await state.options.git!.commitPaths(
      outcome.left,
      autoCommitMessage(state, iteration, outcome.left),
    );
    outcome.left = (await state.rescuableChanges()).files;
    outcome.by = "runner";
    outcome.commit = await newHead();
    report("runner", commit);
  }
  record.by = outcome.by;
  record.clean = outcome.left.length === 0;
  record.commit = outcome.commit;
  return outcome;
}

/** The rescue prompt; the user's files the agent also touched are named, to be left alone. */
function rescuePrompt(users: string[]): string {
  if (users.length === 0) return RESCUE_PROMPT;
  return `${RESCUE_PROMPT}\n\nThese files had uncommitted changes before the run started: they are the user's. ` +
    `Leave them uncommitted (do not add or commit them): ${
      users.map((path) => `\`${path}\``).join(", ")
    }.`;
}

function autoCommitMessage(state: RunState, iteration: number, files: string[]): string {
  return `chore(finishline): commit work left uncommitted by run ${
    state.runId.slice(0, 8)
  }, iteration ${iteration}\n\nAgent: ${state.definition.name}\nRun: ${state.runId}\nFiles: ${
    files.join(", ")
  }`;
}
