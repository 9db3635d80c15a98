/**
 * One run as `--json` prints it, the same field names wherever a run is
 * printed (the run's own result, `runs`, `runs show`): the stable record
 * that docs/history.md documents.
 *
 * @module
 */

import type { ChangeProof, CheckEvidence, IterationSummary } from "../../record/iteration.ts";
import type { RunSegment, StoredIteration, StoredRun } from "../../store/mod.ts";

/** One repository check at both ends of a run. */
export interface CheckRecord {
  /** The check's command. */
  name: string;
  /** On the starting commit: `green`, `red`, or `unknown` when it did not run. */
  baseline: "green" | "red" | "unknown";
  /** On the last claim's clean copy. */
  final: "green" | "red";
  /** Tests failing on the last claim. */
  failingTests: string[];
  /** Tests failing on the starting commit. */
  baselineFailingTests: string[];
}

/** What the evidence said at the last claim of a run. */
export interface EvidenceRecord {
  /** Whether the gate passed at the last claim; null when no claim was checked. */
  passed: boolean | null;
  /** The repository's checks at both ends. */
  checks: CheckRecord[];
  /** The verifier's held-out tests, when they ran. */
  heldOut?: { tests: string[]; passed: boolean };
  /** Proof of the change, when it was measured (at the claim that completes). */
  changeProof?: ChangeProofRecord;
}

/** Proof of the change, as `--json` prints it. */
export interface ChangeProofRecord {
  /** Changed executable lines the tests ran, over those measured (0..1); null when none was measured. */
  coverage: number | null;
  /** Killed over tried mutants (0..1); null when none was tried. */
  mutationScore: number | null;
  /** Each changed source file: changed executable lines, lines run (null: not measured), lines never run. */
  files: Array<{ path: string; changedLines: number; linesRun: number | null; neverRun: number[] }>;
  /** Mutants tried, killed, left untried by the time box, and those that survived. */
  mutants: {
    tried: number;
    killed: number;
    untried: number;
    survived: Array<{ path: string; line: number; change: string }>;
  };
  /** The runtimes whose coverage measured the files. */
  measuredBy: string[];
  /** How long the proof took, in milliseconds. */
  durationMs: number;
}

/** A run, as `runs --json` and `runs show --json` print it. */
export interface RunRecord {
  /** The run's id. */
  runId: string;
  /** How it ended (`completed`, `max_iterations`, ...), or `running`. */
  status: string;
  /** Why, in one sentence; null while it runs. */
  completionReason: string | null;
  /** The agent's name. */
  agent: string;
  /** The completion handler (`task`, `issue`, `iterate`, ...). */
  handler: string;
  /** The `--task` text, when given. */
  task: string | null;
  /** The `--issue` number, when given. */
  issue: number | null;
  /** The `--project` number, when given. */
  project: number | null;
  /** ISO timestamp of its start. */
  startedAt: string;
  /** ISO timestamp of its end; null while it runs. */
  endedAt: string | null;
  /** Time spent running, over its segments, in milliseconds. */
  durationMs: number | null;
  /** Iterations recorded. */
  iterations: number;
  /** The iteration cap. */
  maxIterations: number;
  /** Cost in US dollars. */
  costUsd: number;
  /** Tokens in and out. */
  tokens: { input: number; output: number };
  /** The model the agent's sessions ran on, as the backend reported it. */
  model: string | null;
  /** The commits of the run: how many, from which commit to which. */
  commits: { count: number; baseline: string | null; head: string | null };
  /** The evidence at the last claim. */
  evidence: EvidenceRecord;
}

/**
 * A flag's value in a recorded command line (`--task X`, `-t X`, `--task=X`).
 *
 * @param argv The command line.
 * @param long The long flag, without dashes.
 * @param short The one-letter flag, when there is one.
 * @returns The value, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { flagValue } from "./run_record.ts";
 *
 * assert.equal(flagValue(["-t", "Fix it"], "task", "t"), "Fix it");
 * assert.equal(flagValue(["--issue=7"], "issue", "i"), "7");
 * ```
 */
export function flagValue(argv: string[], long: string, short?: string): string | undefined {
  let value: string | undefined;
  argv.forEach((arg, index) => {
    if (arg === `--${long}` || (short && arg === `-${short}`)) value = argv[index + 1];
    else if (arg.startsWith(`--${long}=`)) value = arg.slice(long.length + 3);
  });
  return value;
}

/**
 * What a run worked on, in a few words: the task, the issue or the project.
 *
 * @param run The stored run.
 * @returns The words.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { subjectOf } from "./run_record.ts";
 *
 * assert.equal(subjectOf({ argv: ["--issue", "42"], agent: "iterator" } as never), "issue #42");
 * ```
 */
export function subjectOf(run: Pick<StoredRun, "argv" | "agent">): string {
  const issue = flagValue(run.argv, "issue", "i");
  if (issue) return `issue #${issue}`;
  const project = flagValue(run.argv, "project", "p");
  if (project) return `project #${project}`;
  const task = flagValue(run.argv, "task", "t");
  return task ?? `(agent ${run.agent}, no task)`;
}

/**
 * A run's time over its segments (a resumed run has several), else from its
 * start to its end.
 *
 * @param run The stored run.
 * @param segments Its segments.
 * @returns Milliseconds, or null while it runs.
 */
export function runDuration(run: StoredRun, segments: RunSegment[]): number | null {
  const ended = segments.filter((segment) => segment.durationMs !== null);
  if (ended.length > 0) return ended.reduce((sum, segment) => sum + segment.durationMs!, 0);
  if (!run.endedAt) return null;
  return Math.max(0, Date.parse(run.endedAt) - Date.parse(run.startedAt));
}

/**
 * The evidence at the last claim of a run's iterations.
 *
 * @param summaries The run's iterations, oldest first.
 * @returns The record.
 */
export function evidenceRecord(summaries: IterationSummary[]): EvidenceRecord {
  const last = summaries.findLast((summary) => summary.checks !== undefined)?.checks;
  if (!last) return { passed: null, checks: [] };
  return {
    passed: last.passed,
    checks: last.checks.map(checkRecord),
    ...(last.heldOut
      ? { heldOut: { tests: last.heldOut.tests, passed: last.heldOut.passed } }
      : {}),
    ...(last.changeProof ? { changeProof: changeProofRecord(last.changeProof) } : {}),
  };
}

function changeProofRecord(proof: ChangeProof): ChangeProofRecord {
  return {
    coverage: proof.coverage ?? null,
    mutationScore: proof.mutationScore ?? null,
    files: proof.files.map((file) => ({
      path: file.path,
      changedLines: file.changed,
      linesRun: file.run ?? null,
      neverRun: file.neverRun,
    })),
    mutants: {
      tried: proof.mutants.tried,
      killed: proof.mutants.killed,
      untried: proof.mutants.untried,
      survived: proof.mutants.survived,
    },
    measuredBy: proof.measuredBy,
    durationMs: proof.durationMs,
  };
}

function checkRecord(check: CheckEvidence): CheckRecord {
  return {
    name: check.name,
    baseline: check.baseline,
    final: check.now,
    failingTests: check.failing,
    baselineFailingTests: check.baselineFailing ?? [],
  };
}

/**
 * The stable record of a stored run.
 *
 * @param run The stored run.
 * @param details Its iterations and segments.
 * @returns The record.
 */
export function runRecord(
  run: StoredRun,
  details: { iterations: StoredIteration[]; segments: RunSegment[] },
): RunRecord {
  const summaries = details.iterations.map((iteration) => iteration.summary);
  const number = (text: string | undefined) => text === undefined ? null : Number(text);
  return {
    runId: run.id,
    status: run.status,
    completionReason: run.reason,
    agent: run.agent,
    handler: run.handler,
    task: flagValue(run.argv, "task", "t") ?? null,
    issue: number(flagValue(run.argv, "issue", "i")),
    project: number(flagValue(run.argv, "project", "p")),
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    durationMs: runDuration(run, details.segments),
    iterations: run.iterations,
    maxIterations: run.maxIterations,
    costUsd: run.costUsd,
    tokens: { input: run.tokensInput, output: run.tokensOutput },
    model: summaries.findLast((summary) => summary.model)?.model ?? null,
    commits: {
      count: summaries.reduce((sum, summary) => sum + (summary.git?.newCommits ?? 0), 0),
      baseline: run.baseline,
      head: summaries.findLast((summary) => summary.git?.head)?.git?.head ?? null,
    },
    evidence: evidenceRecord(summaries),
  };
}

/**
 * The stable fields of a run's own `--json` result, named as in
 * {@linkcode RunRecord}: what it worked on, the model, the commits and the
 * evidence (the result's other fields, `status`, `completionReason`,
 * `iterations`, `costUsd`, `durationMs`, `runId`, are named the same already).
 *
 * @param plan The run's handler, agent and arguments.
 * @param result Its iterations and baseline.
 * @returns The fields.
 */
export function resultRecord(
  plan: { handler: { type: string }; definition: { name: string }; args: Record<string, unknown> },
  result: { summaries: IterationSummary[]; baseline?: { commit?: string | null } },
): Pick<
  RunRecord,
  "agent" | "handler" | "task" | "issue" | "project" | "model" | "commits" | "evidence"
> {
  const { args, summaries } = { args: plan.args, summaries: result.summaries };
  const number = (value: unknown) => typeof value === "number" ? value : null;
  return {
    agent: plan.definition.name,
    handler: plan.handler.type,
    task: typeof args.task === "string" ? args.task : null,
    issue: number(args.issue),
    project: number(args.project),
    model: summaries.findLast((summary) => summary.model)?.model ?? null,
    commits: {
      count: summaries.reduce((sum, summary) => sum + (summary.git?.newCommits ?? 0), 0),
      baseline: result.baseline?.commit ?? summaries[0]?.git?.baseline ?? null,
      head: summaries.findLast((summary) => summary.git?.head)?.git?.head ?? null,
    },
    evidence: evidenceRecord(summaries),
  };
}
