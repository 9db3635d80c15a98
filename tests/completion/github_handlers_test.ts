import assert from "node:assert/strict";
import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { createCompletionHandler } from "../../agents/completion/factory.ts";
import { COMMENT_MARKER, IssueCompletionHandler } from "../../agents/completion/issue.ts";
import {
  boardPhase,
  lastReview,
  ProjectCompletionHandler,
} from "../../agents/completion/project.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { SummaryBuilder } from "../../agents/loop/summary_builder.ts";
import { type FakeGhState, FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { tempDir } from "../_helpers.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { UsageError } from "../../agents/support/errors.ts";
import {
  mockPromptResolver,
  projectItemsReply,
  sampleIssue,
  sampleProject,
  sampleProjectItems,
  type StandInGh,
  standInGh,
} from "../../agents/testing/mod.ts";
import { assertSays, definitionOf, usageErrorOf } from "./_helpers.ts";

const NOWHERE = new URL("file:///nonexistent/finishline-agent/");
const FENCE = "```";

/** The agent closes the issue itself (`github.closeIssue: "agent"`), as before runner closing. */
function issueDefinition(github: Record<string, unknown> = {}): AgentDefinition {
  return definitionOf({
    name: "worker",
    behavior: { completionType: "issue", completionConfig: { maxIterations: 5 } },
    github: { closeIssue: "agent", ...github },
  });
}

function projectDefinition(): AgentDefinition {
  return definitionOf({
    name: "worker",
    behavior: { completionType: "project", completionConfig: { maxIterations: 8 } },
  });
}

/** A handler built by the factory against a fresh fake gh; disposes both. */
async function handlerOf(
  definition: AgentDefinition,
  args: Record<string, unknown>,
  state: Partial<FakeGhState>,
) {
  const fake = await FakeGitHub.create(state);
  const dir = await tempDir("finishline-gh-handler-");
  try {
    const handler = await createCompletionHandler(definition, args, {
      agentDir: NOWHERE,
      cwd: dir.path,
      github: { gh: `${fake.binDir}/gh`, env: fake.env(), backoffMs: 1 },
    });
    return {
      fake,
      handler,
      async [Symbol.asyncDispose]() {
        await fake[Symbol.asyncDispose]();
        await dir[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await fake[Symbol.asyncDispose]();
    await dir[Symbol.asyncDispose]();
    throw error;
  }
}

/** The summary of an iteration whose agent said `text`, as the runner builds it. */
function said(definition: AgentDefinition, iteration: number, text: string): IterationSummary {
  const builder = new SummaryBuilder(iteration, definition.actions);
  builder.add({
    type: "assistant",
    session_id: `s${iteration}`,
    parent_tool_use_id: null,
    message: { role: "assistant", content: [{ type: "text", text }] },
  });
  builder.add({
    type: "result",
    subtype: "success",
    session_id: `s${iteration}`,
    num_turns: 3,
    total_cost_usd: 0.0125,
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  });
  return builder.finish(1000);
}

function review(result: string, notes: string): string {
  return `Reviewed the project.\n${FENCE}action\n${
    JSON.stringify({ type: "review", result, notes })
  }\n${FENCE}`;
}

// --- issue ----------------------------------------------------------------

const ISSUE_STATE: Partial<FakeGhState> = {
  repo: "octo/demo",
  labels: ["enhancement", "good first issue"],
  issues: [{
    number: 42,
    title: "Add a greeting",
    body: "Create greet.txt saying hello.\nKeep {uv-x} and {uv-agent_name} as they are.",
    labels: ["enhancement", "good first issue"],
    comments: [{ author: "alice", body: "Old comment from before the run" }],
  }],
};

async function comment(fake: FakeGitHub, author: string, body: string): Promise<void> {
  await fake.update((state) => {
    const issue = state.issues.find((candidate) => candidate.number === 42)!;
    issue.comments = [...(issue.comments ?? []), { author, body }];
  });
}

Deno.test("issue handler puts the issue into the prompts literally", async (t) => {
  await using env = await handlerOf(issueDefinition(), { issue: 42 }, ISSUE_STATE);
  const { handler } = env;

  await t.step("the factory builds an issue handler holding the issue", () => {
    assert.ok(handler instanceof IssueCompletionHandler);
    assert.equal(handler.issue?.title, "Add a greeting");
    assert.deepEqual(handler.buildCompletionCriteria().short, "close issue #42");
  });

  await t.step("the initial prompt holds title, url, labels and the body as written", async () => {
    const prompt = await handler.buildInitialPrompt({ issue: 42 });
    assert.ok(prompt.includes("# GitHub issue #42: Add a greeting"), prompt);
    assert.ok(prompt.includes("https://github.com/octo/demo/issues/42"));
    assert.ok(prompt.includes("(labels: enhancement, good first issue)"));
    assert.ok(
      prompt.includes(
        "Create greet.txt saying hello.\nKeep {uv-x} and {uv-agent_name} as they are.",
      ),
      "the body, placeholders and all",
    );
    assertSays(prompt, "at most 5 iterations");
  });

  await t.step("an issue without body or labels says so", async () => {
    await using bare = await handlerOf(issueDefinition(), { issue: 3 }, {
      issues: [{ number: 3, title: "Bare", body: "  " }],
    });
    const prompt = await bare.handler.buildInitialPrompt({ issue: 3 });
    assert.ok(prompt.includes("(the issue has no description)"), prompt);
    assert.ok(prompt.includes("(labels: (none))"));
  });
});

Deno.test("issue handler completes once the issue is closed", async (t) => {
  await using env = await handlerOf(issueDefinition(), { issue: 42 }, ISSUE_STATE);
  const { handler, fake } = env;
  const definition = issueDefinition();

  await t.step("while the issue is OPEN it is not complete", async () => {
    assert.equal(await handler.isComplete(said(definition, 1, "Working on it")), false);
  });

  await t.step("a closing remark in the agent's text does not complete it", async () => {
    const summary = said(definition, 2, "I closed the issue. Issue #42 is CLOSED.");
    assert.equal(await handler.isComplete(summary), false);
  });

  await t.step("once the fake issue is CLOSED it is complete", async () => {
    await fake.update((state) => state.issues[0].state = "CLOSED");
    assert.equal(await handler.isComplete(said(definition, 3, "Done")), true);
    assert.equal(
      await handler.getCompletionDescription(said(definition, 3, "Done")),
      "Issue #42 closed after iteration 3",
    );
  });
});

Deno.test("issue handler feeds new human comments into the next continuation prompt once", async (t) => {
  await using env = await handlerOf(
    issueDefinition({ comment: true }),
    { issue: 42 },
    ISSUE_STATE,
  );
  const { handler, fake } = env;
  const definition = issueDefinition({ comment: true });
  const summaries = [said(definition, 1, "Wrote greet.txt")];

  await t.step("comments from before the run are not new", async () => {
    const prompt = await handler.buildContinuationPrompt(2, summaries);
    assert.ok(prompt.includes("(no new comments)"), prompt);
    assert.ok(!prompt.includes("Old comment from before the run"));
  });

  await t.step("a new comment appears in the next prompt, literally", async () => {
    await comment(fake, "bob", "Please add a newline at the end. {uv-task} stays.");
    const prompt = await handler.buildContinuationPrompt(3, summaries);
    assert.ok(
      prompt.includes(
        "**@bob** (2026-01-01T00:00:00Z):\nPlease add a newline at the end. {uv-task} stays.",
      ),
      prompt,
    );
  });

  await t.step("and not in the one after it", async () => {
    const prompt = await handler.buildContinuationPrompt(4, summaries);
    assert.ok(!prompt.includes("Please add a newline"), prompt);
    assert.ok(prompt.includes("(no new comments)"));
  });

  await t.step("finishline's own marker comments are never fed back", async () => {
    await handler.onIterationEnd!(said(definition, 4, "Added the newline."), "continue");
    await comment(fake, "carol", "Looks good now");
    const prompt = await handler.buildContinuationPrompt(5, summaries);
    assert.ok(prompt.includes("**@carol**"), prompt);
    assert.ok(!prompt.includes(COMMENT_MARKER));
    assert.ok(!prompt.includes("**finishline** iteration"));
    assert.ok(!prompt.includes("finishline-bot"));
  });

  await t.step("comments that cannot be read are said to be unreadable", async () => {
    await fake.update((state) => state.failures = [{ match: "issue view", times: 4 }]);
    const prompt = await handler.buildContinuationPrompt(6, summaries);
    assert.ok(prompt.includes("(the comments could not be read this time)"), prompt);
  });
});

Deno.test("issue handler manages the github.labels of the definition", async (t) => {
  const labels = { inProgress: "agent:working", blocked: "agent:blocked" };

  await t.step("onRunStart creates and adds the in-progress label", async () => {
    await using env = await handlerOf(issueDefinition({ labels }), { issue: 42 }, ISSUE_STATE);
    await env.handler.onRunStart!();
    const state = await env.fake.state();
    assert.ok(state.labels.includes("agent:working"));
    assert.deepEqual(state.issues[0].labels, ["enhancement", "good first issue", "agent:working"]);
  });

  await t.step("onRunEnd completed removes it and adds no blocked label", async () => {
    await using env = await handlerOf(issueDefinition({ labels }), { issue: 42 }, ISSUE_STATE);
    await env.handler.onRunStart!();
    await env.handler.onRunEnd!({ status: "completed", reason: "Issue #42 closed" });
    const state = await env.fake.state();
    assert.deepEqual(state.issues[0].labels, ["enhancement", "good first issue"]);
    assert.ok(!state.labels.includes("agent:blocked"), "the blocked label is not even created");
  });

  await t.step("onRunEnd blocked removes it and adds the blocked label", async () => {
    await using env = await handlerOf(issueDefinition({ labels }), { issue: 42 }, ISSUE_STATE);
    await env.handler.onRunStart!();
    await env.handler.onRunEnd!({ status: "blocked", reason: "needs an API key" });
    const state = await env.fake.state();
    assert.deepEqual(state.issues[0].labels, ["enhancement", "good first issue", "agent:blocked"]);
  });

  await t.step("other end states do not add the blocked label", async () => {
    await using env = await handlerOf(issueDefinition({ labels }), { issue: 42 }, ISSUE_STATE);
    await env.handler.onRunEnd!({ status: "max_iterations", reason: "cap reached" });
    await env.handler.onRunEnd!({ status: "error", reason: "boom" });
    assert.ok(!(await env.fake.state()).issues[0].labels?.includes("agent:blocked"));
  });

  await t.step("without labels in the definition no label call is made", async () => {
    await using env = await handlerOf(issueDefinition(), { issue: 42 }, ISSUE_STATE);
    const before = (await env.fake.calls()).length;
    await env.handler.onRunStart!();
    await env.handler.onRunEnd!({ status: "blocked", reason: "stuck" });
    assert.equal((await env.fake.calls()).length, before);
    assert.deepEqual((await env.fake.state()).issues[0].labels, [
      "enhancement",
      "good first issue",
    ]);
  });
});

Deno.test("issue handler posts a progress comment only when github.comment is true", async (t) => {
  await t.step(
    "with comment true, a marked comment with the verdict and last message",
    async () => {
      const definition = issueDefinition({ comment: true });
      await using env = await handlerOf(definition, { issue: 42 }, ISSUE_STATE);
      await env.handler.onIterationEnd!(
        said(definition, 2, "Wrote greet.txt and committed."),
        "continue",
      );
      const posted = (await env.fake.state()).issues[0].comments!.at(-1)!;
      assert.equal(posted.author, "finishline-bot");
      assert.ok(
        posted.body.startsWith(`${COMMENT_MARKER}\n**finishline** iteration 2/5: continue`),
        posted.body,
      );
      assert.ok(posted.body.includes("Tools: 0; turns: 3; cost: $0.0125"));
      assert.ok(posted.body.includes("> Wrote greet.txt and committed."));
    },
  );

  await t.step("with comment false (the default), nothing is posted", async () => {
    const definition = issueDefinition();
    await using env = await handlerOf(definition, { issue: 42 }, ISSUE_STATE);
    await env.handler.onIterationEnd!(said(definition, 1, "Working"), "continue");
    assert.equal((await env.fake.state()).issues[0].comments!.length, 1);
    assert.ok(!(await env.fake.calls()).some((call) => call.argv[1] === "comment"));
  });
});

Deno.test("issue handler drainFaults returns gh faults once", async (t) => {
  await using env = await handlerOf(issueDefinition(), { issue: 42 }, ISSUE_STATE);
  const { handler, fake } = env;
  const definition = issueDefinition();

  await t.step("no faults after a clean start", () => {
    assert.deepEqual(handler.drainFaults!(), []);
  });

  await t.step("a retried call is reported, then cleared", async () => {
    await fake.update((state) => state.failures = [{ match: "issue view", times: 1 }]);
    assert.equal(await handler.isComplete(said(definition, 1, "Working")), false);
    assert.deepEqual(handler.drainFaults!(), [
      "gh issue view 42: HTTP 502: Bad Gateway (https://api.github.com/graphql) (attempt 1, retrying)",
    ]);
    assert.deepEqual(handler.drainFaults!(), []);
  });

  await t.step("a call that keeps failing is not complete and says it gave up", async () => {
    await fake.update((state) => {
      state.issues[0].state = "CLOSED";
      state.failures = [{ match: "issue view", times: 10 }];
    });
    assert.equal(await handler.isComplete(said(definition, 2, "Closed it")), false);
    const faults = handler.drainFaults!();
    assert.equal(faults.length, 4);
    assert.match(faults[3], /\(attempt 4, giving up\)$/);
  });
});

Deno.test("the factory checks the issue before the run", async (t) => {
  await t.step("a missing --issue is a UsageError", async () => {
    const message = await usageErrorOf(() => handlerOf(issueDefinition(), {}, ISSUE_STATE));
    assert.match(message, /pass --issue N/);
  });

  await t.step("an issue that does not exist is a UsageError naming --issue", async () => {
    const message = await usageErrorOf(() =>
      handlerOf(issueDefinition(), { issue: 9 }, ISSUE_STATE)
    );
    assert.match(message, /^Cannot find issue #9 \(flag "--issue"\)/);
  });

  await t.step("a gh that is not logged in is a UsageError", async () => {
    const message = await usageErrorOf(() =>
      handlerOf(issueDefinition(), { issue: 42 }, { ...ISSUE_STATE, authenticated: false })
    );
    assert.match(message, /^The GitHub CLI is not logged in/);
  });
});

// --- project --------------------------------------------------------------

Deno.test("boardPhase derives the phase from the items", async (t) => {
  await t.step("nothing started is preparation", () => {
    assert.equal(
      boardPhase([
        { status: "Todo", done: false },
        { status: "Backlog", done: false },
        { status: " ready ", done: false },
        { done: false },
      ]),
      "preparation",
    );
  });

  await t.step("anything started or done, but not everything done, is processing", () => {
    assert.equal(
      boardPhase([{ status: "In Progress", done: false }, { status: "Todo", done: false }]),
      "processing",
    );
    assert.equal(
      boardPhase([{ status: "Done", done: true }, { status: "Todo", done: false }]),
      "processing",
    );
  });

  await t.step("everything done is review", () => {
    assert.equal(
      boardPhase([{ status: "Done", done: true }, { status: "In Progress", done: true }]),
      "review",
    );
  });
});

Deno.test("lastReview reads the last valid review action", async (t) => {
  await t.step("the last valid review wins", () => {
    assert.deepEqual(
      lastReview([
        { type: "review", result: "fail", notes: "first" },
        { type: "note", text: "unrelated" },
        { type: "review", result: "pass", notes: "second" },
        { type: "review", result: "maybe", notes: "invalid" },
      ]),
      { result: "pass", notes: "second" },
    );
  });

  await t.step("notes that are not text are empty", () => {
    assert.deepEqual(lastReview([{ type: "review", result: "fail", notes: 3 }]), {
      result: "fail",
      notes: "",
    });
  });

  await t.step("no review action is undefined", () => {
    assert.equal(lastReview([]), undefined);
    assert.equal(lastReview([{ type: "status", result: "pass" }]), undefined);
  });
});

const PROJECT_STATE: Partial<FakeGhState> = {
  repo: "octo/demo",
  issues: [
    { number: 1, title: "Add a greeting" },
    { number: 2, title: "Add a farewell" },
  ],
  projects: [{
    number: 1,
    owner: "octo",
    title: "Roadmap",
    items: [
      { id: "PVTI_1", title: "stale", issue: 1, status: "Todo" },
      { id: "PVTI_2", title: "stale", issue: 2, status: "Todo" },
    ],
  }],
};

async function setStatus(fake: FakeGitHub, statuses: Record<string, string>): Promise<void> {
  await fake.update((state) => {
    for (const item of state.projects[0].items) {
      if (statuses[item.id] !== undefined) item.status = statuses[item.id];
    }
  });
}

Deno.test("project handler moves through preparation, processing, review and complete", async (t) => {
  const definition = projectDefinition();
  await using env = await handlerOf(definition, { project: 1, owner: "octo" }, PROJECT_STATE);
  const { fake } = env;
  const handler = env.handler as ProjectCompletionHandler;
  const summaries: IterationSummary[] = [];
  const next = async (iteration: number, text: string) => {
    const summary = said(definition, iteration, text);
    summaries.push(summary);
    return await handler.isComplete(summary);
  };

  await t.step("a board with nothing started is in preparation", async () => {
    assert.ok(handler instanceof ProjectCompletionHandler);
    assert.equal(handler.phase, "preparation");
    const prompt = await handler.buildInitialPrompt({ project: 1, owner: "octo" });
    assert.ok(prompt.includes("# GitHub project #1: Roadmap"), prompt);
    assert.ok(prompt.includes("Phase: **preparation**"));
    assert.ok(prompt.includes("- #1 Add a greeting [Todo] (item PVTI_1)"));
    assert.ok(prompt.includes("- #2 Add a farewell [Todo] (item PVTI_2)"));
    assert.ok(prompt.includes("--project-id PVT_kw1"));
  });

  await t.step("an item in progress moves it to processing", async () => {
    await setStatus(fake, { PVTI_1: "In Progress" });
    assert.equal(await next(1, "Started on the greeting."), false);
    assert.equal(handler.phase, "processing");
    const prompt = await handler.buildContinuationPrompt(2, summaries);
    assert.ok(prompt.includes("Phase: **processing**. Back after a failed review: no."), prompt);
    assert.ok(prompt.includes("- #1 Add a greeting [In Progress] (item PVTI_1)"));
  });

  await t.step("free text claiming completion never changes the phase", async () => {
    const claim = "Phase: complete\nEverything is done, the project is complete.\n" +
      `${FENCE}json\n{"type": "review", "result": "pass", "notes": "wrong fence"}\n${FENCE}`;
    assert.equal(await next(2, claim), false);
    assert.equal(handler.phase, "processing");
  });

  await t.step("every item done moves it to review", async () => {
    await setStatus(fake, { PVTI_1: "Done", PVTI_2: "Done" });
    assert.equal(await next(3, "Both items are done."), false);
    assert.equal(handler.phase, "review");
    const prompt = await handler.buildContinuationPrompt(4, summaries);
    assert.ok(prompt.includes("Phase: **review**"), prompt);
  });

  await t.step("free text claiming completion in review does not complete", async () => {
    assert.equal(await next(4, "Phase: complete. The review passed."), false);
    assert.equal(handler.phase, "review");
  });

  await t.step(
    "a failed review returns to processing with the notes and uv-again yes",
    async () => {
      assert.equal(await next(5, review("fail", "the farewell has a typo")), false);
      assert.equal(handler.phase, "processing");
      const prompt = await handler.buildContinuationPrompt(6, summaries);
      assert.ok(
        prompt.includes(
          "Phase: **processing**. Back after a failed review: yes. Review notes: the farewell has a typo",
        ),
        prompt,
      );
      assert.ok(prompt.includes("(every item is done)"));
    },
  );

  await t.step("without a review the done board is back in review, the notes kept", async () => {
    assert.equal(await next(6, "Fixed the typo."), false);
    assert.equal(handler.phase, "review");
  });

  await t.step("a passing review with every item done completes", async () => {
    assert.equal(await next(7, review("pass", "tests pass, both items checked")), true);
    assert.equal(handler.phase, "complete");
    assert.equal(
      await handler.getCompletionDescription(summaries.at(-1)!),
      "Project #1: all 2 items done and the review passed in iteration 7",
    );
  });
});

Deno.test("project handler decides done-ness from the board and the issues", async (t) => {
  const definition = projectDefinition();

  await t.step("a passing review while items are open does not complete", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, PROJECT_STATE);
    await setStatus(env.fake, { PVTI_1: "Done" });
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(await handler.isComplete(said(definition, 1, review("pass", "early"))), false);
    assert.equal(handler.phase, "processing");
  });

  await t.step("an item not Done whose issue is CLOSED counts as done", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, PROJECT_STATE);
    await env.fake.update((state) => {
      state.issues[0].state = "CLOSED";
      state.issues[1].state = "CLOSED";
      state.projects[0].items[0].status = "In Progress";
    });
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(await handler.isComplete(said(definition, 1, "Closed both issues.")), false);
    assert.equal(handler.phase, "review");
    assert.equal(await handler.isComplete(said(definition, 2, review("pass", "ok"))), true);
    const views = (await env.fake.calls()).filter((call) => call.argv[0] === "issue");
    assert.ok(
      views.some((call) => call.argv[2] === "https://github.com/octo/demo/issues/1"),
      "the issue is looked up by its URL",
    );
  });

  await t.step("done statuses are recognised in any case and common spellings", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, PROJECT_STATE);
    await setStatus(env.fake, { PVTI_1: "done", PVTI_2: "Shipped" });
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(await handler.isComplete(said(definition, 1, review("pass", "ok"))), true);
  });

  await t.step("a draft item in progress is never done through an issue", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, {
      ...PROJECT_STATE,
      projects: [{
        number: 1,
        owner: "octo",
        title: "Roadmap",
        items: [{ id: "PVTI_d", title: "Plan the launch", status: "In Progress" }],
      }],
    });
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(handler.phase, "processing");
    assert.equal(await handler.isComplete(said(definition, 1, review("pass", "ok"))), false);
    const prompt = await handler.buildContinuationPrompt(2, []);
    assert.ok(prompt.includes("- Plan the launch [In Progress] (item PVTI_d)"), prompt);
  });

  await t.step("a board gh cannot read is not complete, and the faults are drained", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, PROJECT_STATE);
    await setStatus(env.fake, { PVTI_1: "Done", PVTI_2: "Done" });
    await env.fake.update((state) => state.failures = [{ match: "project item-list", times: 10 }]);
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(await handler.isComplete(said(definition, 1, review("pass", "ok"))), false);
    assert.equal(handler.phase, "preparation", "the phase is unchanged");
    const faults = handler.drainFaults();
    assert.equal(faults.length, 4);
    assert.match(faults[0], /^gh project item-list 1: HTTP 502/);
    assert.deepEqual(handler.drainFaults(), []);
  });
});

Deno.test("project handler with --label counts only the labelled items", async (t) => {
  const definition = projectDefinition();
  const state: Partial<FakeGhState> = {
    ...PROJECT_STATE,
    issues: [
      { number: 1, title: "Style the page", labels: ["frontend"] },
      { number: 2, title: "Add the endpoint", labels: ["backend"] },
    ],
    projects: [{
      number: 1,
      owner: "octo",
      title: "Roadmap",
      items: [
        { id: "PVTI_1", title: "stale", issue: 1, status: "Done" },
        { id: "PVTI_2", title: "stale", issue: 2, status: "Todo" },
        { id: "PVTI_3", title: "Draft with a label", labels: ["frontend"], status: "Todo" },
      ],
    }],
  };

  await t.step("only the labelled items decide the phase and are listed", async () => {
    await using env = await handlerOf(
      definition,
      { project: 1, owner: "octo", label: "frontend" },
      state,
    );
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(handler.phase, "processing");
    assertSays(handler.buildCompletionCriteria().short, 'finish project #1 labelled "frontend"');
    const prompt = await handler.buildInitialPrompt({
      project: 1,
      owner: "octo",
      label: "frontend",
    });
    assert.ok(prompt.includes("- Draft with a label [Todo] (item PVTI_3)"), prompt);
    assert.ok(!prompt.includes("Add the endpoint"), "the backend item is out of scope");
  });

  await t.step(
    "the run completes when the labelled items are done, whatever the others",
    async () => {
      await using env = await handlerOf(definition, {
        project: 1,
        owner: "octo",
        label: "frontend",
      }, state);
      await setStatus(env.fake, { PVTI_3: "Done" });
      const handler = env.handler as ProjectCompletionHandler;
      assert.equal(await handler.isComplete(said(definition, 1, "Drafted it.")), false);
      assert.equal(handler.phase, "review");
      assert.equal(
        await handler.isComplete(said(definition, 2, review("pass", "frontend done"))),
        true,
      );
      assert.match(
        await handler.getCompletionDescription(said(definition, 2, "")),
        /all 2 items done/,
      );
    },
  );

  await t.step("without the label every item counts", async () => {
    await using env = await handlerOf(definition, { project: 1, owner: "octo" }, state);
    await setStatus(env.fake, { PVTI_3: "Done" });
    const handler = env.handler as ProjectCompletionHandler;
    assert.equal(await handler.isComplete(said(definition, 1, review("pass", "too early"))), false);
    assert.equal(handler.phase, "processing");
  });
});

Deno.test("the factory checks the project before the run", async (t) => {
  await t.step("a project that does not exist is a UsageError naming the flags", async () => {
    const message = await usageErrorOf(() =>
      handlerOf(projectDefinition(), { project: 9, owner: "octo" }, PROJECT_STATE)
    );
    assert.match(message, /^Cannot find project #9 of owner "octo"/);
  });

  await t.step("without --owner the repository's owner is used", async () => {
    await using env = await handlerOf(projectDefinition(), { project: 1 }, PROJECT_STATE);
    assert.equal((env.handler as ProjectCompletionHandler).phase, "preparation");
    const argv = (await env.fake.calls()).map((call) => call.argv.join(" "));
    assert.ok(argv.includes("project view 1 --owner octo --format json"), argv.join("\n"));
  });
});

// --- the design's constructor shapes -----------------------------------------

/** Runs `fn` with the stand-in first on PATH, as the design's handlers run `gh`. */
async function withGhOnPath<T>(gh: StandInGh, fn: () => Promise<T>): Promise<T> {
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${gh.dir}:${path}`);
  try {
    return await fn();
  } finally {
    Deno.env.set("PATH", path);
  }
}

const { labels: _labels, ...ISSUE_FIELDS } = sampleIssue();
const ISSUE_REPLY = JSON.stringify({ ...ISSUE_FIELDS, labels: [{ name: "bug" }] });

Deno.test("issue handler in the design's shape reads the issue with gh and completes once it is CLOSED", async (t) => {
  await using gh = await standInGh([
    { stdout: ISSUE_REPLY },
    { stdout: JSON.stringify({ comments: [] }) },
    { stdout: '{"state": "OPEN"}' },
    { stdout: '{"state": "CLOSED"}' },
  ]);
  const handler = new IssueCompletionHandler({
    issueNumber: 7,
    promptResolver: mockPromptResolver,
  });

  await t.step("the agent closes the issue, as in the design", () => {
    const criteria = handler.buildCompletionCriteria();
    assert.equal(criteria.short, "close issue #7");
    assertSays(criteria.detailed, "close the issue with `gh issue close 7");
  });

  await t.step("the first prompt reads the issue and carries it", async () => {
    const prompt = await withGhOnPath(gh, () => handler.buildInitialPrompt({ task: "x" }));
    assert.equal(prompt.split("\n")[0], "initial_issue");
    const variables = JSON.parse(prompt.split("\n")[1]);
    assert.equal(variables["uv-issue_number"], 7);
    assert.equal(variables["uv-issue_title"], "Login test is flaky");
    assert.equal(handler.issue?.title, "Login test is flaky");
  });

  await t.step("open, then closed: the design's gh call decides", async () => {
    assert.equal(await withGhOnPath(gh, () => handler.isComplete(emptySummary(1))), false);
    assert.equal(await withGhOnPath(gh, () => handler.isComplete(emptySummary(2))), true);
    assert.deepEqual((await gh.calls()).slice(2), [
      "issue view 7 --json state",
      "issue view 7 --json state",
    ]);
    assert.equal(
      await handler.getCompletionDescription(emptySummary(2)),
      "Issue #7 closed after iteration 2",
    );
  });

  await t.step("without an issue number it says which flag is missing", () => {
    for (const issueNumber of [0, undefined as unknown as number]) {
      assert.throws(
        () => new IssueCompletionHandler({ issueNumber, promptResolver: mockPromptResolver }),
        (error: unknown) =>
          error instanceof UsageError &&
          error.message === "--issue <number> is required for issue completion type",
      );
    }
  });
});

Deno.test("project handler in the design's shape reads the board with gh at the first prompt", async (t) => {
  const project = sampleProject();
  await using gh = await standInGh([
    { stdout: '{"nameWithOwner": "octo/demo", "owner": {"login": "octo"}}' },
    { stdout: JSON.stringify({ ...project, owner: undefined }) },
    { stdout: projectItemsReply(sampleProjectItems("Todo")) },
    { stdout: projectItemsReply(sampleProjectItems("Done")) },
  ]);
  const handler = new ProjectCompletionHandler({
    projectNumber: 2,
    promptResolver: mockPromptResolver,
    labels: { inProgress: "in-progress" },
  });

  await t.step("before the board is read it is in preparation", () => {
    assert.equal(handler.phase, "preparation");
    assert.equal(handler.buildCompletionCriteria().short, "finish project #2");
  });

  await t.step("the first prompt reads the board of the repository's owner", async () => {
    const prompt = await withGhOnPath(gh, () => handler.buildInitialPrompt({}));
    assert.equal(prompt.split("\n")[0], "initial_project");
    const variables = JSON.parse(prompt.split("\n")[1]);
    assert.equal(variables["uv-project_title"], "Launch");
    assert.equal(variables["uv-phase"], "preparation");
    assert.deepEqual(await gh.calls(), [
      "repo view --json nameWithOwner,owner",
      "project view 2 --owner octo --format json",
      "project item-list 2 --owner octo --format json --limit 1000",
    ]);
  });

  await t.step("every item done and a passing review complete it", async () => {
    const review = { type: "review", result: "pass", notes: "Both flows tested" };
    const summary = { ...emptySummary(2), detectedActions: [review] };
    assert.equal(await withGhOnPath(gh, () => handler.isComplete(summary)), true);
    assert.equal(handler.phase, "complete");
    assert.equal(
      await handler.getCompletionDescription(summary),
      "Project #2: all 2 items done and the review passed in iteration 2",
    );
  });

  await t.step("without a project number it says which flag is missing", () => {
    assert.throws(
      () => new ProjectCompletionHandler({ projectNumber: 0, promptResolver: mockPromptResolver }),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message === "--project <number> is required for project completion type",
    );
  });
});
