import assert from "node:assert/strict";
import type { AgentBackend, SessionRequest } from "../../agents/backends/port.ts";
import {
  checkerContext,
  DEFAULT_ASK_SYSTEM,
  modelAdapter,
  tentativeOutputOf,
  toolResults,
} from "../../agents/checks/context.ts";
import { CompositeChecker } from "../../agents/checks/composite.ts";
import { RepoFilesystem } from "../../agents/checks/filesystem.ts";
import { incomplete, ok } from "../../agents/checks/checker_contract.ts";
import { verify } from "../../agents/checks/verifier.ts";
import type { CompleteTaskCall } from "../../agents/record/complete_task_tool.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import type { AgentMessage } from "../../agents/record/iteration.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { tempDir, tempRepo } from "../_helpers.ts";
import { contextOf, definitionOf, NOWHERE } from "./_helpers.ts";

const REPORT: CompleteTaskCall = {
  status: "success",
  original_request_summary: "Add a --verbose flag",
  summary: "Added --verbose and documented it",
};

/** A backend that records its requests and answers each with `reply(request)`. */
function answering(reply: (request: SessionRequest) => string) {
  const requests: SessionRequest[] = [];
  const backend: AgentBackend = {
    name: "stand-in",
    async *session(request) {
      requests.push(request);
      yield { type: "assistant", message: { content: [{ type: "text", text: reply(request) }] } };
      yield { type: "result", subtype: "success", total_cost_usd: 0.001, num_turns: 1 };
    },
  };
  return { backend, requests };
}

Deno.test("checkerContext gives the session, the tentative output, the filesystem, the adapter and the stop reason", async (t) => {
  const first = { ...emptySummary(1), assistantResponses: ["Started."] };
  const second = { ...emptySummary(2), assistantResponses: ["Reading.", "Finished."] };
  const messages: AgentMessage[] = [{ type: "system", subtype: "init", session_id: "s2" }];

  await t.step(
    "the session holds this iteration's summary and messages, then the earlier ones",
    () => {
      const context = checkerContext({
        current: { summary: second, messages },
        previous: [{ summary: first, messages: [] }],
        definition: definitionOf(),
        cwd: Deno.cwd(),
        agentDir: NOWHERE,
        stopReason: "end_turn",
      });
      assert.equal(context.session.summary, second);
      assert.equal(context.session.messages, messages);
      assert.deepEqual(context.session.previous.map((earlier) => earlier.summary), [first]);
      assert.equal(context.stopReason, "end_turn");
      // The fields older checkers read stay.
      assert.equal(context.summary, second);
      assert.deepEqual(context.previous, [first]);
      assert.equal(context.cwd, Deno.cwd());
    },
  );

  await t.step("the tentative output is the complete_task report, else the last text", () => {
    assert.equal(tentativeOutputOf(second), "Finished.");
    assert.equal(tentativeOutputOf(second, REPORT), REPORT);
    assert.equal(tentativeOutputOf({ ...second, completeTask: REPORT }), REPORT);
    assert.equal(tentativeOutputOf(emptySummary(3)), undefined);
    assert.equal(contextOf({ completeTask: REPORT }).tentativeOutput, REPORT);
  });

  await t.step(
    "the filesystem is the repository's root, the working directory outside git",
    async () => {
      await using repo = await tempRepo();
      await Deno.mkdir(`${repo.path}/docs`);
      const gitRepo = (await GitRepo.open(`${repo.path}/docs`))!;
      const inRepo = contextOf({
        cwd: `${repo.path}/docs`,
        git: { repo: gitRepo, baseline: null },
      });
      assert.ok(inRepo.filesystem instanceof RepoFilesystem);
      assert.equal(inRepo.filesystem.root, gitRepo.root);
      assert.equal(inRepo.filesystem.read("README.md"), "# test repo\n");
      await using plain = await tempDir();
      await Deno.writeTextFile(`${plain.path}/notes.txt`, "hi");
      assert.equal(contextOf({ cwd: plain.path }).filesystem?.read("notes.txt"), "hi");
    },
  );

  await t.step("no backend, no adapter", () => {
    assert.equal(contextOf().adapter, undefined);
    assert.ok(contextOf({ backend: answering(() => "yes").backend }).adapter);
  });
});

Deno.test("the adapter asks one tool-less, one-turn question on the run's backend", async (t) => {
  await t.step("with the agent's model and the default system prompt", async () => {
    const { backend, requests } = answering((request) => `You asked: ${request.prompt}`);
    const context = checkerContext({
      current: { summary: emptySummary(1), messages: [] },
      previous: [],
      definition: definitionOf({ behavior: { model: "claude-haiku-4-5" } }),
      cwd: Deno.cwd(),
      agentDir: NOWHERE,
      backend,
    });
    assert.equal(await context.adapter!.ask("Is it done?"), "You asked: Is it done?");
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0].tools, []);
    assert.equal(requests[0].maxTurns, 1);
    assert.equal(requests[0].model, "claude-haiku-4-5");
    assert.equal(requests[0].systemPromptAppend, DEFAULT_ASK_SYSTEM);
    assert.equal(requests[0].cwd, Deno.cwd());
  });

  await t.step("a question may set its own model and system prompt", async () => {
    const { backend, requests } = answering(() => "COMPLETE");
    const adapter = modelAdapter(backend, { cwd: "/tmp", model: "agent-model" });
    await adapter.ask("Done?", { model: "judge-model", system: "Answer COMPLETE or INCOMPLETE." });
    assert.equal(requests[0].model, "judge-model");
    assert.equal(requests[0].systemPromptAppend, "Answer COMPLETE or INCOMPLETE.");
  });

  await t.step("the run's interrupt stops a question", async () => {
    const controller = new AbortController();
    const backend: AgentBackend = {
      name: "slow",
      async *session(request) {
        await new Promise((resolve) => request.signal.addEventListener("abort", resolve));
        if (request.signal.aborted) throw new Error("the session was aborted");
        yield { type: "result", subtype: "success" };
      },
    };
    const adapter = modelAdapter(backend, { cwd: "/tmp", signal: controller.signal });
    const asked = adapter.ask("Done?");
    controller.abort();
    await assert.rejects(asked, /aborted/);
  });
});

Deno.test("toolResults pairs each tool call with its result", () => {
  const calls = toolResults([
    {
      type: "assistant",
      message: {
        content: [
          { type: "text", text: "Running the tests." },
          { type: "tool_use", id: "t1", name: "Bash", input: { command: "deno test" } },
          { type: "tool_use", id: "t2", name: "Read", input: { file_path: "missing.ts" } },
        ],
      },
    },
    {
      type: "user",
      message: {
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [{ type: "text", text: "ok | 3 passed" }, { type: "text", text: "done" }],
          },
          {
            type: "tool_result",
            tool_use_id: "t2",
            content: "File does not exist.",
            is_error: true,
          },
          { type: "tool_result", tool_use_id: "unknown", content: "ignored" },
        ],
      },
    },
    {
      type: "assistant",
      message: { content: [{ type: "tool_use", id: "t3", name: "Bash", input: {} }] },
    },
  ]);
  assert.deepEqual(calls, [
    {
      name: "Bash",
      input: { command: "deno test" },
      output: "ok | 3 passed\ndone",
      isError: false,
    },
    {
      name: "Read",
      input: { file_path: "missing.ts" },
      output: "File does not exist.",
      isError: true,
    },
    { name: "Bash", input: {}, output: "", isError: false },
  ]);
});

Deno.test("checkers without a name are labelled by their class, else by their place, never undefined", async () => {
  class FileExistsChecker {
    check() {
      return incomplete("Missing required files: output.txt");
    }
  }
  const composite = new CompositeChecker([{ check: () => ok("fine") }, new FileExistsChecker()]);
  assert.deepEqual(composite.names, ["checker 1", "FileExistsChecker"]);
  const record = await verify(composite, contextOf(), "handler");
  assert.equal(record.checker, "FileExistsChecker");
  assert.equal(record.feedback, "Missing required files: output.txt");
  const any = new CompositeChecker([{ check: () => incomplete("no") }], { allMustPass: false });
  assert.equal((await any.check(contextOf())).feedback, "[checker 1] no");
});
