/**
 * The CLI starts the first session's agent process before it opens the
 * workspace; the loop then asks for the same process, and the first session
 * has the settings it was started with (so the backend hands it over instead
 * of starting another). The CLI runs in a child process
 * (`_first_warm_child.ts`): its run guard must not stop the other test files'
 * processes.
 */

import assert from "node:assert/strict";
import { denoDir } from "../../_helpers.ts";

const CHILD = new URL("./_first_warm_child.ts", import.meta.url).pathname;

/** What the child saw: the exit code, stderr, the backend's calls and the process parts. */
async function runWith(agent: Record<string, unknown>, ranBefore = false) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, JSON.stringify(agent), ...(ranBefore ? ["ran-before"] : [])],
    env: { DENO_DIR: await denoDir() },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(text) as {
    code: number;
    errors: string;
    calls: string[];
    warmed: unknown[];
    sessions: unknown[];
  };
}

const AGENT = {
  name: "warm",
  behavior: {
    completionType: "iterate",
    completionConfig: { maxIterations: 2 },
    // The recording backend never calls complete_task: only the processes' settings are under test.
    requireCompleteTask: false,
    allowedTools: ["Bash"],
    permissionMode: "default",
    maxBudgetUsd: 5,
  },
  probe: { enabled: false },
  finish: { maxCostUsd: 0 },
};

Deno.test("the first session's process is started before the workspace, with the settings the session asks for", async () => {
  const { code, errors, calls, warmed, sessions } = await runWith(AGENT);
  assert.equal(code, 0, errors);
  // The CLI's warm, the loop's for iteration 1 (served by the same process), iteration 2's.
  assert.deepEqual(calls.slice(0, 3), ["warm", "warm", "session"]);
  assert.deepEqual(warmed[0], warmed[1]);
  assert.deepEqual(sessions[0], warmed[0]);
});

Deno.test("in a repository finishline ran in before, the first session's process starts while the run is prepared, with the settings the session asks for", async () => {
  const { code, errors, calls, warmed, sessions } = await runWith(AGENT, true);
  assert.equal(code, 0, errors);
  // Once, early (the CLI does not ask again); the loop's for iteration 1 is served by it.
  assert.deepEqual(calls.slice(0, 3), ["warm", "warm", "session"]);
  assert.deepEqual(warmed[0], warmed[1]);
  assert.deepEqual(sessions[0], warmed[0]);
});

Deno.test("prewarm: false warms nothing before the loop", async () => {
  const { code, errors, warmed } = await runWith(
    { ...AGENT, behavior: { ...AGENT.behavior, prewarm: false } },
  );
  assert.equal(code, 0, errors);
  assert.equal(warmed.length, 0);
});
