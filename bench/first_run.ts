/**
 * `deno task bench:first-run`: what a newcomer's first run downloads and keeps,
 * each case with an empty Deno cache (`DENO_DIR`) of its own:
 *
 * - `--version` from the checkout;
 * - `deno task demo` (the real Claude Code binary, a scripted model);
 * - a library user's file that imports `@finishline/agents/kit` (to write a
 *   checker) and is type-checked; the kit is imported by path, as JSR would
 *   serve its modules, so the npm packages are what its module graph reaches.
 *
 * Downloaded bytes are the machine's received bytes (`/proc/net/dev`) while the
 * case ran; disk is the size of the cache afterwards. Run on a quiet machine.
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url).pathname;

function receivedBytes(): number {
  const lines = Deno.readTextFileSync("/proc/net/dev").split("\n").slice(2);
  return lines.reduce((sum, line) => {
    const [name, rest] = line.split(":");
    if (rest === undefined || name.trim() === "lo") return sum;
    return sum + Number(rest.trim().split(/\s+/)[0]);
  }, 0);
}

async function diskBytes(path: string): Promise<number> {
  const out = await new Deno.Command("du", { args: ["-sb", path], stdout: "piped" }).output();
  return Number(new TextDecoder().decode(out.stdout).split(/\s/)[0] || 0);
}

interface Case {
  name: string;
  args: string[];
  cwd: string;
}

async function measure(item: Case): Promise<string> {
  const cache = await Deno.makeTempDir({ prefix: "finishline-first-run-" });
  try {
    const before = receivedBytes();
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: item.args,
      cwd: item.cwd,
      env: { DENO_DIR: cache, NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - started) / 1000;
    if (!out.success) {
      throw new Error(`${item.name}: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
    }
    const mb = (bytes: number) => (bytes / 1e6).toFixed(bytes < 10e6 ? 2 : 0);
    return `| ${item.name} | ${mb(receivedBytes() - before)} MB | ${
      mb(await diskBytes(cache))
    } MB | ${seconds.toFixed(1)} s |`;
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
}

const user = await Deno.makeTempDir({ prefix: "finishline-kit-user-" });
try {
  await Deno.writeTextFile(
    `${user}/checker.ts`,
    [
      `import { type TaskCompletionContext, TaskCompletionResult } from "${ROOT}agents/kit.ts";`,
      "export function check(context: TaskCompletionContext): TaskCompletionResult {",
      '  return context.filesystem?.exists("CHANGELOG.md")',
      '    ? TaskCompletionResult.ok("ok")',
      '    : TaskCompletionResult.incomplete("Add CHANGELOG.md");',
      "}",
      "",
    ].join("\n"),
  );
  const cases: Case[] = [
    { name: "`--version`", args: ["run", "-A", "agents/iterator/main.ts", "--version"], cwd: ROOT },
    { name: "`deno task demo`", args: ["task", "demo"], cwd: ROOT },
    {
      name: "types-only import (`kit`), type-checked",
      args: ["check", "--no-config", `${user}/checker.ts`],
      cwd: user,
    },
  ];
  console.log("| first run, empty cache | downloaded | cache on disk | time |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const item of cases) console.log(await measure(item));
} finally {
  await Deno.remove(user, { recursive: true });
}
