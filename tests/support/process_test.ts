import assert from "node:assert/strict";
import { MISSING_CODE, runShell, runTool, TIMEOUT_CODE } from "../../agents/support/process.ts";

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

Deno.test("runShell keeps the head and tail of a long output, and nothing it started outlives it", async (t) => {
  await t.step("beyond maxBytes the middle is cut, saying how much, at line ends", async () => {
    // 20,000 numbered lines of 10 bytes: about 200 kB through a 16 kB budget.
    const result = await runShell("seq -f 'line %05g' 1 20000", {
      cwd: ".",
      timeoutMs: 10_000,
      maxBytes: 16_384,
    });
    assert.equal(result.code, 0);
    assert.ok(result.cutBytes > 150_000, String(result.cutBytes));
    const lines = result.combined.split("\n");
    assert.equal(lines[0], "line 00001");
    assert.equal(lines.at(-2), "line 20000");
    assert.ok(
      lines.every((line) =>
        line === "" || /^line \d{5}$/.test(line) ||
        /^\[finishline: \d+ bytes of output cut here\]$/.test(line)
      ),
      "no half line",
    );
    assert.match(result.combined, /\n\[finishline: \d+ bytes of output cut here\]\n/);
    assert.ok(result.combined.length <= 16_384 + 100);
  });
  await t.step("within maxBytes the output is whole", async () => {
    const result = await runShell("seq 1 1000", { cwd: ".", timeoutMs: 10_000 });
    assert.equal(result.cutBytes, 0);
    assert.equal(result.combined.split("\n").length, 1001);
  });
  await t.step(
    "a process the command left running in the background is stopped when it exits",
    async () => {
      const dir = await Deno.makeTempDir();
      try {
        const started = performance.now();
        // A dev server that keeps the output pipes open, and one that does not.
        const result = await runShell(
          `sleep 300 & echo $! > ${dir}/a.pid; (sleep 300 > /dev/null 2>&1 &); echo served`,
          { cwd: ".", timeoutMs: 60_000 },
        );
        assert.equal(result.code, 0);
        assert.match(result.combined, /served/);
        assert.ok(performance.now() - started < 10_000, "the held pipes did not keep it waiting");
        const pid = Number((await Deno.readTextFile(`${dir}/a.pid`)).trim());
        assert.equal(await alive(pid), false, `the background sleep ${pid} is gone`);
        const sleepers =
          (await runTool("pgrep", ["-f", "^sleep 300$"], { cwd: ".", timeoutMs: 5_000 }))
            .stdout.trim();
        assert.equal(sleepers, "", "no detached sleep of the command is left");
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});

Deno.test("runShell stops what its command forks after the shell exits, SIGTERM ignored", async () => {
  // A subshell that ignores SIGTERM and starts its daemon late: the first stop of the
  // group misses the daemon, and the pipes are closed, so nothing else waits for it.
  const result = await runShell(
    "(trap '' TERM; sleep 0.3; sleep 302.5 > /dev/null 2>&1 &) > /dev/null 2>&1 & echo served",
    { cwd: ".", timeoutMs: 60_000 },
  );
  assert.equal(result.code, 0);
  const left = async () =>
    (await runTool("pgrep", ["-f", "^sleep 302.5$"], { cwd: ".", timeoutMs: 5_000 })).stdout
      .trim();
  assert.equal(await left(), "", "nothing of the command runs once runShell returned");
  // Nor later: the subshell was stopped too, so it cannot start the daemon after.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(await left(), "");
});

/** Whether a process runs (a zombie waiting to be reaped does not). */
async function alive(pid: number): Promise<boolean> {
  for (let tries = 0; tries < 50; tries++) {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => undefined);
    if (!stat || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}
