/**
 * The GitHub port: every call goes through the `gh` CLI (see `process.ts`), with
 * a timeout, and its JSON output is validated with zod.
 *
 * Two kinds of call: checks before the run (`preflight`, `issue`, `project`)
 * turn every problem into a one-line {@linkcode UsageError}; calls during the
 * run retry with backoff and never throw: a call that still fails is
 * reported to `onFault` and answered with `undefined`, which callers treat as
 * "not complete".
 *
 * @module
 */

import { z } from "zod";
import { UsageError } from "./errors.ts";
import { MISSING_CODE, runTool, TIMEOUT_CODE } from "./process.ts";

/** A gh call that failed (after its retries, or one attempt of them). */
export interface GhFault {
  /** The gh arguments. */
  args: string[];
  /** Exit code (124 for a timeout, 127 when gh is missing). */
  code: number;
  /** First line of stderr, or "timed out". */
  message: string;
  /** 1-based attempt number. */
  attempt: number;
  /** Whether another attempt follows. */
  willRetry: boolean;
}

/** Options of {@linkcode GitHubCli}. */
export interface GitHubOptions {
  /** Working directory for gh (its default repository). */
  cwd: string;
  /** `owner/name`; the working directory's repository when absent. */
  repo?: string;
  /** The gh executable. @default "gh" */
  gh?: string;
  /** Extra environment for gh (e.g. PATH in tests). */
  env?: Record<string, string>;
  /** Timeout of one gh call in milliseconds. @default 30000 */
  timeoutMs?: number;
  /** Attempts for calls during the run. @default 4 */
  attempts?: number;
  /** First backoff in milliseconds; it doubles each retry. @default 1000 */
  backoffMs?: number;
  /** Receives every failed attempt of a call made during the run. */
  onFault?: (fault: GhFault) => void;
  /** Waits between retries; tests make it instant. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

const labelSchema = z.object({ name: z.string() }).loose();

const issueSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().default(""),
  state: z.enum(["OPEN", "CLOSED"]),
  labels: z.array(labelSchema).default([]),
  url: z.string(),
}).loose();

const stateSchema = z.object({ state: z.enum(["OPEN", "CLOSED"]) }).loose();

const commentSchema = z.object({
  id: z.string(),
  author: z.object({ login: z.string() }).loose().nullable().default(null),
  body: z.string(),
  createdAt: z.string(),
}).loose();

const commentsSchema = z.object({ comments: z.array(commentSchema) }).loose();

const repoSchema = z.object({
  nameWithOwner: z.string(),
  owner: z.object({ login: z.string() }).loose(),
}).loose();

const projectSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  url: z.string().default(""),
  id: z.string().default(""),
  closed: z.boolean().default(false),
}).loose();

const itemSchema = z.object({
  id: z.string(),
  title: z.string().default(""),
  status: z.string().optional(),
  labels: z.array(z.string()).optional(),
  content: z.object({
    type: z.string().default("DraftIssue"),
    number: z.number().int().optional(),
    title: z.string().optional(),
    url: z.string().optional(),
    repository: z.string().optional(),
  }).loose().optional(),
}).loose();

const itemsSchema = z.object({
  items: z.array(itemSchema),
  totalCount: z.number().int().optional(),
}).loose();

/** An issue as the issue handler sees it. */
export interface GhIssue {
  /** Issue number. */
  number: number;
  /** Title. */
  title: string;
  /** Body (Markdown; written by anyone, so untrusted). */
  body: string;
  /** OPEN or CLOSED. */
  state: "OPEN" | "CLOSED";
  /** Label names. */
  labels: string[];
  /** Web URL. */
  url: string;
}

/** A comment on an issue. */
export interface GhComment {
  /** Comment node id. */
  id: string;
  /** Author login ("ghost" when deleted). */
  author: string;
  /** Body. */
  body: string;
  /** ISO timestamp. */
  createdAt: string;
}

/** A Projects v2 board. */
export interface GhProject {
  /** Project number. */
  number: number;
  /** Title. */
  title: string;
  /** Web URL. */
  url: string;
  /** Node id (for item-edit). */
  id: string;
  /** Owner login. */
  owner: string;
}

/** One item of a project board. */
export interface GhProjectItem {
  /** Item node id. */
  id: string;
  /** Title. */
  title: string;
  /** The Status field ("Todo", "In Progress", "Done", ...), when set. */
  status?: string;
  /** Labels of the item's issue. */
  labels: string[];
  /** Issue, PullRequest or DraftIssue. */
  type: string;
  /** Issue or PR number. */
  number?: number;
  /** Issue or PR URL. */
  url?: string;
  /** `owner/name` of the issue or PR. */
  repository?: string;
}

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
   * an instant `sleep` (in {@linkcode GitHubOptions}) makes the whole wait instant.
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

interface CallResult {
  code: number;
  stdout: string;
  stderr: string;
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
 * Talks to GitHub through the `gh` CLI.
 *
 * @example A call during the run that keeps failing
 * ```ts
 * import assert from "node:assert/strict";
 * import type { GhFault } from "@finishline/agents";
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
  #options: Required<Omit<GitHubOptions, "repo" | "onFault" | "env">> & GitHubOptions;
  #calls = 0;

  /**
   * Create the port; nothing runs until a method is called.
   *
   * @param options Working directory, repository, gh executable, timeouts, retries.
   */
  constructor(options: GitHubOptions) {
    // `??`, not a spread over defaults: an option given as undefined keeps its
    // default (a spread would leave `attempts` undefined and never call gh).
    this.#options = {
      ...options,
      gh: options.gh ?? "gh",
      timeoutMs: options.timeoutMs ?? 30_000,
      attempts: options.attempts ?? 4,
      backoffMs: options.backoffMs ?? 1_000,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    };
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
    return this.#calls;
  }

  /**
   * `--repo owner/name` when a repository was given, else nothing.
   *
   * @returns Arguments to append to repository commands.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitHubCli } from "@finishline/agents";
   *
   * assert.deepEqual(new GitHubCli({ cwd: Deno.cwd(), repo: "octo/demo" }).repoArgs(), [
   *   "--repo",
   *   "octo/demo",
   * ]);
   * assert.deepEqual(new GitHubCli({ cwd: Deno.cwd() }).repoArgs(), []);
   * ```
   */
  repoArgs(): string[] {
    return this.#options.repo ? ["--repo", this.#options.repo] : [];
  }

  /**
   * Check before the run that gh is installed and authenticated.
   *
   * @returns gh's version line.
   * @throws {UsageError} When gh is missing or not logged in.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitHubCli, UsageError } from "@finishline/agents";
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
    const version = await this.#once(["--version"]);
    if (version.code === MISSING_CODE) {
      throw new UsageError(
        `Cannot find the GitHub CLI "gh": install it (https://cli.github.com, or "apt install gh" / "brew install gh") and run "gh auth login"`,
      );
    }
    if (version.code !== 0) {
      throw new UsageError(`Cannot run "gh --version": ${firstLine(version.stderr, version.code)}`);
    }
    const auth = await this.#once(["auth", "status"]);
    if (auth.code !== 0) {
      throw new UsageError(
        `The GitHub CLI is not logged in: run "gh auth login" (or set GH_TOKEN); gh said: ${
          firstLine(auth.stderr, auth.code)
        }`,
      );
    }
    return version.stdout.split("\n")[0].trim();
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
    const args = [
      "repo",
      "view",
      ...(this.#options.repo ? [this.#options.repo] : []),
      "--json",
      "nameWithOwner,owner",
    ];
    const data = await this.#strictJson(
      args,
      repoSchema,
      () =>
        this.#options.repo
          ? `Cannot find repository "${this.#options.repo}" (flag "--repo")`
          : `Cannot tell which GitHub repository "${this.#options.cwd}" belongs to: run inside a clone of a GitHub repository or pass --repo owner/name`,
    );
    return { nameWithOwner: data.nameWithOwner, owner: data.owner.login };
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
    const data = await this.#strictJson(
      [
        "issue",
        "view",
        String(number),
        ...this.repoArgs(),
        "--json",
        "number,title,body,state,labels,url",
      ],
      issueSchema,
      () => `Cannot find issue #${number}${this.#where()} (flag "--issue")`,
    );
    return { ...data, labels: data.labels.map((label) => label.name) };
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
    const args = [
      "issue",
      "view",
      String(issue),
      ...(typeof issue === "number" ? this.repoArgs() : []),
    ];
    const data = await this.#retryJson([...args, "--json", "state"], stateSchema);
    return data?.state;
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
    const data = await this.#retryJson(
      ["issue", "view", String(number), ...this.repoArgs(), "--json", "comments"],
      commentsSchema,
    );
    return data?.comments.map((comment) => ({
      id: comment.id,
      author: comment.author?.login ?? "ghost",
      body: comment.body,
      createdAt: comment.createdAt,
    }));
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
    return await this.#retryOk([
      "label",
      "create",
      name,
      ...this.repoArgs(),
      "--force",
      "--color",
      "ededed",
      "--description",
      "Managed by finishline",
    ]);
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
    const args = ["issue", "edit", String(number), ...this.repoArgs()];
    if (change.add) args.push("--add-label", change.add);
    if (change.remove) args.push("--remove-label", change.remove);
    return await this.#retryOk(args);
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
    return await this.#retryOk([
      "issue",
      "comment",
      String(number),
      ...this.repoArgs(),
      "--body",
      body,
    ]);
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
    return await this.#retryOk(this.#stateArgs("close", number, comment));
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
    return await this.#retryOk(this.#stateArgs("reopen", number, comment));
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
    const data = await this.#strictJson(
      ["project", "view", String(number), "--owner", owner, "--format", "json"],
      projectSchema,
      () => `Cannot find project #${number} of owner "${owner}" (flags "--project" and "--owner")`,
    );
    return { number: data.number, title: data.title, url: data.url, id: data.id, owner };
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
   * const item = { id: "PVTI_1", status: "Done", content: { type: "Issue", number: 3, title: "Add login" } };
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
    const args = [
      "project",
      "item-list",
      String(number),
      "--owner",
      owner,
      "--format",
      "json",
      "--limit",
      "1000",
    ];
    const data = options.strict
      ? await this.#strictJson(
        args,
        itemsSchema,
        () => `Cannot list the items of project #${number} of owner "${owner}"`,
      )
      : await this.#retryJson(args, itemsSchema);
    return data?.items.map((item) => ({
      id: item.id,
      title: item.title || item.content?.title || "",
      status: item.status,
      labels: item.labels ?? [],
      type: item.content?.type ?? "DraftIssue",
      number: item.content?.number,
      url: item.content?.url,
      repository: item.content?.repository,
    }));
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
    const result = await this.#retry(
      [
        "pr",
        "create",
        ...this.repoArgs(),
        "--base",
        pr.base,
        "--head",
        pr.head,
        "--title",
        pr.title,
        "--body",
        pr.body,
      ],
      () => undefined,
    );
    return result?.stdout.trim().split("\n").at(-1);
  }

  /**
   * The CI checks of a pull request during the run (retried; `undefined` when gh keeps failing).
   *
   * Reads gh's plain output (`name`, `state`, `elapsed`, `link` and, from gh
   * 2.30, `description`, tab-separated), which every gh prints: `--json` on
   * `gh pr checks` came in 2024, long after Debian's gh 2.23. gh exits 1 or 8
   * when checks failed or are pending; those are answers, not faults.
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
    // A URL names its repository; --repo is for numbers and branches.
    const args = ["pr", "checks", pr, ...(/^https?:\/\//.test(pr) ? [] : this.repoArgs())];
    let checks: PullRequestChecks | undefined;
    const result = await this.#retry(args, (result) => {
      const parsed = parseChecks(result);
      if (typeof parsed === "string") return parsed;
      checks = parsed;
      return undefined;
    }, CHECKS_ANSWER_CODES);
    return result ? checks : undefined;
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
    const { timeoutMs, signal, onPoll } = options;
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
      const checks = await this.pullRequestChecks(pr);
      elapsed += performance.now() - started;
      if (checks !== undefined) {
        last = checks;
        onPoll?.(checks);
        if (checks.state !== "pending") return { ...checks, timedOut: false };
      }
      const remaining = timeoutMs - elapsed;
      if (remaining <= 0) return { ...last, timedOut: true };
      const wait = Math.ceil(Math.min(intervalMs, remaining));
      await this.#pause(wait, signal);
      elapsed += wait;
    }
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
    if (!Number.isInteger(tailLines) || tailLines < 1) {
      throw new RangeError(
        `Cannot read the log of run "${runId}": "tailLines" must be a positive integer, got ${tailLines}`,
      );
    }
    const result = await this.#retry(
      ["run", "view", runId, ...this.repoArgs(), "--log-failed"],
      () => undefined,
    );
    if (result === undefined) return undefined;
    const text = result.stdout.replace(/\n+$/, "");
    return text === "" ? "" : text.split("\n").slice(-tailLines).join("\n");
  }

  #stateArgs(action: "close" | "reopen", number: number, comment?: string): string[] {
    const args = ["issue", action, String(number), ...this.repoArgs()];
    if (comment) args.push("--comment", comment);
    return args;
  }

  /** The injected sleep, cut short (resolved) when `signal` aborts. */
  async #pause(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal === undefined) return await this.#options.sleep(ms);
    if (signal.aborted) return;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.#options.sleep(ms), aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  #where(): string {
    return this.#options.repo ? ` in "${this.#options.repo}"` : "";
  }

  async #once(args: string[]): Promise<CallResult> {
    this.#calls++;
    const { gh, cwd, timeoutMs, env } = this.#options;
    return await runTool(gh, args, { cwd, env, timeoutMs });
  }

  async #strictJson<T>(args: string[], schema: z.ZodType<T>, describe: () => string): Promise<T> {
    const result = await this.#once(args);
    if (result.code === MISSING_CODE) {
      throw new UsageError(
        `Cannot find the GitHub CLI "gh": install it (https://cli.github.com) and run "gh auth login"`,
      );
    }
    if (result.code !== 0) {
      throw new UsageError(`${describe()}: ${firstLine(result.stderr, result.code)}`);
    }
    const parsed = parseJson(result.stdout, schema);
    if (!parsed.ok) {
      throw new UsageError(`${describe()}: gh returned unexpected JSON: ${parsed.error}`);
    }
    return parsed.value;
  }

  /**
   * Run a call during the run, retrying with backoff. `accept` judges a
   * result that exited 0 or with one of `answerCodes` (a string is the
   * problem, and the call is retried).
   */
  async #retry(
    args: string[],
    accept: (result: CallResult) => string | undefined,
    answerCodes: readonly number[] = [],
  ): Promise<CallResult | undefined> {
    const { attempts, backoffMs, sleep, onFault } = this.#options;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const result = await this.#once(args);
      const problem = result.code === 0 || answerCodes.includes(result.code)
        ? accept(result)
        : result.code === TIMEOUT_CODE
        ? `timed out after ${this.#options.timeoutMs} ms`
        : firstLine(result.stderr, result.code);
      if (problem === undefined) return result;
      const willRetry = attempt < attempts && result.code !== MISSING_CODE;
      onFault?.({ args, code: result.code, message: problem, attempt, willRetry });
      if (!willRetry) return undefined;
      await sleep(backoffMs * 2 ** (attempt - 1));
    }
    return undefined;
  }

  async #retryJson<T>(args: string[], schema: z.ZodType<T>): Promise<T | undefined> {
    let value: T | undefined;
    const result = await this.#retry(args, (result) => {
      const parsed = parseJson(result.stdout, schema);
      if (!parsed.ok) return `unexpected JSON: ${parsed.error}`;
      value = parsed.value;
      return undefined;
    });
    return result ? value : undefined;
  }

  async #retryOk(args: string[]): Promise<boolean> {
    return (await this.#retry(args, () => undefined)) !== undefined;
  }
}

function parseJson<T>(
  text: string,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, error: `${issue.path.join(".") || "(root)"}: ${issue.message}` };
  }
  return { ok: true, value: result.data };
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

function firstLine(stderr: string, code: number): string {
  const line = stderr.split("\n").map((text) => text.trim()).find((text) => text !== "");
  return line ?? `exit code ${code}`;
}
