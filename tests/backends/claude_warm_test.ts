/**
 * The parked Claude Code process: asked for twice with the same settings (the
 * CLI warms the first session's process before the loop does), one process
 * starts and the session claims it. Real Claude Code, through a wrapper that
 * counts its starts, against the scripted model server.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ClaudeBackend } from "../../agents/backends/claude.ts";
import type { AgentMessage } from "../../agents/backends/port.ts";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { bundledClaude, tempDir, tempRepo } from "../_helpers.ts";
import { workerSettings } from "./_settings.ts";

async function countingClaude(
  dir: string,
): Promise<{ path: string; starts: () => Promise<number> }> {
  const log = join(dir, "starts.log");
  const path = join(dir, "claude");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho start >> '${log}'\nexec '${await bundledClaude()}' "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return {
    path,
    starts: async () => {
      try {
        return (await Deno.readTextFile(log)).split("\n").filter(Boolean).length;
      } catch {
        return 0;
      }
    },
  };
}

async function drain(messages: AsyncIterable<AgentMessage>): Promise<AgentMessage[]> {
  const all: AgentMessage[] = [];
  for await (const message of messages) all.push(message);
  return all;
}

Deno.test("warming twice with the same settings starts one process, and the session claims it", async () => {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-warm-home-");
  await using bin = await tempDir("finishline-warm-bin-");
  await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Hello.")]] });
  const claude = await countingClaude(bin.path);
  const backend = new ClaudeBackend({ executable: claude.path });
  const wanted = workerSettings(repo.path, server.env(home.path));
  try {
    backend.warm(wanted);
    backend.warm({ ...wanted });
    const messages = await drain(
      backend.session({
        ...wanted,
        prompt: "Say hello",
        onCompleteTask: () => Promise.resolve("Recorded."),
        onStop: () => Promise.resolve({ block: false }),
        signal: new AbortController().signal,
      }),
    );
    assert.equal(messages.at(-1)?.type, "result");
  } finally {
    await backend.release();
  }
  assert.equal(await claude.starts(), 1);
  assert.equal(server.requests.filter((request) => !request.side).length, 1);
});

Deno.test("warming with other settings replaces the parked process", async () => {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-warm-home-");
  await using bin = await tempDir("finishline-warm-bin-");
  await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Hello.")]] });
  const claude = await countingClaude(bin.path);
  const backend = new ClaudeBackend({ executable: claude.path });
  const env = server.env(home.path);
  try {
    backend.warm(workerSettings(repo.path, env, "claude-opus-4-1"));
    backend.warm(workerSettings(repo.path, env));
    await drain(
      backend.session({
        ...workerSettings(repo.path, env),
        prompt: "Say hello",
        onCompleteTask: () => Promise.resolve("Recorded."),
        onStop: () => Promise.resolve({ block: false }),
        signal: new AbortController().signal,
      }),
    );
  } finally {
    await backend.release();
  }
  assert.equal(await claude.starts(), 2);
});

Deno.test("a session that takes the parked process says so before its first message, so the next can warm", async () => {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-warm-home-");
  await using bin = await tempDir("finishline-warm-bin-");
  await using server = await ScriptedModelServer.start({
    scripts: [[textTurn("One.")], [textTurn("Two.")], [textTurn("Three.")]],
  });
  const claude = await countingClaude(bin.path);
  const backend = new ClaudeBackend({ executable: claude.path });
  const wanted = workerSettings(repo.path, server.env(home.path));
  const events: string[] = [];
  const session = (prompt: string) =>
    (async () => {
      for await (
        const _message of backend.session({
          ...wanted,
          prompt,
          onCompleteTask: () => Promise.resolve("Recorded."),
          onStop: () => Promise.resolve({ block: false }),
          onWarmTaken: () => {
            events.push(`${prompt}: taken`);
            // The loop's answer: park the next session's process at once.
            backend.warm(wanted);
          },
          signal: new AbortController().signal,
        })
      ) {
        if (!events.includes(`${prompt}: message`)) events.push(`${prompt}: message`);
      }
    })();
  try {
    // No parked process: the session starts its own, and says nothing.
    await session("first");
    backend.warm(wanted);
    await session("second");
    await session("third");
  } finally {
    await backend.release();
  }
  assert.deepEqual(events, [
    "first: message",
    "second: taken",
    "second: message",
    "third: taken",
    "third: message",
  ]);
  // first, the one warmed for second, the one second warmed for third, the one third warmed.
  assert.equal(await claude.starts(), 4);
});
