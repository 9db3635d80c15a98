/**
 * `deno task demo`: watch finishline drive the real Claude Code binary through
 * two iterations in a temp git repository. The model is a scripted local
 * Messages-API server, so no credentials are needed and nothing leaves the
 * machine.
 *
 * The repository has a test (`greet_test.ts`, run by `deno task test`) and no
 * code yet. In iteration 1 the scripted agent commits a `greet()` with a bug
 * and calls complete_task; finishline runs the repository's test, which
 * fails, and answers the call with the failing test. The agent fixes the bug,
 * commits, calls complete_task again, and the test passes. In iteration 2 it
 * documents `greet()`, commits and calls complete_task; the test passes on
 * the final state and the run completes.
 *
 * The run's Markdown report is copied to `finishline-demo-report.md` in the
 * folder the demo was started from (`INIT_CWD` under `deno task`), and
 * printed at the end.
 *
 * @module
 */

import { join } from "node:path";
import { COMPLETE_TASK_TOOL } from "../agents/record/complete_task_tool.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  type SessionScript,
  textTurn,
  toolTurn,
} from "../agents/testing/mod.ts";
import { denoDir, git, MAIN, tempDir, tempRepo } from "../tests/_helpers.ts";

/** Where the report is kept: the file name, in the folder the user ran the demo from. */
export const REPORT_NAME = "finishline-demo-report.md";

const TASK = "Add greet() in greet.ts so that greet_test.ts passes, and document it in the README";
const ITERATIONS = 2;

const INTRO =
  `finishline demo: the real Claude Code binary, a scripted model, a temp git repository.
The repository has greet_test.ts and no greet.ts; deno.json's "test" task is the check finishline
finds and gates "done" on. The scripted agent commits a greet() with a bug and calls complete_task:
the test fails and the agent is told which test and why. It fixes the bug, commits and calls
complete_task again; the test passes. In iteration 2 it documents greet(), and the run completes.
`;

/** The repository's own test: `deno task test` is the check finishline finds and runs. */
const GREET_TEST = `import { greet } from "./greet.ts";

Deno.test("greet says hello with a comma", () => {
  const got = greet("Ada");
  if (got !== "Hello, Ada!") throw new Error(\`expected "Hello, Ada!", got "\${got}"\`);
});
`;

/** A shell command that writes `greet.ts` returning `greeting` and commits it. */
function writeGreet(greeting: string, message: string): string {
  return `printf 'export function greet(name: string): string {\\n  return \`${greeting}\`;\\n}\\n' > greet.ts` +
    ` && git add greet.ts && git commit -q -m '${message}'`;
}

/** The agent's complete_task call, status success. */
function success(summary: string, files: string[]) {
  return toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: TASK,
    summary,
    files_modified: files,
  });
}

/** The agent reads complete_task's answer, and fixes the bug only when it names the failing test. */
const fixWhenTold: ScriptStep = (ctx) =>
  /did NOT pass[\s\S]*"greet says hello with a comma"/.test(ctx.lastUserText)
    ? toolTurn(
      "Bash",
      { command: writeGreet("Hello, ${name}!", "fix: greet() puts a comma after Hello") },
      "The test wants a comma after Hello. Fixing it.",
    )
    : textTurn(
      `I expected complete_task to report the failing test, but it said: ${ctx.lastUserText}`,
    );

/** One script per session (one session per iteration). */
const SCRIPTS: SessionScript[] = [
  [
    toolTurn(
      "Bash",
      { command: writeGreet("Hello ${name}!", "feat: add greet()") },
      "Adding greet().",
    ),
    success("Added greet() in greet.ts", ["greet.ts"]),
    fixWhenTold,
    success("Added greet() in greet.ts; greet_test.ts passes", ["greet.ts"]),
    textTurn("greet() is committed and its test passes. Next: the README."),
  ],
  [
    toolTurn("Bash", {
      command: "printf '\\n## greet\\n\\n`greet(name)` says hello.\\n' >> README.md" +
        " && git commit -qam 'docs: document greet()'",
    }, "Documenting greet()."),
    success("Documented greet() in the README", ["README.md"]),
    textTurn("Done: greet() is committed, tested and documented."),
  ],
];

/** A temp repository with a `deno task test` that fails until greet.ts exists and is right. */
async function seedRepository(path: string): Promise<void> {
  await Deno.writeTextFile(
    join(path, "deno.json"),
    `${JSON.stringify({ tasks: { test: "deno test" }, lock: false }, null, 2)}\n`,
  );
  await Deno.writeTextFile(join(path, "greet_test.ts"), GREET_TEST);
  await git(path, "add", "-A");
  await git(path, "commit", "-q", "-m", "test: greet() says hello");
}

/** The run's Markdown report: the one `.md` file in the iterator's log folder. */
async function findReport(repo: string): Promise<string | undefined> {
  const logs = join(repo, ".agent", "iterator", "logs");
  try {
    for await (const entry of Deno.readDir(logs)) {
      if (entry.isFile && entry.name.endsWith(".md")) return join(logs, entry.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return undefined;
}

/**
 * How many main-loop model requests were served, against the turns the script has, and
 * the side requests besides (the finish workflow's one question, answered "OK." here).
 */
function requestLine(server: ScriptedModelServer): string {
  const turns = SCRIPTS.reduce((sum, script) => sum + script.length, 0);
  const side = server.requests.filter((request) => request.side).length;
  return `Model requests: ${
    server.requests.length - side
  } for ${turns} scripted turns in ${server.sessionIds().length} sessions${
    side > 0 ? `, plus ${side} side request${side === 1 ? "" : "s"}` : ""
  }`;
}

/** Run the CLI in the repository against the server; its progress goes to our stderr. */
async function runIterator(repo: string, home: string, server: ScriptedModelServer) {
  const args = ["--iterate-max", String(ITERATIONS), "--task", TASK];
  console.log(
    `$ deno run -A agents/iterator/main.ts --iterate-max ${ITERATIONS} --task '${TASK}'\n`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: repo,
    env: { ...server.env(home), DENO_DIR: await denoDir() },
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return await child.status;
}

/** Copy the report next to the user and print it; returns where it was kept. */
async function keepReport(repo: string): Promise<string | undefined> {
  const report = await findReport(repo);
  if (!report) {
    console.log("\nThe run wrote no report.");
    return undefined;
  }
  const kept = join(Deno.env.get("INIT_CWD") ?? Deno.cwd(), REPORT_NAME);
  await Deno.copyFile(report, kept);
  console.log(
    "\nThe run's report (copied out of the temp repository, which is removed on exit):\n",
  );
  console.log(await Deno.readTextFile(kept));
  return kept;
}

/** Run the demo: the iterator in a temp repository, then the commits, the requests and the report. */
async function main(): Promise<void> {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-demo-home-");
  await using server = await ScriptedModelServer.start({ scripts: SCRIPTS });
  await seedRepository(repo.path);

  console.log(INTRO);
  console.log(`Scripted model server: ${server.url}`);
  console.log(`Repository:            ${repo.path}\n`);
  const status = await runIterator(repo.path, home.path, server);
  console.log("\nCommits in the repository:");
  console.log(await git(repo.path, "log", "--oneline", "--no-decorate"));
  console.log(`\n${requestLine(server)}`);
  const kept = await keepReport(repo.path);
  if (kept) console.log(`Report kept: ${kept}`);
  Deno.exitCode = status.code;
}

if (import.meta.main) await main();
