/**
 * Text from outside finishline (the task, the agent's words, check output,
 * commit subjects, paths, branch names) put into the Markdown reports so that
 * it reads as written and cannot change the report around it: no raw HTML,
 * no link or image, no heading, list, quote, table row or code fence of its
 * own. The reports are read on GitHub and in editors that render HTML, and
 * the text comes from issues and from an agent that read them.
 *
 * Ordinary prose stays as it is: only the characters that Markdown or HTML
 * would act on are escaped, and a character only where it could act (an
 * underscore inside a word, a `#` in the middle of a line, a `!` that starts
 * no image are left alone).
 *
 * On GitHub (pull request bodies, issue comments) text can also act: a
 * closing keyword before an issue reference (`Fixes #77`, `closes
 * other/repo#78`) closes that issue when the pull request is merged, and an
 * `@name` or `@org/team` notifies. {@linkcode inline} breaks both with an
 * invisible character (U+200B, written as an entity) that leaves the words
 * as they read. Terminal escapes and control characters are dropped.
 *
 * @module
 */

import { stripControls } from "./controls.ts";
import { redactorOfProcess } from "./redact.ts";

/**
 * Outside text made safe to escape: controls dropped, then secrets redacted.
 * Redaction comes before escaping: escapes and quote marks inside a secret (a
 * private key's lines, quoted) would hide it from the redactor.
 */
function cleaned(text: string): string {
  return redactorOfProcess().redact(stripControls(text));
}

/**
 * How {@linkcode inline} shortens long text.
 */
export interface InlineOptions {
  /**
   * Cut the text, once on one line, to this many characters and mark the cut
   * with `...`.
   * @default no limit
   */
  limit?: number;
}

/**
 * Outside text as inline Markdown: on one line, with every character that
 * could start markup escaped (`<` `>` and entity-like `&` as HTML entities,
 * the rest with a backslash), and a line start that would begin a heading,
 * list item or rule escaped too, because the text often follows `- `.
 * Safe in a paragraph, a list item, a heading and a table cell.
 *
 * @param text The text, as written.
 * @param options Shortening.
 * @returns Markdown that renders as `text` (whitespace runs made one space).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inline } from "./markdown.ts";
 *
 * assert.equal(inline("Fix the off-by-one in page_size (#42)."), "Fix the off-by-one in page_size (#42).");
 * assert.equal(inline("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
 * assert.equal(inline("## Done\n[click](javascript:alert(1))"), "\\## Done \\[click\\](javascript:alert(1))");
 * assert.equal(inline("a | b", { limit: 3 }), "a \\|...");
 * assert.equal(inline("Fixes #77, cc @org/team"), "F&#8203;ixes #77, cc @&#8203;org/team");
 * assert.equal(inline("red\x1b[31m text\x1b]52;c;aGk=\x07"), "red text");
 * ```
 */
export function inline(text: string, options: InlineOptions = {}): string {
  let flat = cleaned(text).replace(/\s+/g, " ").trim();
  if (options.limit !== undefined && flat.length > options.limit) {
    // Cut before escaping, so that no escape or entity is cut in half.
    flat = `${flat.slice(0, options.limit)}...`;
  }
  return neutralizeGithub(escapeLineStart(escapeCharacters(flat)));
}

/** An invisible character, as an entity: GitHub sees no keyword or mention across it. */
const ZERO_WIDTH = "&#8203;";

/**
 * A closing keyword followed by what GitHub takes for an issue: `#77`,
 * `owner/repo#78`, `GH-5` or an issue URL (a backslash may escape the `#`).
 */
const CLOSING_KEYWORD =
  /\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?=:?\s+(?:\\?#\d|[\w.-]+\/[\w.-]+\\?#\d|gh-\d|https?:\/\/))/gi;

/** An `@` that starts a mention: not inside a word or an e-mail address. */
const MENTION = /(^|[^\p{L}\p{N}_.+\-`\/])@(?=[A-Za-z0-9])/gu;

/**
 * Break closing keywords and mentions in Markdown with an invisible entity,
 * so that merging a pull request closes no issue it quotes and no one is
 * notified. Idempotent: what it made matches neither again.
 *
 * @param markdown Markdown (the entity is read as such; not for code spans).
 * @returns The Markdown, reading the same.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { neutralizeGithub } from "./markdown.ts";
 *
 * assert.equal(neutralizeGithub("closes other/repo#78"), "c&#8203;loses other/repo#78");
 * assert.equal(neutralizeGithub("mail a@b.io, not @you"), "mail a@b.io, not @&#8203;you");
 * ```
 */
export function neutralizeGithub(markdown: string): string {
  return markdown
    .replace(CLOSING_KEYWORD, (word: string) => `${word[0]}${ZERO_WIDTH}${word.slice(1)}`)
    .replace(MENTION, `$1@${ZERO_WIDTH}`);
}

/**
 * Outside text of several lines as a block quote: each line escaped as by
 * {@linkcode inline} and prefixed with `> `, so that no line can end the
 * quote, start a heading, a list, a table or a code block, or carry on a
 * construct from the line before. Leading indentation is dropped: four
 * spaces would make a code block that shows the escapes instead of the text.
 *
 * @param text The text, as written.
 * @returns The quote's lines (a blank line of the text is a bare `>`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blockquote } from "./markdown.ts";
 *
 * assert.deepEqual(blockquote("Fix it\n\n# Not a heading\n</blockquote>"), [
 *   "> Fix it",
 *   ">",
 *   "> \\# Not a heading",
 *   "> &lt;/blockquote&gt;",
 * ]);
 * ```
 */
export function blockquote(text: string): string[] {
  // A lone carriage return ends a line in Markdown too.
  return cleaned(text).trim().split(/\r\n|\r|\n/).map((line) => {
    const escaped = inline(line);
    return escaped ? `> ${escaped}` : ">";
  });
}

/**
 * Markdown for one table cell: on one line, every pipe escaped. Pass it
 * Markdown already made safe (fixed words, {@linkcode inline} text,
 * {@linkcode codeSpan}s); it adds what a table needs on top, the pipes inside
 * code spans too, which a table splits on before it sees the code span.
 *
 * @param markdown The cell's Markdown.
 * @returns The cell.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeSpan, inline, tableCell } from "./markdown.ts";
 *
 * assert.equal(tableCell(`${codeSpan("a|b")} ${inline("c | d")}`), "`a\\|b` c \\| d");
 * ```
 */
export function tableCell(markdown: string): string {
  // A pipe after an even run of backslashes is unescaped (the backslashes
  // escape each other); renderers differ there, so every pipe gets an odd run.
  return markdown.replace(/\s+/g, " ").trim().replace(
    /(\\*)\|/g,
    (_pipe, slashes: string) => slashes.length % 2 === 1 ? `${slashes}|` : `${slashes}\\|`,
  );
}

/**
 * Outside text as a code span, for paths, branch and check names: shown
 * as written, in a fixed font. Nothing inside a code span is Markdown or
 * HTML; the delimiter is one backtick longer than the longest run of
 * backticks in the text, so the text cannot close it.
 *
 * @param text The text, as written (line breaks become spaces).
 * @returns The code span, or `""` for empty text.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeSpan } from "./markdown.ts";
 *
 * assert.equal(codeSpan("src/page.ts"), "`src/page.ts`");
 * assert.equal(codeSpan("a`b"), "``a`b``");
 * assert.equal(codeSpan("`x`"), "`` `x` ``");
 * ```
 */
export function codeSpan(text: string): string {
  const flat = cleaned(text).replace(/\r\n|\r|\n/g, " ");
  if (flat === "") return "";
  const fence = "`".repeat(longestBacktickRun(flat) + 1);
  // A space on each side is stripped again by renderers; it keeps a backtick
  // at either end from joining the delimiter.
  const pad = /^[ `]|[ `]$/.test(flat) ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** How {@linkcode codeBlock} labels its block. */
export interface CodeBlockOptions {
  /** The info string after the opening fence (`sh`). @default "" */
  language?: string;
}

/**
 * Outside text of several lines (a command line, check output) as a fenced
 * code block whose fence is longer than any run of backticks in the text, so
 * that no line of it can close the block early.
 *
 * @param text The text, as written.
 * @param options The block's language.
 * @returns The block's lines: the fence, the text, the fence.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeBlock } from "./markdown.ts";
 *
 * const ticks = (n: number) => "`".repeat(n);
 * assert.deepEqual(codeBlock("echo hi", { language: "sh" }), [`${ticks(3)}sh`, "echo hi", ticks(3)]);
 * assert.deepEqual(codeBlock(`${ticks(3)}\n# no`), [ticks(4), `${ticks(3)}\n# no`, ticks(4)]);
 * ```
 */
export function codeBlock(text: string, options: CodeBlockOptions = {}): string[] {
  const clean = cleaned(text);
  const fence = "`".repeat(Math.max(3, longestBacktickRun(clean) + 1));
  return [`${fence}${options.language ?? ""}`, clean.replace(/\r\n?/g, "\n"), fence];
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

/** A character reference as HTML reads it: `&lt;`, `&#60;`, `&#x3c;`. */
const CHARACTER_REFERENCE = /^&(?:#\d{1,7}|#[xX][\da-fA-F]{1,6}|[A-Za-z][A-Za-z\d]{0,31});/;

/** A letter or digit in any script: an underscore between two of them starts no emphasis. */
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

function escapeCharacters(text: string): string {
  return text.replace(/[\\`*_[\]|~<>&!]/g, (char: string, offset: number): string => {
    switch (char) {
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case "&":
        return CHARACTER_REFERENCE.test(text.slice(offset)) ? "&amp;" : "&";
      case "_":
        return WORD_CHARACTER.test(text[offset - 1] ?? "") &&
            WORD_CHARACTER.test(text[offset + 1] ?? "")
          ? "_"
          : "\\_";
      case "!":
        return text[offset + 1] === "[" ? "\\!" : "!";
      default:
        return `\\${char}`;
    }
  });
}

/**
 * What only acts at the start of a line: a heading (`# `), a list item
 * (`- `, `+ `, `1. `, `1) `), a rule or a setext underline (`---`, `===`).
 * `*`, `_`, `>` and the fences are escaped wherever they stand.
 */
function escapeLineStart(line: string): string {
  return line
    .replace(/^#(?=#{0,5}(?:[ \t]|$))/, "\\#")
    .replace(/^[-+](?=[ \t]|$)|^[-=](?=[-= \t]*$)/, "\\$&")
    .replace(/^(\d{1,9})([.)])(?=[ \t]|$)/, "$1\\$2");
}
