import assert from "node:assert/strict";
import { RunLock } from "../../agents/support/file_lock.ts";
import { pathExists } from "../../agents/support/resource.ts";
import { tempDir } from "../_helpers.ts";

/** A child Deno process that takes the lock and holds it until killed. */
async function holderProcess(dir: string, key: string): Promise<Deno.ChildProcess> {
  const url = new URL("../../agents/support/file_lock.ts", import.meta.url).href;
  const code = `const { RunLock } = await import(${JSON.stringify(url)});
await RunLock.acquire(${JSON.stringify(dir)}, ${JSON.stringify(key)}, { note: "child" });
console.log("held");
setInterval(() => {}, 1000);`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", code],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  assert.equal(new TextDecoder().decode(value).trim(), "held");
  return child;
}

Deno.test("RunLock has one holder at a time and the OS frees it when the holder dies", async (t) => {
  await using dir = await tempDir("finishline-locks-");
  const locks = `${dir.path}/locks`;

  await t.step(
    "held in this process: a second try fails, release frees it and removes the file",
    async () => {
      const lock = await RunLock.acquire(locks, "run-1");
      assert.ok(lock.held);
      assert.ok(await pathExists(`${locks}/run-1.lock`));
      assert.equal(await RunLock.tryAcquire(locks, "run-1"), undefined);
      const other = await RunLock.tryAcquire(locks, "run-2");
      assert.ok(other, "another key is another lock");
      await other.release();
      await lock.release();
      assert.equal(lock.held, false);
      assert.equal(await pathExists(`${locks}/run-1.lock`), false);
      await lock.release();
      const again = await RunLock.tryAcquire(locks, "run-1");
      assert.ok(again);
      await again.release();
    },
  );

  await t.step("acquire waits for the holder's release", async () => {
    const first = await RunLock.acquire(locks, "issue-7");
    let taken = false;
    const second = RunLock.acquire(locks, "issue-7").then((lock) => {
      taken = true;
      return lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(taken, false, "still waiting while the first holds it");
    await first.release();
    const lock = await second;
    assert.ok(lock.held);
    assert.equal(await RunLock.tryAcquire(locks, "issue-7"), undefined, "it holds the live file");
    await lock.release();
  });

  await t.step("held by another process: refused; SIGKILLed, it never blocks", async () => {
    const child = await holderProcess(locks, "issue-9");
    try {
      assert.equal(await RunLock.tryAcquire(locks, "issue-9"), undefined);
      const holder = await RunLock.holder(locks, "issue-9");
      assert.equal(holder?.pid, child.pid);
      assert.equal(holder?.note, "child");
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel();
      const lock = await RunLock.tryAcquire(locks, "issue-9");
      assert.ok(lock, "the file the dead process left is no obstacle");
      assert.equal((await RunLock.holder(locks, "issue-9"))?.pid, Deno.pid);
      await lock.release();
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // already ended
      }
    }
  });

  await t.step("a key that is not a plain file name is a RangeError", async () => {
    for (const key of ["../x", "a/b", "", ".hidden"]) {
      await assert.rejects(RunLock.tryAcquire(locks, key), RangeError, key);
    }
  });

  await t.step("holder of a free key is undefined", async () => {
    assert.equal(await RunLock.holder(locks, "nobody"), undefined);
  });
});
