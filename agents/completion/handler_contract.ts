/**
 * The completion handler contract, as in the user's completion handler design:
 * handlers written against it drop in unchanged.
 *
 * @module
 */

import type { AgentDefinition, CompletionType } from "../definition/definition_types.ts";
import type { CompleteTaskCall } from "../record/complete_task_call.ts";
import type { IterationSummary } from "../record/iteration.ts";

export type { AgentDefinition, CompleteTaskCall, CompletionType };

/** What a handler tells the agent (detailed) and the logs (short) about when it is done. */
export interface CompletionCriteria {
  /** Short description, for logs and progress lines. */
  short: string;
  /** Detailed description, for the system prompt (`uv-completion_criteria`). */
  detailed: string;
}

/** How a run ended, as a handler's `onRunEnd` sees it. */
export interface RunOutcome {
  /** The run status (`completed`, `max_iterations`, ...). */
  status: string;
  /** Why, in one sentence. */
  reason: string;
  /** What proved a completed run: the checks that passed, the run's commits, the pull request. */
  evidence?: {
    /** Checks that passed on the final state. */
    checks: string[];
    /** Commits of the run, `sha subject`, oldest first. */
    commits: string[];
    /** The pull request's URL. */
    pullRequest?: string;
  };
}

/** Decides when an agent's work is finished and writes the prompts that drive it. */
export interface CompletionHandler {
  /** Completion type identifier. */
  readonly type: CompletionType;
  /** Build the prompt for the first iteration. */
  buildInitialPrompt(args: Record<string, unknown>): Promise<string>;
  /** Build the prompt for iteration `iteration` (2 and later), given every earlier summary. */
  buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string>;
  /** Completion criteria for the system prompt and the logs. */
  buildCompletionCriteria(): CompletionCriteria;
  /** Whether the work is complete after the iteration this summary describes. */
  isComplete(summary: IterationSummary): Promise<boolean>;
  /** Why the run is complete, for the final line and the result. */
  getCompletionDescription(summary: IterationSummary): Promise<string>;
  /** Optional: called once before the first iteration (labels, ...). */
  onRunStart?(): Promise<void>;
  /** Optional: called after each iteration with its verdict (progress comments, ...). */
  onIterationEnd?(summary: IterationSummary, verdict: string): Promise<void>;
  /** Optional: called once when the run ends, whatever its status, with the evidence of a completed run. */
  onRunEnd?(outcome: RunOutcome): Promise<void>;
  /** Optional: faults of the handler's own calls (gh retries, ...) since it was last asked. */
  drainFaults?(): string[];
}

/** What a handler factory gets besides the definition and arguments. */
export interface HandlerFactoryContext {
  /** Resolves the agent's prompt keys (its registry, then the built-ins). */
  resolver: {
    resolve(
      key: string,
      variables: Record<string, string | number | boolean | undefined>,
    ): Promise<string>;
  };
  /** The run's iteration cap. */
  maxIterations: number;
  /** The agent folder. */
  agentDir: URL;
  /** The working directory. */
  cwd: string;
  /** Finds learnings of earlier runs relevant to a text, for `{uv-learnings}`. */
  learnings?: (query: string) => string;
}

/**
 * Builds a completion handler from a definition and the run's arguments
 * (and, as a third argument that two-argument factories may ignore, the
 * resolver, cap and folders).
 */
export type CompletionHandlerFactory = (
  definition: AgentDefinition,
  args: Record<string, unknown>,
  context: HandlerFactoryContext,
) => CompletionHandler | Promise<CompletionHandler>;

/**
 * The completion handlers design's name for {@linkcode CompletionHandlerFactory}:
 * what its registry keeps (`registerCompletionHandler(type, factory)`,
 * `getRegisteredHandler(type)`).
 */
export type HandlerFactory = CompletionHandlerFactory;
