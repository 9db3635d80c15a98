/**
 * The last step before text goes to GitHub as a pull request body, a comment
 * or a title. The text finishline writes there quotes outside text already
 * escaped (`agents/support/markdown.ts`); this net catches what a caller
 * pasted raw: control characters and terminal escapes are dropped, closing
 * keywords (`Fixes #77`) and mentions (`@org/team`) are broken outside code,
 * and a Mermaid block loses its `click` lines (they run links and scripts).
 *
 * @module
 */

import { stripControls } from "../support/controls.ts";
import { neutralizeGithub } from "../support/markdown.ts";
import { redactorOfProcess } from "../support/redact.ts";

/** A code span: its backtick run, its text, the same run. */
const CODE_SPAN = /(`+)(?:(?!\1)[\s\S])*?\1/g;

/**
 * Defuse a Markdown body for GitHub.
 *
 * @param body The body as built.
 * @returns The body, safe to post: it reads the same.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defuseBody } from "./defuse.ts";
 *
 * assert.equal(defuseBody("Fixes #77 in `@scope/pkg`\x1b]0;t\x07"), "F&#8203;ixes #77 in `@scope/pkg`");
 * const fence = "`".repeat(3);
 * assert.equal(
 *   defuseBody(`${fence}mermaid\ngraph TD\nclick A "javascript:alert(1)"\n${fence}`),
 *   `${fence}mermaid\ngraph TD\n${fence}`,
 * );
 * ```
 */
export function defuseBody(body: string): string {
  // Redacted first: what this inserts must not hide a secret from the redactor after.
  const lines = redactorOfProcess().redact(stripControls(body)).replace(/\r\n?/g, "\n")
    .split("\n");
  const kept: string[] = [];
  let fence: { marker: string; mermaid: boolean } | undefined;
  for (const line of lines) {
    const opening = line.match(/^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/);
    if (fence) {
      if (
        opening && opening[1][0] === fence.marker[0] && opening[1].length >= fence.marker.length &&
        !opening[2]
      ) {
        fence = undefined;
      } else if (fence.mermaid && /^\s*click\b/i.test(line)) {
        continue;
      }
      kept.push(line);
      continue;
    }
    if (opening) {
      fence = { marker: opening[1], mermaid: opening[2].toLowerCase() === "mermaid" };
      kept.push(line);
      continue;
    }
    // Outside code only: an entity in a code span would show as written.
    let out = "";
    let last = 0;
    for (const match of line.matchAll(CODE_SPAN)) {
      out += neutralizeGithub(line.slice(last, match.index)) + match[0];
      last = match.index + match[0].length;
    }
    kept.push(out + neutralizeGithub(line.slice(last)));
  }
  return kept.join("\n");
}

/**
 * Defuse a one-line title for GitHub: no control characters or line breaks.
 *
 * @param title The title.
 * @returns One line.
 */
export function defuseTitle(title: string): string {
  return stripControls(title).replace(/\s+/g, " ").trim();
}
