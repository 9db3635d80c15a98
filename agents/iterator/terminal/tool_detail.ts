/**
 * What `--verbose` shows of a tool call besides its name: the command a
 * Bash call runs, the file a Read, Write or Edit touches, the pattern of a
 * search; one line, cut to a width.
 *
 * @module
 */

import type { AgentMessage } from "../../record/iteration.ts";

/** The fields that say what a tool call does, by tool, first found first shown. */
const DETAIL_FIELDS: Record<string, string[]> = {
  Bash: ["command"],
  Read: ["file_path"],
  Write: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
  Glob: ["pattern", "path"],
  Grep: ["pattern", "path"],
  WebFetch: ["url"],
  WebSearch: ["query"],
  Task: ["description"],
};

/** Longest detail shown, in characters. */
const DETAIL_LIMIT = 160;

/**
 * One line for a tool call: what it runs or touches, or undefined when the
 * input says nothing short.
 *
 * @param name The tool's name.
 * @param input The tool's input as the model sent it.
 * @returns The detail.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolDetail } from "./tool_detail.ts";
 *
 * assert.equal(toolDetail("Bash", { command: "deno task test" }), "deno task test");
 * assert.equal(toolDetail("Read", { file_path: "src/math.js" }), "src/math.js");
 * assert.equal(toolDetail("Grep", { pattern: "add", path: "src" }), "add src");
 * ```
 */
export function toolDetail(name: string, input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const record = input as Record<string, unknown>;
  const fields = DETAIL_FIELDS[name] ??
    Object.keys(record).filter((key) => typeof record[key] === "string").slice(0, 1);
  const words = fields.map((field) => record[field]).filter((value): value is string =>
    typeof value === "string" && value.trim() !== ""
  );
  if (words.length === 0) return undefined;
  const line = words.join(" ").replace(/\s+/g, " ").trim();
  return line.length <= DETAIL_LIMIT ? line : `${line.slice(0, DETAIL_LIMIT - 1)}…`;
}

/**
 * The tool calls of an agent's message, in order, with their detail.
 *
 * @param message One message of the agent's session.
 * @returns The calls' names and details.
 */
export function toolCallsOf(message: AgentMessage): Array<{ name: string; detail?: string }> {
  if (message.type !== "assistant") return [];
  const inner = message.message as { content?: unknown } | undefined;
  const content = Array.isArray(inner?.content) ? inner.content : [];
  return (content as Array<Record<string, unknown>>)
    .filter((block) => block.type === "tool_use" && typeof block.name === "string")
    .map((block) => ({
      name: block.name as string,
      detail: toolDetail(block.name as string, block.input),
    }));
}
