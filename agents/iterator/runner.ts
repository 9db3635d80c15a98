/**
 * The iteration loop: prompt, one agent session, summary, evidence, verdict,
 * repeat, until the handler is satisfied and the checkers agree, or a limit
 * stops the run. All I/O goes through injected ports (backend, git, log,
 * clock), so the loop's logic is tested without processes.
 *
 * Per iteration, after the agent's session:
 *
 * 1. git evidence: new commits since the iteration's baseline, changed files;
 * 2. a `blocked` complete_task ends the run;
 * 3. the status probe, when the agent left background work running or showed
 *    neither progress nor a complete_task call: waiting/working are probed
 *    again after an interval, blocked ends the run;
 * 4. the handler's verdict; when the work looks done but is uncommitted, the
 *    commit rescue (the agent is asked to commit; `git.autoCommit` commits);
 * 5. the checkers, when the handler says complete;
 * 6. the circuit breaker, which ends a run that makes no progress.
 *
 * @module
 */

import type { AgentDefinition } from "../common/definition/types.ts";
import type {
  AgentBackend,
  AgentConversation,
  AgentMessage,
  CommandRefusal,
  SessionPermissionMode,
  SessionRequest,
  SessionSettings,
} from "../common/backends/types.ts";
import type { CompositeChecker } from "../common/checks/composite.ts";
import type { BaselineResult, RepoChecksChecker } from "../common/checks/repo_checks.ts";
import type {
  RunGitEvidence,
  TaskCompletionContext,
  VerificationRecord,
} from "../common/checks/types.ts";
import { verify } from "../common/checks/verifier.ts";
import { firstLine, sha256Hex } from "../common/errors.ts";
import type { CompletionHandler, IterationSummary } from "../common/completion/types.ts";
import type { GitRepo, RepoState } from "../common/git.ts";
import type { RunLog } from "../common/log.ts";
import type { RunStore } from "../common/store.ts";
import { SummaryBuilder } from "../common/summary.ts";
import { CircuitBreaker } from "./circuit_breaker.ts";
import { CompletionGuard } from "./completion_guard.ts";
import { parseProbeStatus, PROBE_PROMPT, type ProbeStatus } from "./status_probe.ts";

/** How a run ended. */
export type RunStatus =
  | "completed"
  | "failed"
  | "max_iterations"
  | "stalled"
  | "blocked"
  | "budget_exhausted"
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
  interrupted: 130,
};

/** Handler or checker failures in a row that end the run failed. */
export const MAX_VERDICT_FAULTS = 3;

/** The prompt that asks the agent to commit its uncommitted work. */
export const RESCUE_PROMPT =
  "COMMIT RESCUE: your work is not committed yet. Review `git status` and `git diff`, then commit the changes " +
  "that belong to the task with a clear conventional commit message (for example `feat: ...` or `fix: ...`). " +
  "Do not discard, stash, reset or force-push anything. Reply with one line saying what you committed.";

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
  /** The repository's checks on the starting commit, when they ran. */
  baseline?: BaselineResult;
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
   * @returns The pull request's URL (when one is open) and the verification.
   */
  check(
    summary: IterationSummary,
    signal: AbortSignal,
  ): Promise<{ url?: string; verification: VerificationRecord }>;
}

/** What the runner reports while it works. */
export type RunEvent =
  | { type: "iteration_started"; iteration: number; maxIterations: number }
  | { type: "tool"; iteration: number; name: string }
  | { type: "text"; iteration: number; text: string }
  | { type: "probe"; iteration: number; status: ProbeStatus }
  | { type: "rescue"; iteration: number; by: "agent" | "runner"; clean: boolean }
  | { type: "retry"; iteration: number; attempt: number; reason: string; waitMs: number }
  | { type: "baseline"; baseline: BaselineResult }
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
  /**
   * The repository's checks, when they gate completion (they are also one of
   * the verifier's checkers): the run starts their baseline before iteration
   * 1 and records their evidence in each verified summary.
   */
  repoChecks?: RepoChecksChecker;
  /** Bash commands the agent may not run (the agent's own `gh issue close`, say). */
  refuseCommands?: CommandRefusal[];
  /** The pull request's checks as the last gate (`--create-pr` with `verify.prChecks`). */
  pullRequest?: PullRequestGate;
  /** The repository, for git evidence; absent outside one. */
  git?: GitRepo;
  /** Paths (relative to the repository root) that are finishline's own, not the agent's work. */
  ignorePaths?: string[];
  /** Rescue uncommitted work when the run ends, whatever its status (worktree runs). @default false */
  rescueOnEnd?: boolean;
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
  /** Waits between probes; tests make it instant. @default an abortable setTimeout */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The run history; each iteration is recorded in it before the next one starts. */
  store?: RunStore;
  /** The first iteration's prompt, when the caller built it already (to check it before the run). */
  initialPrompt?: string;
  /** Continue a recorded run: its iterations so far (the loop goes on with the next one). */
  resume?: { summaries: IterationSummary[]; baseline: string | null };
}

/**
 * Run the iteration loop to its end.
 *
 * @param options Definition, handler, backend and settings.
 * @returns The run's outcome; it never throws for agent or handler faults.
 * @example A run against a stand-in backend
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   type AgentBackend,
 *   createCompletionHandler,
 *   parseDefinition,
 *   runIterations,
 * } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{ "name": "docs", "probe": { "enabled": false },
 *      "behavior": { "completionType": "manual",
 *        "completionConfig": { "completionKeyword": "DOCS DONE" } } }`,
 *   { displayPath: ".agent/docs/agent.json" },
 * );
 * const handler = await createCompletionHandler(definition, {}, {
 *   agentDir: new URL("file:///nonexistent/"),
 * });
 *
 * // A stand-in for Claude Code whose second session says the keyword.
 * const prompts: string[] = [];
 * const backend: AgentBackend = {
 *   name: "scripted",
 *   async *session(request) {
 *     prompts.push(request.prompt);
 *     const text = prompts.length === 2
 *       ? "The README lists every flag. DOCS DONE"
 *       : "Reading cli.ts.";
 *     yield {
 *       type: "assistant",
 *       session_id: `s${prompts.length}`,
 *       message: { content: [{ type: "text", text }] },
 *     };
 *     yield { type: "result", subtype: "success", total_cost_usd: 0.02, num_turns: 3 };
 *   },
 * };
 *
 * const result = await runIterations({
 *   definition,
 *   handler,
 *   backend,
 *   systemPrompt: handler.buildCompletionCriteria().detailed,
 *   args: { task: "Document every flag in the README" },
 *   cwd: Deno.cwd(),
 *   maxIterations: 3,
 * });
 * assert.equal(result.status, "completed");
 * assert.equal(result.iterations, 2);
 * assert.deepEqual(result.sessionIds, ["s1", "s2"]);
 * assert.equal(result.costUsd, 0.04);
 * assert.match(prompts[0], /Document every flag in the README/);
 * ```
 */
export async function runIterations(options: RunOptions): Promise<RunResult> {
  return await new Run(options).execute();
}

class Run {
  readonly #options: RunOptions;
  readonly #definition: AgentDefinition;
  readonly #handler: CompletionHandler;
  readonly #log: RunLog | undefined;
  readonly #signal: AbortSignal;
  readonly #now: () => number;
  readonly #started: number;
  readonly #runId: string;
  readonly #agentDir: URL;
  readonly #summaries: IterationSummary[] = [];
  readonly #sessionIds: string[] = [];
  readonly #breaker: CircuitBreaker;
  #costUsd = 0;
  #git: RunGitEvidence | undefined;
  #promptDigest = "";
  #verdictFaults = 0;
  /** Uncommitted files when the run started: not the agent's work. */
  #startDirt = new Map<string, string>();
  /** The repository as the last iteration left it: the next one's starting point. */
  #repoAtEnd: { head: string | null; fingerprint: string | null } | undefined;
  /** The Claude Code process kept across iterations in the `continue` session mode. */
  #live: AgentConversation | undefined;
  #pullRequest: string | undefined;
  #baseline: BaselineResult | undefined;

  constructor(options: RunOptions) {
    this.#options = options;
    this.#definition = options.definition;
    this.#handler = options.handler;
    this.#log = options.log;
    this.#signal = options.signal ?? new AbortController().signal;
    this.#now = options.now ?? (() => performance.now());
    this.#started = this.#now();
    this.#runId = options.runId ?? crypto.randomUUID();
    this.#agentDir = options.agentDir ??
      new URL(`.agent/${this.#definition.name}/`, `file://${options.cwd}/`);
    this.#breaker = new CircuitBreaker(this.#definition.circuitBreaker);
  }

  get #behavior() {
    return this.#definition.behavior;
  }

  get #hasChecks(): boolean {
    return (this.#options.verifier?.checkers.length ?? 0) > 0;
  }

  async execute(): Promise<RunResult> {
    const { git, resume } = this.#options;
    const initial = git ? await git.observe(undefined, this.#options.ignorePaths ?? []) : undefined;
    this.#git = git ? { repo: git, baseline: resume ? resume.baseline : initial!.head } : undefined;
    for (const summary of resume?.summaries ?? []) {
      this.#summaries.push(summary);
      this.#costUsd += summary.costUsd;
      if (summary.sessionId && !this.#sessionIds.includes(summary.sessionId)) {
        this.#sessionIds.push(summary.sessionId);
      }
    }
    // Claude Code takes about 0.4 s to start: let it start while the run gets ready.
    if (initial?.head && initial.fingerprint) {
      this.#repoAtEnd = { head: initial.head, fingerprint: initial.fingerprint };
    }
    if (this.#summaries.length < this.#options.maxIterations && !this.#signal.aborted) {
      if (this.#behavior.session === "continue") {
        this.#conversation(this.#summaries.at(-1)?.sessionId, 0);
      } else {
        this.#warmNext(this.#summaries.length);
      }
    }
    const baselineCommit = this.#git?.baseline;
    if (git && baselineCommit && this.#options.repoChecks && this.#definition.verify.baseline) {
      // The baseline runs in its own worktree while the first session works.
      this.#options.repoChecks.startBaseline(git, baselineCommit).then((baseline) => {
        this.#baseline = baseline;
        this.#log?.event("baseline", { ...baseline });
        this.#options.onEvent?.({ type: "baseline", baseline });
      });
    }
    if (git) this.#startDirt = await git.snapshot(this.#options.ignorePaths ?? []) ?? new Map();
    try {
      await this.#handler.onRunStart?.();
    } catch (error) {
      this.#log?.event("handler_hook_failed", { hook: "onRunStart", error: firstLine(error) });
    }
    this.#log?.event("run_started", {
      runId: this.#runId,
      agent: this.#definition.name,
      handler: this.#handler.type,
      criteria: this.#criteria(),
      maxIterations: this.#options.maxIterations,
      backend: this.#options.backend.name,
      cwd: this.#options.cwd,
      baseline: this.#git?.baseline ?? null,
      checks: this.#options.verifier?.checkers.map((checker) => checker.name) ?? [],
      repoChecks: this.#options.repoChecks?.checks.map((check) => check.command),
      resumedAfter: resume ? resume.summaries.length : undefined,
    });
    for (
      let iteration = this.#summaries.length + 1;
      iteration <= this.#options.maxIterations;
      iteration++
    ) {
      const ended = await this.#iteration(iteration);
      if (ended) return ended;
    }
    return await this.#end(
      "max_iterations",
      `Reached the cap of ${this.#options.maxIterations} iterations before ${this.#criteria()}`,
    );
  }

  /** Runs one iteration; returns the result when the run ends with it. */
  async #iteration(iteration: number): Promise<RunResult | undefined> {
    if (this.#signal.aborted) {
      return await this.#end("interrupted", "Interrupted before the next iteration");
    }
    const spent = this.#budgetSpent();
    if (spent) return await this.#end("budget_exhausted", spent);

    let prompt: string;
    try {
      prompt = iteration === 1
        ? this.#options.initialPrompt ?? await this.#handler.buildInitialPrompt(this.#options.args)
        : await this.#handler.buildContinuationPrompt(iteration, this.#summaries);
    } catch (error) {
      this.#log?.event("prompt_failed", { iteration, error: firstLine(error) });
      return await this.#end(
        "failed",
        `Cannot build the prompt for iteration ${iteration}: ${firstLine(error)}`,
      );
    }
    prompt = withVerificationFeedback(prompt, this.#summaries.at(-1));
    this.#promptDigest = await sha256Hex(prompt);

    this.#options.onEvent?.({
      type: "iteration_started",
      iteration,
      maxIterations: this.#options.maxIterations,
    });
    this.#log?.event("iteration_started", { iteration, prompt });
    const repo = this.#options.git;
    const ignore = this.#options.ignorePaths ?? [];
    // Nothing touches the repository between two iterations, so the last one's end is this one's start.
    const start = repo ? this.#repoAtEnd ?? await repo.observe(undefined, ignore) : undefined;
    this.#repoAtEnd = undefined;
    const baseline = start?.head ?? null;
    const fingerprintBefore = start?.fingerprint ?? null;
    const iterationStart = this.#now();
    const retry = this.#definition.retry;
    const retries: string[] = [];
    let builder: SummaryBuilder;
    let guard: CompletionGuard;
    let session: { error: unknown; hung: boolean; budget: boolean };
    let fault: SessionFault | undefined;
    for (let attempt = 1;; attempt++) {
      const attemptBuilder = new SummaryBuilder(iteration, this.#definition.actions);
      builder = attemptBuilder;
      guard = new CompletionGuard({
        require: this.#behavior.requireCompleteTask,
        maxAttempts: this.#behavior.maxContinuationAttempts,
        verify: async (call) => {
          if (!this.#hasChecks) return undefined;
          const record = await verify(
            this.#options.verifier!,
            this.#checkContext(attemptBuilder.current, {
              completeTask: call,
              stopReason: "complete_task",
            }),
            "complete_task",
          );
          this.#recordChecks(attemptBuilder.current);
          return record;
        },
        onEvent: (kind, data) => this.#log?.event(kind, { iteration, ...data }),
      });
      session = await this.#session(builder, {
        prompt,
        resume: this.#behavior.session === "continue"
          ? this.#summaries.at(-1)?.sessionId
          : undefined,
        main: true,
        onCompleteTask: guard.onCompleteTask,
        onStop: guard.onStop,
      });
      if (this.#signal.aborted || session.budget) break;
      fault = classifyFault(builder, session, retry.iterationTimeoutSeconds);
      if (!fault) break;
      retries.push(`${fault.retryable ? "retryable" : "fatal"}: ${fault.message}`);
      this.#log?.event("session_fault", { iteration, attempt, ...fault });
      if (!fault.retryable || attempt >= retry.maxAttempts) break;
      let waitMs = backoffMs(attempt, retry.baseDelaySeconds, retry.maxDelaySeconds);
      if (fault.resetsAt !== undefined) {
        waitMs = Math.max(0, fault.resetsAt - Date.now());
        if (waitMs > retry.maxWaitSeconds * 1000) break;
      }
      this.#costUsd += builder.current.costUsd;
      this.#options.onEvent?.({ type: "retry", iteration, attempt, reason: fault.message, waitMs });
      await (this.#options.sleep ?? abortableSleep)(waitMs, this.#signal);
      if (this.#signal.aborted) break;
    }
    const summary = builder.current;
    this.#summaries.push(summary);
    if (retries.length > 0) summary.retries = retries;
    if (guard.lastCall) summary.completeTask = guard.lastCall;
    if (guard.verification) summary.verification = guard.verification;
    if (guard.attempts > 0) summary.continuations = guard.attempts;
    let after: RepoState | undefined;
    const refreshGit = async () => {
      if (!repo) return;
      after = await repo.observe(baseline, ignore);
      summary.git = {
        baseline: baseline ?? undefined,
        head: after.head ?? undefined,
        newCommits: after.newCommits,
        staged: after.status?.staged ?? [],
        unstaged: after.status?.unstaged ?? [],
      };
    };
    await refreshGit();
    if (
      !fault && !session.budget && !this.#signal.aborted &&
      this.#behavior.maxBudgetUsd !== undefined
    ) {
      // With a budget, the next session's cap is known only now.
      this.#warmNext(iteration, builder);
    }

    const finishSummary = () => {
      builder.finish(this.#now() - iterationStart);
      this.#costUsd += summary.costUsd;
      if (summary.sessionId && !this.#sessionIds.includes(summary.sessionId)) {
        this.#sessionIds.push(summary.sessionId);
      }
    };

    if (this.#signal.aborted) {
      finishSummary();
      summary.stopReason = "interrupted";
      await this.#record(summary, "interrupted");
      return await this.#end("interrupted", `Interrupted during iteration ${iteration}`);
    }
    if (session.budget) {
      finishSummary();
      summary.stopReason = "budget_exhausted";
      await this.#record(summary, "budget_exhausted");
      return await this.#end(
        "budget_exhausted",
        this.#budgetSpent() ?? `Time budget spent during iteration ${iteration}`,
      );
    }
    if (fault) {
      finishSummary();
      summary.errors.push(`session: ${fault.message}`);
      await this.#record(summary, "failed");
      if (!fault.retryable) return await this.#end("failed", fault.message);
      if (
        fault.resetsAt !== undefined && fault.resetsAt - Date.now() > retry.maxWaitSeconds * 1000
      ) {
        return await this.#end(
          "failed",
          `${fault.message}; the limit resets at ${
            new Date(fault.resetsAt).toISOString()
          }, beyond --max-wait (${retry.maxWaitSeconds} s): resume later with --resume`,
        );
      }
      return await this.#end(
        "failed",
        `Gave up on iteration ${iteration} after ${retries.length} attempts: ${fault.message}`,
      );
    }
    if (session.error !== undefined) {
      // The SDK throws after an error result (max turns, budget); the result is already recorded.
      this.#log?.event("session_error_after_result", {
        iteration,
        error: firstLine(session.error),
      });
    }

    if (summary.completeTask?.status === "blocked") {
      finishSummary();
      await this.#record(summary, "blocked");
      const remaining = summary.completeTask.remaining_work?.trim() || summary.completeTask.summary;
      return await this.#end(
        "blocked",
        `The agent reported the task blocked in iteration ${iteration}: ${remaining}`,
      );
    }

    // Ask, don't guess: probe when the evidence is unclear.
    const probe = await this.#probeIfUnclear(
      iteration,
      builder,
      guard.backgroundTasks,
      fingerprintBefore !== after?.fingerprint,
    );
    if (probe.ran) await refreshGit();
    if (probe.last?.status === "blocked") {
      finishSummary();
      await this.#record(summary, "blocked");
      return await this.#end(
        "blocked",
        `The agent reported the task blocked in iteration ${iteration}: ${
          probe.last.message || "(no reason given)"
        }`,
      );
    }

    let complete = false;
    let handlerFault: string | undefined;
    try {
      complete = await this.#handler.isComplete(summary);
    } catch (error) {
      // A throwing handler is an incomplete verdict with the error as feedback, not a crash.
      handlerFault = firstLine(error);
      this.#log?.event("handler_failed", { iteration, error: handlerFault });
      summary.errors.push(`handler: ${handlerFault}`);
      summary.verification = {
        passed: false,
        checker: "handler",
        feedback: `The completion handler failed: ${handlerFault}`,
        trigger: "handler",
      };
    }

    // Rescue before done: work that looks finished must be committed.
    const claimsDone = complete || summary.completeTask?.status === "success" ||
      probe.last?.status === "complete";
    let uncommitted: string[] = [];
    if (claimsDone && repo && (await this.#agentChanges()).length > 0) {
      const commitsBefore = summary.git?.newCommits ?? 0;
      uncommitted = await this.#rescue(iteration, builder, this.#definition.git.rescue);
      await refreshGit();
      if (!complete && (summary.git?.newCommits ?? 0) > commitsBefore) {
        try {
          complete = await this.#handler.isComplete(summary);
        } catch (error) {
          this.#log?.event("handler_failed", { iteration, error: firstLine(error) });
        }
      }
    }
    let faults: string[] = [];
    try {
      faults = this.#handler.drainFaults?.() ?? [];
    } catch (error) {
      faults = [`drainFaults failed: ${firstLine(error)}`];
    }
    if (faults.length > 0) summary.faults = [...(summary.faults ?? []), ...faults];
    finishSummary();

    let verdict = complete ? "complete" : "continue";
    if (complete && uncommitted.length > 0) {
      summary.verification = {
        passed: false,
        checker: "git",
        feedback: `The work is not committed: ${listPaths(uncommitted)} ${
          uncommitted.length === 1 ? "is" : "are"
        } still uncommitted after the commit rescue. Commit the changes that belong to the task.`,
        trigger: "handler",
      };
      verdict = "continue (uncommitted changes)";
    } else if (complete) {
      const exhausted = this.#budgetSpent();
      if (exhausted) {
        await this.#record(summary, "budget_exhausted");
        return await this.#end("budget_exhausted", `${exhausted}; the checks were skipped`);
      }
      let verification: VerificationRecord | undefined;
      if (this.#hasChecks) {
        verification = await verify(
          this.#options.verifier!,
          this.#checkContext(summary, {
            completeTask: summary.completeTask,
            stopReason: summary.stopReason ?? undefined,
          }),
          "handler",
        );
        summary.verification = verification;
        this.#recordChecks(summary);
        this.#log?.event("verification", { iteration, trigger: "handler", verification });
      }
      if ((!verification || verification.passed) && this.#options.pullRequest) {
        const published = await this.#options.pullRequest.check(summary, this.#signal);
        this.#pullRequest = published.url ?? this.#pullRequest;
        verification = published.verification;
        summary.verification = verification;
        this.#log?.event("verification", { iteration, trigger: "pull_request", verification });
      }
      if (!verification || verification.passed) {
        await this.#record(summary, "complete");
        let description: string;
        try {
          description = await this.#handler.getCompletionDescription(summary);
        } catch (error) {
          description = `Complete (description failed: ${firstLine(error)})`;
        }
        return await this.#end("completed", description);
      }
      verdict = `continue (verification failed: ${verification.checker})`;
    }

    const faulted = handlerFault !== undefined || summary.verification?.faulted === true;
    this.#verdictFaults = faulted ? this.#verdictFaults + 1 : 0;
    if (this.#verdictFaults >= MAX_VERDICT_FAULTS) {
      await this.#record(summary, "failed");
      return await this.#end(
        "failed",
        `The completion handler or a checker failed ${this.#verdictFaults} times in a row: ${
          handlerFault ?? summary.verification?.feedback ?? "unknown error"
        }`,
      );
    }
    if (handlerFault) verdict = "continue (handler failed)";
    // Checks run commands that may write files: look again after them.
    if (repo && (summary.verification?.trigger === "handler" || !after)) await refreshGit();
    const fingerprintAfter = after?.fingerprint ?? null;
    if (after?.head && fingerprintAfter) {
      this.#repoAtEnd = { head: after.head, fingerprint: fingerprintAfter };
    }
    const stalled = this.#breaker.record({
      newCommits: summary.git?.newCommits ?? null,
      filesChanged: fingerprintBefore === null || fingerprintAfter === null
        ? null
        : fingerprintBefore !== fingerprintAfter,
      waiting: probe.last?.status === "waiting" && !probe.exhausted,
      error: summary.errors.at(-1),
    });
    if (stalled) {
      await this.#record(summary, "stalled");
      if (repo && (await this.#agentChanges()).length > 0) {
        await this.#rescue(iteration, builder, this.#definition.git.rescue);
        await refreshGit();
      }
      return await this.#end("stalled", stalled);
    }
    await this.#record(summary, verdict);
    const exhausted = this.#budgetSpent();
    if (exhausted) return await this.#end("budget_exhausted", exhausted);
    return undefined;
  }

  /** The baseline for the result; one still running is stopped, not waited for. */
  async #baselineIfDone(): Promise<{ baseline?: BaselineResult }> {
    const checks = this.#options.repoChecks;
    if (!checks) return {};
    if (!this.#baseline) await checks.stopBaseline();
    return this.#baseline ? { baseline: this.#baseline } : {};
  }

  /** Copy the repository checks' latest evidence into the summary. */
  #recordChecks(summary: IterationSummary): void {
    const evidence = this.#options.repoChecks?.evidence;
    if (evidence) summary.checks = structuredClone(evidence);
  }

  /** What every session of this run is started with; `spent` is cost not yet in the total. */
  #sessionSettings(spent: number): SessionSettings {
    const behavior = this.#behavior;
    return {
      systemPromptAppend: this.#options.systemPrompt,
      cwd: this.#options.cwd,
      allowedTools: behavior.allowedTools,
      disallowedTools: behavior.disallowedTools,
      permissionMode: this.#options.permissionMode ?? behavior.permissionMode,
      model: behavior.model,
      maxTurns: behavior.maxTurns,
      // Rounded so that the same budget computed twice compares equal (warm processes).
      maxBudgetUsd: behavior.maxBudgetUsd !== undefined
        ? Math.max(0, Math.round((behavior.maxBudgetUsd - this.#costUsd - spent) * 1e6) / 1e6)
        : undefined,
      settingSources: behavior.settingSources,
      env: this.#options.env,
      refuseCommands: this.#options.refuseCommands,
    };
  }

  /**
   * In the `fresh` session mode, start the process of the session after
   * `iteration` now, so that its start-up (about 0.3 s) overlaps this one.
   */
  #warmNext(iteration: number, builder?: SummaryBuilder): void {
    const backend = this.#options.backend;
    if (
      !backend.warm || this.#behavior.session !== "fresh" || !this.#behavior.prewarm ||
      iteration >= this.#options.maxIterations || this.#signal.aborted
    ) return;
    backend.warm({
      ...this.#sessionSettings(builder?.current.costUsd ?? 0),
      completeTask: true,
      stopHook: true,
    });
  }

  /**
   * The conversation for the `continue` session mode: the live one, or a new
   * one that resumes `resume`. None when the backend has no conversations.
   */
  #conversation(resume: string | undefined, spent: number): AgentConversation | undefined {
    const backend = this.#options.backend;
    if (this.#behavior.session !== "continue" || !backend.conversation) return undefined;
    if (this.#live && resume && this.#live.sessionId && this.#live.sessionId !== resume) {
      this.#closeLive();
    }
    this.#live ??= backend.conversation({
      ...this.#sessionSettings(spent),
      resume,
      completeTask: true,
      stopHook: true,
    });
    return this.#live;
  }

  #closeLive(): Promise<void> {
    const live = this.#live;
    this.#live = undefined;
    return live?.close() ?? Promise.resolve();
  }

  /**
   * Runs one agent session into the builder, with a watchdog that aborts a
   * session that sends no message for `retry.iterationTimeoutSeconds`. In the
   * `continue` mode the prompt goes into the live conversation; a session that
   * fails ends it, and the next prompt starts one that resumes the session.
   */
  async #session(
    builder: SummaryBuilder,
    request: Pick<SessionRequest, "prompt" | "resume" | "onCompleteTask" | "onStop"> & {
      signal?: AbortSignal;
      /** The iteration's own session (not a follow-up): the next one may be warmed during it. */
      main?: boolean;
    },
  ): Promise<{ error: unknown; hung: boolean; budget: boolean }> {
    const behavior = this.#behavior;
    const iteration = builder.current.iteration;
    const watchdog = new AbortController();
    const idleMs = this.#definition.retry.iterationTimeoutSeconds * 1000;
    let timer = setTimeout(() => watchdog.abort(), idleMs);
    const signals = [this.#signal, watchdog.signal];
    const timeLeft = behavior.maxDurationSeconds !== undefined
      ? Math.max(0, behavior.maxDurationSeconds * 1000 - (this.#now() - this.#started))
      : undefined;
    const budget = timeLeft !== undefined ? AbortSignal.timeout(timeLeft) : undefined;
    if (budget) signals.push(budget);
    if (request.signal) signals.push(request.signal);
    const signal = AbortSignal.any(signals);
    const spent = builder.current.costUsd;
    const live = this.#conversation(request.resume, spent);
    const started = this.#now();
    let failed = false;
    try {
      const messages: AsyncIterable<AgentMessage> = live
        ? live.send({
          prompt: request.prompt,
          onCompleteTask: request.onCompleteTask,
          onStop: request.onStop,
          signal,
        })
        : this.#options.backend.session({
          ...this.#sessionSettings(spent),
          prompt: request.prompt,
          resume: request.resume,
          onCompleteTask: request.onCompleteTask,
          onStop: request.onStop,
          signal,
        });
      let first = true;
      for await (const message of messages) {
        if (first && request.main && this.#behavior.maxBudgetUsd === undefined) {
          // The agent is at work: start the next iteration's process beside it.
          this.#warmNext(iteration);
        }
        first = false;
        clearTimeout(timer);
        timer = setTimeout(() => watchdog.abort(), idleMs);
        this.#log?.message(iteration, message);
        const before = builder.current.toolsUsed.length;
        const textsBefore = builder.current.assistantResponses.length;
        builder.add(message);
        for (const name of builder.current.toolsUsed.slice(before)) {
          this.#options.onEvent?.({ type: "tool", iteration, name });
        }
        for (const text of builder.current.assistantResponses.slice(textsBefore)) {
          this.#options.onEvent?.({ type: "text", iteration, text });
        }
        if (watchdog.signal.aborted) break;
      }
      failed = watchdog.signal.aborted;
      return { error: undefined, hung: watchdog.signal.aborted, budget: budget?.aborted ?? false };
    } catch (error) {
      failed = true;
      return { error, hung: watchdog.signal.aborted, budget: budget?.aborted ?? false };
    } finally {
      clearTimeout(timer);
      builder.current.agentMs = (builder.current.agentMs ?? 0) + Math.round(this.#now() - started);
      if (live && (failed || signal.aborted)) await this.#closeLive();
    }
  }

  /**
   * Resume the iteration's session with a follow-up prompt (probe, rescue);
   * its messages join the iteration's summary.
   */
  async #followUp(
    builder: SummaryBuilder,
    prompt: string,
    timeoutMs: number,
  ): Promise<string | undefined> {
    const sessionId = builder.current.sessionId;
    if (!sessionId) return undefined;
    const before = builder.current.assistantResponses.length;
    const signal = AbortSignal.any([this.#signal, AbortSignal.timeout(timeoutMs)]);
    const { error } = await this.#session(builder, { prompt, resume: sessionId, signal });
    if (error !== undefined && !this.#signal.aborted) {
      this.#log?.event("follow_up_failed", {
        iteration: builder.current.iteration,
        error: signal.aborted ? `timed out after ${timeoutMs} ms` : firstLine(error),
      });
      if (signal.aborted) return undefined;
    }
    return builder.current.assistantResponses.slice(before).join("\n");
  }

  async #probeIfUnclear(
    iteration: number,
    builder: SummaryBuilder,
    backgroundTasks: number,
    filesChanged: boolean,
  ): Promise<{ ran: boolean; last?: ProbeStatus; exhausted: boolean }> {
    const settings = this.#definition.probe;
    const summary = builder.current;
    if (!settings.enabled || !summary.sessionId || this.#signal.aborted) {
      return { ran: false, exhausted: false };
    }
    const progressed = (summary.git?.newCommits ?? 0) > 0 ||
      (this.#options.git !== undefined && filesChanged);
    if (backgroundTasks === 0 && (progressed || summary.completeTask)) {
      return { ran: false, exhausted: false };
    }

    const probes: ProbeStatus[] = [];
    let exhausted = false;
    for (let attempt = 1; attempt <= settings.maxProbes; attempt++) {
      const reply = await this.#followUp(
        builder,
        PROBE_PROMPT,
        settings.probeTimeoutSeconds * 1000,
      );
      const status: ProbeStatus = reply === undefined
        ? {
          status: "unknown",
          message: "the probe timed out or failed",
          tasksCompleted: [],
          tasksPending: [],
          nextAction: "",
        }
        : parseProbeStatus(reply);
      probes.push(status);
      this.#log?.event("probe", { iteration, attempt, status });
      this.#options.onEvent?.({ type: "probe", iteration, status });
      if (status.status !== "waiting" && status.status !== "working") break;
      if (attempt === settings.maxProbes) {
        exhausted = true;
        break;
      }
      await (this.#options.sleep ?? abortableSleep)(
        settings.probeIntervalSeconds * 1000,
        this.#signal,
      );
      if (this.#signal.aborted) break;
    }
    summary.probes = probes.map((probe) => ({ status: probe.status, message: probe.message }));
    return { ran: true, last: probes.at(-1), exhausted };
  }

  /**
   * Commit rescue: ask the agent to commit (when allowed), then, with
   * `git.autoCommit`, commit what is left. Returns the files still uncommitted.
   */
  async #rescue(iteration: number, builder: SummaryBuilder, askAgent: boolean): Promise<string[]> {
    const repo = this.#options.git!;
    const dirty = () => this.#agentChanges();
    let left = await dirty();
    if (left.length === 0) return left;
    const rescue: NonNullable<IterationSummary["rescue"]> = {
      files: left,
      by: "none",
      clean: false,
    };
    builder.current.rescue = rescue;
    if (askAgent && builder.current.sessionId && !this.#signal.aborted) {
      await this.#followUp(
        builder,
        RESCUE_PROMPT,
        this.#definition.probe.probeTimeoutSeconds * 1000,
      );
      left = await dirty();
      rescue.by = "agent";
      this.#log?.event("rescue", { iteration, by: "agent", left });
      this.#options.onEvent?.({ type: "rescue", iteration, by: "agent", clean: left.length === 0 });
    }
    if (left.length > 0 && this.#definition.git.autoCommit) {
      const message = `chore(finishline): commit work left uncommitted by run ${
        this.#runId.slice(0, 8)
      }, iteration ${iteration}\n\nAgent: ${this.#definition.name}\nRun: ${this.#runId}\nFiles: ${
        left.join(", ")
      }`;
      const commit = await repo.commitPaths(left, message);
      left = await dirty();
      rescue.by = "runner";
      this.#log?.event("rescue", { iteration, by: "runner", commit, left });
      this.#options.onEvent?.({
        type: "rescue",
        iteration,
        by: "runner",
        clean: left.length === 0,
      });
    }
    rescue.clean = left.length === 0;
    return left;
  }

  /** The handler's short criteria; a handler that throws here must not crash the run. */
  #criteria(): string {
    try {
      return this.#handler.buildCompletionCriteria().short;
    } catch (error) {
      return `its criteria (the handler failed to state them: ${firstLine(error)})`;
    }
  }

  /** Uncommitted files the agent changed (not those already uncommitted at the start). */
  async #agentChanges(): Promise<string[]> {
    const repo = this.#options.git;
    if (!repo) return [];
    const now = await repo.snapshot(this.#options.ignorePaths ?? []);
    if (!now) return [];
    return [...now].filter(([path, signature]) => this.#startDirt.get(path) !== signature).map((
      [path],
    ) => path);
  }

  #checkContext(
    summary: IterationSummary,
    extra: Partial<TaskCompletionContext>,
  ): TaskCompletionContext {
    return {
      summary,
      previous: this.#summaries.filter((earlier) => earlier !== summary),
      definition: this.#definition,
      cwd: this.#options.cwd,
      agentDir: this.#agentDir,
      git: this.#git,
      backend: this.#options.backend,
      signal: this.#signal,
      ...extra,
    };
  }

  #budgetSpent(): string | undefined {
    const behavior = this.#behavior;
    if (behavior.maxBudgetUsd !== undefined && this.#costUsd >= behavior.maxBudgetUsd) {
      return `Cost budget of $${behavior.maxBudgetUsd} spent ($${this.#costUsd.toFixed(4)})`;
    }
    if (
      behavior.maxDurationSeconds !== undefined &&
      this.#now() - this.#started >= behavior.maxDurationSeconds * 1000
    ) {
      return `Time budget of ${behavior.maxDurationSeconds} s spent`;
    }
    return undefined;
  }

  async #record(summary: IterationSummary, verdict: string): Promise<void> {
    summary.verdict = verdict;
    this.#log?.event("iteration_finished", { iteration: summary.iteration, verdict, summary });
    try {
      this.#options.store?.recordIteration({
        runId: this.#runId,
        number: summary.iteration,
        sessionId: summary.sessionId ?? null,
        promptDigest: this.#promptDigest,
        summary,
        verdict,
      });
    } catch (error) {
      this.#log?.event("store_failed", { iteration: summary.iteration, error: firstLine(error) });
    }
    try {
      await this.#handler.onIterationEnd?.(summary, verdict);
    } catch (error) {
      this.#log?.event("handler_hook_failed", { hook: "onIterationEnd", error: firstLine(error) });
    }
    this.#options.onEvent?.({
      type: "iteration_finished",
      iteration: summary.iteration,
      maxIterations: this.#options.maxIterations,
      summary,
      verdict,
    });
  }

  async #end(status: RunStatus, completionReason: string): Promise<RunResult> {
    const last = this.#summaries.at(-1);
    if (
      this.#options.rescueOnEnd && this.#options.git && status !== "stalled" &&
      !this.#signal.aborted
    ) {
      if ((await this.#agentChanges()).length > 0) {
        const builder = new SummaryBuilder(last?.iteration ?? 0, this.#definition.actions);
        if (last?.sessionId) builder.add({ type: "system", session_id: last.sessionId });
        const left = await this.#rescue(last?.iteration ?? 0, builder, this.#definition.git.rescue);
        this.#costUsd += builder.current.costUsd;
        this.#log?.event("final_rescue", { left });
      }
    }
    await this.#closeLive();
    try {
      await this.#options.backend.release?.();
    } catch (error) {
      this.#log?.event("backend_release_failed", { error: firstLine(error) });
    }
    const result: RunResult = {
      status,
      completionReason,
      iterations: this.#summaries.length,
      costUsd: Math.round(this.#costUsd * 1e6) / 1e6,
      durationMs: Math.round(this.#now() - this.#started),
      runId: this.#runId,
      sessionIds: this.#sessionIds,
      logFile: this.#log?.path,
      summaries: this.#summaries,
      ...(this.#pullRequest ? { pullRequest: this.#pullRequest } : {}),
      ...(await this.#baselineIfDone()),
    };
    this.#log?.event("run_finished", {
      runId: this.#runId,
      status,
      completionReason,
      iterations: result.iterations,
      costUsd: result.costUsd,
      durationMs: result.durationMs,
    });
    this.#options.onEvent?.({ type: "run_finished", result });
    return result;
  }
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

function listPaths(paths: string[]): string {
  const shown = paths.slice(0, 5).map((path) => `"${path}"`).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}

/** A fault of one session attempt. */
export interface SessionFault {
  /** Whether re-running the iteration may help. */
  retryable: boolean;
  /** What happened and, for fatal faults, what to do. */
  message: string;
  /** For a rejected rate limit: when it resets (epoch milliseconds). */
  resetsAt?: number;
}

const FATAL_API_ERRORS: Record<string, string> = {
  authentication_failed:
    "Authentication failed: check ANTHROPIC_API_KEY (or log in with `claude login`)",
  oauth_org_not_allowed: "This organisation may not use Claude Code: log in with another account",
  account_on_hold: "The account is on hold: see the Anthropic console",
  verification_required: "The account needs verification: log in with `claude login`",
  billing_error:
    "Billing: the credit balance is too low or billing is not set up; add credits in the Anthropic console",
  model_not_found: "The model was not found: check --model or behavior.model",
  cloud_credential_error: "The cloud credentials (Bedrock/Vertex) were rejected: check them",
  invalid_request: "The API rejected the request as invalid",
};

const RETRYABLE_API_ERRORS = new Set(["rate_limit", "overloaded", "server_error", "unknown"]);

/**
 * Classify what went wrong in a session: rate limits, overload and server
 * errors, a dead agent process and a hang are retryable; authentication,
 * billing, a missing model or binary are fatal. A session that ended
 * normally has no fault.
 *
 * @param builder The session's summary builder.
 * @param session Its error and whether the watchdog fired.
 * @param timeoutSeconds The watchdog's timeout, for the message.
 * @returns The fault, or undefined.
 */
export function classifyFault(
  builder: SummaryBuilder,
  session: { error: unknown; hung: boolean },
  timeoutSeconds: number,
): SessionFault | undefined {
  if (session.hung) {
    return {
      retryable: true,
      message:
        `No message from the agent for ${timeoutSeconds} s: the session hung and was aborted`,
    };
  }
  const limit = builder.rateLimit;
  if (limit?.status === "rejected") {
    return {
      retryable: true,
      message: "Rate limited (the usage limit was reached)",
      resetsAt: limit.resetsAt !== undefined ? limit.resetsAt * 1000 : undefined,
    };
  }
  const apiError = builder.apiError;
  const detail = builder.current.errors.findLast((error) => error.startsWith("api ")) ?? "";
  if (apiError && FATAL_API_ERRORS[apiError]) {
    return { retryable: false, message: `${FATAL_API_ERRORS[apiError]} (${detail || apiError})` };
  }
  if (apiError && RETRYABLE_API_ERRORS.has(apiError)) {
    return { retryable: true, message: `API error: ${detail || apiError}` };
  }
  if (session.error !== undefined && !builder.sawResult) {
    const message = firstLine(session.error);
    if (/ENOENT|no such file|not found|EACCES|spawn/i.test(message)) {
      return {
        retryable: false,
        message:
          `The Claude Code binary could not be started: ${message}; reinstall the dependencies (deno install) or check the executable path`,
      };
    }
    return { retryable: true, message: `The agent process ended without a result: ${message}` };
  }
  return undefined;
}

/**
 * Exponential backoff with jitter: base * 2^(attempt-1), at most max, then
 * a random 50-100% of it.
 *
 * @param attempt The attempt that failed (1-based).
 * @param baseSeconds First delay.
 * @param maxSeconds Cap.
 * @returns Milliseconds to wait.
 */
export function backoffMs(attempt: number, baseSeconds: number, maxSeconds: number): number {
  const capped = Math.min(maxSeconds, baseSeconds * 2 ** (attempt - 1)) * 1000;
  return Math.round(capped * (0.5 + Math.random() / 2));
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
