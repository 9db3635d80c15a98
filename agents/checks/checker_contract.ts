/**
 * The task completion checker protocol (the user's task completion checking
 * design): a checker looks at the evidence and says whether the task is
 * complete, with natural-language feedback when it is not.
 *
 * @module
 */

import type { AgentDefinition } from "../definition/definition_types.ts";
import type { AgentBackend } from "../backends/port.ts";
import type { CompleteTaskCall } from "../record/complete_task_call.ts";
import type { AgentMessage, IterationSummary } from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import type { Filesystem } from "./filesystem.ts";

/** One iteration as a checker sees it. */
export interface SessionIteration {
  /** Its summary (so far, when the check runs from complete_task). */
  readonly summary: IterationSummary;
  /**
   * The agent's messages (Claude Agent SDK shaped), in order, the commit
   * rescue's and status probes' included. Empty for iterations of an earlier
   * process that `--resume` picked up: only their summaries are kept.
   */
  readonly messages: readonly AgentMessage[];
}

/** The run's session: the iteration being checked, and the earlier ones. */
export interface CheckerSession extends SessionIteration {
  /** Every earlier iteration, oldest first. */
  readonly previous: readonly SessionIteration[];
}

/** What the agent is about to hand in: its complete_task report, or its final text. */
export type TentativeOutput = CompleteTaskCall | string | undefined;

/** Options of {@linkcode ModelAdapter.ask}. */
export interface AskModelOptions {
  /** Who the model is and how to answer (appended to the system prompt). @default "You are a careful reviewer..." */
  system?: string;
  /** The model; the agent's (`behavior.model`) when absent. */
  model?: string;
  /** How long the answer may take, in seconds. @default 180 */
  timeoutSeconds?: number;
}

/** A way for a checker to ask the model one question (the design's `adapter`). */
export interface ModelAdapter {
  /**
   * Ask one question in a separate session without tools.
   *
   * @param prompt The question, with whatever evidence the model needs.
   * @param options System prompt, model and timeout.
   * @returns The model's reply text.
   * @throws {Error} When the session fails or times out.
   */
  ask(prompt: string, options?: AskModelOptions): Promise<string>;
}

/** A tool call of the session with its result. */
export interface SessionToolCall {
  /** The tool (`Bash`, `Read`, ...). */
  name: string;
  /** Its input as the model sent it. */
  input: unknown;
  /** The result's text; empty while no result arrived. */
  output: string;
  /** Whether the tool reported an error. */
  isError: boolean;
}

/** The result of a check. */
export interface TaskCompletionResult {
  /** Whether the task is complete as far as this checker can tell. */
  readonly complete: boolean;
  /** Why not (or a note when complete). */
  readonly feedback?: string;
}

/**
 * A complete result, frozen (the design's results are immutable).
 *
 * @param feedback Optional note.
 * @returns The result.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ok } from "@finishline/agents";
 *
 * assert.deepEqual(ok(), { complete: true });
 * assert.deepEqual(ok("3 tests pass"), { complete: true, feedback: "3 tests pass" });
 * assert.equal(Object.isFrozen(ok()), true);
 * ```
 */
export function ok(feedback?: string): TaskCompletionResult {
  return Object.freeze(feedback === undefined ? { complete: true } : { complete: true, feedback });
}

/**
 * An incomplete result, frozen (the design's results are immutable).
 *
 * @param feedback What is missing, for the agent.
 * @returns The result.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { incomplete } from "@finishline/agents";
 *
 * const result = incomplete("tests fail");
 * assert.deepEqual(result, { complete: false, feedback: "tests fail" });
 * assert.throws(() => {
 *   (result as { complete: boolean }).complete = true;
 * }, TypeError);
 * ```
 */
export function incomplete(feedback: string): TaskCompletionResult {
  return Object.freeze({ complete: false, feedback });
}

/**
 * The result helpers under the design's names, so checkers written from it
 * read as it does: `TaskCompletionResult.ok(...)`, `TaskCompletionResult.incomplete(...)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TaskCompletionResult } from "@finishline/agents";
 *
 * const result: TaskCompletionResult = TaskCompletionResult.incomplete("Missing: output.txt");
 * assert.deepEqual(result, { complete: false, feedback: "Missing: output.txt" });
 * assert.equal(TaskCompletionResult.ok().complete, true);
 * ```
 */
export const TaskCompletionResult: {
  /** A complete result, with an optional note. */
  readonly ok: typeof ok;
  /** An incomplete result, with what is missing. */
  readonly incomplete: typeof incomplete;
} = { ok, incomplete };

/** Git evidence for the whole run, for checkers. */
export interface RunGitEvidence {
  /** The repository. */
  repo: GitRepo;
  /** HEAD when the run started (null in an empty repository). */
  baseline: string | null;
}

/**
 * Everything a checker may look at: the design's `session`,
 * `tentativeOutput`, `filesystem`, `adapter` and `stopReason`, and the
 * run's facts.
 */
export interface TaskCompletionContext {
  /** This iteration's summary and messages, and the earlier iterations'. */
  session: CheckerSession;
  /** What the agent is about to hand in: its complete_task report, else its last text. */
  tentativeOutput?: TentativeOutput;
  /** The repository's files, read-only; paths are relative to its root (the working directory outside git). */
  filesystem?: Filesystem;
  /** Asks the model one question; absent without a backend. */
  adapter?: ModelAdapter;
  /** The current iteration's summary (so far, when checked from complete_task); `session.summary`. */
  summary: IterationSummary;
  /** Every earlier iteration's summary; `session.previous` with their messages. */
  previous: IterationSummary[];
  /** The agent definition. */
  definition: AgentDefinition;
  /** Working directory. */
  cwd: string;
  /** The agent folder. */
  agentDir: URL;
  /** Git evidence; absent outside a repository. */
  git?: RunGitEvidence;
  /** The backend, for checkers that ask a model (the judge). */
  backend?: AgentBackend;
  /** Why the agent is stopping (`complete_task`, `end_turn`, `max_turns`, ...). */
  stopReason?: string;
  /** The complete_task payload, when the agent called it. */
  completeTask?: CompleteTaskCall;
  /** Aborts long checks. */
  signal?: AbortSignal;
  /**
   * Told when a long check starts (`running` true) and ends, by its name
   * (the command), so that progress can show what runs; checkers that run
   * commands call it.
   */
  onCheck?: (name: string, running: boolean) => void;
}

/** Verifies that a task is complete: any object with `check`. */
export interface TaskCompletionChecker {
  /**
   * Name for logs and feedback (`command`, `git`, ...); a custom checker
   * without one is named after its file, any other after its class.
   */
  readonly name?: string;
  /**
   * Check the evidence.
   *
   * @param context The evidence.
   * @returns Complete, or incomplete with feedback.
   */
  check(context: TaskCompletionContext): Promise<TaskCompletionResult> | TaskCompletionResult;
}

/** The outcome of a verification, as recorded in the summary and the log. */
export type VerificationRecord = NonNullable<IterationSummary["verification"]>;
