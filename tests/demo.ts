/**
 * `deno task demo`: watch finishline drive the real Claude Code binary
 * through three iterations in a temp git repository. The model is a scripted
 * local Messages-API server, so no credentials are needed and nothing leaves
 * the machine.
 *
 * @module
 */

import { ScriptedModelServer, textTurn, toolTurn } from "../agents/testing/mod.ts";
import { denoDir, git, MAIN, tempDir, tempRepo } from "./_helpers.ts";

const steps = [
  [
    toolTurn("Bash", {
      command:
        "printf 'export function greet(name: string): string {\\n  return `Hello, ${name}`;\\n}\\n' > greet.ts" +
        " && git add greet.ts && git commit -q -m 'feat: add greet()'",
    }, "I'll add the greeting module first."),
    textTurn("Added greet.ts and committed it. Next: a test."),
  ],
  [
    toolTurn("Bash", {
      command:
        'printf \'import { greet } from "./greet.ts";\\nif (greet("Ada") !== "Hello, Ada") throw new Error("bad");\\n\' > greet_test.ts' +
        " && git add greet_test.ts && git commit -q -m 'test: cover greet()'",
    }, "Now the test."),
    textTurn("Added greet_test.ts and committed it. Next: README."),
  ],
  [
    toolTurn("Bash", {
      command:
        "printf '\\n## greet\\n\\n`greet(name)` says hello.\\n' >> README.md && git commit -qam 'docs: document greet()'",
    }, "Finally the docs."),
    textTurn(
      "Documented greet() in the README. The task is done: module, test and docs are committed.",
    ),
  ],
];

await using repo = await tempRepo();
await using home = await tempDir("finishline-demo-home-");
await using server = await ScriptedModelServer.start({ scripts: steps });

console.log(`Scripted model server: ${server.url}`);
console.log(`Repository:            ${repo.path}\n`);
console.log(
  "$ deno run -A agents/iterator/main.ts --iterate-max 3 --task 'Add a greet() module with a test and docs' --json\n",
);

const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    MAIN,
    "--iterate-max",
    "3",
    "--task",
    "Add a greet() module with a test and docs",
    "--json",
  ],
  cwd: repo.path,
  env: { ...server.env(home.path), DENO_DIR: await denoDir() },
  stdin: "null",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const output = await child.output();
const result = JSON.parse(new TextDecoder().decode(output.stdout));

console.log("\nResult (--json):");
console.log(JSON.stringify(result, null, 2));
console.log("\nCommits the agent made:");
console.log(await git(repo.path, "log", "--oneline", "--no-decorate"));
console.log(
  `\nModel requests served: ${server.requests.length} in ${server.sessionIds().length} sessions`,
);
Deno.exitCode = output.code;
