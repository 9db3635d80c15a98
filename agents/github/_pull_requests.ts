/**
 * Pull requests through gh: open one, read its CI checks from gh's plain
 * table, wait for them, and read the failed log of a workflow run. The
 * {@linkcode GitHubCli} methods of the same names delegate here. Private to
 * `agents/github`.
 *
 * @module
 */

import { defuseBody, defuseTitle } from "./defuse.ts";
import { type CallResult, firstLine, type GhCalls } from "./_calls.ts";

/** One CI check of a pull request, as `gh pr checks` reports it. */
export interface PullRequestCheck {
  /** The check's name (an Actions job, or a status context). */
  name: string;
  /**
   * gh's bucket for it. gh's plain (non-terminal) output folds a cancelled
   * check into `fail`, so `cancel` only comes from a gh that prints it.
   */
  state: "pass" | "fail" | "pending" | "skipping" | "cancel";
  /** Its details page, when gh gives one. */
  link?: string;
  /** The Actions run id, when the link is an Actions job (`.../actions/runs/<id>/job/...`). */
  runId?: string;
}

/** The CI checks of a pull request and their overall state. */
export interface PullRequestChecks {
  /**
   * `fail` when any check failed or was cancelled, else `pending` when any is
   * still running, else `pass`; `none` when the pull request has no checks.
   */
  state: "pass" | "fail" | "pending" | "none";
  /** The checks, in the order gh printed them. */
  checks: PullRequestCheck[];
}

/** Options of {@linkcode GitHubCli.waitForPullRequestChecks}. */
export interface WaitForChecksOptions {
  /**
   * How long to wait: the time gh calls take plus the waits between polls, so
   * an instant `sleep` (in the port's options) makes the whole wait instant.
   */
  timeoutMs: number;
  /** The wait between polls in milliseconds. @default 15000 */
  intervalMs?: number;
  /**
   * Ends the wait early, as the deadline does (the answer says `timedOut`;
   * `signal.aborted` tells the two apart). It never rejects, like the
   * runner's other abortable waits.
   */
  signal?: AbortSignal;
  /** Receives every answer gh gives, pending ones included. */
  onPoll?: (checks: PullRequestChecks) => void;
}

/**
 * Exit codes with which `gh pr checks` still prints its rows: 1 when a check
 * failed (and, before gh 2.36, when one is pending), 8 when one is pending.
 */
const CHECKS_ANSWER_CODES: readonly number[] = [1, 8];

/** gh's words when a pull request has no checks at all. */
const NO_CHECKS = /^no checks reported on the '/m;

const CHECK_STATES: readonly string[] = ["pass", "fail", "pending", "skipping", "cancel"];

/**
 * Open a pull request (one attempt; the caller reports a failure).
 *
 * @param calls The port's gh calls.
 * @param pr Base and head branches, title and body.
 * @returns The pull request URL, or undefined when gh failed.
 */
export async function createPullRequest(
  calls: GhCalls,
  pr: { base: string; head: string; title: string; body: string },
): Promise<string | undefined> {
  const result = await calls.retry(
    [
      "pr",
      "create",
      ...calls.repoArgs(),
      "--base",
      pr.base,
      "--head",
      pr.head,
      "--title",
      defuseTitle(pr.title),
      "--body",
      defuseBody(pr.body),
    ],
    () => undefined,
  );
  return result?.stdout.trim().split("\n").at(-1);
}

/**
 * The CI checks of a pull request during the run (retried).
 *
 * Reads gh's plain output (`name`, `state`, `elapsed`, `link` and, from gh
 * 2.30, `description`, tab-separated), which every gh prints: `--json` on
 * `gh pr checks` came in 2024, long after Debian's gh 2.23. gh exits 1 or 8
 * when checks failed or are pending; those are answers, not faults.
 *
 * @param calls The port's gh calls.
 * @param pr Pull request number, URL or head branch.
 * @returns The checks and their overall state, or undefined when gh keeps failing.
 */
export async function pullRequestChecks(
  calls: GhCalls,
  pr: string,
): Promise<PullRequestChecks | undefined> {
  // A URL names its repository; --repo is for numbers and branches.
  const args = ["pr", "checks", pr, ...(/^https?:\/\//.test(pr) ? [] : calls.repoArgs())];
  let checks: PullRequestChecks | undefined;
  const result = await calls.retry(args, (result) => {
    const parsed = parseChecks(result);
    if (typeof parsed === "string") return parsed;
    checks = parsed;
    return undefined;
  }, CHECKS_ANSWER_CODES);
  return result ? checks : undefined;
}

/**
 * Poll with `poll` until no check is pending or the time is up.
 *
 * @param calls The port's gh calls (for its pause).
 * @param pr Pull request number, URL or head branch.
 * @param options Time budget, poll interval, abort signal, callback, and the poll itself.
 * @returns The last answer, with `timedOut`.
 * @throws {RangeError} When `timeoutMs` is negative or `intervalMs` is not positive.
 */
export async function waitForChecks(
  calls: GhCalls,
  pr: string,
  options: WaitForChecksOptions & { poll: (pr: string) => Promise<PullRequestChecks | undefined> },
): Promise<PullRequestChecks & { timedOut: boolean }> {
  const { timeoutMs, signal, onPoll, poll } = options;
  const intervalMs = options.intervalMs ?? 15_000;
  if (!(timeoutMs >= 0)) {
    throw new RangeError(
      `Cannot wait for the checks of "${pr}": "timeoutMs" must be 0 or more, got ${timeoutMs}`,
    );
  }
  if (!(intervalMs > 0)) {
    throw new RangeError(
      `Cannot wait for the checks of "${pr}": "intervalMs" must be more than 0, got ${intervalMs}`,
    );
  }
  // Counted rather than read from a clock, so an instant test sleep still
  // spends the budget: real time in gh calls plus the waits asked for.
  let elapsed = 0;
  let last: PullRequestChecks = { state: "pending", checks: [] };
  for (;;) {
    if (signal?.aborted) return { ...last, timedOut: true };
    const started = performance.now();
    const checks = await poll(pr);
    elapsed += performance.now() - started;
    if (checks !== undefined) {
      last = checks;
      onPoll?.(checks);
      if (checks.state !== "pending") return { ...checks, timedOut: false };
    }
    const remaining = timeoutMs - elapsed;
    if (remaining <= 0) return { ...last, timedOut: true };
    const wait = Math.ceil(Math.min(intervalMs, remaining));
    await calls.pause(wait, signal);
    elapsed += wait;
  }
}

/**
 * The end of the log of a workflow run's failed steps (retried).
 *
 * @param calls The port's gh calls.
 * @param runId The Actions run id.
 * @param tailLines How many lines to keep from the end.
 * @returns The last lines, or undefined when gh keeps failing.
 * @throws {RangeError} When `tailLines` is not a positive integer.
 */
export async function failedRunLog(
  calls: GhCalls,
  runId: string,
  tailLines: number,
): Promise<string | undefined> {
  if (!Number.isInteger(tailLines) || tailLines < 1) {
    throw new RangeError(
      `Cannot read the log of run "${runId}": "tailLines" must be a positive integer, got ${tailLines}`,
    );
  }
  const result = await calls.retry(
    ["run", "view", runId, ...calls.repoArgs(), "--log-failed"],
    () => undefined,
  );
  if (result === undefined) return undefined;
  const text = result.stdout.replace(/\n+$/, "");
  return text === "" ? "" : text.split("\n").slice(-tailLines).join("\n");
}

/** gh's plain `pr checks` output, or the problem with it. */
function parseChecks(result: CallResult): PullRequestChecks | string {
  if (NO_CHECKS.test(result.stderr)) return { state: "none", checks: [] };
  const lines = result.stdout.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) {
    return result.code === 0
      ? { state: "none", checks: [] }
      : firstLine(result.stderr, result.code);
  }
  const checks: PullRequestCheck[] = [];
  for (const line of lines) {
    const [name, state, _elapsed, link] = line.split("\t");
    if (link === undefined || !CHECK_STATES.includes(state)) {
      return `unexpected "gh pr checks" row: "${line}"`;
    }
    const runId = link.match(/\/actions\/runs\/(\d+)(?:[/?#]|$)/)?.[1];
    checks.push({
      name,
      state: state as PullRequestCheck["state"],
      ...(link === "" ? {} : { link }),
      ...(runId === undefined ? {} : { runId }),
    });
  }
  return { state: checksState(checks), checks };
}

function checksState(checks: PullRequestCheck[]): PullRequestChecks["state"] {
  if (checks.length === 0) return "none";
  if (checks.some((check) => check.state === "fail" || check.state === "cancel")) return "fail";
  if (checks.some((check) => check.state === "pending")) return "pending";
  return "pass";
}
