/**
 * Finding a JSON object in model output: bare, fenced, or surrounded by
 * prose.
 *
 * @module
 */

/**
 * Extract the first JSON object from text. Tries the whole text, then fenced
 * code blocks, then every balanced `{...}` span.
 *
 * @param text Model output.
 * @returns The parsed object, or undefined when there is none.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractJsonObject } from "./json_extract.ts";
 *
 * assert.deepEqual(extractJsonObject('Sure! {"status": "waiting"} Hope that helps'), {
 *   status: "waiting",
 * });
 * const fence = "`".repeat(3);
 * assert.deepEqual(extractJsonObject(`${fence}json\n{"a": 1}\n${fence}`), { a: 1 });
 * assert.equal(extractJsonObject("no json here"), undefined);
 * ```
 */
export function extractJsonObject(text: string): Record<string, unknown> | undefined {
  const candidates: string[] = [text.trim()];
  for (const match of text.matchAll(/```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```/g)) {
    candidates.push(match[1].trim());
  }
  candidates.push(...balancedObjects(text));
  for (const candidate of candidates) {
    if (!candidate.startsWith("{")) continue;
    try {
      const value = JSON.parse(candidate);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        return value as Record<string, unknown>;
      }
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

function balancedObjects(text: string): string[] {
  const spans: string[] = [];
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let index = start; index < text.length; index++) {
      const char = text[index];
      if (inString) {
        if (escaped) escaped = false;
        else if (char === "\\") escaped = true;
        else if (char === '"') inString = false;
        continue;
      }
      if (char === '"') inString = true;
      else if (char === "{") depth++;
      else if (char === "}") {
        depth--;
        if (depth === 0) {
          spans.push(text.slice(start, index + 1));
          break;
        }
      }
    }
    if (spans.length >= 20) break;
  }
  return spans;
}
