/**
 * "Did you mean": the known word closest to a mistyped one, by edit
 * distance. Private to the iterator's command line.
 *
 * @module
 */

/**
 * Edits between two words: insertions, deletions, substitutions and swaps of
 * two neighbours (the optimal string alignment distance).
 *
 * @param a One word.
 * @param b The other.
 * @returns The number of edits.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}

/**
 * The known word a mistyped one most likely meant: the closest within a
 * third of its length (at least one edit), else the only one it begins.
 *
 * @param word What was typed.
 * @param known The words it may have meant.
 * @returns The word, or undefined when none is close.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { closest } from "./_suggest.ts";
 * assert.equal(closest("isue", ["issue", "issues", "project"]), "issue");
 * assert.equal(closest("iterate", ["iterate-max", "issue"]), "iterate-max");
 * assert.equal(closest("frobnicate", ["issue", "project"]), undefined);
 * ```
 */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const typed = word.toLowerCase();
  const candidates = [...new Set(known)];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(typed.length / 3));
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance || (distance === bestDistance && best === undefined)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  const begun = candidates.filter((candidate) => candidate.toLowerCase().startsWith(typed));
  return typed.length >= 3 && begun.length === 1 ? begun[0] : undefined;
}
