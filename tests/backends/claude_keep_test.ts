/**
 * A kept Claude Code process: a session asked to keep its process leaves it,
 * once it ended well, to the next session with the same settings, which runs
 * in it as a new conversation (`/clear`). Real Claude Code, through a wrapper
 * that records each start's process id, against the scripted model server.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ClaudeBackend } from "../../agents/backends/claude.ts";
import type { AgentMessage, ProcessSettings } from "../../agents/backends/port.ts";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { bundledClaude, exited, tempDir, tempRepo } from "../_helpers.ts";
import { workerSettings } from "./_settings.ts";

/** A Claude Code that writes its process id to a log before it starts (exec keeps the id). */
async function recordingClaude(
  dir: string,
): Promise<{ path: string; pids: () => Promise<number[]> }> {
  const log = join(dir, "pids.log");
  const path = join(dir, "claude");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho $$ >> '${log}'\nexec '${await bundledClaude()}' "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return {
    path,
    pids: async () => {
      try {
        return (await Deno.readTextFile(log)).split("\n").filter(Boolean).map(Number);
      } catch {
        return [];
      }
    },
  };
}

async function setUp() {
  const repo = await tempRepo();
  const home = await tempDir("finishline-keep-home-");
  const bin = await tempDir("finishline-keep-bin-");
  const server = await ScriptedModelServer.start({
    scripts: [[textTurn("One.")], [textTurn("Two.")], [textTurn("Three.")]],
  });
  const claude = await recordingClaude(bin.path);
  const backend = new ClaudeBackend({ executable: claude.path });
  const wanted = workerSettings(repo.path, server.env(home.path));
  return {
    repo,
    server,
    claude,
    backend,
    wanted,
    /** One session: its messages, and which of its callbacks were called. */
    session: async (prompt: string, extra: Partial<ProcessSettings> & { keep?: boolean } = {}) => {
      const messages: AgentMessage[] = [];
      for await (
        const message of backend.session({
          ...wanted,
          ...extra,
          prompt,
          onCompleteTask: () => Promise.resolve("Recorded."),
          onStop: () => Promise.resolve({ block: false }),
          signal: new AbortController().signal,
        })
      ) messages.push(message);
      return messages;
    },
    async [Symbol.asyncDispose]() {
      await backend.release();
      await server[Symbol.asyncDispose]();
      await bin[Symbol.asyncDispose]();
      await home[Symbol.asyncDispose]();
      await repo[Symbol.asyncDispose]();
    },
  };
}

const sessionOf = (messages: AgentMessage[]) => messages.at(-1)?.session_id;

Deno.test("a kept process serves the next session with the same settings as a new conversation", async () => {
  await using s = await setUp();
  const first = await s.session("one", { keep: true });
  const second = await s.session("two", { keep: true });
  assert.equal((await s.claude.pids()).length, 1, "one process for both sessions");
  assert.equal(first.at(-1)?.type, "result");
  assert.notEqual(sessionOf(first), sessionOf(second), "a new session id after /clear");
  // The second session's messages are its own: its init first, no trace of the /clear.
  assert.equal(second[0].type, "system");
  assert.ok(second.every((message) => message.type !== "conversation_reset"));
  assert.equal(second.filter((message) => message.type === "result").length, 1);
  assert.equal(second.at(-1)?.num_turns, 1);
  // The model saw the second prompt alone, not the first conversation.
  const last = JSON.stringify(s.server.requests.at(-1)?.body);
  assert.ok(last.includes("two") && !last.includes("One."), last.slice(0, 400));
  // Ended with the backend.
  await s.backend.release();
  assert.ok((await s.claude.pids()).every(exited));
});

Deno.test("a session with other settings does not take the kept process, and a later one still does", async () => {
  await using s = await setUp();
  await s.session("one", { keep: true });
  await s.session("two", { model: "claude-opus-4-1" });
  await s.session("three");
  // "one" kept its process for "three"; "two" started its own.
  assert.equal((await s.claude.pids()).length, 2);
});

Deno.test("a session that does not ask to keep lets its process go", async () => {
  await using s = await setUp();
  await s.session("one");
  await s.session("two");
  const pids = await s.claude.pids();
  assert.equal(pids.length, 2);
  await s.backend.release();
  assert.ok(pids.every(exited));
});

Deno.test("while a keeping session runs, warming for the same settings starts nothing", async () => {
  await using s = await setUp();
  const messages: AgentMessage[] = [];
  for await (
    const message of s.backend.session({
      ...s.wanted,
      keep: true,
      prompt: "one",
      onCompleteTask: () => Promise.resolve("Recorded."),
      onStop: () => Promise.resolve({ block: false }),
      signal: new AbortController().signal,
    })
  ) {
    // The loop warms the next session's process at the first message.
    if (messages.length === 0) s.backend.warm({ ...s.wanted });
    messages.push(message);
  }
  s.backend.warm({ ...s.wanted });
  await s.session("two");
  assert.equal((await s.claude.pids()).length, 1);
});
