/**
 * The iteration loop: prompt, one agent session, summary, verdict, repeat,
 * until the handler is satisfied or a limit stops the run. All I/O goes
 * through injected ports (backend, log, clock), so the loop's logic is tested
 * without processes.
 *
 * @module
 */

import type { AgentDefinition } from "../common/agent_definition.ts";
import type { AgentBackend, SessionPermissionMode } from "../common/backends/types.ts";
import type { CompletionHandler, IterationSummary } from "../common/completion/types.ts";
import { firstLine } from "../common/completion/custom.ts";
import type { RunLog } from "../common/log.ts";
import { SummaryBuilder } from "../common/summary.ts";

/** How a run ended. */
export type RunStatus =
  | "completed"
  | "failed"
  | "max_iterations"
  | "stalled"
  | "blocked"
  | "budget_exhausted"
  | "interrupted";

/** Exit code of each run status (DESIGN.md's table). */
export const EXIT_CODES: Readonly<Record<RunStatus, number>> = {
  completed: 0,
  failed: 1,
  max_iterations: 3,
  stalled: 4,
  blocked: 5,
  budget_exhausted: 6,
  interrupted: 130,
};

/** The outcome of a run. */
export interface RunResult {
  /** How the run ended. */
  status: RunStatus;
  /** Why, in one sentence. */
  completionReason: string;
  /** Iterations that ran (including an interrupted one). */
  iterations: number;
  /** Total cost in USD. */
  costUsd: number;
  /** Wall time of the run in milliseconds. */
  durationMs: number;
  /** The run's id. */
  runId: string;
  /** Agent session ids, in order, without repeats. */
  sessionIds: string[];
  /** The JSONL log, when one was written. */
  logFile?: string;
  /** Every iteration's summary. */
  summaries: IterationSummary[];
}

/** What the runner reports while it works. */
export type RunEvent =
  | { type: "iteration_started"; iteration: number; maxIterations: number }
  | { type: "tool"; iteration: number; name: string }
  | {
    type: "iteration_finished";
    iteration: number;
    maxIterations: number;
    summary: IterationSummary;
    verdict: string;
  }
  | { type: "run_finished"; result: RunResult };

/** Everything a run needs. */
export interface RunOptions {
  /** The agent definition (after CLI overrides). */
  definition: AgentDefinition;
  /** The completion handler. */
  handler: CompletionHandler;
  /** Runs agent sessions. */
  backend: AgentBackend;
  /** Text appended to the agent's system prompt. */
  systemPrompt: string;
  /** The run's arguments, passed to `buildInitialPrompt`. */
  args: Record<string, unknown>;
  /** Working directory of the agent. */
  cwd: string;
  /** Iteration cap. */
  maxIterations: number;
  /** Run id. @default a random UUID */
  runId?: string;
  /** Permission mode override (the CLI's). @default definition.behavior.permissionMode */
  permissionMode?: SessionPermissionMode;
  /** JSONL log. */
  log?: RunLog;
  /** Aborts the run (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Progress callback. */
  onEvent?: (event: RunEvent) => void;
  /** Extra environment for the agent process. */
  env?: Record<string, string>;
  /** Milliseconds clock. @default performance.now */
  now?: () => number;
}

/**
 * Run the iteration loop to its end.
 *
 * @param options Definition, handler, backend and settings.
 * @returns The run's outcome; it never throws for agent or handler faults.
 */
export async function runIterations(options: RunOptions): Promise<RunResult> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const runId = options.runId ?? crypto.randomUUID();
  const { definition, handler, backend, log } = options;
  const behavior = definition.behavior;
  const signal = options.signal ?? new AbortController().signal;
  const summaries: IterationSummary[] = [];
  const sessionIds: string[] = [];
  let costUsd = 0;

  const finish = (status: RunStatus, completionReason: string): RunResult => {
    const result: RunResult = {
      status,
      completionReason,
      iterations: summaries.length,
      costUsd: Math.round(costUsd * 1e6) / 1e6,
      durationMs: Math.round(now() - started),
      runId,
      sessionIds,
      logFile: log?.path,
      summaries,
    };
    log?.event("run_finished", {
      runId,
      status,
      completionReason,
      iterations: result.iterations,
      costUsd,
      durationMs: result.durationMs,
    });
    options.onEvent?.({ type: "run_finished", result });
    return result;
  };

  log?.event("run_started", {
    runId,
    agent: definition.name,
    handler: handler.type,
    criteria: handler.buildCompletionCriteria().short,
    maxIterations: options.maxIterations,
    backend: backend.name,
    cwd: options.cwd,
  });

  for (let iteration = 1; iteration <= options.maxIterations; iteration++) {
    if (signal.aborted) {
      return finish("interrupted", "Interrupted before the next iteration");
    }
    if (
      behavior.maxBudgetUsd !== undefined && costUsd >= behavior.maxBudgetUsd
    ) {
      return finish(
        "budget_exhausted",
        `Cost budget of $${behavior.maxBudgetUsd} spent ($${costUsd.toFixed(4)})`,
      );
    }

    let prompt: string;
    try {
      prompt = iteration === 1
        ? await handler.buildInitialPrompt(options.args)
        : await handler.buildContinuationPrompt(iteration, summaries);
    } catch (error) {
      log?.event("prompt_failed", { iteration, error: firstLine(error) });
      return finish(
        "failed",
        `Cannot build the prompt for iteration ${iteration}: ${firstLine(error)}`,
      );
    }

    options.onEvent?.({
      type: "iteration_started",
      iteration,
      maxIterations: options.maxIterations,
    });
    log?.event("iteration_started", { iteration, prompt });
    const builder = new SummaryBuilder(iteration, definition.actions);
    const iterationStart = now();
    let sessionError: unknown;
    try {
      const resume = behavior.session === "continue" ? summaries.at(-1)?.sessionId : undefined;
      const remainingBudget = behavior.maxBudgetUsd !== undefined
        ? Math.max(0, behavior.maxBudgetUsd - costUsd)
        : undefined;
      for await (
        const message of backend.session({
          prompt,
          systemPromptAppend: options.systemPrompt,
          cwd: options.cwd,
          allowedTools: behavior.allowedTools,
          disallowedTools: behavior.disallowedTools,
          permissionMode: options.permissionMode ?? behavior.permissionMode,
          model: behavior.model,
          maxTurns: behavior.maxTurns,
          maxBudgetUsd: remainingBudget,
          resume,
          settingSources: behavior.settingSources,
          env: options.env,
          signal,
        })
      ) {
        log?.message(iteration, message);
        const before = builder.current.toolsUsed.length;
        builder.add(message);
        for (const name of builder.current.toolsUsed.slice(before)) {
          options.onEvent?.({ type: "tool", iteration, name });
        }
      }
    } catch (error) {
      sessionError = error;
    }
    const summary = builder.finish(now() - iterationStart);
    summaries.push(summary);
    costUsd += summary.costUsd;
    if (summary.sessionId && !sessionIds.includes(summary.sessionId)) {
      sessionIds.push(summary.sessionId);
    }

    if (signal.aborted) {
      summary.stopReason = "interrupted";
      recordIteration(options, summary, "interrupted");
      return finish("interrupted", `Interrupted during iteration ${iteration}`);
    }
    if (sessionError !== undefined) {
      summary.errors.push(`session: ${firstLine(sessionError)}`);
      recordIteration(options, summary, "failed");
      return finish(
        "failed",
        `The agent session failed in iteration ${iteration}: ${firstLine(sessionError)}`,
      );
    }

    let complete = false;
    try {
      complete = await handler.isComplete(summary);
    } catch (error) {
      log?.event("handler_failed", { iteration, error: firstLine(error) });
      summary.errors.push(`handler: ${firstLine(error)}`);
      recordIteration(options, summary, "failed");
      return finish(
        "failed",
        `The completion handler failed in iteration ${iteration}: ${firstLine(error)}`,
      );
    }

    if (complete) {
      recordIteration(options, summary, "complete");
      let description: string;
      try {
        description = await handler.getCompletionDescription(summary);
      } catch (error) {
        description = `Complete (description failed: ${firstLine(error)})`;
      }
      return finish("completed", description);
    }
    recordIteration(options, summary, "continue");
    if (
      behavior.maxBudgetUsd !== undefined && costUsd >= behavior.maxBudgetUsd
    ) {
      return finish(
        "budget_exhausted",
        `Cost budget of $${behavior.maxBudgetUsd} spent ($${costUsd.toFixed(4)})`,
      );
    }
  }
  return finish(
    "max_iterations",
    `Reached the cap of ${options.maxIterations} iterations before ${handler.buildCompletionCriteria().short}`,
  );
}

function recordIteration(
  options: RunOptions,
  summary: IterationSummary,
  verdict: string,
): void {
  options.log?.event("iteration_finished", {
    iteration: summary.iteration,
    verdict,
    summary,
  });
  options.onEvent?.({
    type: "iteration_finished",
    iteration: summary.iteration,
    maxIterations: options.maxIterations,
    summary,
    verdict,
  });
}
