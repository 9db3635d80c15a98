/**
 * `deno task demo` end to end: the demo runs as a user runs it, and shows a
 * check that fails, is fed back through complete_task, and then passes.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoDir, tempDir } from "./_helpers.ts";
import { REPORT_NAME } from "../tools/demo.ts";

const DEMO = fileURLToPath(new URL("../tools/demo.ts", import.meta.url));

Deno.test("the demo shows a failing check fed back and fixed, and keeps its report", async () => {
  await using cwd = await tempDir("finishline-demo-cwd-");
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", DEMO],
    cwd: cwd.path,
    // `deno task demo` sets INIT_CWD to the folder the user ran it from.
    env: { INIT_CWD: cwd.path, NO_COLOR: "1", DENO_DIR: await denoDir() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, `${stdout}\n${stderr}`);

  // The agent committed the bug, then the fix, then the docs.
  assert.match(
    stdout,
    /docs: document greet\(\)\n.* fix: greet\(\) puts a comma after Hello\n.* feat: add greet\(\)/,
  );
  // One request per scripted turn: complete_task was called, so the Stop hook never sent the agent
  // back. The side request is the finish workflow's one question.
  assert.match(
    stdout,
    /^Model requests: 8 for 8 scripted turns in 2 sessions, plus 1 side request$/m,
  );

  const kept = `${cwd.path}/${REPORT_NAME}`;
  const report = await Deno.readTextFile(kept);
  assert.ok(stdout.includes(report), "the report's Markdown is printed");
  assert.match(stdout, new RegExp(`^Report kept: ${kept}$`, "m"));
  assert.match(report, /✅ \*\*completed\*\*: Completed 2\/2 iterations/);
  // Iteration 1 called complete_task twice (fail, then pass); iteration 2 once.
  assert.match(report, /^\| 1 \|.*complete_task×2 \| 2 \| continue \|$/m);
  assert.match(report, /^\| 2 \|.*complete_task \| 1 \| complete \|$/m);
  // The failing check, as the agent read it, and then the same check green on the final state.
  assert.match(
    report,
    /^- Iteration 1, checks \(at complete_task; fixed in the same iteration\):\n\n`{3,}\n"deno task test" fails[^]*?failing tests: "greet says hello with a comma"/m,
  );
  assert.match(report, /^\| `deno task test` \| red \| green \|/m);

  // The demo's temp repository is gone; only the kept report remains.
  const repo = stdout.match(/^Repository: +(\S+)$/m)?.[1];
  assert.ok(repo, stdout);
  await assert.rejects(Deno.stat(repo), Deno.errors.NotFound);
  assert.deepEqual([...Deno.readDirSync(cwd.path)].map((entry) => entry.name), [REPORT_NAME]);
});
