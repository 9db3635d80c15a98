/**
 * Which issues a fleet takes, and in what order: the open issues with a
 * label (`gh issue list`) or the ones named, without those labelled blocked;
 * by priority label first (`priority:high`, `priority:medium`, none,
 * `priority:low`), then the oldest first.
 *
 * @module
 */

import type { GhListedIssue, GitHubCli } from "../../github/port.ts";

/** How many open issues `gh issue list` is asked for (the order is decided after). */
export const LIST_LIMIT = 500;

/** An issue the fleet will work on. */
export interface SelectedIssue {
  /** Issue number. */
  number: number;
  /** Title. */
  title: string;
  /** Label names. */
  labels: string[];
  /** When it was opened (ISO), when known. */
  createdAt?: string;
  /** Web URL. */
  url?: string;
}

/** The selection, and what was left out and why (one line each). */
export interface Selection {
  /** The issues, in the order they are taken. */
  issues: SelectedIssue[];
  /** Issues left out, each with the reason. */
  notes: string[];
}

const PRIORITY = /^priority\s*:\s*(high|medium|low)$/i;
const RANK: Record<string, number> = { high: 0, medium: 1, none: 2, low: 3 };

/**
 * An issue's priority from its labels: `priority:high` (0), `priority:medium`
 * (1), no priority label (2), `priority:low` (3); with several, the highest.
 *
 * @param labels Label names (case does not matter).
 * @returns The rank: lower goes first.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { priorityRank } from "./select.ts";
 * assert.equal(priorityRank(["bug", "Priority:High"]), 0);
 * assert.equal(priorityRank(["bug"]), 2);
 * assert.equal(priorityRank(["priority:low"]), 3);
 * ```
 */
export function priorityRank(labels: readonly string[]): number {
  const ranks = labels.map((label) => label.trim().match(PRIORITY)?.[1]?.toLowerCase())
    .filter((level): level is string => level !== undefined)
    .map((level) => RANK[level]);
  return ranks.length === 0 ? RANK.none : Math.min(...ranks);
}

/**
 * The priority order: by {@linkcode priorityRank}, then the oldest first
 * (then the lowest number).
 *
 * @param issues Issues as listed.
 * @returns A new array, in the order the fleet takes them.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { priorityOrder } from "./select.ts";
 * const issue = (number: number, labels: string[], createdAt: string) =>
 *   ({ number, title: "", labels, createdAt });
 * const order = priorityOrder([
 *   issue(1, ["priority:low"], "2026-01-01"),
 *   issue(2, [], "2026-01-03"),
 *   issue(3, [], "2026-01-02"),
 *   issue(4, ["priority:high"], "2026-01-05"),
 * ]).map((issue) => issue.number);
 * assert.deepEqual(order, [4, 3, 2, 1]);
 * ```
 */
export function priorityOrder<T extends SelectedIssue>(issues: readonly T[]): T[] {
  return [...issues].sort((a, b) =>
    priorityRank(a.labels) - priorityRank(b.labels) ||
    (a.createdAt ?? "").localeCompare(b.createdAt ?? "") ||
    a.number - b.number
  );
}

/**
 * Select the issues: `--label` lists the open ones with it (priority order),
 * `--issues` reads the ones named (their order); issues labelled blocked
 * are left out, then `--limit` keeps the first ones.
 *
 * @param github The gh port of the repository.
 * @param options The label or the numbers, the limit, and the blocked label.
 * @returns The issues and the notes about the ones left out.
 * @throws {UsageError} When gh fails, or a named issue does not exist.
 */
export async function selectIssues(
  github: GitHubCli,
  options: { label?: string; issues?: number[]; limit?: number; blockedLabel: string },
): Promise<Selection> {
  const notes: string[] = [];
  let issues: SelectedIssue[];
  if (options.issues) {
    issues = [];
    for (const number of options.issues) {
      const issue = await github.issue(number);
      if (issue.state === "CLOSED") notes.push(`#${number} is closed: left out`);
      else issues.push(issue);
    }
  } else {
    const listed: GhListedIssue[] = await github.listIssues({
      label: options.label,
      limit: LIST_LIMIT,
    });
    if (listed.length === LIST_LIMIT) {
      notes.push(`only the newest ${LIST_LIMIT} open issues labelled "${options.label}" were read`);
    }
    issues = priorityOrder(listed);
  }
  const blocked = options.blockedLabel.toLowerCase();
  issues = issues.filter((issue) => {
    const isBlocked = issue.labels.some((label) => label.toLowerCase() === blocked);
    if (isBlocked) {
      notes.push(
        `#${issue.number} is labelled "${options.blockedLabel}": left out (remove the label to include it)`,
      );
    }
    return !isBlocked;
  });
  if (options.limit !== undefined && issues.length > options.limit) {
    notes.push(`--limit ${options.limit}: ${issues.length - options.limit} more issues left out`);
    issues = issues.slice(0, options.limit);
  }
  return { issues, notes };
}
