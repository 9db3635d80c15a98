/**
 * The CLI starts the first session's agent process before it opens the
 * workspace; the loop then asks for the same process, and the first session
 * has the settings it was started with (so the backend hands it over instead
 * of starting another).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type {
  AgentBackend,
  AgentMessage,
  ProcessSettings,
  SessionRequest,
} from "../../../agents/backends/port.ts";
import { main } from "../../../agents/iterator/main.ts";
import { tempRepo } from "../../_helpers.ts";

/** Records every call; each session commits nothing and says it is done. */
class RecordingBackend implements AgentBackend {
  readonly name = "recording";
  readonly calls: string[] = [];
  readonly warmed: ProcessSettings[] = [];
  readonly sessions: SessionRequest[] = [];
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.calls.push("session");
    this.sessions.push(request);
    yield { type: "system", subtype: "init", session_id: `s${this.sessions.length}` };
    await Promise.resolve();
    yield {
      type: "assistant",
      session_id: `s${this.sessions.length}`,
      message: { content: [{ type: "text", text: "Done." }] },
    };
    yield {
      type: "result",
      subtype: "success",
      session_id: `s${this.sessions.length}`,
      total_cost_usd: 0,
      num_turns: 1,
      result: "Done.",
    };
  }
  warm(settings: ProcessSettings): void {
    this.calls.push("warm");
    this.warmed.push(settings);
  }
  release(): Promise<void> {
    this.calls.push("release");
    return Promise.resolve();
  }
}

/**
 * What a parked process is started with: the settings without the per-session
 * parts (a session's callbacks become `completeTask` and `stopHook`, as the
 * Claude Code backend reads them).
 */
function processPart(settings: ProcessSettings | SessionRequest) {
  const {
    cwd: _cwd,
    systemPromptAppend: _append,
    prompt: _prompt,
    onCompleteTask,
    onFinish,
    onStop,
    signal: _signal,
    resume: _resume,
    // A session's own callback, not a setting of its process.
    onWarmTaken: _onWarmTaken,
    completeTask,
    finish,
    stopHook,
    ...process
  } = settings as ProcessSettings & Partial<SessionRequest>;
  return {
    ...process,
    completeTask: completeTask ?? onCompleteTask !== undefined,
    finish: finish ?? (onCompleteTask !== undefined && onFinish !== undefined),
    stopHook: stopHook ?? onStop !== undefined,
  };
}

async function runWith(agent: Record<string, unknown>, backend: RecordingBackend) {
  await using repo = await tempRepo();
  await Deno.mkdir(join(repo.path, ".agent", "warm"), { recursive: true });
  await Deno.writeTextFile(join(repo.path, ".agent", "warm", "agent.json"), JSON.stringify(agent));
  const errors: string[] = [];
  const code = await main(
    ["--agent", "warm", "--task", "Say done", "--quiet", "--cwd", repo.path],
    { backend, stdout: () => {}, stderr: (text) => errors.push(text) },
  );
  return { code, errors: errors.join("") };
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
  const backend = new RecordingBackend();
  const { code, errors } = await runWith(AGENT, backend);
  assert.equal(code, 0, errors);
  // The CLI's warm, the loop's for iteration 1 (served by the same process), iteration 2's.
  assert.deepEqual(backend.calls.slice(0, 3), ["warm", "warm", "session"]);
  assert.deepEqual(backend.warmed[0], backend.warmed[1]);
  assert.deepEqual(processPart(backend.sessions[0]), processPart(backend.warmed[0]));
});

Deno.test("prewarm: false warms nothing before the loop", async () => {
  const backend = new RecordingBackend();
  const { code, errors } = await runWith(
    { ...AGENT, behavior: { ...AGENT.behavior, prewarm: false } },
    backend,
  );
  assert.equal(code, 0, errors);
  assert.equal(backend.warmed.length, 0);
});
