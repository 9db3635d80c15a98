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

interface CallResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Talks to GitHub through the `gh` CLI.
 *
 * @example A call during the run that keeps failing
 * ```ts
 * import assert from "node:assert/strict";
 * import { type GhFault, GitHubCli } from "@finishline/agents";
 *
 * // A stand-in for gh that always fails: the call is retried, each failure is
 * // reported, and the answer is undefined.
 * const dir = await Deno.makeTempDir();
 * try {
 *   const script = `#!/bin/sh\necho "HTTP 502: Bad Gateway" >&2\nexit 1\n`;
 *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
 *   const faults: GhFault[] = [];
 *   const github = new GitHubCli({
 *     cwd: dir,
 *     gh: `${dir}/gh`,
 *     attempts: 2,
 *     sleep: () => Promise.resolve(),
 *     onFault: (fault) => faults.push(fault),
 *   });
 *   assert.equal(await github.issueState(7), undefined);
 *   assert.deepEqual(faults.map((fault) => [fault.message, fault.willRetry]), [
 *     ["HTTP 502: Bad Gateway", true],
 *     ["HTTP 502: Bad Gateway", false],
 *   ]);
 *   assert.equal(github.calls, 2);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = '{"state": "OPEN"}';
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(github.calls, 0);
   *   await github.issueState(7);
   *   assert.equal(github.calls, 1);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = "gh version 2.50.0 (2024-05-01)";
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(await github.preflight(), "gh version 2.50.0 (2024-05-01)");
   *   assert.equal(await Deno.readTextFile(`${dir}/calls`), "--version\nauth status\n");
   *
   *   const missing = new GitHubCli({ cwd: dir, gh: `${dir}/no-such-gh` });
   *   await assert.rejects(missing.preflight(), UsageError);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = '{"nameWithOwner": "octo/demo", "owner": {"login": "octo"}}';
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.deepEqual(await github.repository(), { nameWithOwner: "octo/demo", owner: "octo" });
   *   assert.equal(
   *     await Deno.readTextFile(`${dir}/calls`),
   *     "repo view octo/demo --json nameWithOwner,owner\n",
   *   );
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = JSON.stringify({
   *     number: 7,
   *     title: "Flaky test",
   *     body: "",
   *     state: "OPEN",
   *     labels: [{ name: "bug" }],
   *     url: "https://github.com/octo/demo/issues/7",
   *   });
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   const issue = await github.issue(7);
   *   assert.equal(issue.title, "Flaky test");
   *   assert.deepEqual(issue.labels, ["bug"]);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = '{"state": "CLOSED"}';
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(await github.issueState(7), "CLOSED");
   *   assert.equal(
   *     await Deno.readTextFile(`${dir}/calls`),
   *     "issue view 7 --repo octo/demo --json state\n",
   *   );
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = JSON.stringify({
   *     comments: [{
   *       id: "c1",
   *       author: null,
   *       body: "Any news?",
   *       createdAt: "2025-05-01T10:00:00Z",
   *     }],
   *   });
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.deepEqual(await github.issueComments(7), [
   *     { id: "c1", author: "ghost", body: "Any news?", createdAt: "2025-05-01T10:00:00Z" },
   *   ]);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(await github.ensureLabel("in-progress"), true);
   *   assert.match(
   *     await Deno.readTextFile(`${dir}/calls`),
   *     /^label create in-progress --repo octo\/demo --force/,
   *   );
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(await github.editLabel(7, { add: "blocked", remove: "in-progress" }), true);
   *   assert.equal(
   *     await Deno.readTextFile(`${dir}/calls`),
   *     "issue edit 7 --repo octo/demo --add-label blocked --remove-label in-progress\n",
   *   );
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   assert.equal(await github.comment(7, "Fixed in main."), true);
   *   assert.equal(
   *     await Deno.readTextFile(`${dir}/calls`),
   *     "issue comment 7 --repo octo/demo --body Fixed in main.\n",
   *   );
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * Read a project before the run.
   *
   * @param number Project number.
   * @param owner Owner login or `@me`.
   * @returns The project.
   * @throws {UsageError} When it does not exist or gh fails.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = JSON.stringify({
   *     number: 2,
   *     title: "Launch",
   *     url: "https://github.com/orgs/octo/projects/2",
   *     id: "PVT_2",
   *   });
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, gh: `${dir}/gh` });
   *   const project = await github.project(2, "octo");
   *   assert.deepEqual(project, {
   *     number: 2,
   *     title: "Launch",
   *     url: "https://github.com/orgs/octo/projects/2",
   *     id: "PVT_2",
   *     owner: "octo",
   *   });
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = JSON.stringify({
   *     items: [{
   *       id: "PVTI_1",
   *       status: "Done",
   *       content: { type: "Issue", number: 3, title: "Add login" },
   *     }],
   *   });
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, gh: `${dir}/gh` });
   *   const items = await github.projectItems(2, "octo", { strict: true });
   *   assert.deepEqual(items?.map((item) => [item.title, item.status, item.number]), [
   *     ["Add login", "Done", 3],
   *   ]);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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
   * import { GitHubCli } from "@finishline/agents";
   *
   * // A stand-in for gh that logs its arguments and prints a canned reply.
   * const dir = await Deno.makeTempDir();
   * try {
   *   const reply = "https://github.com/octo/demo/pull/9";
   *   const script = `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${reply}'\n`;
   *   await Deno.writeTextFile(`${dir}/gh`, script, { mode: 0o755 });
   *   const github = new GitHubCli({ cwd: dir, repo: "octo/demo", gh: `${dir}/gh` });
   *   const url = await github.createPullRequest({
   *     base: "main",
   *     head: "finishline/fix-login",
   *     title: "Fix the login test",
   *     body: "Closes #7",
   *   });
   *   assert.equal(url, "https://github.com/octo/demo/pull/9");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
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

  async #retry(
    args: string[],
    accept: (result: CallResult) => string | undefined,
  ): Promise<CallResult | undefined> {
    const { attempts, backoffMs, sleep, onFault } = this.#options;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const result = await this.#once(args);
      const problem = result.code === 0
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

function firstLine(stderr: string, code: number): string {
  const line = stderr.split("\n").map((text) => text.trim()).find((text) => text !== "");
  return line ?? `exit code ${code}`;
}
