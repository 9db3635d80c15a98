/**
 * GitHub Projects (v2) through gh: a board and its items, as gh's JSON gives
 * them. The {@linkcode GitHubCli} methods of the same names delegate here.
 * Private to `agents/github`.
 *
 * @module
 */

import { z } from "zod";
import type { GhCalls } from "./_calls.ts";

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

/**
 * Read a project before the run.
 *
 * @param calls The port's gh calls.
 * @param number Project number.
 * @param owner Owner login or `@me`.
 * @returns The project.
 * @throws {UsageError} When it does not exist or gh fails.
 */
export async function project(calls: GhCalls, number: number, owner: string): Promise<GhProject> {
  const data = await calls.strictJson(
    ["project", "view", String(number), "--owner", owner, "--format", "json"],
    projectSchema,
    () => `Cannot find project #${number} of owner "${owner}" (flags "--project" and "--owner")`,
  );
  return { number: data.number, title: data.title, url: data.url, id: data.id, owner };
}

/**
 * A project's items: before the run strictly, during it retried.
 *
 * @param calls The port's gh calls.
 * @param board Project number and owner login.
 * @param options `strict` turns failures into a UsageError.
 * @returns The items, or undefined when gh keeps failing during the run.
 */
export async function projectItems(
  calls: GhCalls,
  board: { number: number; owner: string },
  options: { strict?: boolean },
): Promise<GhProjectItem[] | undefined> {
  const { number, owner } = board;
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
    ? await calls.strictJson(
      args,
      itemsSchema,
      () => `Cannot list the items of project #${number} of owner "${owner}"`,
    )
    : await calls.retryJson(args, itemsSchema);
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
