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

import type { AgentDefinition } from "../common/agent_definition.ts";
import type {
  AgentBackend,
  SessionPermissionMode,
  SessionRequest,
} from "../common/backends/types.ts";
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
}

/** What the runner reports while it works. */
export type RunEvent =
  | { type: "iteration_started"; iteration: number; maxIterations: number }
  | { type: "tool"; iteration: number; name: string }
  | { type: "probe"; iteration: number; status: ProbeStatus }
  | { type: "rescue"; iteration: number; by: "agent" | "runner"; clean: boolean }
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
  /** Continue a recorded run: its iterations so far (the loop goes on with the next one). */
  resume?: { summaries: IterationSummary[]; baseline: string | null };
}

/**
 * Run the iteration loop to its end.
 *
 * @param options Definition, handler, backend and settings.
 * @returns The run's outcome; it never throws for agent or handler faults.
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
  /** Uncommitted files when the run started: not the agent's work. */
  #startDirt = new Map<string, string>();

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
    this.#git = git
      ? { repo: git, baseline: resume ? resume.baseline : await git.head() }
      : undefined;
    for (const summary of resume?.summaries ?? []) {
      this.#summaries.push(summary);
      this.#costUsd += summary.costUsd;
      if (summary.sessionId && !this.#sessionIds.includes(summary.sessionId)) {
        this.#sessionIds.push(summary.sessionId);
      }
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
      criteria: this.#handler.buildCompletionCriteria().short,
      maxIterations: this.#options.maxIterations,
      backend: this.#options.backend.name,
      cwd: this.#options.cwd,
      baseline: this.#git?.baseline ?? null,
      checks: this.#options.verifier?.checkers.map((checker) => checker.name) ?? [],
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
      `Reached the cap of ${this.#options.maxIterations} iterations before ${this.#handler.buildCompletionCriteria().short}`,
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
        ? await this.#handler.buildInitialPrompt(this.#options.args)
        : await this.#handler.buildContinuationPrompt(iteration, this.#summaries);
    } catch (error) {
      this.#log?.event("prompt_failed", { iteration, error: firstLine(error) });
      return await this.#end(
        "failed",
        `Cannot build the prompt for iteration ${iteration}: ${firstLine(error)}`,
      );
    }
    prompt = withVerificationFeedback(prompt, this.#summaries.at(-1));
    this.#promptDigest = await sha256(prompt);

    this.#options.onEvent?.({
      type: "iteration_started",
      iteration,
      maxIterations: this.#options.maxIterations,
    });
    this.#log?.event("iteration_started", { iteration, prompt });
    const builder = new SummaryBuilder(iteration, this.#definition.actions);
    const repo = this.#options.git;
    const ignore = this.#options.ignorePaths ?? [];
    const baseline = repo ? await repo.head() : null;
    const fingerprintBefore = repo ? await repo.fingerprint(ignore) : null;
    const guard = new CompletionGuard({
      require: this.#behavior.requireCompleteTask,
      maxAttempts: this.#behavior.maxContinuationAttempts,
      verify: async (call) => {
        if (!this.#hasChecks) return undefined;
        return await verify(
          this.#options.verifier!,
          this.#checkContext(builder.current, { completeTask: call, stopReason: "complete_task" }),
          "complete_task",
        );
      },
      onEvent: (kind, data) => this.#log?.event(kind, { iteration, ...data }),
    });

    const iterationStart = this.#now();
    const timeLeft = this.#behavior.maxDurationSeconds !== undefined
      ? Math.max(0, this.#behavior.maxDurationSeconds * 1000 - (this.#now() - this.#started))
      : undefined;
    const sessionSignal = timeLeft !== undefined
      ? AbortSignal.any([this.#signal, AbortSignal.timeout(timeLeft)])
      : this.#signal;
    let sessionError = await this.#session(builder, {
      prompt,
      resume: this.#behavior.session === "continue" ? this.#summaries.at(-1)?.sessionId : undefined,
      signal: sessionSignal,
      onCompleteTask: guard.onCompleteTask,
      onStop: guard.onStop,
    });
    const summary = builder.current;
    this.#summaries.push(summary);
    if (guard.lastCall) summary.completeTask = guard.lastCall;
    if (guard.verification) summary.verification = guard.verification;
    if (guard.attempts > 0) summary.continuations = guard.attempts;
    const refreshGit = async () => {
      if (repo) summary.git = await gitEvidenceOf(repo, baseline, ignore);
    };
    await refreshGit();

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
    if (sessionSignal.aborted) {
      finishSummary();
      summary.stopReason = "budget_exhausted";
      await this.#record(summary, "budget_exhausted");
      return await this.#end(
        "budget_exhausted",
        this.#budgetSpent() ?? `Time budget spent during iteration ${iteration}`,
      );
    }
    if (sessionError !== undefined && builder.sawResult) {
      // The SDK throws after an error result (max turns, budget); the result is already recorded.
      this.#log?.event("session_error_after_result", { iteration, error: firstLine(sessionError) });
      sessionError = undefined;
    }
    if (sessionError !== undefined) {
      finishSummary();
      summary.errors.push(`session: ${firstLine(sessionError)}`);
      await this.#record(summary, "failed");
      return await this.#end(
        "failed",
        `The agent session failed in iteration ${iteration}: ${firstLine(sessionError)}`,
      );
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
      fingerprintBefore,
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

    let complete: boolean;
    try {
      complete = await this.#handler.isComplete(summary);
    } catch (error) {
      finishSummary();
      this.#log?.event("handler_failed", { iteration, error: firstLine(error) });
      summary.errors.push(`handler: ${firstLine(error)}`);
      await this.#record(summary, "failed");
      return await this.#end(
        "failed",
        `The completion handler failed in iteration ${iteration}: ${firstLine(error)}`,
      );
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
    const faults = this.#handler.drainFaults?.() ?? [];
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
        this.#log?.event("verification", { iteration, trigger: "handler", verification });
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

    const fingerprintAfter = repo ? await repo.fingerprint(ignore) : null;
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

  /** Runs one agent session into the builder; returns the error it threw, if any. */
  async #session(
    builder: SummaryBuilder,
    request: Pick<SessionRequest, "prompt" | "resume" | "signal" | "onCompleteTask" | "onStop">,
  ): Promise<unknown> {
    const behavior = this.#behavior;
    const remainingBudget = behavior.maxBudgetUsd !== undefined
      ? Math.max(0, behavior.maxBudgetUsd - this.#costUsd - builder.current.costUsd)
      : undefined;
    const iteration = builder.current.iteration;
    try {
      for await (
        const message of this.#options.backend.session({
          systemPromptAppend: this.#options.systemPrompt,
          cwd: this.#options.cwd,
          allowedTools: behavior.allowedTools,
          disallowedTools: behavior.disallowedTools,
          permissionMode: this.#options.permissionMode ?? behavior.permissionMode,
          model: behavior.model,
          maxTurns: behavior.maxTurns,
          maxBudgetUsd: remainingBudget,
          settingSources: behavior.settingSources,
          env: this.#options.env,
          ...request,
        })
      ) {
        this.#log?.message(iteration, message);
        const before = builder.current.toolsUsed.length;
        builder.add(message);
        for (const name of builder.current.toolsUsed.slice(before)) {
          this.#options.onEvent?.({ type: "tool", iteration, name });
        }
      }
      return undefined;
    } catch (error) {
      return error;
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
    const error = await this.#session(builder, { prompt, resume: sessionId, signal });
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
    fingerprintBefore: string | null,
  ): Promise<{ ran: boolean; last?: ProbeStatus; exhausted: boolean }> {
    const settings = this.#definition.probe;
    const summary = builder.current;
    if (!settings.enabled || !summary.sessionId || this.#signal.aborted) {
      return { ran: false, exhausted: false };
    }
    const repo = this.#options.git;
    const progressed = (summary.git?.newCommits ?? 0) > 0 ||
      (repo !== undefined &&
        fingerprintBefore !== (await repo.fingerprint(this.#options.ignorePaths ?? [])));
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

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
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
