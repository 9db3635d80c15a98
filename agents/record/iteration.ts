/**
 * The iteration record: what one iteration did and what evidence it left
 * (its responses, tool calls, usage, git and check evidence, the
 * complete_task call, the verdict), and the agent's messages it is built
 * from. At the bottom of the layering: completion handlers, checkers, the
 * store and learnings read it, and none of them needs another for it.
 *
 * @module
 */

import type { CompleteTaskCall } from "./complete_task_call.ts";

/** A message from an agent backend: Claude Agent SDK shaped, kept loose on purpose. */
export interface AgentMessage {
  /** `system`, `assistant`, `user`, `result`, ... */
  type: string;
  /** Further fields, as the backend sent them. */
  [field: string]: unknown;
}

/**
 * Claude Code's report that an API call failed and will be retried (its
 * `api_retry` system message), in the runner's words.
 */
export interface ApiRetry {
  /** Which retry this is (1-based). */
  attempt: number;
  /** How many retries Claude Code makes at most. */
  maxRetries: number;
  /** The HTTP status, or null when there was no response (a connection error). */
  status: number | null;
  /** The error code, such as `overloaded` or `authentication_failed`. */
  error: string;
  /** How long Claude Code waits before the retry, in milliseconds. */
  waitMs: number;
  /** When no response headers came within Claude Code's first-byte window: how long it waited. */
  noResponseMs?: number;
}

/** A structured action block the agent emitted in a fenced code block. */
export interface DetectedAction {
  /** The action's `type` field. */
  type: string;
  /** Every other field of the JSON body. */
  [field: string]: unknown;
}

/** Token counts of one iteration. */
export interface TokenUsage {
  /** Input tokens, not counting cache reads and writes. */
  input: number;
  /** Output tokens. */
  output: number;
  /** Input tokens read from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the prompt cache. */
  cacheCreation: number;
}

/** A tool call the agent made. */
export interface ToolCall {
  /** Tool name (`Bash`, `mcp__finishline__complete_task`, ...). */
  name: string;
  /** The tool input as the model sent it. */
  input: unknown;
}

/** Tests counted in a check's output; each count is absent when the runner does not say. */
export interface TestCounts {
  /** Tests that ran: passed plus failed. */
  run?: number;
  /** Tests that passed. */
  passed?: number;
  /** Tests that failed (pytest's errors included). */
  failed?: number;
  /** Tests skipped (mocha's pending tests included). */
  skipped?: number;
  /** Tests ignored (cargo's `#[ignore]`, deno's `ignore`, steps included). */
  ignored?: number;
  /** Tests left as todo (pytest's xfail and xpass included). */
  todo?: number;
}

/** One of the repository's checks on an iteration's final state, against the baseline. */
export interface CheckEvidence {
  /** The check (its command). */
  name: string;
  /** How it was on the starting commit; `unknown` when the baseline did not run. */
  baseline: "green" | "red" | "unknown";
  /** How it is now. */
  now: "green" | "red";
  /** Failing tests named by the runner's output. */
  failing: string[];
  /** Failing tests at the baseline. */
  baselineFailing?: string[];
  /** Tests that ran now, when the output says. */
  testsRun?: number;
  /** Tests that ran at the baseline, when its output said. */
  baselineTestsRun?: number;
  /** Tests counted now, when the output says. */
  counts?: TestCounts;
  /** Tests counted at the baseline, when its output said. */
  baselineCounts?: TestCounts;
  /** Wall time of the run now, in milliseconds. */
  durationMs: number;
  /** It failed once and passed when run again. */
  flaky?: boolean;
  /**
   * Red at the baseline's first run, run again once: the tests that failed
   * the first time and passed the second (flaky, not the agent's to fix).
   * With `baseline` green, the whole check passed the second time.
   */
  baselineFlaky?: string[];
}

/** The repository's checks at a verification: the gate's evidence for the report. */
export interface ChecksEvidence {
  /** Whether the gate passed. */
  passed: boolean;
  /** Each check. */
  checks: CheckEvidence[];
  /** Red checks the agent declared out of scope, with its reasons. */
  outOfScope: Array<{ check: string; reason: string }>;
  /**
   * Protected files (tests, runner configuration, sources whose change adds
   * or removes a test or a skip) the agent changed: `from` is the path before
   * a rename, `why` the role that protects the file, `reason` the agent's
   * declaration.
   */
  testsChanged: Array<{
    path: string;
    change: "added" | "modified" | "deleted" | "renamed";
    from?: string;
    why?: string;
    reason?: string;
  }>;
  /** Whether the original versions of the changed files pass against the agent's code. */
  originalsPass?: boolean;
  /** The commit whose clean copy the checks ran on (absent outside a repository). */
  commit?: string;
  /** Files the agent left uncommitted: not verified, so the checks did not run. */
  uncommitted?: string[];
  /** What the agent changed in the dependency folders linked into the clean copy: the checks did not run. */
  dependencyChanges?: string[];
  /** How dependencies reached the clean copy when not as linked at the start (installed, or why not). */
  dependencyNotes?: string[];
  /** Wall time of preparing the clean copy (worktree, dependencies), in milliseconds. */
  setupMs?: number;
  /** Lines the claim added outside test files that read a test runner's signal (for the reviewer). */
  runnerSignals?: Array<{ file: string; line: number; text: string; signal: string }>;
  /**
   * finishline's canary per runner: its own tests that must fail, run in the
   * clean copy (`held`, `tampered`, or `not canaried` and why).
   */
  canary?: Array<{
    runner: string;
    outcome: "held" | "tampered" | "not canaried";
    why?: string;
    durationMs?: number;
  }>;
  /** The held-out reproduction tests and whether they passed on the clean copy. */
  heldOut?: {
    tests: string[];
    passed: boolean;
    /** The worker's reason for calling it wrong (`held_out_wrong`), when it failed. */
    disputed?: string;
    /** A reviewer accepted the dispute: the failing held-out test does not count. */
    overruled?: boolean;
  };
  /** Which changed lines the tests run and which of their mutants the tests kill (at the claim that completes). */
  changeProof?: ChangeProof;
  /** Added conditions that compare against values found together on one test line. */
  specialCases?: Array<{ file: string; line: number; text: string; test: string }>;
  /** The worker's own fail-to-pass test, when the run needs one (`verify.reproduce`). */
  workerTest?: WorkerTestEvidence;
  /** The declarations the verdict relied on, with an independent reviewer's verdicts. */
  declarations?: ReviewedDeclaration[];
  /**
   * The tests that failed at the previous verified claim, re-run alone
   * before the full suite, per check: `still failing` answers the claim at
   * once; otherwise (`passed`, `matched none`: the filter ran no test, `no
   * verdict`: red without naming them, `not run` and why) the full suite runs
   * and decides.
   */
  rerun?: Array<{
    check: string;
    tests: string[];
    outcome: "still failing" | "passed" | "matched none" | "no verdict" | "not run";
    /** The narrowed command, when it ran. */
    command?: string;
    /** The named tests that failed again. */
    stillFailing?: string[];
    /** Why it did not run. */
    why?: string;
    durationMs?: number;
  }>;
}

/** The figures of one changed source file (see {@linkcode ChangeProof}). */
export interface FileProof {
  /** Repository-relative path. */
  path: string;
  /** Changed lines that hold code (executable, by the coverage tool where one measured it). */
  changed: number;
  /** Of those, the lines the tests ran; absent when no tool measured the file. */
  run?: number;
  /** Changed executable lines the tests never ran. */
  neverRun: number[];
  /** The runtime whose coverage measured it (`node`, `deno`, `python`, `go`), if any. */
  measuredBy?: string;
}

/** A mutant of a changed line that every check passed with. */
export interface SurvivingMutant {
  /** Repository-relative path. */
  path: string;
  /** Line number, from 1. */
  line: number;
  /** What the mutant changed ("replacing `+` by `-`"). */
  change: string;
}

/** The mutants' tally. */
export interface MutantTally {
  /** Mutants generated for the changed lines the tests run (all code lines of an unmeasured file). */
  generated: number;
  /** Mutants run against the tests. */
  tried: number;
  /** Mutants some check failed on. */
  killed: number;
  /** Mutants every check passed with. */
  survived: SurvivingMutant[];
  /** Mutants that did not build (a compile error is not a test's verdict); not counted as tried. */
  invalid: number;
  /** Mutants the time box left untried. */
  untried: number;
}

/**
 * Proof of the change: for the lines the claim changed in the repository's
 * own source, which ones the tests run and which wrong versions of them the
 * tests notice. Computed once, at the claim that completes.
 */
export interface ChangeProof {
  /** The changed source files, with their figures. */
  files: FileProof[];
  /** Changed executable lines the tests ran over those measured (0..1); absent when none was measured. */
  coverage?: number;
  /** Killed over tried mutants (0..1); absent when none was tried. */
  mutationScore?: number;
  /** The mutants' tally. */
  mutants: MutantTally;
  /** The runtimes that recorded coverage. */
  measuredBy: string[];
  /** How long the suite took once, in milliseconds (the time box's unit). */
  suiteMs: number;
  /** How long the proof took, in milliseconds. */
  durationMs: number;
}

/** The worker's own test of a bug fix: new or changed tests that fail on the starting commit and pass at the end. */
export interface WorkerTestEvidence {
  /** Why the run needs one (`issue #7 is labelled "bug"`, `verify.reproduce is "worker"`). */
  required: string;
  /** The worker's new or changed test files, run on the starting commit. */
  files: string[];
  /** Their tests that fail on the starting commit and pass on the claim. */
  tests: string[];
  /** The worker's `no_test` reason, when it stands in for a test. */
  noTest?: string;
  /** What the tests' failures said on the starting commit (assertion lines, no code). */
  failedWith?: string[];
  /** Whether the rule is met (a test flipped, and the reviewer accepted it; or a `no_test` the reviewer accepted). */
  passed: boolean;
}

/** One declaration of a claim (a complete_task field), as the reviewer reads it. */
export interface Declaration {
  /** Which complete_task field it came from. */
  kind:
    | "tests_changed"
    | "out_of_scope"
    | "no_test"
    | "held_out_wrong"
    | "worker_test"
    | "runner_signal";
  /**
   * The file (tests_changed), the check (out_of_scope), the held-out tests
   * (held_out_wrong), the worker's flipped tests (worker_test: not a
   * declaration the worker made, but its claim that its test shows the bug),
   * or the task (no_test).
   */
  subject: string;
  /** The worker's reason. */
  reason: string;
  /** What finishline found that the declaration answers, in one sentence. */
  facts: string;
}

/** A declaration with the reviewer's verdict. */
export interface ReviewedDeclaration extends Declaration {
  /** Accepted, refused, or not reviewed (the reviewer failed). */
  verdict: "accepted" | "refused" | "unreviewed";
  /** The reviewer's reason, or why there is no verdict. */
  why: string;
}

/** Git evidence gathered after an iteration; absent outside a repository. */
export interface GitEvidence {
  /** Commit at the start of the iteration. */
  baseline?: string;
  /** Commit at the end of the iteration. */
  head?: string;
  /** Commits made during the iteration, or null when git could not tell. */
  newCommits: number | null;
  /** Paths with staged changes. */
  staged: string[];
  /** Paths with unstaged or untracked changes. */
  unstaged: string[];
}

/** What one iteration (one agent session) did, built from the backend's messages. */
export interface IterationSummary {
  /** 1-based iteration number. */
  iteration: number;
  /** The agent session id, when the backend reported one. */
  sessionId?: string;
  /** Text blocks of the agent's messages, in order. */
  assistantResponses: string[];
  /** Names of the tools the agent called, in order (repeats kept). */
  toolsUsed: string[];
  /** Tool calls with their input, in order. */
  toolCalls: ToolCall[];
  /** Fenced action blocks whose JSON body has a `type`. */
  detectedActions: DetectedAction[];
  /** Tool errors, API errors and result errors. */
  errors: string[];
  /** The model the agent's session ran on, as the backend reported it. */
  model?: string;
  /** Cost of the iteration in USD, as reported by the backend. */
  costUsd: number;
  /** Tokens used. */
  tokens: TokenUsage;
  /** Model turns. */
  turns: number;
  /** Wall time of the iteration in milliseconds. */
  durationMs: number;
  /**
   * Of that, milliseconds spent waiting for the agent (its sessions, process
   * start included); the rest is finishline's own work.
   */
  agentMs?: number;
  /** Why the session stopped (the result's stop reason or subtype). */
  stopReason: string | null;
  /** The `complete_task` call, when the agent made one. */
  completeTask?: CompleteTaskCall;
  /** Git evidence, when the run is in a repository. */
  git?: GitEvidence;
  /** Failed or retried calls to outside tools (gh, git) during the iteration. */
  faults?: string[];
  /** The latest verification of the iteration (from complete_task or the handler's verdict). */
  verification?: {
    /** Whether the checks passed. */
    passed: boolean;
    /** The checker that decided. */
    checker: string;
    /** Feedback for the agent. */
    feedback: string;
    /** What asked for it: the complete_task call, the Stop hook, the verdict, the pull request. */
    trigger: "handler" | "complete_task" | "stop_hook" | "pull_request";
    /** A checker threw (its error is the feedback). */
    faulted?: boolean;
    /** It passed, but nothing checked the work: why (`no checks found`); see loop/unverified.ts. */
    unverified?: string;
  };
  /**
   * Failed checks of complete_task calls that a later call of the same iteration passed:
   * the agent read the feedback in the tool result and fixed the work in the same session.
   */
  fixedChecks?: Array<NonNullable<IterationSummary["verification"]>>;
  /** The repository's checks at the iteration's latest verification, against the baseline. */
  checks?: ChecksEvidence;
  /** How often the stop hook sent the agent back in this iteration. */
  continuations?: number;
  /** The runner's verdict on the iteration (`continue`, `complete`, ...), once recorded. */
  verdict?: string;
  /** Faults of earlier attempts of this iteration (each one re-ran it). */
  retries?: string[];
  /** Status probes of the iteration, in order, with every field of each answer. */
  probes?: Array<{
    /** complete, waiting, working, blocked, or unknown (no answer, or none parseable). */
    status: string;
    /** The agent's one-line description. */
    message: string;
    /** Tasks it says are done. */
    tasksCompleted?: string[];
    /** Tasks it says are pending. */
    tasksPending?: string[];
    /** What it says should happen next. */
    nextAction?: string;
    /** Whether it says agents or background work it started still run. */
    agentsActive?: boolean;
    /** What it says those agents are doing. */
    agentsDetails?: string;
    /** The commits it says it made (git decides; see `git.newCommits`). */
    commitsMade?: number;
    /** Whether it says the run should go on. */
    shouldContinue?: boolean;
  }>;
  /**
   * The circuit breaker's view of the iteration: whether it counted as one
   * without progress, the count after it, and what its probes came to
   * (`not_probed`, `progress` when commits appeared between probes,
   * `complete`, `active` when an answer said waiting or working or agents
   * active, `timeout` when no answer was parseable or none came, `blocked`).
   */
  stall?: {
    /** It counted toward `circuitBreaker.noProgressThreshold`. */
    counted: boolean;
    /** Iterations in a row without progress, this one included. */
    streak: number;
    /** What the iteration's probes came to. */
    probe: "not_probed" | "progress" | "complete" | "active" | "timeout" | "blocked";
    /**
     * Rounds of probes in a row, this one included, that ran out on `waiting` with nothing
     * moved (absent when this one did not); past 2 such rounds, each counts.
     */
    waitingRounds?: number;
  };
  /** The commit rescue, when work was left uncommitted. */
  rescue?: {
    /** The uncommitted files found. */
    files: string[];
    /** Who committed: the agent (asked), the runner (git.autoCommit), or none. */
    by: "agent" | "runner" | "none";
    /** Whether the tree was clean afterwards. */
    clean: boolean;
    /** The commit the rescue created (the new HEAD), or null when it created none; absent in older records. */
    commit?: string | null;
  };
}

/**
 * A summary with nothing in it, for an iteration that has not run yet (and
 * for tests).
 *
 * @param iteration The iteration number.
 * @returns An empty summary.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 *
 * const summary = emptySummary(2);
 * assert.equal(summary.iteration, 2);
 * assert.deepEqual(summary.toolsUsed, []);
 * assert.equal(summary.stopReason, null);
 * ```
 */
export function emptySummary(iteration: number): IterationSummary {
  return {
    iteration,
    assistantResponses: [],
    toolsUsed: [],
    toolCalls: [],
    detectedActions: [],
    errors: [],
    costUsd: 0,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
    turns: 0,
    durationMs: 0,
    stopReason: null,
  };
}
