/**
 * `finish RUN_ID`: complete the interrupted finish workflow of a run (its
 * model steps on the model the run recorded). Loaded only by that command.
 *
 * @module
 */

import { ClaudeBackend } from "../../backends/claude.ts";
import { UsageError } from "../../support/errors.ts";
import type { SqliteStore } from "../../store/mod.ts";
import { runFinish } from "../../finish/workflow.ts";
import { lockRun } from "../run/locks.ts";
import type { CommandIO } from "../run/command.ts";
import { cleanUpRun } from "../run/end.ts";
import type { CleanupFacts } from "../run/workspace.ts";

/**
 * Run the finish workflow of a recorded run.
 *
 * @param store The history.
 * @param id The run's id or a prefix of it.
 * @param json Whether to print one JSON object.
 * @param io Output and the backend.
 * @returns The exit code.
 */
export async function finishCommand(
  store: SqliteStore,
  id: string,
  json: boolean,
  io: CommandIO,
): Promise<number> {
  const run = store.getRun(id);
  if (!run) {
    throw new UsageError(
      `No run "${id}" in the history (or the prefix matches several): see "runs"`,
    );
  }
  // Never while the run is still going: its own finish holds this lock too.
  const lock = await lockRun(store.path, run.id);
  const facts = run.cleanup as CleanupFacts;
  // A run recorded before the finish had model steps has no settings for them: they fall back.
  const backend = facts.finish ? io.backend ?? new ClaudeBackend() : undefined;
  let report;
  try {
    report = await runFinish({
      store,
      runId: run.id,
      ...facts.finish,
      backend,
      cwd: run.cwd,
      cleanup: async () => {
        await cleanUpRun(facts, { cwd: run.cwd, stderr: io.stderr });
      },
    });
  } finally {
    await backend?.release?.();
    await lock.release();
  }
  if (json) {
    io.stdout(`${JSON.stringify({ runId: run.id, ...report })}\n`);
  } else if (report.failed) {
    io.stderr(
      `finishline: the finish workflow of run ${run.id} stopped at "${report.failed.step}": ${report.failed.error}\n`,
    );
  } else {
    io.stdout(
      report.ran.length > 0
        ? `Finished run ${run.id}: ${report.ran.join(", ")}\n`
        : `Run ${run.id} was already finished (${report.steps.join(", ")})\n`,
    );
  }
  return report.failed ? 1 : 0;
}
