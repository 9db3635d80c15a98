/**
 * The layout holds: the library folders never import the CLI
 * (`agents/iterator/`), and no module imports itself back through others.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const ENTRIES = [
  "agents/mod.ts",
  "agents/kit.ts",
  "agents/definition/mod.ts",
  "agents/iterator/main.ts",
  "agents/testing/mod.ts",
];

/** Every local module reachable from the entries, with the local modules it imports. */
async function importGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of ENTRIES) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", new URL(entry, ROOT).pathname],
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.ok(output.success, `deno info ${entry}`);
    const info = JSON.parse(new TextDecoder().decode(output.stdout));
    for (const module of info.modules as Array<Record<string, unknown>>) {
      const from = String(module.specifier);
      if (!from.startsWith(ROOT.href)) continue;
      const edges = graph.get(from) ?? new Set<string>();
      for (const dependency of (module.dependencies ?? []) as Array<Record<string, unknown>>) {
        for (const kind of ["code", "type"]) {
          const to = (dependency[kind] as { specifier?: string } | undefined)?.specifier;
          if (to?.startsWith(ROOT.href)) edges.add(to);
        }
      }
      graph.set(from, edges);
    }
  }
  return graph;
}

const short = (url: string) => url.slice(ROOT.href.length);

Deno.test("the library never imports the CLI", async () => {
  const cli = new URL("agents/iterator/", ROOT).href;
  const wrong: string[] = [];
  for (const [from, edges] of await importGraph()) {
    if (from.startsWith(cli) || !from.startsWith(new URL("agents/", ROOT).href)) continue;
    for (const to of edges) if (to.startsWith(cli)) wrong.push(`${short(from)} -> ${short(to)}`);
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no import circle: no module reaches itself through its imports", async () => {
  const graph = await importGraph();
  // Tarjan's strongly connected components; any with two modules or more is a circle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(short(member));
      } while (member !== node);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  assert.ok(graph.size > 100, `${graph.size} modules read`);
  assert.deepEqual(circles, []);
});
