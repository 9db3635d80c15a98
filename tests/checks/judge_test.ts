import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentBackend, AgentMessage, SessionRequest } from "../../agents/backends/port.ts";
import { JUDGE_MARKER, JudgeChecker, parseVerdict } from "../../agents/checks/judge.ts";
import type { TaskCompletionContext } from "../../agents/checks/checker_contract.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { git, tempRepo } from "../_helpers.ts";
import { contextOf, definitionOf } from "./_helpers.ts";

Deno.test("parseVerdict reads the judge's JSON verdict", async (t) => {
  await t.step("a bare object", () => {
    assert.deepEqual(parseVerdict('{"complete": true}'), { complete: true, missing: [] });
  });

  await t.step("a fenced object", () => {
    const text = '```json\n{"complete": false, "missing": ["tests", "docs"]}\n```';
    assert.deepEqual(parseVerdict(text), { complete: false, missing: ["tests", "docs"] });
  });

  await t.step("an object in prose", () => {
    const text =
      'I looked at the diff. {"complete": false, "missing": ["a changelog entry"]} Sorry.';
    assert.deepEqual(parseVerdict(text), { complete: false, missing: ["a changelog entry"] });
  });

  await t.step("missing items that are not strings are turned into strings", () => {
    assert.deepEqual(parseVerdict('{"complete": false, "missing": [3, true]}'), {
      complete: false,
      missing: ["3", "true"],
    });
  });

  await t.step("a missing field that is not a list is ignored", () => {
    assert.deepEqual(parseVerdict('{"complete": false, "missing": "tests"}'), {
      complete: false,
      missing: [],
    });
  });

  await t.step("an object without a boolean complete is no verdict", () => {
    assert.equal(parseVerdict('{"missing": ["tests"]}'), undefined);
    assert.equal(parseVerdict('{"complete": "yes"}'), undefined);
  });

  await t.step("garbage is no verdict", () => {
    assert.equal(parseVerdict("Looks good to me!"), undefined);
    assert.equal(parseVerdict(""), undefined);
    assert.equal(parseVerdict("{complete: true}"), undefined);
  });
});

/** Claude Agent SDK shaped messages of a one-turn session that replies `text`. */
function replyMessages(text: string): AgentMessage[] {
  return [
    {
      type: "assistant",
      session_id: "judge-1",
      parent_tool_use_id: null,
      message: { role: "assistant", content: [{ type: "text", text }] },
    },
    {
      type: "result",
      subtype: "success",
      session_id: "judge-1",
      is_error: false,
      num_turns: 1,
      total_cost_usd: 0.001,
      stop_reason: "end_turn",
      result: text,
      usage: { input_tokens: 100, output_tokens: 20 },
    },
  ];
}

/** A backend that records each request and replies with a script (or throws). */
class FakeBackend implements AgentBackend {
  readonly name = "fake";
  readonly requests: SessionRequest[] = [];
  #reply: string | Error;

  constructor(reply: string | Error) {
    this.#reply = reply;
  }

  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.requests.push(request);
    await Promise.resolve();
    if (this.#reply instanceof Error) throw this.#reply;
    yield* replyMessages(this.#reply);
  }
}

const CRITERIA = "The README documents every CLI flag";

function judgeContext(
  backend: AgentBackend | undefined,
  extra: Partial<TaskCompletionContext> = {},
) {
  return contextOf({
    backend,
    summary: {
      ...emptySummary(2),
      assistantResponses: ["I updated the README with the --verbose flag."],
      toolsUsed: ["Read", "Edit", "Edit"],
    },
    completeTask: {
      status: "success",
      original_request_summary: "Document the flags",
      summary: "Documented --verbose and --quiet in the README",
      files_modified: ["README.md"],
    },
    ...extra,
  });
}

Deno.test("judge checker asks a tool-less session for a verdict", async (t) => {
  await t.step("a complete verdict passes", async () => {
    const backend = new FakeBackend('{"complete": true}');
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.deepEqual(result, { complete: true, feedback: "The judge found every criterion met" });
  });

  await t.step("an incomplete verdict lists the missing items", async () => {
    const backend = new FakeBackend(
      'Not yet.\n```json\n{"complete": false, "missing": ["--quiet is undocumented", "no example"]}\n```',
    );
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.deepEqual(result, {
      complete: false,
      feedback:
        "The judge found the criteria not met. Missing:\n- --quiet is undocumented\n- no example",
    });
  });

  await t.step("an incomplete verdict without items says none were given", async () => {
    const backend = new FakeBackend('{"complete": false}');
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.equal(
      result.feedback,
      "The judge found the criteria not met. Missing:\n- (no details given)",
    );
  });

  await t.step("a reply that is no verdict is incomplete and could not be read", async () => {
    const backend = new FakeBackend("Honestly it looks fine to me.");
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.equal(result.complete, false);
    assert.match(result.feedback!, /^The judge's verdict could not be read/);
    assert.ok(result.feedback!.endsWith(": Honestly it looks fine to me."), result.feedback);
  });

  await t.step("an empty reply is incomplete and says it was empty", async () => {
    const backend = new FakeBackend("");
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.match(result.feedback!, /could not be read.*\(empty reply\)$/);
  });

  await t.step("a backend that throws is incomplete with the error", async () => {
    const backend = new FakeBackend(new Error("Claude Code exited with code 1\ndetails"));
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend));
    assert.deepEqual(result, {
      complete: false,
      feedback: "The judge could not give a verdict: Claude Code exited with code 1",
    });
  });

  await t.step("without a backend it is incomplete", async () => {
    const result = await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(undefined));
    assert.deepEqual(result, {
      complete: false,
      feedback: "No model backend is available for the judge",
    });
  });

  await t.step("the name defaults to judge and can be set", () => {
    assert.equal(new JudgeChecker({ criteria: CRITERIA }).name, "judge");
    assert.equal(new JudgeChecker({ criteria: CRITERIA, name: "review" }).name, "review");
  });
});

Deno.test("judge checker sends a one-turn tool-less request with the evidence", async (t) => {
  await t.step(
    "no tools, one turn, the marker, the criteria and the complete_task summary",
    async () => {
      const backend = new FakeBackend('{"complete": true}');
      const context = judgeContext(backend, { cwd: "/work/project" });
      await new JudgeChecker({ criteria: CRITERIA }).check(context);
      assert.equal(backend.requests.length, 1);
      const [request] = backend.requests;
      assert.deepEqual(request.tools, []);
      assert.deepEqual(request.allowedTools, []);
      assert.equal(request.maxTurns, 1);
      assert.equal(request.cwd, "/work/project");
      assert.deepEqual(request.settingSources, []);
      assert.equal(request.onCompleteTask, undefined, "the judge gets no complete_task tool");
      assert.equal(request.onStop, undefined);
      assert.ok(request.prompt.startsWith(`${JUDGE_MARKER}:`), request.prompt);
      assert.ok(request.prompt.includes(`## Criteria\n${CRITERIA}\n`), request.prompt);
      assert.ok(
        request.prompt.includes(
          "- The agent reported (complete_task, success): Documented --verbose and --quiet in the README",
        ),
        request.prompt,
      );
      assert.ok(request.prompt.includes("- Files it modified: README.md"));
      assert.ok(request.prompt.includes("- Iteration 2; tools used: Read, Edit×2"));
      assert.ok(request.prompt.includes("I updated the README with the --verbose flag."));
      assert.ok(request.systemPromptAppend.includes("no tools"));
    },
  );

  await t.step("the model is the checker's, else the definition's", async () => {
    const definition = definitionOf({ behavior: { model: "claude-sonnet-4-5" } });
    const backend = new FakeBackend('{"complete": true}');
    await new JudgeChecker({ criteria: CRITERIA }).check(judgeContext(backend, { definition }));
    await new JudgeChecker({ criteria: CRITERIA, model: "claude-haiku-4-5" }).check(
      judgeContext(backend, { definition }),
    );
    assert.deepEqual(backend.requests.map((request) => request.model), [
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
    ]);
  });

  await t.step("the run's abort signal reaches the judge session", async () => {
    const backend = new FakeBackend('{"complete": true}');
    const controller = new AbortController();
    await new JudgeChecker({ criteria: CRITERIA }).check(
      judgeContext(backend, { signal: controller.signal }),
    );
    const { signal } = backend.requests[0];
    assert.equal(signal.aborted, false);
    controller.abort();
    assert.equal(signal.aborted, true);
  });

  await t.step("git evidence is part of the prompt", async () => {
    await using repo = await tempRepo();
    const gitRepo = (await GitRepo.open(repo.path))!;
    const baseline = await gitRepo.head();
    await Deno.writeTextFile(join(repo.path, "flags.md"), "--verbose\n");
    await git(repo.path, "add", "flags.md");
    await git(repo.path, "commit", "-q", "-m", "docs: flags");
    await Deno.writeTextFile(join(repo.path, "draft.md"), "wip\n");
    const backend = new FakeBackend('{"complete": true}');
    await new JudgeChecker({ criteria: CRITERIA }).check(
      judgeContext(backend, { cwd: repo.path, git: { repo: gitRepo, baseline } }),
    );
    const { prompt } = backend.requests[0];
    assert.ok(prompt.includes("- New commits since the run started: 1"), prompt);
    assert.ok(prompt.includes("- Uncommitted files: draft.md"), prompt);
  });
});
