import assert from "node:assert/strict";
import { MISSING_CODE, runTool, TIMEOUT_CODE } from "../../agents/common/process.ts";

Deno.test("runTool turns every way a tool can fail into an exit code", async (t) => {
  await t.step("a tool that outlives its timeout is killed and reports 124", async () => {
    const started = performance.now();
    const result = await runTool("sleep", ["10"], { cwd: ".", timeoutMs: 200 });
    assert.equal(result.code, TIMEOUT_CODE);
    assert.match(result.stderr, /timed out after 200 ms/);
    assert.ok(performance.now() - started < 5_000, "it did not wait for the tool");
  });
  await t.step("a missing executable is 127", async () => {
    const result = await runTool("finishline-no-such-tool", [], { cwd: ".", timeoutMs: 1_000 });
    assert.equal(result.code, MISSING_CODE);
  });
  await t.step("a missing working directory is not mistaken for a missing tool", async () => {
    const result = await runTool("git", ["--version"], {
      cwd: "/finishline/no/such/dir",
      timeoutMs: 1_000,
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cwd/);
  });
  await t.step("stdout, stderr, exit code and extra environment come through", async () => {
    const result = await runTool("sh", ["-c", 'printf "$GREETING"; printf oops >&2; exit 3'], {
      cwd: ".",
      env: { GREETING: "hello" },
      timeoutMs: 5_000,
    });
    assert.deepEqual(result, { code: 3, stdout: "hello", stderr: "oops" });
  });
});
