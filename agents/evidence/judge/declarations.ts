/**
 * The worker's declarations, reviewed by someone else: `tests_changed` (a
 * test or runner configuration changed on purpose), `out_of_scope` (a check
 * red at the start left red) and `no_test` (a bug fix without a test that
 * shows it). Each is an exception to the evidence, and the worker wrote its
 * own reason, so a declaration counts only when a reviewer session that saw
 * the diff, the reason and the task (never the worker's transcript) accepts
 * it.
 *
 * @module
 */

import type { Declaration, ReviewedDeclaration } from "../../record/iteration.ts";
import { extractJsonObject } from "../../support/json_extract.ts";

export type { Declaration, ReviewedDeclaration };

/** What a reviewer is asked: the claim's declarations, in a clean copy of its commit. */
export interface ReviewRequest {
  /** The clean copy of the claim's commit: the reviewer may read and run anything in it. */
  dir: string;
  /** The starting commit. */
  base: string;
  /** The claim's commit. */
  head: string;
  /** `git diff base head`, cut to a size a prompt can hold. */
  diff: string;
  /** The declarations, in order. */
  declarations: Declaration[];
  /** Aborts the review (the run is ending). */
  signal?: AbortSignal;
}

/** A reviewer's answer: a verdict per declaration, in order, or why there is none. */
export type ReviewAnswer = { verdicts: Array<{ accept: boolean; why: string }> } | {
  failed: string;
};

/** Reviews a claim's declarations (the run's reviewer session). */
export type DeclarationReviewer = (request: ReviewRequest) => Promise<ReviewAnswer>;

/**
 * The reviewer's verdicts, read from its last words: a JSON object
 * `{"verdicts": [{"id": 1, "accept": true, "reason": "..."}]}`, bare, fenced
 * or in prose. Every declaration needs a verdict with a reason; `id` is the
 * declaration's 1-based number (verdicts without ids are taken in order).
 *
 * @param text The reviewer's final text.
 * @param count How many declarations it was given.
 * @returns The verdicts in declaration order, or why they cannot be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseVerdicts } from "./declarations.ts";
 *
 * const text = 'Checked.\n{"verdicts": [{"id": 1, "accept": false, "reason": "The test was right."}]}';
 * assert.deepEqual(parseVerdicts(text, 1), {
 *   verdicts: [{ accept: false, why: "The test was right." }],
 * });
 * assert.deepEqual(parseVerdicts("I accept.", 1), {
 *   failed: 'its answer holds no {"verdicts": [...]} object',
 * });
 * ```
 */
export function parseVerdicts(text: string, count: number): ReviewAnswer {
  const found = extractJsonObject(text);
  const list = found?.verdicts;
  if (!Array.isArray(list)) return { failed: 'its answer holds no {"verdicts": [...]} object' };
  const verdicts: Array<{ accept: boolean; why: string } | undefined> = Array.from(
    { length: count },
    () => undefined,
  );
  for (const [index, entry] of list.entries()) {
    if (typeof entry !== "object" || entry === null) continue;
    const { id, accept, reason } = entry as Record<string, unknown>;
    const at = typeof id === "number" && Number.isInteger(id) ? id - 1 : index;
    if (at < 0 || at >= count || typeof accept !== "boolean") continue;
    const why = typeof reason === "string" && reason.trim() !== ""
      ? reason.trim().slice(0, 500)
      : undefined;
    if (!why) continue;
    verdicts[at] = { accept, why };
  }
  const missing = verdicts.flatMap((verdict, index) => verdict ? [] : [index + 1]);
  if (missing.length > 0) {
    return {
      failed: `its answer has no verdict with a reason for declaration ${missing.join(", ")}`,
    };
  }
  return { verdicts: verdicts as Array<{ accept: boolean; why: string }> };
}

/**
 * The declarations with the reviewer's answer: a verdict each, or all
 * unreviewed with why.
 *
 * @param declarations The declarations.
 * @param answer The reviewer's answer.
 * @returns The reviewed declarations.
 */
export function applyVerdicts(
  declarations: Declaration[],
  answer: ReviewAnswer,
): ReviewedDeclaration[] {
  return declarations.map((declaration, index) => {
    if ("failed" in answer) return { ...declaration, verdict: "unreviewed", why: answer.failed };
    const verdict = answer.verdicts[index];
    return { ...declaration, verdict: verdict.accept ? "accepted" : "refused", why: verdict.why };
  });
}

/**
 * What the worker is told when declarations did not stand: the refused ones
 * with the reviewer's reasons, or that no review could be had.
 *
 * @param reviewed The reviewed declarations.
 * @returns The feedback, or undefined when every declaration was accepted.
 */
export function reviewFeedback(reviewed: ReviewedDeclaration[]): string | undefined {
  const refused = reviewed.filter((entry) => entry.verdict === "refused");
  const unreviewed = reviewed.filter((entry) => entry.verdict === "unreviewed");
  if (refused.length === 0 && unreviewed.length === 0) return undefined;
  if (refused.length > 0) {
    return `An independent reviewer, who read your diff and your reasons but not your session, refused ${
      refused.length === 1 ? "a declaration" : `${refused.length} declarations`
    }: ${
      refused.map((entry) => `${describeDeclaration(entry)}: ${entry.why.replace(/[.\s]+$/, "")}`)
        .join("; ")
    }. A refused declaration does not count: fix what it covers, or declare it again with a reason that answers the reviewer`;
  }
  return `Your declarations could not be reviewed (${
    unreviewed[0].why
  }), and a declaration counts only once an independent reviewer accepts it: fix what ${
    unreviewed.length === 1 ? "it covers" : "they cover"
  } instead, or call complete_task again to have ${
    unreviewed.length === 1 ? "it" : "them"
  } reviewed`;
}

/**
 * A declaration in a few words: `tests_changed "test/a.test.js"`.
 *
 * @param declaration The declaration.
 * @returns The words.
 */
export function describeDeclaration(declaration: Declaration): string {
  return declaration.kind === "no_test"
    ? "no_test"
    : `${declaration.kind} "${declaration.subject}"`;
}

/** The most of the diff a reviewer's prompt carries. */
const DIFF_LIMIT = 40_000;

/**
 * Cut a diff to what a prompt can hold, saying how much was left out.
 *
 * @param diff The diff.
 * @returns It, or its head with a note.
 */
export function cutDiff(diff: string): string {
  if (diff.length <= DIFF_LIMIT) return diff;
  return `${diff.slice(0, DIFF_LIMIT)}\n[... ${
    diff.length - DIFF_LIMIT
  } more characters: run git diff yourself to see the rest]`;
}
