/**
 * The iteration loop: prompt, one agent session, evidence, verdict, repeat,
 * until the handler is satisfied and the checkers agree, or a limit stops the
 * run. All I/O goes through injected ports (backend, git, log, clock), so the
 * loop's logic is tested without processes.
 *
 * One iteration is a short sequence of phases, each in `loop/`:
 *
 * 1. `session.ts`: the prompt and the agent session, retried on faults that
 *    retrying may fix (`faults.ts`); `verdict.ts` ends the run on an
 *    interrupt, a spent budget, a fatal fault or a complete_task `blocked`;
 * 2. `evidence.ts`: new commits since the iteration's start, changed files;
 * 3. `probe.ts`: the status probe, when the evidence is unclear;
 * 4. `rescue.ts`: work the agent claims done but left uncommitted is
 *    committed; then `verdict.ts`: the handler's `isComplete`, asked once per
 *    iteration, on that final evidence (work only the handler calls done is
 *    rescued after its answer);
 * 5. `checks.ts`: the checkers and the pull request's checks, when the work
 *    is claimed done;
 * 6. the circuit breaker, which ends a run that makes no progress.
 *
 * The decision is a {@linkcode Verdict} value, recorded and ended in one place.
 *
 * @module
 */

import type { RepoState } from "../git/repo.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { firstLine } from "../support/errors.ts";
import { SummaryBuilder } from "./summary_builder.ts";
import { failureSentence } from "./outcome_text.ts";
import { CircuitBreaker } from "./circuit_breaker.ts";
import { AgentSessions } from "./agent_sessions.ts";
import { verifyClaim } from "./claim_verification.ts";
import { IterationRepo } from "./evidence.ts";
import { activeAnswer, probeIfUnclear } from "./probe.ts";
import { startReproduction } from "./reproduce.ts";
import { installReviewer } from "./review.ts";
import { rescue } from "./rescue.ts";
import { evidenceSources, missingEvidence, unverifiedReason } from "./unverified.ts";
import { buildPrompt, runSession, type SessionOutcome } from "./session.ts";
import { RunState } from "./state.ts";
import type { RunOptions, RunResult, RunStatus } from "./run_types.ts";
import {
  askHandler,
  carryOn,
  collectHandlerFaults,
  endRun,
  MAX_VERDICT_FAULTS,
  sessionVerdict,
  uncommittedWork,
  type Verdict,
} from "./verdict.ts";

export {
  EXIT_CODES,
  type PullRequestGate,
  type RunEvent,
  type RunOptions,
  type RunResult,
  type RunStatus,
  type SessionFaultFacts,
} from "./run_types.ts";
export { backoffMs, classifyFault, type SessionFault } from "./faults.ts";
export { RESCUE_PROMPT } from "./rescue.ts";
export { MAX_VERDICT_FAULTS, type Verdict } from "./verdict.ts";
export { withVerificationFeedback } from "./feedback.ts";

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
 * // The keyword is the agent's claim, and no check ran: done, but unverified (exit 7).
 * assert.equal(result.status, "unverified");
 * assert.equal(result.unverified, "no checks found");
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
  readonly #state: RunState;
  readonly #sessions: AgentSessions;
  readonly #breaker: CircuitBreaker;
  #verdictFaults = 0;
  /** Why nothing verified the work, when the handler was satisfied without evidence. */
  #unverified: string | undefined;
  /** The repository as the last iteration left it: the next one's starting point. */
  #repoAtEnd: RepoState | undefined;

  constructor(options: RunOptions) {
    this.#state = new RunState(options);
    this.#sessions = new AgentSessions(this.#state);
    this.#breaker = new CircuitBreaker(options.definition.circuitBreaker);
  }

  async execute(): Promise<RunResult> {
    const state = this.#state;
    const { options } = state;
    await this.#prepare();
    for (
      let iteration = state.summaries.length + 1;
      iteration <= options.maxIterations;
      iteration++
    ) {
      const ended = await this.#iteration(iteration);
      if (ended) return ended;
    }
    return await this.#end("max_iterations", capReason(state));
  }

  /** Before iteration 1: the starting point, a resumed run's history, the first process, the baseline. */
  async #prepare(): Promise<void> {
    const state = this.#state;
    const { git, resume, ignorePaths = [] } = state.options;
    const initial = git ? await git.observe(undefined, ignorePaths) : undefined;
    state.git = git ? { repo: git, baseline: resume ? resume.baseline : initial!.head } : undefined;
    for (const summary of resume?.summaries ?? []) {
      state.summaries.push(summary);
      state.account(summary);
    }
    if (initial?.head && initial.fingerprint) this.#repoAtEnd = initial;
    // Claude Code takes about 0.4 s to start: let it start while the run gets ready.
    if (state.summaries.length < state.options.maxIterations && !state.signal.aborted) {
      if (state.behavior.session === "continue") {
        this.#sessions.conversation(state.summaries.at(-1)?.sessionId, 0);
      } else {
        this.#sessions.warmNext(state.summaries.length);
      }
    }
    // What the agent finds, before its first session: the gate's uncommitted files and dependency manifest.
    if (git) await state.options.repoChecks?.recordStart(git, { exclude: ignorePaths });
    this.#startBaseline();
    const workerTest = state.reproductionPlan.workerTest;
    if (workerTest && git) state.options.repoChecks?.requireWorkerTest(workerTest);
    installReviewer(state);
    if (git) state.startDirt = await git.snapshot(ignorePaths) ?? new Map();
    try {
      await state.handler.onRunStart?.();
    } catch (error) {
      state.emit({ type: "handler_hook_failed", hook: "onRunStart", error: firstLine(error) });
    }
    state.emit({
      type: "run_started",
      facts: {
        runId: state.runId,
        agent: state.definition.name,
        handler: state.handler.type,
        criteria: state.criteria(),
        maxIterations: state.options.maxIterations,
        backend: state.options.backend.name,
        cwd: state.options.cwd,
        baseline: state.git?.baseline ?? null,
        checks: state.options.verifier?.names ?? [],
        repoChecks: state.options.repoChecks?.checks.map((check) => check.command),
        resumedAfter: resume ? resume.summaries.length : undefined,
      },
    });
  }

  /** The repository checks on the starting commit, in their own worktree, beside the first session. */
  #startBaseline(): void {
    const state = this.#state;
    const { git, repoChecks } = state.options;
    const commit = state.git?.baseline;
    if (!git || !commit || !repoChecks || !state.definition.verify.baseline) return;
    repoChecks.startBaseline(git, commit).then((baseline) => {
      state.baseline = baseline;
      state.emit({ type: "baseline", baseline });
    });
  }

  /** Runs one iteration; returns the result when the run ends with it. */
  async #iteration(iteration: number): Promise<RunResult | undefined> {
    const state = this.#state;
    if (state.signal.aborted) {
      return await this.#end("interrupted", "Interrupted before the next iteration");
    }
    const spent = state.budgetSpent();
    if (spent) return await this.#end("budget_exhausted", spent);
    const built = await buildPrompt(state, iteration);
    if ("error" in built) return await this.#end("failed", built.error);
    state.emit({
      type: "iteration_started",
      iteration,
      maxIterations: state.options.maxIterations,
      prompt: built.prompt,
    });
    const start = await this.#startingPoint();
    // The verifier writes its reproduction test beside the first session.
    // The task as the worker first got it, for the verifier and the reviewer: a resumed run
    // builds it again, and starts its verifier again (the held-out test is never stored).
    state.task ||= iteration === 1 ? built.prompt : await firstPrompt(state) ?? built.prompt;
    startReproduction(state, state.task);
    const started = state.now();
    const outcome = await runSession(state, this.#sessions, iteration, built.prompt);
    // The session's start-up is over: a check red at the baseline runs again, at low priority,
    // unless the claim passed and the run is about to end.
    if (!outcome.guard.verification?.passed) {
      state.options.repoChecks?.confirmBaseline().catch(() => undefined);
    }
    const summary = this.#collect(outcome);
    const repo = new IterationRepo(state, summary, start);
    await repo.refresh();
    if (
      !outcome.fault && !outcome.end.budget && !state.signal.aborted &&
      state.behavior.maxBudgetUsd !== undefined
    ) {
      // With a budget, the next session's cap is known only now.
      this.#sessions.warmNext(iteration, outcome.builder);
    }
    const finish = () => {
      outcome.builder.finish(state.now() - started);
      state.account(summary);
    };
    let verdict = sessionVerdict(state, outcome);
    if (verdict?.kind === "end" && verdict.status === "failed" && outcome.fault?.modelDown) {
      // Nothing more is asked of a model that cannot be used: no rescue prompt, no finish model.
      state.modelFailure = outcome.fault.message;
    }
    if (verdict) {
      this.#stall(summary, "not_probed", false);
      finish();
      if (verdict.kind === "end" && verdict.status === "budget_exhausted") {
        verdict = endRun("budget_exhausted", state.budgetSpent() ?? verdict.reason);
      }
    } else {
      verdict = await this.#judge(outcome, repo, finish);
    }
    return await this.#conclude(summary, verdict);
  }

  /** Nothing touches the repository between two iterations, so the last one's end is this one's start. */
  async #startingPoint(): Promise<RepoState | undefined> {
    const { git, ignorePaths = [] } = this.#state.options;
    const start = git ? this.#repoAtEnd ?? await git.observe(undefined, ignorePaths) : undefined;
    this.#repoAtEnd = undefined;
    return start;
  }

  /** The session's summary joins the run, with its retries and complete_task facts. */
  #collect(outcome: SessionOutcome): IterationSummary {
    const summary = outcome.builder.current;
    const guard = outcome.guard;
    this.#state.summaries.push(summary);
    this.#state.keepMessages(summary, outcome.builder.messages);
    if (outcome.retries.length > 0) summary.retries = outcome.retries;
    if (guard.lastCall) summary.completeTask = guard.lastCall;
    if (guard.verification) summary.verification = guard.verification;
    if (guard.fixed.length > 0) summary.fixedChecks = [...guard.fixed];
    if (guard.attempts > 0) summary.continuations = guard.attempts;
    return summary;
  }

  /** The evidence decides: probe, rescue, the handler (once), checks, then the circuit breaker. */
  async #judge(
    outcome: SessionOutcome,
    repo: IterationRepo,
    finish: () => void,
  ): Promise<Verdict> {
    const state = this.#state;
    const builder = outcome.builder;
    const summary = builder.current;
    const iteration = summary.iteration;
    // Ask, don't guess: probe when the evidence is unclear; git is asked again before each probe.
    const probe = await probeIfUnclear(state, this.#sessions, builder, {
      backgroundTasks: outcome.guard.backgroundTasks,
      newCommits: async () => {
        await repo.refresh();
        return summary.git?.newCommits ?? null;
      },
    });
    if (probe.ran) await repo.refresh();
    this.#stall(summary, probe.result, false);
    if (probe.last?.status === "blocked") {
      finish();
      return endRun(
        "blocked",
        `The agent reported the task blocked in iteration ${iteration}: ${
          probe.last.message || "(no reason given)"
        }`,
      );
    }
    // Rescue before done, and before the handler is asked: it decides once, on the final evidence.
    const agentClaims = summary.completeTask?.status === "success" ||
      probe.last?.status === "complete";
    let uncommitted = agentClaims ? await this.#rescueIfDirty(builder, repo) : [];
    const handler = await askHandler(state, summary);
    const complete = handler.complete;
    // Only the handler says done: its work must be committed too, and it is not asked again.
    if (complete && !agentClaims) uncommitted = await this.#rescueIfDirty(builder, repo);
    collectHandlerFaults(state, summary);
    finish();
    let label = complete ? "complete" : "continue";
    if (complete && uncommitted.length > 0) {
      summary.verification = uncommittedWork(uncommitted);
      label = "continue (uncommitted changes)";
    } else if (complete) {
      const exhausted = state.budgetSpent();
      if (exhausted) return endRun("budget_exhausted", `${exhausted}; the checks were skipped`);
      const verification = await verifyClaim(state, summary);
      if (!verification || verification.passed) {
        return this.#unverifiedEnd(summary, verification) ?? endRun("completed", "", "complete");
      }
      label = `continue (verification failed: ${verification.checker})`;
    }
    return await this.#progress(summary, repo, {
      label: handler.fault ? "continue (handler failed)" : label,
      handlerFault: handler.fault,
      // Waiting, working or agents active in any answer, or background tasks at the stop.
      active: probe.answers.some(activeAnswer) || outcome.guard.backgroundTasks > 0,
      // The seed's timeout: every probe asked, and the last one still said waiting.
      waitedOut: probe.exhausted && probe.last?.status === "waiting",
    });
  }

  /**
   * No evidence is not success: a claim that passed because nothing checked
   * it ends `unverified`, never `completed` (an iterate run, which promises
   * a number of iterations and not finished work, completes, and says it).
   */
  #unverifiedEnd(
    summary: IterationSummary,
    verification: IterationSummary["verification"],
  ): Verdict | undefined {
    const state = this.#state;
    const reason = verification
      ? verification.unverified
      : missingEvidence(evidenceSources(state), summary);
    if (!reason) return undefined;
    this.#unverified = reason;
    if (state.handler.type === "iterate") return undefined;
    return endRun("unverified", unverifiedReason(reason, summary.iteration));
  }

  /** The circuit breaker's view of the iteration, in its summary. */
  #stall(
    summary: IterationSummary,
    probe: NonNullable<IterationSummary["stall"]>["probe"],
    counted: boolean,
  ): void {
    summary.stall = { counted, streak: this.#breaker.noProgressStreak, probe };
  }

  /** The commit rescue, when the agent left changes uncommitted; returns the files still uncommitted. */
  async #rescueIfDirty(builder: SummaryBuilder, repo: IterationRepo): Promise<string[]> {
    const state = this.#state;
    if (!repo.present || (await state.agentChanges()).length === 0) return [];
    const { left } = await rescue(state, this.#sessions, builder, {
      askAgent: state.definition.git.rescue,
    });
    await repo.refresh();
    return left;
  }

  /** An iteration that did not finish the work: too many faults, no progress, or on to the next. */
  async #progress(
    summary: IterationSummary,
    repo: IterationRepo,
    facts: { label: string; handlerFault?: string; active: boolean; waitedOut: boolean },
  ): Promise<Verdict> {
    const faulted = facts.handlerFault !== undefined || summary.verification?.faulted === true;
    this.#verdictFaults = faulted ? this.#verdictFaults + 1 : 0;
    if (this.#verdictFaults >= MAX_VERDICT_FAULTS) {
      return endRun(
        "failed",
        `The completion handler or a checker failed ${this.#verdictFaults} times in a row: ${
          facts.handlerFault ?? failureSentence(summary) ?? "unknown error"
        }`,
      );
    }
    // Checks run commands that may write files: look again after them.
    if (repo.present && (summary.verification?.trigger === "handler" || !repo.after)) {
      await repo.refresh();
    }
    if (repo.after?.head && repo.after.fingerprint) this.#repoAtEnd = repo.after;
    const stalled = this.#breaker.record({
      newCommits: summary.git?.newCommits ?? null,
      filesChanged: repo.filesChanged(),
      active: facts.active,
      waitedOut: facts.waitedOut,
      error: summary.errors.at(-1),
    });
    this.#stall(summary, summary.stall?.probe ?? "not_probed", this.#breaker.counted);
    const waitingRounds = this.#breaker.waitingRounds;
    if (waitingRounds > 0) summary.stall = { ...summary.stall!, waitingRounds };
    return stalled ? endRun("stalled", stalled) : carryOn(facts.label);
  }

  /** Record the iteration with its verdict, then go on or end the run. */
  async #conclude(summary: IterationSummary, verdict: Verdict): Promise<RunResult | undefined> {
    const state = this.#state;
    await state.record(summary, verdict.label);
    if (verdict.kind === "continue") {
      const exhausted = state.budgetSpent();
      return exhausted ? await this.#end("budget_exhausted", exhausted) : undefined;
    }
    const reason = verdict.status === "completed"
      ? await this.#description(summary)
      : verdict.reason;
    return await this.#end(verdict.status, reason);
  }

  async #description(summary: IterationSummary): Promise<string> {
    try {
      return await this.#state.handler.getCompletionDescription(summary);
    } catch (error) {
      return `Complete (description failed: ${firstLine(error)})`;
    }
  }

  async #end(status: RunStatus, completionReason: string): Promise<RunResult> {
    const state = this.#state;
    const finalRescue = await this.#finalRescue(status);
    await this.#sessions.close();
    for (const backend of new Set([state.options.backend, state.independentBackend])) {
      try {
        await backend.release?.();
      } catch (error) {
        state.emit({ type: "backend_release_failed", error: firstLine(error) });
      }
    }
    // A baseline still running is stopped, not waited for; the gate's worktrees are removed.
    state.stopVerifier.abort();
    const reproduction = await state.reproduction;
    await state.options.repoChecks?.close();
    const reviews = state.options.repoChecks?.reviews ?? [];
    const result: RunResult = {
      status,
      completionReason,
      iterations: state.summaries.length,
      costUsd: Math.round(state.costUsd * 1e6) / 1e6,
      durationMs: Math.round(state.now() - state.started),
      runId: state.runId,
      sessionIds: state.sessionIds,
      logFile: state.log?.path,
      summaries: state.summaries,
      ...(state.pullRequest ? { pullRequest: state.pullRequest } : {}),
      ...(this.#unverified && (status === "completed" || status === "unverified")
        ? { unverified: this.#unverified }
        : {}),
      ...(state.baseline ? { baseline: state.baseline } : {}),
      ...(reproduction ? { reproduction } : {}),
      ...(state.reviewCost.sessions > 0 ? { review: structuredClone(state.reviewCost) } : {}),
      ...(reviews.length > 0 ? { reviews } : {}),
      ...(state.modelFailure ? { modelFailure: state.modelFailure } : {}),
      ...(finalRescue ? { finalRescue } : {}),
    };
    state.emit({ type: "run_finished", result });
    return result;
  }

  /**
   * The final rescue, one path for every end short of completion (cap,
   * budget, stall, failure, blocked, interrupt): "rescue before abort". The
   * agent is asked only when it can be: not after an interrupt, a model that
   * failed, or a spent cost budget (a prompt would exceed it);
   * `git.autoCommit` still commits then.
   */
  async #finalRescue(status: RunStatus): Promise<RunResult["finalRescue"]> {
    const state = this.#state;
    const { definition, options } = state;
    if (!options.git || !(definition.rescue.finalAttempt || options.rescueOnEnd)) return undefined;
    // A completed run's work was committed before its checks passed: what is left now is
    // the checks' own output, not the agent's work (a worktree still keeps nothing uncommitted).
    if (status === "completed" && !options.rescueOnEnd) return undefined;
    if ((await state.rescuableChanges()).files.length === 0) return undefined;
    const last = state.summaries.at(-1);
    const builder = new SummaryBuilder(last?.iteration ?? 0, definition.actions);
    if (last?.sessionId) builder.add({ type: "system", session_id: last.sessionId });
    const { maxBudgetUsd } = state.behavior;
    const costSpent = maxBudgetUsd !== undefined && state.costUsd >= maxBudgetUsd;
    const askAgent = definition.git.rescue && state.modelFailure === undefined &&
      !state.signal.aborted && !costSpent;
    const done = await rescue(state, this.#sessions, builder, { askAgent, final: true });
    state.costUsd += builder.current.costUsd;
    const finalRescue = { status, ...done };
    state.emit({ type: "final_rescue", ...finalRescue });
    return finalRescue;
  }
}

/** The first iteration's prompt, built again for a resumed run; undefined when it cannot be. */
async function firstPrompt(state: RunState): Promise<string | undefined> {
  try {
    return state.options.initialPrompt ??
      await state.handler.buildInitialPrompt(state.options.args);
  } catch {
    return undefined;
  }
}

/**
 * Why a run stopped at the cap, for people: what failed last (never the
 * feedback written for the agent), else what was not reached.
 */
function capReason(state: RunState): string {
  const cap = `Reached the cap of ${state.options.maxIterations} iteration${
    state.options.maxIterations === 1 ? "" : "s"
  }`;
  const failure = failureSentence(state.summaries.at(-1));
  return failure ? `${cap}; ${failure}` : `${cap} before ${state.criteria()}`;
}
