/**
 * The order of the runner's calls to a completion handler, and one
 * `isComplete` per iteration: the loop against a stand-in backend whose
 * sessions really write files and commit in a temp git repository.
 */

import assert from "node:assert/strict";
import type { AgentBackend, AgentMessage, SessionRequest } from "../../agents/backends/port.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { RESCUE_PROMPT, runIterations } from "../../agents/loop/runner.ts";
import { git, tempRepo } from "../_helpers.ts";
import { CommandChecker } from "../../agents/checks/command.ts";
import { CompositeChecker } from "../../agents/checks/composite.ts";

/** Each session writes `work-<n>.txt` and leaves it uncommitted; the rescue commits it. */
class WritingBackend implements AgentBackend {
  readonly name = "writing";
  #sessions = 0;

  constructor(readonly repo: string, readonly claim: boolean) {}

  session(request: SessionRequest): AsyncIterable<AgentMessage> {
    return request.prompt === RESCUE_PROMPT
      ? this.#commit(request)
      : this.#work(request, ++this.#sessions);
  }

  async *#work(request: SessionRequest, n: number): AsyncIterable<AgentMessage> {
    const id = `s${n}`;
    await Deno.writeTextFile(`${this.repo}/work-${n}.txt`, `work ${n}\n`);
    const content: Array<Record<string, unknown>> = [{ type: "text", text: `Wrote work-${n}.txt` }];
    if (this.claim) {
      const input = { status: "success", original_request_summary: "Work", summary: `work ${n}` };
      await request.onCompleteTask?.(input as never);
      content.push({ type: "tool_use", id: `t${n}`, name: COMPLETE_TASK_TOOL, input });
    }
    yield { type: "assistant", session_id: id, parent_tool_use_id: null, message: { content } };
    yield* result(id);
  }

  async *#commit(request: SessionRequest): AsyncIterable<AgentMessage> {
    await git(this.repo, "add", "-A");
    await git(this.repo, "commit", "-qm", "feat: the work");
    yield {
      type: "assistant",
      session_id: request.resume,
      parent_tool_use_id: null,
      message: { content: [{ type: "text", text: "Committed." }] },
    };
    yield* result(request.resume!);
  }
}

function* result(id: string): Iterable<AgentMessage> {
  yield {
    type: "result",
    subtype: "success",
    session_id: id,
    total_cost_usd: 0.01,
    num_turns: 1,
    stop_reason: "end_turn",
  };
}

/** Records every call; complete from iteration 2 on. */
class RecordingHandler implements CompletionHandler {
  readonly type = "custom" as const;
  readonly calls: string[] = [];
  buildInitialPrompt(): Promise<string> {
    this.calls.push("buildInitialPrompt");
    return Promise.resolve("Do the work.");
  }
  buildContinuationPrompt(iteration: number, summaries: IterationSummary[]): Promise<string> {
    this.calls.push(`buildContinuationPrompt(${iteration}, ${summaries.length} summaries)`);
    return Promise.resolve("Keep going.");
  }
  buildCompletionCriteria() {
    this.calls.push("buildCompletionCriteria");
    return { short: "two iterations", detailed: "Work twice." };
  }
  isComplete(summary: IterationSummary): Promise<boolean> {
    this.calls.push(`isComplete(${summary.iteration}, ${summary.git?.newCommits} commits)`);
    return Promise.resolve(summary.iteration >= 2);
  }
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    this.calls.push(`getCompletionDescription(${summary.iteration})`);
    return Promise.resolve("Worked twice");
  }
  onRunStart(): Promise<void> {
    this.calls.push("onRunStart");
    return Promise.resolve();
  }
  onIterationEnd(summary: IterationSummary, verdict: string): Promise<void> {
    this.calls.push(`onIterationEnd(${summary.iteration}, ${verdict})`);
    return Promise.resolve();
  }
  drainFaults(): string[] {
    this.calls.push("drainFaults");
    return [];
  }
}

async function runWith(claim: boolean) {
  const repo = await tempRepo();
  const handler = new RecordingHandler();
  const definition = parseDefinition(
    JSON.stringify({
      name: "recorder",
      probe: { enabled: false },
      behavior: {
        completionType: "custom",
        completionConfig: { handlerPath: "handler.ts", maxIterations: 4 },
        // The handler's call order is under test, not the stop hook's extra turns.
        requireCompleteTask: false,
        prewarm: false,
      },
    }),
    { displayPath: "recorder/agent.json" },
  );
  const result = await runIterations({
    definition,
    handler,
    backend: new WritingBackend(repo.path, claim),
    systemPrompt: "system",
    args: {},
    cwd: repo.path,
    maxIterations: 4,
    git: await GitRepo.open(repo.path),
    // A configured check is the evidence: without one the run would end unverified.
    verifier: new CompositeChecker([
      new CommandChecker({ command: "git log -1 --format=%s", name: "a commit" }),
    ]),
  });
  return { repo, handler, result };
}

Deno.test("the runner calls the handler in order, isComplete once per iteration", async (t) => {
  await t.step(
    "the agent claims done: the rescue commits first, then isComplete sees the commit",
    async () => {
      const { repo, handler, result } = await runWith(true);
      await using _repo = repo;
      assert.equal(result.status, "completed");
      assert.deepEqual(handler.calls, [
        "onRunStart",
        "buildCompletionCriteria",
        "buildInitialPrompt",
        "isComplete(1, 1 commits)",
        "drainFaults",
        "onIterationEnd(1, continue)",
        "buildContinuationPrompt(2, 1 summaries)",
        "isComplete(2, 1 commits)",
        "drainFaults",
        "onIterationEnd(2, complete)",
        "getCompletionDescription(2)",
      ]);
      assert.equal(await git(repo.path, "status", "--porcelain"), "");
      assert.deepEqual(result.summaries.map((summary) => summary.rescue?.by), ["agent", "agent"]);
    },
  );

  await t.step(
    "only the handler says done: it is asked once, then the rescue commits the work",
    async () => {
      const { repo, handler, result } = await runWith(false);
      await using _repo = repo;
      assert.equal(result.status, "completed");
      assert.deepEqual(handler.calls.filter((call) => call.startsWith("isComplete")), [
        "isComplete(1, 0 commits)",
        "isComplete(2, 0 commits)",
      ]);
      // Iteration 1 was not done: its file waited, uncommitted, and iteration 2's rescue took both.
      assert.deepEqual(result.summaries.map((summary) => summary.rescue?.by), [undefined, "agent"]);
      assert.equal(result.summaries[1].git?.newCommits, 1);
      assert.equal(await git(repo.path, "status", "--porcelain"), "");
    },
  );
});
