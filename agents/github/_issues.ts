/**
 * Issues through gh: read one before the run; during it, its state and
 * comments, close or reopen it, comment on it and manage its labels. The
 * {@linkcode GitHubCli} methods of the same names delegate here. Private to
 * `agents/github`.
 *
 * @module
 */

import { defuseBody } from "./defuse.ts";
import { z } from "zod";
import type { GhCalls } from "./_calls.ts";

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

const statusSchema = z.object({
  state: z.enum(["OPEN", "CLOSED"]),
  labels: z.array(labelSchema).default([]),
}).loose();

const listedSchema = z.array(
  z.object({
    number: z.number().int(),
    title: z.string(),
    labels: z.array(labelSchema).default([]),
    createdAt: z.string(),
    url: z.string(),
  }).loose(),
);

/** An open issue as `gh issue list` shows it. */
export interface GhListedIssue {
  /** Issue number. */
  number: number;
  /** Title. */
  title: string;
  /** Label names. */
  labels: string[];
  /** When it was opened (ISO timestamp). */
  createdAt: string;
  /** Web URL. */
  url: string;
}

/**
 * The open issues with a label, before any run (`gh issue list`).
 *
 * @param calls The port's gh calls.
 * @param options The label (none: every open issue) and how many to fetch at most.
 * @returns The issues, as gh lists them (newest first).
 * @throws {UsageError} When gh fails or answers unexpected JSON.
 */
export async function listIssues(
  calls: GhCalls,
  options: { label?: string; limit: number },
): Promise<GhListedIssue[]> {
  const args = ["issue", "list", ...calls.repoArgs(), "--state", "open"];
  if (options.label !== undefined) args.push("--label", options.label);
  args.push("--limit", String(options.limit), "--json", "number,title,labels,createdAt,url");
  const where = calls.options.repo ? ` of "${calls.options.repo}"` : "";
  const data = await calls.strictJson(
    args,
    listedSchema,
    () =>
      `Cannot list the open issues${where}${options.label ? ` labelled "${options.label}"` : ""}`,
  );
  return data.map((issue) => ({ ...issue, labels: issue.labels.map((label) => label.name) }));
}

/**
 * An issue's state and labels now (retried; `undefined` when gh keeps failing).
 *
 * @param calls The port's gh calls.
 * @param number Issue number.
 * @returns Its state and label names, or undefined.
 */
export async function issueStatus(
  calls: GhCalls,
  number: number,
): Promise<{ state: "OPEN" | "CLOSED"; labels: string[] } | undefined> {
  const data = await calls.retryJson(
    ["issue", "view", String(number), ...calls.repoArgs(), "--json", "state,labels"],
    statusSchema,
  );
  return data && { state: data.state, labels: data.labels.map((label) => label.name) };
}

const commentSchema = z.object({
  id: z.string(),
  author: z.object({ login: z.string() }).loose().nullable().default(null),
  body: z.string(),
  createdAt: z.string(),
}).loose();

const commentsSchema = z.object({ comments: z.array(commentSchema) }).loose();

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

/**
 * Read an issue before the run.
 *
 * @param calls The port's gh calls.
 * @param number Issue number.
 * @returns The issue.
 * @throws {UsageError} When it does not exist or gh fails.
 */
export async function issue(calls: GhCalls, number: number): Promise<GhIssue> {
  const where = calls.options.repo ? ` in "${calls.options.repo}"` : "";
  const data = await calls.strictJson(
    ["issue", "view", String(number), ...calls.repoArgs(), "--json", FIELDS],
    issueSchema,
    () => `Cannot find issue #${number}${where} (flag "--issue")`,
  );
  return { ...data, labels: data.labels.map((label) => label.name) };
}

/** The fields of {@linkcode GhIssue}, as gh names them. */
const FIELDS = "number,title,body,state,labels,url";

/**
 * An issue's state during the run (retried).
 *
 * @param calls The port's gh calls.
 * @param issue Issue number or URL (a URL names its repository).
 * @returns OPEN, CLOSED, or undefined when gh keeps failing.
 */
export async function issueState(
  calls: GhCalls,
  issue: number | string,
): Promise<"OPEN" | "CLOSED" | undefined> {
  const repo = typeof issue === "number" ? calls.repoArgs() : [];
  const data = await calls.retryJson(
    ["issue", "view", String(issue), ...repo, "--json", "state"],
    stateSchema,
  );
  return data?.state;
}

/**
 * An issue's comments during the run (retried).
 *
 * @param calls The port's gh calls.
 * @param number Issue number.
 * @returns The comments, oldest first, or undefined when gh keeps failing.
 */
export async function issueComments(
  calls: GhCalls,
  number: number,
): Promise<GhComment[] | undefined> {
  const data = await calls.retryJson(
    ["issue", "view", String(number), ...calls.repoArgs(), "--json", "comments"],
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
 * Close or reopen an issue, optionally with a comment (retried).
 *
 * @param calls The port's gh calls.
 * @param action `close` or `reopen`.
 * @param number Issue number.
 * @param comment A comment to leave with it.
 * @returns Whether gh succeeded.
 */
export async function setIssueState(
  calls: GhCalls,
  action: "close" | "reopen",
  number: number,
  comment?: string,
): Promise<boolean> {
  const args = ["issue", action, String(number), ...calls.repoArgs()];
  if (comment) args.push("--comment", defuseBody(comment));
  return await calls.retryOk(args);
}

/**
 * Comment on an issue (retried).
 *
 * @param calls The port's gh calls.
 * @param number Issue number.
 * @param body Comment text.
 * @returns Whether gh succeeded.
 */
export async function comment(calls: GhCalls, number: number, body: string): Promise<boolean> {
  return await calls.retryOk([
    "issue",
    "comment",
    String(number),
    ...calls.repoArgs(),
    "--body",
    defuseBody(body),
  ]);
}

/**
 * Create a label if it is missing (retried).
 *
 * @param calls The port's gh calls.
 * @param name Label name.
 * @returns Whether gh succeeded.
 */
export async function ensureLabel(calls: GhCalls, name: string): Promise<boolean> {
  return await calls.retryOk([
    "label",
    "create",
    name,
    ...calls.repoArgs(),
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
 * @param calls The port's gh calls.
 * @param number Issue number.
 * @param change `add` or `remove` and the label.
 * @returns Whether gh succeeded.
 */
export async function editLabel(
  calls: GhCalls,
  number: number,
  change: { add?: string; remove?: string },
): Promise<boolean> {
  const args = ["issue", "edit", String(number), ...calls.repoArgs()];
  if (change.add) args.push("--add-label", change.add);
  if (change.remove) args.push("--remove-label", change.remove);
  return await calls.retryOk(args);
}
