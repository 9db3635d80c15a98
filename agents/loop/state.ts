/**
 * What one run knows while it runs: its settings, the summaries so far, the
 * cost, the repository's starting point, and the small questions every phase
 * asks of them (is the budget spent, what did the agent change, record this
 * iteration).
 *
 * @module
 */

import { redactingBackend } from "../backends/redacting.ts";
import type { AgentDefinition } from "../definition/definition_types.ts";
import type { AgentBackend } from "../backends/port.ts";
import {
  type ReproductionPlan,
  reproductionPlan,
  type ReproductionRecord,
} from "./reproduction_plan.ts";
import { type IndependentCost, noCost } from "./independent_cost.ts";
import type { BaselineResult } from "../evidence/run/baseline_result.ts";
import type { RunGitEvidence, TaskCompletionContext } from "../checks/checker_contract.ts";
import { checkerContext } from "../checks/context.ts";
import type { CompleteTaskCall } from "../record/complete_task_tool.ts";
import type { AgentMessage } from "../record/iteration.ts";
import type { CompletionHandler } from "../completion/handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { firstLine } from "../support/errors.ts";
import type { RunLog } from "../support/log.ts";
import { logRunEvent } from "./log_sink.ts";
import { TokenPricing } from "../record/token_pricing.ts";
import { VerificationMemo } from "./verification_memo.ts";
import type { RunEvent, RunOptions } from "./run_types.ts";

/** The state of one run, shared by its phases. */
export class RunState {
  /** Everything the run was given. */
  readonly options: RunOptions;
  /** The agent definition. */
  readonly definition: AgentDefinition;
  /** The completion handler. */
  readonly handler: CompletionHandler;
  /** The JSONL log. */
  readonly log: RunLog | undefined;
  /** Aborts the run. */
  readonly signal: AbortSignal;
  /** Milliseconds clock. */
  readonly now: () => number;
  /** When the run started, on that clock. */
  readonly started: number;
  /** The run's id. */
  readonly runId: string;
  /** The agent folder. */
  readonly agentDir: URL;
  /** Every iteration's summary so far. */
  readonly summaries: IterationSummary[] = [];
  /** Agent session ids, in order, without repeats. */
  readonly sessionIds: string[] = [];
  /** Cost so far in USD. */
  costUsd = 0;
  /** How long Claude Code's API retries waited in this run, against `retry.maxWaitSeconds`. */
  apiRetryWaitMs = 0;
  /** Why the model could not be used, once a session fault ended the run for it. */
  modelFailure: string | undefined;
  /** The repository and the run's starting commit. */
  git: RunGitEvidence | undefined;
  /** Digest of the current iteration's prompt, for the history. */
  promptDigest = "";
  /** Uncommitted files when the run started: not the agent's work. */
  startDirt: Map<string, string> = new Map();
  /** Files the checkers wrote into the checkout, with their signature then. */
  checkDirt: Map<string, string> = new Map();
  /** The pull request the run opened. */
  pullRequest: string | undefined;
  /** The repository checks on the starting commit, once they ran. */
  baseline: BaselineResult | undefined;
  /** The verifier's held-out reproduction test, when one was started. */
  reproduction: Promise<ReproductionRecord> | undefined;
  /** Stops the verifier session when the run ends first. */
  readonly stopVerifier: AbortController = new AbortController();
  /** The run's reproduction evidence: the verifier's held-out test, the worker's own, both or none. */
  readonly reproductionPlan: ReproductionPlan;
  /** Runs the verifier and reviewer sessions: `verify.reproduceBackend`, else the run's backend. */
  readonly independentBackend: AgentBackend;
  /** What the reviewer sessions cost, apart from the worker's. */
  readonly reviewCost: IndependentCost = noCost();
  /** The task as the worker got it first (the first iteration's prompt), for the reviewer. */
  task = "";
  /** The run's latest verification, reused while the tree is the same. */
  readonly verifications: VerificationMemo = new VerificationMemo();
  /** The models' prices learned from the sessions' results, to price a session still running. */
  readonly pricing: TokenPricing = new TokenPricing();
  /** Each iteration's messages, for the checkers' session (resumed iterations have none). */
  readonly #messages = new WeakMap<IterationSummary, readonly AgentMessage[]>();

  /**
   * Set the run up from its options.
   *
   * @param options The run's options.
   */
  constructor(options: RunOptions) {
    // Every prompt and tool answer the loop sends to the agent is redacted.
    this.options = { ...options, backend: redactingBackend(options.backend) };
    this.independentBackend = options.independentBackend
      ? redactingBackend(options.independentBackend)
      : this.options.backend;
    this.definition = options.definition;
    this.handler = options.handler;
    this.log = options.log;
    this.signal = options.signal ?? new AbortController().signal;
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.runId = options.runId ?? crypto.randomUUID();
    this.agentDir = options.agentDir ??
      new URL(`.agent/${this.definition.name}/`, `file://${options.cwd}/`);
    this.reproductionPlan = reproductionPlan(this.definition, this.handler);
  }

  /**
   * The definition's behavior section.
   *
   * @returns It.
   */
  get behavior(): AgentDefinition["behavior"] {
    return this.definition.behavior;
  }

  /**
   * Whether any checker gates completion.
   *
   * @returns True when the verifier has checkers.
   */
  get hasChecks(): boolean {
    return (this.options.verifier?.checkers.length ?? 0) > 0;
  }

  /**
   * Report what happened: to the log, then to the caller's progress.
   *
   * @param event What happened.
   */
  emit(event: RunEvent): void {
    if (this.log) logRunEvent(this.log, event);
    this.options.onEvent?.(event);
  }

  /**
   * Count an iteration's cost and session into the run's totals.
   *
   * @param summary The iteration.
   */
  account(summary: IterationSummary): void {
    this.costUsd += summary.costUsd;
    if (summary.sessionId && !this.sessionIds.includes(summary.sessionId)) {
      this.sessionIds.push(summary.sessionId);
    }
  }

  /**
   * Why the run's cost or time budget is spent.
   *
   * @returns The reason, or undefined while budget is left.
   */
  budgetSpent(): string | undefined {
    const behavior = this.behavior;
    if (behavior.maxBudgetUsd !== undefined && this.costUsd >= behavior.maxBudgetUsd) {
      return `Cost budget of $${behavior.maxBudgetUsd} spent ($${this.costUsd.toFixed(4)})`;
    }
    if (
      behavior.maxDurationSeconds !== undefined &&
      this.now() - this.started >= behavior.maxDurationSeconds * 1000
    ) {
      return `Time budget of ${behavior.maxDurationSeconds} s spent`;
    }
    return undefined;
  }

  /**
   * The handler's short criteria; a handler that throws here must not crash the run.
   *
   * @returns The criteria.
   */
  criteria(): string {
    try {
      return this.handler.buildCompletionCriteria().short;
    } catch (error) {
      return `its criteria (the handler failed to state them: ${firstLine(error)})`;
    }
  }

  /**
   * Uncommitted files the agent changed (not those already uncommitted at the start).
   *
   * @returns Paths relative to the repository root.
   */
  async agentChanges(): Promise<string[]> {
    const repo = this.options.git;
    if (!repo) return [];
    const now = await repo.snapshot(this.options.ignorePaths ?? []);
    if (!now) return [];
    return [...now].filter(([path, signature]) =>
      this.startDirt.get(path) !== signature && this.checkDirt.get(path) !== signature
    ).map(([path]) => path);
  }

  /**
   * Run the checkers and note what they wrote into the checkout (a command
   * check's output, say): those files are not the agent's work, for the
   * commit rescue and the report, until the agent changes them.
   *
   * @param run Runs the checkers.
   * @returns What `run` returns.
   */
  async noteCheckWrites<T>(run: () => Promise<T>): Promise<T> {
    const repo = this.options.git;
    const ignore = this.options.ignorePaths ?? [];
    const before = repo ? await repo.snapshot(ignore) : null;
    try {
      return await run();
    } finally {
      const after = repo && before ? await repo.snapshot(ignore) : null;
      for (const [path, signature] of after ?? []) {
        if (before!.get(path) !== signature) this.checkDirt.set(path, signature);
      }
    }
  }

  /**
   * The agent's uncommitted files as the commit rescue sees them: its own
   * (offered to the rescue commit), and the user's it also touched (files
   * uncommitted before the run: they stay the user's, never committed by a
   * rescue, whatever the agent did to them).
   *
   * @returns Both lists, paths relative to the repository root.
   */
  async rescuableChanges(): Promise<{ files: string[]; users: string[] }> {
    const changed = await this.agentChanges();
    return {
      files: changed.filter((path) => !this.startDirt.has(path)),
      users: changed.filter((path) => this.startDirt.has(path)),
    };
  }

  /**
   * Keep an iteration's messages (a live list: the rescue's and probes'
   * follow-ups join it) for the checkers' session.
   *
   * @param summary The iteration.
   * @param messages Its messages.
   */
  keepMessages(summary: IterationSummary, messages: readonly AgentMessage[]): void {
    this.#messages.set(summary, messages);
  }

  /**
   * The evidence a checker sees for an iteration.
   *
   * @param summary The iteration.
   * @param extra The complete_task call and stop reason; the messages of an iteration not kept yet.
   * @returns The context.
   */
  checkContext(
    summary: IterationSummary,
    extra: {
      completeTask?: CompleteTaskCall;
      stopReason?: string;
      messages?: readonly AgentMessage[];
    },
  ): TaskCompletionContext {
    const iteration = (earlier: IterationSummary) => ({
      summary: earlier,
      messages: this.#messages.get(earlier) ?? [],
    });
    return checkerContext({
      current: { summary, messages: extra.messages ?? this.#messages.get(summary) ?? [] },
      previous: this.summaries.filter((earlier) => earlier !== summary).map(iteration),
      definition: this.definition,
      cwd: this.options.cwd,
      agentDir: this.agentDir,
      git: this.git,
      backend: this.options.backend,
      stopReason: extra.stopReason,
      completeTask: extra.completeTask,
      signal: this.signal,
      onCheck: (name, running) =>
        this.emit({ type: "check", iteration: summary.iteration, name, running }),
    });
  }

  /**
   * Copy the repository checks' latest evidence into the summary.
   *
   * @param summary The iteration that was verified.
   */
  recordChecks(summary: IterationSummary): void {
    const evidence = this.options.repoChecks?.evidence;
    if (evidence) summary.checks = structuredClone(evidence);
  }

  /**
   * Record an iteration with its verdict: the run history, the event (log
   * and progress), then the handler's hook; a failing store or hook is logged,
   * never fatal.
   *
   * @param summary The iteration.
   * @param verdict Its verdict label.
   */
  async record(summary: IterationSummary, verdict: string): Promise<void> {
    summary.verdict = verdict;
    // The history first: it is what --resume and the report read, and nothing
    // written before it (a log line on a full disk) may keep it from being written.
    let stored: string | undefined;
    try {
      this.options.store?.recordIteration({
        runId: this.runId,
        number: summary.iteration,
        sessionId: summary.sessionId ?? null,
        promptDigest: this.promptDigest,
        summary,
        verdict,
      });
    } catch (error) {
      stored = firstLine(error);
    }
    this.emit({
      type: "iteration_finished",
      iteration: summary.iteration,
      maxIterations: this.options.maxIterations,
      summary,
      verdict,
    });
    if (stored) this.emit({ type: "store_failed", iteration: summary.iteration, error: stored });
    try {
      await this.handler.onIterationEnd?.(summary, verdict);
    } catch (error) {
      this.emit({ type: "handler_hook_failed", hook: "onIterationEnd", error: firstLine(error) });
    }
  }
}
