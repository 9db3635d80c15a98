/**
 * Child of `first_warm_test.ts`: runs the CLI's `main` in a process of its
 * own (its run guard tags this process's environment, and stops what carries
 * the tag at its end: in the test process, that would be the other test files'
 * processes), with a backend that records every call, and prints what it saw.
 *
 *     deno run -A _first_warm_child.ts '<agent.json>' [ran-before]
 */

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
    // A session's own callback and whether to keep its process: not settings of the process.
    onWarmTaken: _onWarmTaken,
    keep: _keep,
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

async function runWith(
  agent: Record<string, unknown>,
  backend: RecordingBackend,
  options: { ranBefore: boolean },
) {
  await using repo = await tempRepo();
  // A repository finishline ran in before has its run history's folder.
  if (options.ranBefore) {
    await Deno.mkdir(join(repo.path, ".agent", ".finishline"), { recursive: true });
  }
  await Deno.mkdir(join(repo.path, ".agent", "warm"), { recursive: true });
  await Deno.writeTextFile(join(repo.path, ".agent", "warm", "agent.json"), JSON.stringify(agent));
  const errors: string[] = [];
  const code = await main(
    ["--agent", "warm", "--task", "Say done", "--quiet", "--cwd", repo.path],
    { backend, stdout: () => {}, stderr: (text) => errors.push(text) },
  );
  return { code, errors: errors.join("") };
}

const backend = new RecordingBackend();
const { code, errors } = await runWith(JSON.parse(Deno.args[0]), backend, {
  ranBefore: Deno.args[1] === "ran-before",
});
console.log(JSON.stringify({
  code,
  errors,
  calls: backend.calls,
  warmed: backend.warmed.map(processPart),
  sessions: backend.sessions.map(processPart),
}));
