/**
 * Learnings: what a run found worth remembering, captured from the agent's
 * complete_task reports and extracted by the finish workflow's model (see
 * `agents/finish/steps.ts`), kept in the run history, and put into
 * the next runs' first prompt as `{uv-learnings}`.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";
import { shortId } from "../support/format.ts";
import { normalizeLearning } from "./learnings.ts";
import type { FoundLearning, Learning, RunStore } from "./mod.ts";

/** `{uv-learnings}` when there are none: no history, nothing found, or nothing fits. */
export const NO_LEARNINGS_TEXT = "(no learnings from earlier runs yet)";

/** Marks the learning-extraction question, so scripted models can tell it apart. */
export const EXTRACT_MARKER = "FINISHLINE LEARNINGS";

/**
 * The learnings the agent reported through complete_task, tagged with the
 * agent's name so a search for the agent finds them; a learning reported
 * again (in a later iteration, or in other case or punctuation) counts once.
 *
 * @param summaries The run's iterations.
 * @param agent The agent's name.
 * @returns The learnings, in the order they were first reported.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { reportedLearnings } from "./learnings_text.ts";
 *
 * const completeTask = {
 *   status: "success" as const,
 *   original_request_summary: "Fix the build",
 *   summary: "Fixed it",
 *   learned: [" Run deno fmt first ", "", "run deno fmt first."],
 * };
 * assert.deepEqual(reportedLearnings([{ ...emptySummary(1), completeTask }], "fixer"), [
 *   { text: "Run deno fmt first", tags: ["fixer"] },
 * ]);
 * ```
 */
export function reportedLearnings(summaries: IterationSummary[], agent: string): Learning[] {
  const reported: Learning[] = [];
  for (const summary of summaries) {
    for (const text of summary.completeTask?.learned ?? []) {
      if (text.trim()) reported.push({ text: text.trim(), tags: [agent] });
    }
  }
  return distinctLearnings(reported);
}

/**
 * Parse the extraction's reply: a JSON array of learnings (or an object
 * holding one under `learnings`). Entries without text are skipped;
 * anything unparseable gives none.
 *
 * @param text The reply.
 * @returns The learnings.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLearnings } from "./learnings_text.ts";
 *
 * const found = parseLearnings(
 *   '[{"learning": "Run deno fmt before committing", "tags": ["deno"]}]',
 * );
 * assert.equal(found.length, 1);
 * assert.equal(found[0].text, "Run deno fmt before committing");
 * assert.deepEqual(found[0].tags, ["deno"]);
 * assert.deepEqual(parseLearnings("no idea"), []);
 * ```
 */
export function parseLearnings(text: string): Learning[] {
  const candidates = [
    text.trim(),
    ...[...text.matchAll(/```[a-zA-Z]*\s*\n([\s\S]*?)```/g)].map((match) => match[1]),
  ];
  const start = text.indexOf("[");
  const end = text.lastIndexOf("]");
  if (start !== -1 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      continue;
    }
    const list = Array.isArray(value) ? value : typeof value === "object" && value !== null &&
        Array.isArray((value as { learnings?: unknown }).learnings)
      ? (value as { learnings: unknown[] }).learnings
      : undefined;
    if (list) return list.flatMap(parseEntry);
  }
  return [];
}

function parseEntry(entry: unknown): Learning[] {
  if (typeof entry === "string" && entry.trim()) return [{ text: entry.trim() }];
  if (typeof entry !== "object" || entry === null) return [];
  const record = entry as Record<string, unknown>;
  const learning = record.learning ?? record.text;
  if (typeof learning !== "string" || !learning.trim()) return [];
  return [{
    text: learning.trim(),
    technique: typeof record.tool_or_technique === "string"
      ? record.tool_or_technique
      : typeof record.technique === "string"
      ? record.technique
      : undefined,
    applicability: typeof record.applicability === "string" ? record.applicability : undefined,
    tags: Array.isArray(record.tags) ? record.tags.map(String) : undefined,
  }];
}

/**
 * Learnings without repeats: the first of those that are the same after
 * normalisation (case, whitespace, trailing punctuation) is kept; empty ones
 * are dropped.
 *
 * @param learnings Learnings, in order of preference.
 * @returns The distinct ones, in the same order.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { distinctLearnings } from "./learnings_text.ts";
 *
 * const texts = distinctLearnings([
 *   { text: "Pin TZ=UTC in CI" },
 *   { text: "pin tz=utc in ci." },
 *   { text: "Run the suite twice" },
 * ]).map((learning) => learning.text);
 * assert.deepEqual(texts, ["Pin TZ=UTC in CI", "Run the suite twice"]);
 * ```
 */
export function distinctLearnings<T extends Learning>(learnings: T[]): T[] {
  const seen = new Set<string>();
  return learnings.filter((learning) => {
    const norm = normalizeLearning(learning.text);
    if (!norm || seen.has(norm)) return false;
    seen.add(norm);
    return true;
  });
}

/**
 * Format learnings for `{uv-learnings}`: at most `count` distinct entries
 * (see {@linkcode distinctLearnings}) and `maxChars` characters.
 *
 * @param found Learnings, best first.
 * @param options Limits.
 * @returns Markdown bullets, or {@linkcode NO_LEARNINGS_TEXT}.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatLearnings } from "./learnings_text.ts";
 *
 * assert.equal(formatLearnings([]), "(no learnings from earlier runs yet)");
 * ```
 */
export function formatLearnings(
  found: Array<Learning & { runId?: string; seen?: number }>,
  options: { count?: number; maxChars?: number } = {},
): string {
  const { count = 5, maxChars = 2000 } = options;
  const lines: string[] = [];
  let size = 0;
  for (const learning of distinctLearnings(found).slice(0, count)) {
    const extra = [
      learning.technique,
      learning.runId ? `run ${shortId(learning.runId)}` : undefined,
      (learning.seen ?? 0) > 1 ? `seen in ${learning.seen} runs` : undefined,
    ]
      .filter(Boolean).join("; ");
    const line = `- ${learning.text.replace(/\s+/g, " ").trim()}${extra ? ` (${extra})` : ""}`;
    if (size + line.length > maxChars) break;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.length > 0 ? lines.join("\n") : NO_LEARNINGS_TEXT;
}

/**
 * Look up learnings of earlier runs for `{uv-learnings}`: the best matches
 * of a query in the history, leaving out the current run's own.
 *
 * @param store The run history as it is when asked (undefined while there is none).
 * @param options The current run and the limits of {@linkcode formatLearnings}.
 * @returns A function from a query to the formatted learnings.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { learningsFinder } from "./learnings_text.ts";
 *
 * const find = learningsFinder(() => undefined, { runId: "run-1" });
 * assert.equal(find("flaky tests"), "(no learnings from earlier runs yet)");
 * ```
 */
export function learningsFinder(
  store: () => Pick<RunStore, "searchLearnings"> | undefined,
  options: { runId: string; count?: number; maxChars?: number },
): (query: string) => string {
  return (query) => {
    const history = store();
    if (!history) return NO_LEARNINGS_TEXT;
    const found: FoundLearning[] = history.searchLearnings(query, {
      limit: 10,
      excludeRun: options.runId,
    }).filter((learning) => learning.runId !== options.runId);
    return formatLearnings(found, { count: options.count, maxChars: options.maxChars });
  };
}
