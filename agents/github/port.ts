/**
 * The GitHub port: every call goes through the `gh` CLI (see `process.ts`), with
 * a timeout, and its JSON output is validated with zod.
 *
 * Two kinds of call: checks before the run (`preflight`, `issue`, `project`)
 * turn every problem into a one-line {@linkcode UsageError}, after trying
 * again with the run's backoff while GitHub is not answering (5xx, network
 * error, timeout: "GitHub is not answering ..."); calls during the
 * run retry with backoff and never throw: a call that still fails is
 * reported to `onFault` and answered with `undefined`, which callers treat as
 * "not complete".
 *
 * @module
 */

import { GhCalls, type GitHubOptions, preflight, repository } from "./_calls.ts";
import {
  comment,
  editLabel,
  ensureLabel,
  type GhComment,
  type GhIssue,
  type GhListedIssue,
  issue,
  issueComments,
  issueState,
  issueStatus,
  listIssues,
  setIssueState,
} from "./_issues.ts";
import { type GhProject, type GhProjectItem, project, projectItems } from "./_projects.ts";
import {
  createPullRequest,
  failedRunLog,
  type PullRequestChecks,
  pullRequestChecks,
  waitForChecks,
  type WaitForChecksOptions,
} from "./_pull_requests.ts";

export type { GhFault, GitHubOptions } from "./_calls.ts";
export type { GhComment, GhIssue, GhListedIssue } from "./_issues.ts";
export type { GhProject, GhProjectItem } from "./_projects.ts";
export type {
  PullRequestCheck,
  PullRequestChecks,
  WaitForChecksOptions,
} from "./_pull_requests.ts";

/**
 * Talks to GitHub through the `gh` CLI.
 *
 * @example A call during the run that keeps failing
 * ```ts
 * import assert from "node:assert/strict";
 * import type { GhFault } from "./port.ts";
 * import { standInGh } from "@finishline/agents/testing";
 *
 * // A gh that always fails: the call is retried, each failure is reported,
 * // and the answer is undefined.
 * await using gh = await standInGh({ stderr: "HTTP 502: Bad Gateway", code: 1 });
 * const faults: GhFault[] = [];
 * const sleep = () => Promise.resolve();
 * const github = gh.port({ attempts: 2, sleep, onFault: (fault) => faults.push(fault) });
 * assert.equal(await github.issueState(7), undefined);
 * assert.deepEqual(faults.map((fault) => [fault.message, fault.willRetry]), [
 *   ["HTTP 502: Bad Gateway", true],
 *   ["HTTP 502: Bad Gateway", false],
 * ]);
 * assert.equal(github.calls, 2);
 * ```
 */
export class GitHubCli {
  #gh: GhCalls;

  /**
   * Create the port; nothing runs until a method is called.
   *
   * @param options Working directory, repository, gh executable, timeouts, retries.
   */
  constructor(options: GitHubOptions) {
    this.#gh = new GhCalls(options);
  }

  /**
   * How many gh processes this port started.
   *
   * @returns The count, retries included.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh('{"state": "OPEN"}');
   * const github = gh.port();
   * assert.equal(github.calls, 0);
   * await github.issueState(7);
   * assert.equal(github.calls, 1);
   * ```
   */
  get calls(): number {
    return this.#gh.count;
  }

  /**
   * `--repo owner/name` when a repository was given, else nothing.
   *
   * @returns Arguments to append to repository commands.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitHubCli } from "./port.ts";
   *
   * const github = new GitHubCli({ cwd: Deno.cwd(), repo: "octo/demo" });
   * assert.deepEqual(github.repoArgs(), ["--repo", "octo/demo"]);
   * assert.deepEqual(new GitHubCli({ cwd: Deno.cwd() }).repoArgs(), []);
   * ```
   */
  repoArgs(): string[] {
    return this.#gh.repoArgs();
  }

  /**
   * Check before the run that gh is installed and authenticated.
   *
   * @returns gh's version line.
   * @throws {UsageError} When gh is missing or not logged in.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { UsageError } from "@finishline/agents";
   * import { GitHubCli } from "./port.ts";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh("gh version 2.50.0 (2024-05-01)");
   * assert.equal(await gh.port().preflight(), "gh version 2.50.0 (2024-05-01)");
   * assert.deepEqual(await gh.calls(), ["--version", "auth status"]);
   *
   * const missing = new GitHubCli({ cwd: gh.dir, gh: `${gh.dir}/no-such-gh` });
   * await assert.rejects(missing.preflight(), UsageError);
   * ```
   */
  async preflight(): Promise<string> {
    return await preflight(this.#gh);
  }

  /**
   * The repository (`--repo`, else the working directory's).
   *
   * @returns Its `owner/name` and owner login.
   * @throws {UsageError} When gh cannot tell.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh('{"nameWithOwner": "octo/demo", "owner": {"login": "octo"}}');
   * assert.deepEqual(await gh.port().repository(), { nameWithOwner: "octo/demo", owner: "octo" });
   * assert.deepEqual(await gh.calls(), ["repo view octo/demo --json nameWithOwner,owner"]);
   * ```
   */
  async repository(): Promise<{ nameWithOwner: string; owner: string }> {
    return await repository(this.#gh);
  }

  /**
   * Read an issue before the run.
   *
   * @param number Issue number.
   * @returns The issue.
   * @throws {UsageError} When it does not exist or gh fails.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssue, standInGh } from "@finishline/agents/testing";
   *
   * const { labels: _, ...fields } = sampleIssue();
   * await using gh = await standInGh(JSON.stringify({ ...fields, labels: [{ name: "bug" }] }));
   * const issue = await gh.port().issue(7);
   * assert.equal(issue.title, "Login test is flaky");
   * assert.deepEqual(issue.labels, ["bug"]);
   * ```
   */
  async issue(number: number): Promise<GhIssue> {
    return await issue(this.#gh, number);
  }

  /**
   * The open issues with a label, before any run: `gh issue list`, the
   * newest first as gh lists them.
   *
   * @param options `label` (none: every open issue) and `limit`, the most to fetch.
   * @returns The issues.
   * @throws {UsageError} When gh fails or answers unexpected JSON.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * const issue = {
   *   number: 4,
   *   title: "Fix the login test",
   *   labels: [{ name: "agent:go" }],
   *   createdAt: "2026-01-02T10:00:00Z",
   *   url: "https://github.com/octo/demo/issues/4",
   * };
   * await using gh = await standInGh(JSON.stringify([issue]));
   * const issues = await gh.port().listIssues({ label: "agent:go", limit: 100 });
   * assert.deepEqual(issues.map((issue) => [issue.number, issue.labels]), [[4, ["agent:go"]]]);
   * assert.deepEqual(await gh.calls(), [
   *   "issue list --repo octo/demo --state open --label agent:go --limit 100 --json number,title,labels,createdAt,url",
   * ]);
   * ```
   */
  async listIssues(options: { label?: string; limit: number }): Promise<GhListedIssue[]> {
    return await listIssues(this.#gh, options);
  }

  /**
   * An issue's state and labels during the run (retried; `undefined` when gh keeps failing).
   *
   * @param number Issue number.
   * @returns Its state and label names, or undefined.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh('{"state": "OPEN", "labels": [{"name": "blocked"}]}');
   * assert.deepEqual(await gh.port().issueStatus(7), { state: "OPEN", labels: ["blocked"] });
   * assert.deepEqual(await gh.calls(), ["issue view 7 --repo octo/demo --json state,labels"]);
   * ```
   */
  async issueStatus(
    number: number,
  ): Promise<{ state: "OPEN" | "CLOSED"; labels: string[] } | undefined> {
    return await issueStatus(this.#gh, number);
  }

  /**
   * An issue's state during the run (retried; `undefined` when gh keeps failing).
   *
   * @param issue Issue number or URL.
   * @returns OPEN, CLOSED or undefined.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh('{"state": "CLOSED"}');
   * assert.equal(await gh.port().issueState(7), "CLOSED");
   * assert.deepEqual(await gh.calls(), ["issue view 7 --repo octo/demo --json state"]);
   * ```
   */
  async issueState(issue: number | string): Promise<"OPEN" | "CLOSED" | undefined> {
    return await issueState(this.#gh, issue);
  }

  /**
   * An issue's comments during the run (retried).
   *
   * @param number Issue number.
   * @returns The comments, oldest first, or undefined when gh keeps failing.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * const comment = { id: "c1", author: null, body: "Any news?", createdAt: "2025-05-01T10:00:00Z" };
   * await using gh = await standInGh(JSON.stringify({ comments: [comment] }));
   * // A deleted account shows as "ghost".
   * assert.deepEqual(await gh.port().issueComments(7), [{ ...comment, author: "ghost" }]);
   * ```
   */
  async issueComments(number: number): Promise<GhComment[] | undefined> {
    return await issueComments(this.#gh, number);
  }

  /**
   * Create a label if it is missing (retried).
   *
   * @param name Label name.
   * @returns Whether gh succeeded.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * assert.equal(await gh.port().ensureLabel("in-progress"), true);
   * assert.match((await gh.calls())[0], /^label create in-progress --repo octo\/demo --force/);
   * ```
   */
  async ensureLabel(name: string): Promise<boolean> {
    return await ensureLabel(this.#gh, name);
  }

  /**
   * Add or remove a label on an issue (retried).
   *
   * @param number Issue number.
   * @param change `add` or `remove` and the label.
   * @returns Whether gh succeeded.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * assert.equal(await gh.port().editLabel(7, { add: "blocked", remove: "in-progress" }), true);
   * assert.deepEqual(await gh.calls(), [
   *   "issue edit 7 --repo octo/demo --add-label blocked --remove-label in-progress",
   * ]);
   * ```
   */
  async editLabel(number: number, change: { add?: string; remove?: string }): Promise<boolean> {
    return await editLabel(this.#gh, number, change);
  }

  /**
   * Comment on an issue (retried).
   *
   * @param number Issue number.
   * @param body Comment text.
   * @returns Whether gh succeeded.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * assert.equal(await gh.port().comment(7, "Fixed in main."), true);
   * assert.deepEqual(await gh.calls(), ["issue comment 7 --repo octo/demo --body Fixed in main."]);
   * ```
   */
  async comment(number: number, body: string): Promise<boolean> {
    return await comment(this.#gh, number, body);
  }

  /**
   * Close an issue, optionally with a closing comment (retried).
   *
   * @param number Issue number.
   * @param comment A comment to leave with it.
   * @returns Whether gh succeeded (closing a closed issue succeeds too).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * const github = gh.port();
   * assert.equal(await github.closeIssue(7, "Fixed in #9."), true);
   * assert.equal(await github.closeIssue(8), true);
   * assert.deepEqual(await gh.calls(), [
   *   "issue close 7 --repo octo/demo --comment Fixed in #9.",
   *   "issue close 8 --repo octo/demo",
   * ]);
   * ```
   */
  async closeIssue(number: number, comment?: string): Promise<boolean> {
    return await setIssueState(this.#gh, "close", number, comment);
  }

  /**
   * Reopen an issue, optionally with a comment saying why (retried).
   *
   * @param number Issue number.
   * @param comment A comment to leave with it.
   * @returns Whether gh succeeded (reopening an open issue succeeds too).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * assert.equal(await gh.port().reopenIssue(7, "The test still fails."), true);
   * assert.deepEqual(await gh.calls(), [
   *   "issue reopen 7 --repo octo/demo --comment The test still fails.",
   * ]);
   * ```
   */
  async reopenIssue(number: number, comment?: string): Promise<boolean> {
    return await setIssueState(this.#gh, "reopen", number, comment);
  }

  /**
   * Read a project before the run.
   *
   * @param number Project number.
   * @param owner Owner login or `@me`.
   * @returns The project.
   * @throws {UsageError} When it does not exist or gh fails.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleProject, standInGh } from "@finishline/agents/testing";
   *
   * const { owner: _, ...fields } = sampleProject();
   * await using gh = await standInGh(JSON.stringify(fields));
   * assert.deepEqual(await gh.port().project(2, "octo"), sampleProject());
   * assert.deepEqual(await gh.calls(), ["project view 2 --owner octo --format json"]);
   * ```
   */
  async project(number: number, owner: string): Promise<GhProject> {
    return await project(this.#gh, number, owner);
  }

  /**
   * A project's items: before the run strictly, during it retried.
   *
   * @param number Project number.
   * @param owner Owner login or `@me`.
   * @param options `strict` turns failures into a UsageError.
   * @returns The items, or undefined when gh keeps failing during the run.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * const content = { type: "Issue", number: 3, title: "Add login" };
   * const item = { id: "PVTI_1", status: "Done", content };
   * await using gh = await standInGh(JSON.stringify({ items: [item] }));
   * const items = await gh.port().projectItems(2, "octo", { strict: true });
   * assert.deepEqual(items?.map((item) => [item.title, item.status, item.number]), [
   *   ["Add login", "Done", 3],
   * ]);
   * ```
   */
  async projectItems(
    number: number,
    owner: string,
    options: { strict?: boolean } = {},
  ): Promise<GhProjectItem[] | undefined> {
    return await projectItems(this.#gh, { number, owner }, options);
  }

  /**
   * Open a pull request (one attempt; the caller reports a failure).
   *
   * @param pr Base and head branches, title and body.
   * @returns The pull request URL, or undefined when gh failed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh("https://github.com/octo/demo/pull/9");
   * const url = await gh.port().createPullRequest({
   *   base: "main",
   *   head: "finishline/fix-login",
   *   title: "Fix the login test",
   *   body: "Closes #7",
   * });
   * assert.equal(url, "https://github.com/octo/demo/pull/9");
   * ```
   */
  async createPullRequest(
    pr: { base: string; head: string; title: string; body: string },
  ): Promise<string | undefined> {
    return await createPullRequest(this.#gh, pr);
  }

  /**
   * The CI checks of a pull request during the run (retried; `undefined` when gh keeps failing).
   * gh exits 1 or 8 when checks failed or are pending; those are answers, not faults.
   *
   * @param pr Pull request number, URL or head branch.
   * @returns The checks and their overall state, or undefined.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * // gh's rows for a pending run; gh exits 8 while a check is pending.
   * const job = (n: number) => `https://github.com/octo/demo/actions/runs/123/job/${n}`;
   * await using gh = await standInGh({
   *   stdout: `lint\tpass\t41s\t${job(1)}\t\ntest\tpending\t0\t${job(2)}\t`,
   *   code: 8,
   * });
   * const checks = await gh.port().pullRequestChecks("9");
   * assert.equal(checks?.state, "pending");
   * assert.deepEqual(checks?.checks[1], { name: "test", state: "pending", link: job(2), runId: "123" });
   * assert.deepEqual(await gh.calls(), ["pr checks 9 --repo octo/demo"]);
   * ```
   */
  async pullRequestChecks(pr: string): Promise<PullRequestChecks | undefined> {
    return await pullRequestChecks(this.#gh, pr);
  }

  /**
   * Poll a pull request's checks until none is pending or the time is up.
   *
   * A poll on which gh keeps failing is reported to `onFault` and the polling
   * goes on; the answer is the last one gh gave (pending with no checks if it
   * never answered).
   *
   * @param pr Pull request number, URL or head branch.
   * @param options Time budget, poll interval, abort signal and a callback for each answer.
   * @returns The last answer, with `timedOut` when the time ran out (or `signal` aborted)
   * while checks were pending.
   * @throws {RangeError} When `timeoutMs` is negative or `intervalMs` is not positive.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * // The check is pending on the first call and passes after.
   * await using gh = await standInGh([
   *   { stdout: "test\tpending\t0\t\t", code: 8 },
   *   { stdout: "test\tpass\t2m0s\t\t" },
   * ]);
   * const waits: number[] = [];
   * const github = gh.port({ sleep: (ms) => Promise.resolve(void waits.push(ms)) });
   * const polls: string[] = [];
   * const result = await github.waitForPullRequestChecks("9", {
   *   timeoutMs: 600_000,
   *   onPoll: (checks) => polls.push(checks.state),
   * });
   * assert.deepEqual(result, {
   *   state: "pass",
   *   checks: [{ name: "test", state: "pass" }],
   *   timedOut: false,
   * });
   * assert.deepEqual(polls, ["pending", "pass"]);
   * assert.deepEqual(waits, [15_000]);
   * ```
   */
  async waitForPullRequestChecks(
    pr: string,
    options: WaitForChecksOptions,
  ): Promise<PullRequestChecks & { timedOut: boolean }> {
    const poll = (pr: string) => this.pullRequestChecks(pr);
    return await waitForChecks(this.#gh, pr, { ...options, poll });
  }

  /**
   * The end of the log of a workflow run's failed steps (retried).
   *
   * @param runId The Actions run id (see {@linkcode PullRequestCheck.runId}).
   * @param tailLines How many lines to keep from the end.
   * @returns The last lines (`job`, `step` and the line, tab-separated, as gh prints them),
   * or undefined when gh keeps failing.
   * @throws {RangeError} When `tailLines` is not a positive integer.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh("one\ntwo\nthree\nfour\nfive");
   * assert.equal(await gh.port().failedRunLog("123", 2), "four\nfive");
   * assert.deepEqual(await gh.calls(), ["run view 123 --repo octo/demo --log-failed"]);
   * ```
   */
  async failedRunLog(runId: string, tailLines = 40): Promise<string | undefined> {
    return await failedRunLog(this.#gh, runId, tailLines);
  }
}
