import assert from "node:assert/strict";
import { join } from "node:path";
import { CommandChecker } from "../../agents/checks/command.ts";
import { tempDir } from "../_helpers.ts";
import { contextOf } from "./_helpers.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("command checker passes when its command exits 0", async (t) => {
  await using dir = await tempDir();

  await t.step("exit 0 passes and names the command", async () => {
    const result = await new CommandChecker({ command: "echo fine" }).check(
      contextOf({ cwd: dir.path }),
    );
    assert.deepEqual(result, { complete: true, feedback: "`echo fine` passed" });
  });

  await t.step("the command runs in context.cwd", async () => {
    await Deno.writeTextFile(join(dir.path, "marker.txt"), "here\n");
    const checker = new CommandChecker({ command: "test -f marker.txt" });
    assert.equal((await checker.check(contextOf({ cwd: dir.path }))).complete, true);
    await using elsewhere = await tempDir();
    assert.equal((await checker.check(contextOf({ cwd: elsewhere.path }))).complete, false);
  });

  await t.step("shell syntax works, as the command runs with sh -c", async () => {
    const checker = new CommandChecker({ command: 'x=3; [ "$x" -gt 2 ] && true | cat' });
    assert.equal((await checker.check(contextOf({ cwd: dir.path }))).complete, true);
  });

  await t.step("the name defaults to command and can be set", () => {
    assert.equal(new CommandChecker({ command: "true" }).name, "command");
    assert.equal(new CommandChecker({ command: "true", name: "tests" }).name, "tests");
  });
});

Deno.test("command checker fails with the command, its exit code and its output's tail", async (t) => {
  await using dir = await tempDir();
  const context = contextOf({ cwd: dir.path });

  await t.step("a non-zero exit names the command and the code", async () => {
    const result = await new CommandChecker({ command: "echo boom; exit 3" }).check(context);
    assert.equal(result.complete, false);
    assert.equal(
      result.feedback,
      "`echo boom; exit 3` exited with code 3.\nLast lines of its output:\nboom",
    );
  });

  await t.step("only the last tailLines lines are kept, stdout and stderr together", async () => {
    const command = "for i in 1 2 3 4 5 6 7 8; do echo line$i; done; echo oops >&2; exit 1";
    const result = await new CommandChecker({ command, tailLines: 3 }).check(context);
    assert.ok(
      result.feedback!.endsWith("Last lines of its output:\nline7\nline8\noops"),
      result.feedback,
    );
    assert.ok(!result.feedback!.includes("line6"));
  });

  await t.step("by default 30 lines are kept", async () => {
    const command = "i=1; while [ $i -le 40 ]; do echo row$i; i=$((i+1)); done; exit 2";
    const result = await new CommandChecker({ command }).check(context);
    const tail = result.feedback!.split("Last lines of its output:\n")[1].split("\n");
    assert.equal(tail.length, 30);
    assert.equal(tail[0], "row11");
    assert.equal(tail.at(-1), "row40");
  });

  await t.step("a command that prints nothing says so", async () => {
    const result = await new CommandChecker({ command: "exit 7" }).check(context);
    assert.equal(result.feedback, "`exit 7` exited with code 7. It printed nothing.");
  });

  await t.step("the output comes from the working directory's run", async () => {
    const result = await new CommandChecker({ command: "pwd; exit 1" }).check(context);
    assert.ok(result.feedback!.endsWith(`\n${await Deno.realPath(dir.path)}`), result.feedback);
  });
});

Deno.test("command checker stops a command that runs past its timeout", async (t) => {
  await using dir = await tempDir();
  const context = contextOf({ cwd: dir.path });

  await t.step(
    "sleep 5 with a 0.5 s timeout fails saying it timed out, within a second or two",
    async () => {
      const started = performance.now();
      const result = await new CommandChecker({ command: "sleep 5", timeoutSeconds: 0.5 }).check(
        context,
      );
      const elapsed = performance.now() - started;
      assert.equal(result.complete, false);
      assert.ok(result.feedback!.startsWith("`sleep 5` timed out after 0.5 s."), result.feedback);
      assert.ok(elapsed < 3000, `took ${Math.round(elapsed)} ms`);
    },
  );

  await t.step("the timed-out command and its children are stopped, not left running", async () => {
    const command = "echo started; sleep 2; touch late.txt";
    const started = performance.now();
    const result = await new CommandChecker({ command, timeoutSeconds: 0.5 }).check(context);
    assert.ok(performance.now() - started < 2000, "returned before the command would finish");
    assert.ok(result.feedback!.includes("timed out after 0.5 s"), result.feedback);
    assert.ok(result.feedback!.endsWith("\nstarted"), "output up to the timeout is kept");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(await exists(join(dir.path, "late.txt")), false, "the command kept running");
  });

  await t.step("a background child holding the output is stopped at the timeout", async () => {
    const command = "(sleep 2; touch bg-late.txt) & echo spawned";
    const started = performance.now();
    const result = await new CommandChecker({ command, timeoutSeconds: 0.5 }).check(context);
    assert.ok(performance.now() - started < 2000, "waited for the background child");
    assert.equal(result.complete, true, "the shell itself exited 0 before the timeout");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(await exists(join(dir.path, "bg-late.txt")), false, "the child kept running");
  });
});
