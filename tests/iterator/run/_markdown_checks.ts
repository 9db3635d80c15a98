/**
 * Hostile text for the Markdown reports and the checks that it stayed text:
 * the report is rendered with marked (GitHub-flavoured, raw HTML passed
 * through as GitHub's renderer would parse it) and read back, and its lines
 * are read as a Markdown parser would see them (headings in quotes and list
 * items, table rows).
 */

// A test-only renderer: kept out of deno.json's imports, which users download.
// deno-lint-ignore no-import-prefix
import { Marked, type Tokens } from "npm:marked@18.2.1";

/**
 * Each way text from outside could try to become markup: raw HTML, a quote
 * closed early, forged headings (ATX and setext), a table row, a fence that
 * never closes, links and images, list items, a rule, entities, emphasis.
 * Each fits on one line; together they stay under the report's 400 characters.
 */
export const PAYLOADS: readonly string[] = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "</blockquote>",
  "## Forged heading",
  "| forged | row |",
  "|---|---|",
  "```",
  "~~~",
  "![x](http://evil.example)",
  "[click](javascript:alert(1))",
  "<http://evil.example>",
  "[ref]: http://evil.example",
  "- forged item",
  "1. forged item",
  "> forged quote",
  "Forged setext",
  "===",
  "---",
  "&lt;b&gt;entity&amp;",
  "**bold** _em_ ~~del~~ `code` a*b*c",
  "back\\slash \\| escaped pipe",
  "<!-- never closed",
];

/** The payloads on one line, as a summary or a reason would carry them. */
export const ONE_LINE: string = PAYLOADS.join(" ");

/** The payloads one per line, as a task or check output would carry them. */
export const LINES: string = PAYLOADS.join("\n");

const marked = new Marked({ gfm: true });

/**
 * Render Markdown to HTML as GitHub's flavour reads it.
 *
 * @param markdown The report.
 * @returns HTML.
 */
export function toHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}

/**
 * The headings a renderer finds, wherever they are (in a quote, in a list
 * item, setext or ATX), as `## text`.
 *
 * @param markdown The report.
 * @returns The headings in order.
 */
export function renderedHeadings(markdown: string): string[] {
  const headings: string[] = [];
  marked.walkTokens(marked.lexer(markdown), (token) => {
    if (token.type === "heading") {
      const heading = token as Tokens.Heading;
      headings.push(`${"#".repeat(heading.depth)} ${heading.text}`);
    }
  });
  return headings;
}

/**
 * The lines outside fenced code blocks that start a heading, inside quotes
 * and list items too (`> ## x`, `- # x`), read line by line.
 *
 * @param markdown The report.
 * @returns The heading lines, their containers' markers removed.
 */
export function headingLines(markdown: string): string[] {
  return proseLines(markdown)
    .map((line) => line.replace(/^(?: {0,3}(?:>|[-+*]|\d{1,9}[.)])(?: |$))*/, ""))
    .filter((line) => /^ {0,3}#{1,6}(?: |$)/.test(line));
}

/**
 * The number of cells of each row of each table, outside fenced code blocks:
 * a pipe splits cells unless an odd run of backslashes comes before it.
 *
 * @param markdown The report.
 * @returns One list of row widths per table.
 */
export function tableWidths(markdown: string): number[][] {
  const tables: number[][] = [];
  let current: number[] | undefined;
  for (const line of proseLines(markdown)) {
    if (!line.startsWith("|")) {
      current = undefined;
      continue;
    }
    if (!current) tables.push(current = []);
    const pipes = [...line.matchAll(/(\\*)\|/g)].filter((match) => match[1].length % 2 === 0);
    current.push(pipes.length - 1);
  }
  return tables;
}

/**
 * The report outside code: fenced blocks and code spans removed, the
 * characters a backslash escapes dropped with it.
 *
 * @param markdown The report.
 * @returns What a renderer reads as Markdown and HTML.
 */
export function prose(markdown: string): string {
  return proseLines(markdown)
    .map((line) =>
      line.replace(/\\[\s\S]/g, "").replace(/(?<!`)(`+)(?!`)[\s\S]+?(?<!`)\1(?!`)/g, "")
    )
    .join("\n");
}

/** The lines outside fenced code blocks. */
function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    if (fence) {
      const closing = line.trimEnd();
      if (closing.length >= fence.length && [...closing].every((char) => char === fence![0])) {
        fence = undefined;
      }
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(line);
    if (open) fence = open[1];
    else lines.push(line);
  }
  return lines;
}

/**
 * The tags of rendered HTML that are not among those a report makes, or that
 * carry an attribute other than a link's `href` and a code block's `class`.
 *
 * @param html Rendered HTML.
 * @returns The unexpected tags, as written.
 */
export function foreignTags(html: string): string[] {
  const own =
    /^<\/?(?:h1|h2|h3|p|ul|li|blockquote|table|thead|tbody|tr|th|td|code|pre|strong|a)(?: (?:href|class)="[^"<>]*")?>$/;
  return (html.match(/<[^>]*>?/g) ?? []).filter((tag) => !own.test(tag));
}

/**
 * The links of rendered HTML whose text is not their target (URL-decoded):
 * a link that hides where it goes.
 *
 * @param html Rendered HTML.
 * @returns `text -> href` of each such link.
 */
export function hiddenLinks(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)">([\s\S]*?)<\/a>/g)]
    .filter(([, href, text]) => textOf(text) !== decodeURI(decode(href)))
    .map(([, href, text]) => `${textOf(text)} -> ${href}`);
}

/**
 * The text of rendered HTML: tags dropped, entities decoded, whitespace runs
 * made one space.
 *
 * @param html Rendered HTML.
 * @returns The text a reader sees.
 */
export function textOf(html: string): string {
  return decode(html.replace(/<[^>]*>/g, "")).replace(/\s+/g, " ").trim();
}

/**
 * The texts of the elements `tag` of rendered HTML, in order.
 *
 * @param html Rendered HTML.
 * @param tag `li`, `td`, `blockquote`.
 * @returns Each element's text.
 */
export function textsOf(html: string, tag: string): string[] {
  return [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((match) =>
    textOf(match[1])
  );
}

function decode(text: string): string {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'").replaceAll("&amp;", "&");
}
