/**
 * The iteration loop: prompt, one agent session, summary, evidence, verdict,
 * repeat, until the handler is satisfied and the checkers agree, or a limit
 * stops the run. All I/O goes through injected ports (backend, git, log,
 * clock), so the loop's logic is tested without processes.
 *
 * @module
 */

import type { AgentDefinition } from "../common/agent_definition.ts";
import type { AgentBackend, SessionPermissionMode } from "../common/backends/types.ts";
import type { CompositeChecker } from "../common/checks/composite.ts";
import type {
  RunGitEvidence,
  TaskCompletionContext,
  VerificationRecord,
} from "../common/checks/types.ts";
import { verify } from "../common/checks/verifier.ts";
import { firstLine } from "../common/completion/custom.ts";
import type { CompletionHandler, IterationSummary } from "../common/completion/types.ts";
import type { GitRepo } from "../common/git.ts";
import type { RunLog } from "../common/log.ts";
import { SummaryBuilder } from "../common/summary.ts";
import { CompletionGuard } from "./completion_guard.ts";

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
  /** The agent folder (for checkers). @default `<cwd>/.agent/<name>/` */
  agentDir?: URL;
  /** The configured checkers; none when absent. */
  verifier?: CompositeChecker;
  /** The repository, for git evidence; absent outside one. */
  git?: GitRepo;
  /** Paths (relative to the repository root) that are finishline's own, not the agent's work. */
  ignorePaths?: string[];
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
  const agentDir = options.agentDir ??
    new URL(`.agent/${definition.name}/`, `file://${options.cwd}/`);
  const summaries: IterationSummary[] = [];
  const sessionIds: string[] = [];
  let costUsd = 0;

  const budgetSpent = (): string | undefined => {
    if (behavior.maxBudgetUsd !== undefined && costUsd >= behavior.maxBudgetUsd) {
      return `Cost budget of $${behavior.maxBudgetUsd} spent ($${costUsd.toFixed(4)})`;
    }
    if (
      behavior.maxDurationSeconds !== undefined &&
      now() - started >= behavior.maxDurationSeconds * 1000
    ) {
      return `Time budget of ${behavior.maxDurationSeconds} s spent`;
    }
    return undefined;
  };

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
      costUsd: result.costUsd,
      durationMs: result.durationMs,
    });
    options.onEvent?.({ type: "run_finished", result });
    return result;
  };
  const end = async (status: RunStatus, completionReason: string): Promise<RunResult> => {
    try {
      await handler.onRunEnd?.({ status, reason: completionReason });
    } catch (error) {
      log?.event("handler_hook_failed", { hook: "onRunEnd", error: firstLine(error) });
    }
    return finish(status, completionReason);
  };

  const runBaseline = options.git ? await options.git.head() : null;
  const gitEvidence: RunGitEvidence | undefined = options.git
    ? { repo: options.git, baseline: runBaseline }
    : undefined;
  const checkContext = (
    summary: IterationSummary,
    extra: Partial<TaskCompletionContext>,
  ): TaskCompletionContext => ({
    summary,
    previous: summaries.filter((earlier) => earlier !== summary),
    definition,
    cwd: options.cwd,
    agentDir,
    git: gitEvidence,
    backend,
    signal,
    ...extra,
  });
  const hasChecks = (options.verifier?.checkers.length ?? 0) > 0;

  try {
    await handler.onRunStart?.();
  } catch (error) {
    log?.event("handler_hook_failed", { hook: "onRunStart", error: firstLine(error) });
  }
  log?.event("run_started", {
    runId,
    agent: definition.name,
    handler: handler.type,
    criteria: handler.buildCompletionCriteria().short,
    maxIterations: options.maxIterations,
    backend: backend.name,
    cwd: options.cwd,
    baseline: runBaseline,
    checks: options.verifier?.checkers.map((checker) => checker.name) ?? [],
  });

  for (let iteration = 1; iteration <= options.maxIterations; iteration++) {
    if (signal.aborted) return await end("interrupted", "Interrupted before the next iteration");
    const spent = budgetSpent();
    if (spent) return await end("budget_exhausted", spent);

    let prompt: string;
    try {
      prompt = iteration === 1
        ? await handler.buildInitialPrompt(options.args)
        : await handler.buildContinuationPrompt(iteration, summaries);
    } catch (error) {
      log?.event("prompt_failed", { iteration, error: firstLine(error) });
      return await end(
        "failed",
        `Cannot build the prompt for iteration ${iteration}: ${firstLine(error)}`,
      );
    }
    prompt = withVerificationFeedback(prompt, summaries.at(-1));

    options.onEvent?.({
      type: "iteration_started",
      iteration,
      maxIterations: options.maxIterations,
    });
    log?.event("iteration_started", { iteration, prompt });
    const builder = new SummaryBuilder(iteration, definition.actions);
    const iterationBaseline = options.git ? await options.git.head() : null;
    const guard = new CompletionGuard({
      require: behavior.requireCompleteTask,
      maxAttempts: behavior.maxContinuationAttempts,
      verify: async (call) => {
        if (!hasChecks) return undefined;
        return await verify(
          options.verifier!,
          checkContext(builder.current, { completeTask: call, stopReason: "complete_task" }),
          "complete_task",
        );
      },
      onEvent: (kind, data) => log?.event(kind, { iteration, ...data }),
    });

    const iterationStart = now();
    const timeLeft = behavior.maxDurationSeconds !== undefined
      ? Math.max(0, behavior.maxDurationSeconds * 1000 - (now() - started))
      : undefined;
    const sessionSignal = timeLeft !== undefined
      ? AbortSignal.any([signal, AbortSignal.timeout(timeLeft)])
      : signal;
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
          signal: sessionSignal,
          onCompleteTask: guard.onCompleteTask,
          onStop: guard.onStop,
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
    if (guard.lastCall) summary.completeTask = guard.lastCall;
    if (guard.verification) summary.verification = guard.verification;
    if (guard.attempts > 0) summary.continuations = guard.attempts;
    if (options.git) {
      summary.git = await gitEvidenceOf(options.git, iterationBaseline, options.ignorePaths ?? []);
    }

    if (signal.aborted) {
      summary.stopReason = "interrupted";
      await recordIteration(options, summary, "interrupted");
      return await end("interrupted", `Interrupted during iteration ${iteration}`);
    }
    if (sessionSignal.aborted) {
      summary.stopReason = "budget_exhausted";
      await recordIteration(options, summary, "budget_exhausted");
      return await end(
        "budget_exhausted",
        budgetSpent() ?? `Time budget spent during iteration ${iteration}`,
      );
    }
    if (sessionError !== undefined && builder.sawResult) {
      // The SDK throws after an error result (max turns, budget); the result is already recorded.
      log?.event("session_error_after_result", { iteration, error: firstLine(sessionError) });
      sessionError = undefined;
    }
    if (sessionError !== undefined) {
      summary.errors.push(`session: ${firstLine(sessionError)}`);
      await recordIteration(options, summary, "failed");
      return await end(
        "failed",
        `The agent session failed in iteration ${iteration}: ${firstLine(sessionError)}`,
      );
    }

    if (summary.completeTask?.status === "blocked") {
      await recordIteration(options, summary, "blocked");
      const remaining = summary.completeTask.remaining_work?.trim() || summary.completeTask.summary;
      return await end(
        "blocked",
        `The agent reported the task blocked in iteration ${iteration}: ${remaining}`,
      );
    }

    let complete = false;
    try {
      complete = await handler.isComplete(summary);
    } catch (error) {
      log?.event("handler_failed", { iteration, error: firstLine(error) });
      summary.errors.push(`handler: ${firstLine(error)}`);
      await recordIteration(options, summary, "failed");
      return await end(
        "failed",
        `The completion handler failed in iteration ${iteration}: ${firstLine(error)}`,
      );
    }
    const faults = handler.drainFaults?.() ?? [];
    if (faults.length > 0) summary.faults = [...(summary.faults ?? []), ...faults];

    if (complete) {
      const exhausted = budgetSpent();
      if (exhausted) {
        await recordIteration(options, summary, "budget_exhausted");
        return await end("budget_exhausted", `${exhausted}; the checks were skipped`);
      }
      let verification: VerificationRecord | undefined;
      if (hasChecks) {
        verification = await verify(
          options.verifier!,
          checkContext(summary, {
            completeTask: summary.completeTask,
            stopReason: summary.stopReason ?? undefined,
          }),
          "handler",
        );
        summary.verification = verification;
        log?.event("verification", { iteration, trigger: "handler", verification });
      }
      if (!verification || verification.passed) {
        await recordIteration(options, summary, "complete");
        let description: string;
        try {
          description = await handler.getCompletionDescription(summary);
        } catch (error) {
          description = `Complete (description failed: ${firstLine(error)})`;
        }
        return await end("completed", description);
      }
      await recordIteration(
        options,
        summary,
        `continue (verification failed: ${verification.checker})`,
      );
    } else {
      await recordIteration(options, summary, "continue");
    }
    const exhausted = budgetSpent();
    if (exhausted) return await end("budget_exhausted", exhausted);
  }
  return await end(
    "max_iterations",
    `Reached the cap of ${options.maxIterations} iterations before ${handler.buildCompletionCriteria().short}`,
  );
}

/**
 * Append the last failed verification's feedback to a prompt that does not
 * carry it yet (handlers on the built-in templates put it in
 * `{uv-verification_feedback}` themselves).
 *
 * @param prompt The handler's prompt.
 * @param previous The previous iteration's summary.
 * @returns The prompt with the feedback.
 */
export function withVerificationFeedback(
  prompt: string,
  previous: IterationSummary | undefined,
): string {
  const verification = previous?.verification;
  if (!verification || verification.passed || !verification.feedback) return prompt;
  if (prompt.includes(verification.feedback)) return prompt;
  return `${prompt}\n\n## Verification feedback\n\nThe work is not accepted yet. ${verification.checker}: ${verification.feedback}`;
}

async function gitEvidenceOf(
  repo: GitRepo,
  baseline: string | null,
  ignore: string[],
): Promise<NonNullable<IterationSummary["git"]>> {
  const [head, newCommits, status] = await Promise.all([
    repo.head(),
    repo.commitsSince(baseline),
    repo.status(ignore),
  ]);
  return {
    baseline: baseline ?? undefined,
    head: head ?? undefined,
    newCommits,
    staged: status?.staged ?? [],
    unstaged: status?.unstaged ?? [],
  };
}

async function recordIteration(
  options: RunOptions,
  summary: IterationSummary,
  verdict: string,
): Promise<void> {
  options.log?.event("iteration_finished", { iteration: summary.iteration, verdict, summary });
  try {
    await options.handler.onIterationEnd?.(summary, verdict);
  } catch (error) {
    options.log?.event("handler_hook_failed", { hook: "onIterationEnd", error: firstLine(error) });
  }
  options.onEvent?.({
    type: "iteration_finished",
    iteration: summary.iteration,
    maxIterations: options.maxIterations,
    summary,
    verdict,
  });
}
