/**
 * The run's contract: what it needs (`RunOptions`), what it reports while it
 * works (`RunEvent`) and how it ends (`RunResult`, `RunStatus`, exit codes).
 *
 * @module
 */

import type { AgentDefinition } from "../definition/definition_types.ts";
import type {
  AgentBackend,
  AgentMessage,
  CommandRefusal,
  SessionPermissionMode,
} from "../backends/port.ts";
import type { CompositeChecker } from "../checks/composite.ts";
import type { RepoChecksChecker } from "../evidence/repo_checks.ts";
import type { BaselineResult } from "../evidence/run/baseline_result.ts";
import type { ReproductionRecord } from "./reproduction_plan.ts";
import type { IndependentCost } from "./independent_cost.ts";
import type { VerificationRecord } from "../checks/checker_contract.ts";
import type { CompletionHandler } from "../completion/handler_contract.ts";
import type { IterationSummary, ReviewedDeclaration } from "../record/iteration.ts";
import type { GitRepo } from "../git/repo.ts";
import type { RunLog } from "../support/log.ts";
import type { RunStore } from "../store/mod.ts";
import type { FinishToolAnswer, FinishToolCall } from "../record/finish_call.ts";
import type { ProbeStatus } from "./status_probe.ts";

/** How a run ended. */
export type RunStatus =
  | "completed"
  | "failed"
  | "max_iterations"
  | "stalled"
  | "blocked"
  | "budget_exhausted"
  | "unverified"
  | "interrupted";

/**
 * Exit code of each run status (DESIGN.md's table).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXIT_CODES } from "@finishline/agents";
 *
 * assert.equal(EXIT_CODES.completed, 0);
 * assert.equal(EXIT_CODES.max_iterations, 3);
 * assert.equal(EXIT_CODES.interrupted, 130);
 * ```
 */
export const EXIT_CODES: Readonly<Record<RunStatus, number>> = {
  completed: 0,
  failed: 1,
  max_iterations: 3,
  stalled: 4,
  blocked: 5,
  budget_exhausted: 6,
  unverified: 7,
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
  /** The pull request the run opened, when it opened one. */
  pullRequest?: string;
  /**
   * Why nothing verified the work, when the handler was satisfied but no
   * evidence checked the final state (`no checks found`): the status is then
   * `unverified`, except for an iterate run, which promises a number of
   * iterations and stays `completed`.
   */
  unverified?: string;
  /**
   * The repository's checks on the starting commit, when they ran.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  baseline?: BaselineResult;
  /**
   * The verifier's held-out reproduction test (`verify.reproduce`), when one was started.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  reproduction?: ReproductionRecord;
  /**
   * What the reviewer sessions of declarations cost, when one ran.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  review?: IndependentCost;
  /** Every review of the worker's declarations, in order: the commit, each declaration and its verdict. */
  reviews?: Array<{ commit: string; declarations: ReviewedDeclaration[] }>;
  /**
   * Why the model could not be used when the run ended for it (unreachable,
   * credentials refused, failing beyond the wait budget): the finish asks it nothing.
   */
  modelFailure?: string;
  /**
   * The final commit rescue at the run's end (`rescue.finalAttempt`), when
   * the agent left uncommitted work: how the run ended, who committed last
   * (the agent when asked, the runner with `git.autoCommit`, or none), the
   * agent's files found (files uncommitted before the run are the user's,
   * never among them), those still uncommitted afterwards, and the new HEAD
   * when the rescue created a commit.
   */
  finalRescue?: {
    status: string;
    by: "agent" | "runner" | "none";
    files: string[];
    left: string[];
    commit: string | null;
  };
}

/**
 * The pull request as evidence: push the work, open the pull request if it
 * is not open yet, and wait for its checks.
 */
export interface PullRequestGate {
  /**
   * Publish the iteration's work and wait for the pull request's checks.
   *
   * @param summary The iteration whose work passed the local checks.
   * @param signal Aborts the wait.
   * @returns The pull request's URL (when one is open), the verification, and
   *   how many of the pull request's checks ran and passed (none is no evidence).
   */
  check(
    summary: IterationSummary,
    signal: AbortSignal,
  ): Promise<{ url?: string; verification: VerificationRecord; checksPassed?: number }>;
}

/**
 * What the runner reports while it works: one stream that the JSONL log, the
 * progress output and the report all read.
 */
export type RunEvent =
  | { type: "run_started"; facts: Record<string, unknown> }
  | { type: "iteration_started"; iteration: number; maxIterations: number; prompt?: string }
  | { type: "message"; iteration: number; message: AgentMessage }
  | { type: "tool"; iteration: number; name: string }
  | { type: "text"; iteration: number; text: string }
  | { type: "guard"; iteration: number; kind: string; data: Record<string, unknown> }
  | { type: "prompt_failed"; iteration: number; error: string }
  | { type: "session_fault"; iteration: number; attempt: number; fault: SessionFaultFacts }
  | { type: "session_error_after_result"; iteration: number; error: string }
  | { type: "follow_up_failed"; iteration: number; error: string }
  | { type: "probe"; iteration: number; status: ProbeStatus; attempt?: number }
  | { type: "probe_skipped"; iteration: number; reason: "commits"; newCommits: number }
  | {
    type: "rescue";
    iteration: number;
    by: "agent" | "runner";
    clean: boolean;
    left?: string[];
    commit?: string | null;
  }
  | ({ type: "final_rescue" } & NonNullable<RunResult["finalRescue"]>)
  | { type: "handler_failed"; iteration: number; error: string }
  | { type: "handler_hook_failed"; hook: string; error: string }
  | {
    type: "verification";
    iteration: number;
    trigger: string;
    verification: VerificationRecord;
    /** The checkers did not run: the same tree's latest verification was reused. */
    reused?: boolean;
  }
  | { type: "check"; iteration: number; name: string; running: boolean }
  | { type: "store_failed"; iteration: number; error: string }
  | { type: "backend_release_failed"; error: string }
  | { type: "retry"; iteration: number; attempt: number; reason: string; waitMs: number }
  | {
    type: "api_retry";
    iteration: number;
    attempt: number;
    maxRetries: number;
    status: number | null;
    error: string;
    waitMs: number;
    noResponseMs?: number;
    /** For a connection error: why the API host cannot be reached, as a probe found it. */
    cause?: string;
  }
  | { type: "baseline"; baseline: BaselineResult }
  | { type: "reproduction"; reproduction: ReproductionRecord }
  | {
    type: "iteration_finished";
    iteration: number;
    maxIterations: number;
    summary: IterationSummary;
    verdict: string;
  }
  | { type: "run_finished"; result: RunResult };

/** A session fault as the log records it. */
export interface SessionFaultFacts {
  /** Whether re-running the iteration may help. */
  retryable: boolean;
  /** What happened. */
  message: string;
  /** For a rejected rate limit: when it resets (epoch milliseconds). */
  resetsAt?: number;
}

/** Everything a run needs. */
export interface RunOptions {
  /** The agent definition (after CLI overrides). */
  definition: AgentDefinition;
  /** The completion handler. */
  handler: CompletionHandler;
  /** Runs agent sessions. */
  backend: AgentBackend;
  /**
   * Runs the verifier and reviewer sessions (`verify.reproduceBackend`).
   * @default backend
   */
  independentBackend?: AgentBackend;
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
  /**
   * The repository's checks, when they gate completion (they are also one of
   * the verifier's checkers): the run starts their baseline before iteration
   * 1 and records their evidence in each verified summary.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  repoChecks?: RepoChecksChecker;
  /** Bash commands the agent may not run (the agent's own `gh issue close`, say). */
  refuseCommands?: CommandRefusal[];
  /**
   * The pull request's checks as the last gate (`--create-pr` with `verify.prChecks`).
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  pullRequest?: PullRequestGate;
  /**
   * The repository, for git evidence; absent outside one.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  git?: GitRepo;
  /** Paths (relative to the repository root) that are finishline's own, not the agent's work. */
  ignorePaths?: string[];
  /**
   * Rescue uncommitted work whatever the run's end, completed too, even with
   * `rescue.finalAttempt` off (worktree runs: the worktree's uncommitted files
   * would be lost). @default false
   */
  rescueOnEnd?: boolean;
  /** Run id. @default a random UUID */
  runId?: string;
  /** Permission mode override (the CLI's). @default definition.behavior.permissionMode */
  permissionMode?: SessionPermissionMode;
  /**
   * JSONL log.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  log?: RunLog;
  /** Aborts the run (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /**
   * Progress callback.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  onEvent?: (event: RunEvent) => void;
  /** Extra environment for the agent process. */
  env?: Record<string, string>;
  /** Milliseconds clock. @default performance.now */
  now?: () => number;
  /** Waits between probes; tests make it instant. @default an abortable setTimeout */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * The run history; each iteration is recorded in it before the next one starts.
   *
   * @ignore
   */
  store?: RunStore;
  /**
   * Runs the finish workflow when the agent calls the finish tool (the CLI's:
   * the loop does not import the workflow). Without it, the tool's answer is
   * built from the call alone, with `history_saved: false`.
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  finishTool?: (
    call: FinishToolCall,
    context: {
      sessionId?: string;
      pending: IterationSummary;
      outcome: { status: string; reason: string };
      signal: AbortSignal;
    },
  ) => Promise<FinishToolAnswer>;
  /** The first iteration's prompt, when the caller built it already (to check it before the run). */
  initialPrompt?: string;
  /** Continue a recorded run: its iterations so far (the loop goes on with the next one). */
  resume?: { summaries: IterationSummary[]; baseline: string | null };
  /**
   * Names the cause of a connection error that the agent reports without one
   * (by probing the API host once per session); undefined when the host answers.
   */
  connectionCause?: () => Promise<string | undefined>;
}
