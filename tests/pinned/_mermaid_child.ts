/**
 * Reads `["diagram", ...]` on stdin, parses each with Mermaid and prints
 * `[{ type } | { error }]`. Mermaid needs a DOM, given here by jsdom. Run by
 * `parseMermaid` under `tests/pinned/deno.json`; the package names are held in
 * variables so that the repository's own type check does not resolve them.
 *
 * @module
 */

type Parse = (text: string) => Promise<{ diagramType: string }>;

const names = { jsdom: "jsdom", mermaid: "mermaid" };
const { JSDOM } = (await import(names.jsdom)) as {
  JSDOM: new (
    html: string,
  ) => { window: Record<string, unknown> & { document: unknown } };
};
const dom = new JSDOM("<!doctype html><html><body></body></html>");
const global = globalThis as Record<string, unknown>;
for (const name of ["window", "Element", "HTMLElement", "DOMParser"]) {
  global[name] = name === "window" ? dom.window : dom.window[name];
}
global.document = dom.window.document;
const mermaid = ((await import(names.mermaid)) as { default: { parse: Parse } }).default;

const diagrams: string[] = JSON.parse(
  await new Response(Deno.stdin.readable).text(),
);
const results = [];
for (const text of diagrams) {
  try {
    results.push({ type: (await mermaid.parse(text)).diagramType });
  } catch (error) {
    results.push({ error: String(error).split("\n").slice(0, 4).join("\n") });
  }
}
console.log(JSON.stringify(results));
