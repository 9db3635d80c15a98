import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CommandChecker } from "../../agents/checks/command.ts";
import { CompositeChecker } from "../../agents/checks/composite.ts";
import { FilesChecker } from "../../agents/checks/files.ts";
import { GitChecker } from "../../agents/checks/git_checker.ts";
import { JudgeChecker } from "../../agents/checks/judge.ts";
import { latestPlan, PlanChecker } from "../../agents/checks/plan.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
} from "../../agents/checks/checker_contract.ts";
import { buildVerifier, verify } from "../../agents/checks/verifier.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";
import { contextOf, counting, definitionOf, NOWHERE } from "./_helpers.ts";

Deno.test("ok and incomplete build the results checkers return", async (t) => {
  await t.step("ok without feedback is complete and carries no feedback key", () => {
    assert.deepEqual(ok(), { complete: true });
    assert.equal("feedback" in ok(), false);
  });

  await t.step("ok with a note keeps it", () => {
    assert.deepEqual(ok("all 3 files exist"), { complete: true, feedback: "all 3 files exist" });
  });

  await t.step("incomplete carries its feedback", () => {
    assert.deepEqual(incomplete("tests fail"), { complete: false, feedback: "tests fail" });
  });
});

Deno.test("composite with allMustPass runs checkers until the first failure", async (t) => {
  await t.step("the first failure decides and later checkers are never called", async () => {
    const first = counting("first", ok("fine"));
    const broken = counting("broken", incomplete("tests fail"));
    const later = counting("later", ok("fine too"));
    const result = await new CompositeChecker([first, broken, later]).check(contextOf());
    assert.equal(result.complete, false);
    // The failing checker's own result, its name in a field.
    assert.deepEqual(result, { complete: false, feedback: "tests fail", decidedBy: "broken" });
    assert.equal(Object.isFrozen(result), true);
    assert.deepEqual([first.calls, broken.calls, later.calls], [1, 1, 0]);
  });

  await t.step("when every checker passes their feedback is combined, labelled", async () => {
    const a = counting("a", ok("3 files exist"));
    const silent = counting("silent", ok());
    const b = counting("b", ok("2 new commits"));
    const result = await new CompositeChecker([a, silent, b]).check(contextOf());
    assert.equal(result.complete, true);
    assert.equal(result.decidedBy, "composite");
    assert.equal(result.feedback, "[a] 3 files exist\n[b] 2 new commits");
    assert.deepEqual([a.calls, silent.calls, b.calls], [1, 1, 1]);
  });

  await t.step(
    "a checker that throws counts as incomplete with the error's first line",
    async () => {
      const boom = counting("boom", new Error("disk on fire\nstack line"));
      const later = counting("later", ok());
      const result = await new CompositeChecker([boom, later]).check(contextOf());
      assert.equal(result.complete, false);
      assert.equal(result.decidedBy, "boom");
      assert.equal(result.feedback, "the checker failed: disk on fire");
      assert.equal(result.faulted, true);
      assert.equal(later.calls, 0);
    },
  );

  await t.step(
    "a checker whose promise rejects with a non-Error counts as incomplete",
    async () => {
      const rejecting: TaskCompletionChecker = {
        name: "rejecting",
        check: () => Promise.reject("network down"),
      };
      const result = await new CompositeChecker([rejecting]).check(contextOf());
      assert.equal(result.complete, false);
      assert.equal(result.decidedBy, "rejecting");
      assert.equal(result.feedback, "the checker failed: network down");
    },
  );

  await t.step("async checkers are awaited", async () => {
    const slow: TaskCompletionChecker = {
      name: "slow",
      check: () => new Promise((resolve) => setTimeout(() => resolve(incomplete("not yet")), 5)),
    };
    const result = await new CompositeChecker([slow]).check(contextOf());
    assert.equal(result.complete, false);
    assert.equal(result.feedback, "not yet");
  });

  await t.step(
    "a nested composite's failure keeps the name of the checker that decided inside it",
    async () => {
      const inner = new CompositeChecker([counting("tests", incomplete("2 tests fail"))]);
      const result = await new CompositeChecker([counting("plan", ok()), inner]).check(contextOf());
      assert.deepEqual(result, { complete: false, feedback: "2 tests fail", decidedBy: "tests" });
    },
  );

  await t.step("an empty composite passes without feedback", async () => {
    const result = await new CompositeChecker([]).check(contextOf());
    assert.equal(result.complete, true);
    assert.equal(result.feedback, undefined);
    assert.equal(result.decidedBy, "composite");
  });

  await t.step("allMustPass is the default", () => {
    assert.equal(new CompositeChecker([]).allMustPass, true);
    assert.equal(new CompositeChecker([]).name, "composite");
  });
});

Deno.test("composite with allMustPass false runs checkers until the first success", async (t) => {
  await t.step("the first success decides and later checkers are never called", async () => {
    const failing = counting("failing", incomplete("no commits"));
    const passing = counting("passing", ok("files exist"));
    const later = counting("later", incomplete("never asked"));
    const result = await new CompositeChecker([failing, passing, later], { allMustPass: false })
      .check(contextOf());
    assert.equal(result.complete, true);
    assert.equal(result.decidedBy, "passing");
    assert.equal(result.feedback, "files exist");
    assert.deepEqual([failing.calls, passing.calls, later.calls], [1, 1, 0]);
  });

  await t.step("when every checker fails their feedback is combined, labelled", async () => {
    const a = counting("a", incomplete("no commits"));
    const b = counting("b", incomplete("README.md is missing"));
    const result = await new CompositeChecker([a, b], { allMustPass: false }).check(contextOf());
    assert.equal(result.complete, false);
    assert.equal(result.decidedBy, "composite");
    assert.equal(result.feedback, "[a] no commits\n[b] README.md is missing");
  });

  await t.step("a checker that throws is a failure and the next one still runs", async () => {
    const boom = counting("boom", new Error("cannot stat"));
    const passing = counting("passing", ok());
    const result = await new CompositeChecker([boom, passing], { allMustPass: false })
      .check(contextOf());
    assert.equal(result.complete, true);
    assert.equal(result.decidedBy, "passing");
    assert.equal(boom.calls, 1);
  });

  await t.step("a throwing checker's error is part of the combined feedback", async () => {
    const boom = counting("boom", new Error("cannot stat"));
    const failing = counting("failing", incomplete("no commits"));
    const result = await new CompositeChecker([boom, failing], { allMustPass: false })
      .check(contextOf());
    assert.equal(result.complete, false);
    assert.equal(result.feedback, "[boom] the checker failed: cannot stat\n[failing] no commits");
  });

  await t.step("an empty composite passes", async () => {
    const result = await new CompositeChecker([], { allMustPass: false }).check(contextOf());
    assert.equal(result.complete, true);
    assert.equal(result.decidedBy, "composite");
  });
});

Deno.test("files checker passes only when every path exists", async (t) => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "README.md"), "# demo\n");
  await Deno.mkdir(join(dir.path, "docs"));
  await Deno.writeTextFile(join(dir.path, "docs", "guide.md"), "guide\n");

  await t.step("paths relative to the working directory that exist pass", async () => {
    const result = await new FilesChecker(["README.md", "docs/guide.md", "docs"]).check(
      contextOf({ cwd: dir.path }),
    );
    assert.equal(result.complete, true);
    assert.equal(result.feedback, "All 3 required files exist");
  });

  await t.step("missing paths are listed, in order, present ones are not", async () => {
    const result = await new FilesChecker(["CHANGELOG.md", "README.md", "docs/api.md"]).check(
      contextOf({ cwd: dir.path }),
    );
    assert.equal(result.complete, false);
    assert.equal(result.feedback, "Missing required files: CHANGELOG.md, docs/api.md");
  });

  await t.step("relative paths resolve against context.cwd, not the process cwd", async () => {
    const result = await new FilesChecker(["guide.md"]).check(
      contextOf({ cwd: join(dir.path, "docs") }),
    );
    assert.equal(result.complete, true);
  });

  await t.step(
    "absolute paths inside the working directory are used; outside it, missing",
    async () => {
      await using other = await tempDir();
      const present = join(dir.path, "README.md");
      const missing = join(dir.path, "nope.txt");
      assert.equal(
        (await new FilesChecker([present]).check(contextOf({ cwd: dir.path }))).complete,
        true,
      );
      const result = await new FilesChecker([present, missing]).check(
        contextOf({ cwd: other.path }),
      );
      assert.equal(result.feedback, `Missing required files: ${present}, ${missing}`);
    },
  );

  await t.step("the name defaults to files and can be set", () => {
    assert.equal(new FilesChecker(["a"]).name, "files");
    assert.equal(new FilesChecker(["a"], "artifacts").name, "artifacts");
  });
});

/** A summary whose agent called TodoWrite with each list, in order. */
function planned(
  iteration: number,
  ...lists: Array<Array<{ content?: string; activeForm?: string; status?: string }>>
): IterationSummary {
  return {
    ...emptySummary(iteration),
    toolCalls: [
      { name: "Bash", input: { command: "deno test" } },
      ...lists.map((todos) => ({ name: "TodoWrite", input: { todos } })),
    ],
  };
}

Deno.test("latestPlan finds the agent's latest TodoWrite list", async (t) => {
  await t.step("no TodoWrite call anywhere gives undefined", () => {
    assert.equal(latestPlan([emptySummary(1), emptySummary(2)]), undefined);
  });

  await t.step("a plan written in an earlier iteration still counts", () => {
    const plan = latestPlan([
      planned(1, [{ content: "Write tests", status: "in_progress" }]),
      emptySummary(2),
    ]);
    assert.deepEqual(plan, [{ content: "Write tests", status: "in_progress" }]);
  });

  await t.step("the latest iteration's plan wins over earlier ones", () => {
    const plan = latestPlan([
      planned(1, [{ content: "Old", status: "pending" }]),
      planned(2, [{ content: "New", status: "completed" }]),
    ]);
    assert.deepEqual(plan, [{ content: "New", status: "completed" }]);
  });

  await t.step("within an iteration the last TodoWrite call wins", () => {
    const plan = latestPlan([
      planned(1, [{ content: "Draft", status: "pending" }], [
        { content: "Draft", status: "completed" },
      ]),
    ]);
    assert.deepEqual(plan, [{ content: "Draft", status: "completed" }]);
  });

  await t.step("a malformed TodoWrite input is skipped for an earlier valid one", () => {
    const summary = planned(1, [{ content: "Valid", status: "pending" }]);
    summary.toolCalls.push({ name: "TodoWrite", input: { todos: "not a list" } });
    summary.toolCalls.push({ name: "TodoWrite", input: null });
    assert.deepEqual(latestPlan([summary]), [{ content: "Valid", status: "pending" }]);
  });

  await t.step("missing fields fall back to activeForm, then to pending", () => {
    const plan = latestPlan([planned(1, [{ activeForm: "Writing tests" }, {}])]);
    assert.deepEqual(plan, [
      { content: "Writing tests", status: "pending" },
      { content: "(untitled)", status: "pending" },
    ]);
  });
});

Deno.test("plan checker passes when the latest plan has no open todo", async (t) => {
  const checker = new PlanChecker({ planType: "TodoWrite" });

  await t.step("no plan at all passes", async () => {
    const result = await checker.check(contextOf());
    assert.deepEqual(result, { complete: true, feedback: "No plan to check" });
  });

  await t.step("an empty plan passes", async () => {
    const result = await checker.check(contextOf({ summary: planned(1, []) }));
    assert.equal(result.complete, true);
  });

  await t.step("a plan with every todo completed passes", async () => {
    const summary = planned(2, [
      { content: "Write tests", status: "completed" },
      { content: "Ship", status: "completed" },
    ]);
    const result = await checker.check(contextOf({ summary }));
    assert.deepEqual(result, { complete: true, feedback: "All 2 planned tasks are completed" });
  });

  await t.step("2 open todos of 5 are counted and named", async () => {
    const summary = planned(1, [
      { content: "Read the issue", status: "completed" },
      { content: "Implement feature", status: "in_progress" },
      { content: "Run lint", status: "completed" },
      { content: "Write tests", status: "pending" },
      { content: "Commit", status: "completed" },
    ]);
    const result = await checker.check(contextOf({ summary }));
    assert.equal(result.complete, false);
    assert.ok(
      result.feedback!.startsWith("You have 2 incomplete task(s) out of 5."),
      result.feedback,
    );
    assert.ok(result.feedback!.endsWith(": Implement feature, Write tests"), result.feedback);
    assert.ok(!result.feedback!.includes("..."));
  });

  await t.step("more than three open todos name three, then an ellipsis", async () => {
    const summary = planned(1, [
      { content: "One", status: "pending" },
      { content: "Two", status: "pending" },
      { content: "Three", status: "pending" },
      { content: "Four", status: "pending" },
    ]);
    const result = await checker.check(contextOf({ summary }));
    assert.ok(result.feedback!.startsWith("You have 4 incomplete task(s) out of 4."));
    assert.ok(result.feedback!.endsWith(": One, Two, Three..."), result.feedback);
    assert.ok(!result.feedback!.includes("Four"));
  });

  await t.step("a plan from an earlier iteration is enforced in a later one", async () => {
    const previous = [planned(1, [{ content: "Write tests", status: "pending" }])];
    const result = await checker.check(contextOf({ summary: emptySummary(2), previous }));
    assert.equal(result.complete, false);
    assert.ok(result.feedback!.includes("1 incomplete task(s) out of 1"));
  });

  await t.step("a later plan that drops the open todo passes", async () => {
    const previous = [planned(1, [{ content: "Write tests", status: "pending" }])];
    const summary = planned(2, [{ content: "Ship", status: "completed" }]);
    assert.equal((await checker.check(contextOf({ summary, previous }))).complete, true);
  });
});

Deno.test("buildVerifier builds the configured checkers in order", async (t) => {
  await using agent = await tempDir("finishline-agent-");
  await Deno.writeTextFile(
    join(agent.path, "check.ts"),
    `export default { name: "mine", check: () => ({ complete: true }) };\n`,
  );
  const agentDir = pathToFileURL(`${agent.path}/`);

  await t.step("every type, with default and configured names, in mode all", async () => {
    const { verify: config } = definitionOf({
      verify: {
        checks: [
          { type: "command", command: "true" },
          { type: "git", name: "commits" },
          { type: "files", paths: ["README.md"] },
          { type: "plan" },
          { type: "judge", criteria: "The README is complete" },
          { type: "custom", path: "check.ts" },
          { type: "custom", path: "check.ts", name: "renamed" },
        ],
      },
    });
    const verifier = await buildVerifier(config, { agentDir, cwd: agent.path });
    assert.equal(verifier.allMustPass, true);
    assert.deepEqual(verifier.checkers.map((checker) => checker.name), [
      "command",
      "commits",
      "files",
      "plan",
      "judge",
      "mine",
      "renamed",
    ]);
    const [command, gitChecker, files, plan, judge] = verifier.checkers;
    assert.ok(command instanceof CommandChecker);
    assert.ok(gitChecker instanceof GitChecker);
    assert.ok(files instanceof FilesChecker);
    assert.ok(plan instanceof PlanChecker);
    assert.ok(judge instanceof JudgeChecker);
  });

  await t.step("mode any builds a composite where any checker may pass", async () => {
    const { verify: config } = definitionOf({
      verify: { mode: "any", checks: [{ type: "plan" }] },
    });
    const verifier = await buildVerifier(config, { agentDir: NOWHERE, cwd: agent.path });
    assert.equal(verifier.allMustPass, false);
  });

  await t.step("no checks build an empty composite", async () => {
    const verifier = await buildVerifier(definitionOf().verify, {
      agentDir: NOWHERE,
      cwd: agent.path,
    });
    assert.equal(verifier.checkers.length, 0);
  });

  await t.step("the git checker gets the ignore prefixes", async () => {
    await using repo = await tempRepo();
    const gitRepo = (await GitRepo.open(repo.path))!;
    const baseline = await gitRepo.head();
    await Deno.writeTextFile(join(repo.path, "work.txt"), "work\n");
    await git(repo.path, "add", "work.txt");
    await git(repo.path, "commit", "-q", "-m", "work");
    await Deno.mkdir(join(repo.path, ".agent/demo/logs"), { recursive: true });
    await Deno.writeTextFile(join(repo.path, ".agent/demo/logs/run.jsonl"), "{}\n");
    const { verify: config } = definitionOf({
      verify: { checks: [{ type: "git", cleanTree: true }] },
    });
    const context = contextOf({ cwd: repo.path, git: { repo: gitRepo, baseline } });
    const ignoring = await buildVerifier(config, {
      agentDir: NOWHERE,
      cwd: repo.path,
      ignore: [".agent/demo/logs"],
    });
    assert.equal((await ignoring.check(context)).complete, true);
    const strict = await buildVerifier(config, { agentDir: NOWHERE, cwd: repo.path });
    const result = await strict.check(context);
    assert.equal(result.complete, false);
    assert.ok(result.feedback!.includes(".agent/demo/logs/run.jsonl"), result.feedback);
  });
});

Deno.test("verify returns the verification record of a run of the checkers", async (t) => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "README.md"), "# demo\n");
  const context = contextOf({ cwd: dir.path });

  await t.step("passing checks give passed, the composite and the combined feedback", async () => {
    const verifier = await buildVerifier(
      definitionOf({ verify: { checks: [{ type: "files", paths: ["README.md"] }] } }).verify,
      { agentDir: NOWHERE, cwd: dir.path },
    );
    assert.deepEqual(await verify(verifier, context, "handler"), {
      passed: true,
      checker: "composite",
      feedback: "[files] All 1 required files exist",
      trigger: "handler",
    });
  });

  await t.step("a failing check is named as the checker that decided", async () => {
    const verifier = await buildVerifier(
      definitionOf({
        verify: {
          checks: [
            { type: "files", paths: ["README.md"] },
            { type: "files", paths: ["CHANGELOG.md"], name: "changelog" },
          ],
        },
      }).verify,
      { agentDir: NOWHERE, cwd: dir.path },
    );
    assert.deepEqual(await verify(verifier, context, "complete_task"), {
      passed: false,
      checker: "changelog",
      feedback: "Missing required files: CHANGELOG.md",
      trigger: "complete_task",
    });
  });

  await t.step("an empty verifier passes with empty feedback", async () => {
    const record = await verify(new CompositeChecker([]), context, "handler");
    assert.deepEqual(record, {
      passed: true,
      checker: "composite",
      feedback: "",
      trigger: "handler",
    });
  });

  await t.step("a verifier that throws gives a failed record naming the error", async () => {
    class Broken extends CompositeChecker {
      override check(): never {
        throw new Error("cannot read the plan\nat somewhere");
      }
    }
    assert.deepEqual(await verify(new Broken([]), context, "handler"), {
      passed: false,
      checker: "error",
      feedback: "A checker failed to run: cannot read the plan",
      trigger: "handler",
      faulted: true,
    });
  });
});
