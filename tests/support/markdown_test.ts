/**
 * The escaping of outside text for the reports (`agents/support/markdown.ts`):
 * each form renders back to the text as written, wherever the report puts
 * it, and leaves ordinary prose as it was.
 */

import assert from "node:assert/strict";
import {
  blockquote,
  codeBlock,
  codeSpan,
  inline,
  tableCell,
} from "../../agents/support/markdown.ts";
import {
  foreignTags,
  LINES,
  ONE_LINE,
  PAYLOADS,
  renderedHeadings,
  tableWidths,
  textOf,
  textsOf,
  toHtml,
} from "../iterator/run/_markdown_checks.ts";

/** Texts that must come back unchanged, hostile and ordinary. */
const TEXTS: string[] = [
  ...PAYLOADS,
  ONE_LINE,
  "Fix the off-by-one in src/page.ts: use i < n, not i <= n (#42).",
  "snake_case_name and __dunder__ and _leading and trailing_",
  "a \\\\| b \\\\\\| c",
  "# ## ###### ####### #no-space",
  "+ plus, * star, 2) paren, 10. ten",
  "Done! ![not an image and !important",
  "&amp; &#60; &#x3C; &copy; & AT&T",
];

Deno.test("inline text renders as written wherever the report puts it", async (t) => {
  const contexts: Array<[string, (text: string) => string, (html: string) => string]> = [
    ["a paragraph", (text) => `Reason: ${text}`, (html) => textOf(html).replace(/^Reason: /, "")],
    ["a list item", (text) => `- ${text}`, (html) => textsOf(html, "li")[0]],
    ["a heading", (text) => `### ${text}`, (html) => textsOf(html, "h3")[0]],
    [
      "a table cell",
      (text) => `| a | b |\n|---|---|\n| ${tableCell(text)} | x |`,
      (html) => textsOf(html, "td")[0],
    ],
  ];
  for (const [where, place, read] of contexts) {
    await t.step(where, () => {
      for (const text of TEXTS) {
        const html = toHtml(place(inline(text)));
        assert.deepEqual(foreignTags(html), [], text);
        assert.equal(read(html), text.replace(/\s+/g, " "), `${where}: ${text}`);
      }
    });
  }
});

Deno.test("ordinary prose keeps its look; only what would act is escaped", () => {
  for (
    const text of [
      "Fix the pagination off-by-one in issue #42",
      "Run the pagination tests with --filter page to iterate fast",
      "fix: pagination off-by-one (#42)",
      "LEGACY_API_URL needs the legacy API; it failed before this change.",
      "Release 1.2.3, then write to ops@example.com: done!",
    ]
  ) {
    assert.equal(inline(text), text);
  }
  assert.equal(inline("tell @octo: done"), "tell @&#8203;octo: done", "a mention notifies no one");
  assert.equal(inline("- item"), "\\- item");
  assert.equal(inline("1. first"), "1\\. first");
  assert.equal(inline("use i < n"), "use i &lt; n");
  assert.equal(inline("&lt; stays text, & stays"), "&amp;lt; stays text, & stays");
  assert.equal(inline("x".repeat(10), { limit: 4 }), "xxxx...");
  assert.equal(inline("<<<<", { limit: 2 }), "&lt;&lt;...", "cut before escaping");
});

Deno.test("a block quote keeps every line inside it, whatever the line holds", () => {
  const task = `${LINES}\r# after a lone carriage return\r\n\n    indented\ttext  `;
  const lines = blockquote(task);
  assert.ok(lines.every((line) => line === ">" || line.startsWith("> ")), lines.join("\n"));
  const html = toHtml(["## Task", "", ...lines, "", "after"].join("\n"));
  assert.deepEqual(foreignTags(html), []);
  assert.deepEqual(renderedHeadings(["## Task", "", ...lines].join("\n")), ["## Task"]);
  assert.equal(html.match(/<blockquote>/g)?.length, 1);
  assert.ok(html.trimEnd().endsWith("</blockquote>\n<p>after</p>"), html);
  assert.equal(
    textsOf(html, "blockquote")[0],
    `${LINES} # after a lone carriage return indented text`.replace(/\s+/g, " "),
  );
});

Deno.test("a code span and a code block hold any text and cannot be closed by it", () => {
  for (const text of ["a`b", "`x`", "``", " lead", "trail ", "a\nb", "<img src=x onerror=1>"]) {
    const html = toHtml(`- ${codeSpan(text)}`);
    assert.deepEqual(foreignTags(html), [], text);
    // Read without trimming: the spaces at either end are part of the text.
    const code = /<code>([^<]*)<\/code>/.exec(html)?.[1] ?? "";
    assert.equal(
      code.replaceAll("&lt;", "<").replaceAll("&gt;", ">"),
      text.replace("\n", " "),
      JSON.stringify(text),
    );
  }
  assert.equal(codeSpan(""), "");
  const block = codeBlock("```\n~~~\n# x\n`````", { language: "sh" });
  assert.equal(block[0], "``````sh");
  const html = toHtml([...block, "", "# after"].join("\n"));
  assert.deepEqual(renderedHeadings([...block, "", "# after"].join("\n")), ["# after"]);
  assert.ok(html.includes("# x"), html);
});

Deno.test("a table cell has every pipe escaped, in a code span and after backslashes too", () => {
  const cells = [
    codeSpan("a|b"),
    codeSpan("a\\|b"),
    codeSpan("a\\\\|b"),
    inline("c | d \\| e"),
    `${codeSpan("x")} ${inline("| y")}`,
  ].map(tableCell);
  const table = ["| one | two |", "|---|---|", ...cells.map((cell) => `| ${cell} | z |`)].join(
    "\n",
  );
  assert.deepEqual(tableWidths(table), [Array(cells.length + 2).fill(2)]);
  const tds = textsOf(toHtml(table), "td").filter((_, index) => index % 2 === 0);
  // Renderers disagree about a pipe after an even run of backslashes; the odd
  // run every renderer reads alike shows one backslash more inside a code span.
  assert.deepEqual(tds, ["a|b", "a|b", "a\\\\|b", "c | d \\| e", "x | y"]);
  assert.equal(tableCell(inline("c | d")), inline("c | d"), "inline text is already a cell");
});

Deno.test("on GitHub, quoted text closes no issue and notifies no one, yet reads the same", () => {
  const texts = [
    "Fixes #77",
    "closes other/repo#78 and resolved: #9",
    "This FIXED https://github.com/o/r/issues/3",
    "cc @org/team and @someone",
    "Fix GH-12",
  ];
  const keyword = /\b(close[sd]?|fix(e[sd])?|resolve[sd]?):?\s+(#|[\w.-]+\/[\w.-]+#|gh-|https?:)/i;
  const mention = /(^|[^\w.+-])@[A-Za-z0-9]/;
  for (const text of texts) {
    for (const markdown of [inline(text), blockquote(text).join("\n")]) {
      const read = textOf(toHtml(markdown));
      assert.equal(read.replaceAll("\u200b", ""), text, `reads as written: ${text}`);
      assert.doesNotMatch(read, keyword, `no closing keyword: ${read}`);
      assert.doesNotMatch(read, mention, `no mention: ${read}`);
    }
  }
});

Deno.test("terminal escapes and control characters are dropped from every form", () => {
  const hostile = "a\x1b]52;c;Y3VybCBldmls\x07b\x1b[2Jc\x1b]0;owned\x1b\\d\x9b1me\x00\x7f";
  assert.equal(inline(hostile), "abcde");
  assert.deepEqual(blockquote(hostile), ["> abcde"]);
  assert.equal(codeSpan(hostile), "`abcde`");
  assert.deepEqual(codeBlock(hostile), ["```", "abcde", "```"]);
});
