/**
 * How finishline writes numbers and names for people: tool counts,
 * durations, costs and short run ids, the same in progress lines, reports
 * and the history.
 *
 * @module
 */

/**
 * A tool's name as people read it: an MCP tool without its server prefix.
 *
 * @param name The tool name Claude Code reports.
 * @returns The short name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortToolName } from "./format.ts";
 * assert.equal(shortToolName("mcp__finishline__complete_task"), "complete_task");
 * assert.equal(shortToolName("Bash"), "Bash");
 * ```
 */
export function shortToolName(name: string): string {
  return /^mcp__.+?__(.+)$/.exec(name)?.[1] ?? name;
}

/**
 * Count tool names: `Bash×2, Read`, MCP tools by their short name.
 *
 * @param names Tool names with repeats.
 * @returns A compact list, empty when there are no names.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countTools } from "./format.ts";
 *
 * assert.equal(countTools(["Bash", "Read", "Bash"]), "Bash×2, Read");
 * assert.equal(countTools(["mcp__finishline__complete_task"]), "complete_task");
 * assert.equal(countTools([]), "");
 * ```
 */
export function countTools(names: string[]): string {
  const counts = new Map<string, number>();
  for (const name of names.map(shortToolName)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => count > 1 ? `${name}×${count}` : name).join(", ");
}

/**
 * Format a duration in seconds with one decimal.
 *
 * @param ms Milliseconds.
 * @returns Text like `4.1s`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seconds } from "./format.ts";
 *
 * assert.equal(seconds(4120), "4.1s");
 * ```
 */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * Format a cost in US dollars with four decimals.
 *
 * @param cost Dollars.
 * @returns Text like `$0.0012`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { usd } from "./format.ts";
 *
 * assert.equal(usd(0.00123), "$0.0012");
 * ```
 */
export function usd(cost: number): string {
  return `$${cost.toFixed(4)}`;
}

/**
 * Round a cost in US dollars to a millionth of a dollar, the precision JSON
 * output keeps: a sum of floats such as `0.0024000000000000002` becomes
 * `0.0024`.
 *
 * @param cost Dollars.
 * @returns The rounded cost.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { roundUsd } from "./format.ts";
 *
 * assert.equal(roundUsd(0.0012 + 0.0012), 0.0024);
 * assert.equal(String(roundUsd(0.1 + 0.2)), "0.3");
 * ```
 */
export function roundUsd(cost: number): number {
  return Math.round(cost * 1e6) / 1e6;
}

/**
 * Serialise a value to JSON with every cost rounded by {@linkcode roundUsd}:
 * each number under a key that names a cost (`costUsd`, `total_cost_usd`, ...).
 *
 * @param value Anything JSON can hold.
 * @returns The JSON text.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonWithCosts } from "./format.ts";
 *
 * assert.equal(
 *   jsonWithCosts({ costUsd: 0.0012 + 0.0012, turns: 3 }),
 *   '{"costUsd":0.0024,"turns":3}',
 * );
 * ```
 */
export function jsonWithCosts(value: unknown): string {
  return JSON.stringify(
    value,
    (key, field) => typeof field === "number" && /cost/i.test(key) ? roundUsd(field) : field,
  );
}

/**
 * Quote arguments for a POSIX shell, so that the line can be pasted into
 * one: arguments of safe characters stay as they are, others are put in
 * single quotes.
 *
 * @param args The arguments.
 * @returns One line (a newline inside an argument stays inside its quotes).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shellQuote } from "./format.ts";
 *
 * assert.equal(
 *   shellQuote(["--task", "Fix the user's login", "--iterate-max", "3", ""]),
 *   "--task 'Fix the user'\\''s login' --iterate-max 3 ''",
 * );
 * ```
 */
export function shellQuote(args: readonly string[]): string {
  return args.map((arg) => /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)
    .join(" ");
}

/**
 * The short form of a run id that file names, lists and learnings show.
 *
 * @param runId The full run id.
 * @returns Its first eight characters.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortId } from "./format.ts";
 *
 * assert.equal(shortId("0f3a9c12-77aa-4c1e-9d0e-3b5f6a7c8d9e"), "0f3a9c12");
 * ```
 */
export function shortId(runId: string): string {
  return runId.slice(0, 8);
}
