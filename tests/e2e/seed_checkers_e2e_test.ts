/**
 * End to end for the task completion checkers design's own checkers,
 * translated to TypeScript (`tests/fixtures/seed_checkers/`) and dropped into
 * `.agent/<name>/checks/` as a user would: the CLI as a subprocess, the real
 * Claude Code binary against the scripted model, real git, a real `deno test`.
 * They read the context the design defines: the filesystem, the session's
 * messages and plan, the tentative output, the stop reason, and the adapter.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
  type TurnContext,
} from "../../agents/testing/mod.ts";
import { runCli, tempRepo } from "../_helpers.ts";

const SEED_CHECKERS = new URL("../fixtures/seed_checkers/", import.meta.url);
const JUDGE_CRITERIA =
  "Verify the implementation is complete:\n1. sum adds two numbers\n2. The README documents sum";

interface LogRecord {
  kind: string;
  [field: string]: unknown;
}

/** An agent in `.agent/seeded/` whose checks are the design's checkers. */
async function seededAgent(repo: string, checks: Array<Record<string, unknown>>): Promise<void> {
  const dir = `${repo}/.agent/seeded`;
  await Deno.mkdir(`${dir}/checks`, { recursive: true });
  for await (const entry of Deno.readDir(SEED_CHECKERS)) {
    await Deno.copyFile(new URL(entry.name, SEED_CHECKERS), `${dir}/checks/${entry.name}`);
  }
  await Deno.writeTextFile(
    `${dir}/agent.json`,
    JSON.stringify({
      name: "seeded",
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "SHIPPED", maxIterations: 2 },
        allowedTools: ["Bash", "TodoWrite"],
      },
      verify: { checks },
    }),
  );
}

function completeTask(summary: string): ScriptStep {
  return toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Add sum and document it",
    summary,
  });
}

/** A step that checks what the agent was told (the checks' verdict), then replies. */
function expecting(text: string, reply: ScriptStep): ScriptStep {
  return async (ctx: TurnContext) => {
    if (!ctx.lastUserText.includes(text)) {
      return textTurn(`SCRIPT ERROR: expected ${JSON.stringify(text)} in: ${ctx.lastUserText}`);
    }
    return typeof reply === "function" ? await reply(ctx) : reply;
  };
}

function todos(second: "pending" | "completed") {
  return toolTurn("TodoWrite", {
    todos: [
      { content: "Write sum", status: "completed", activeForm: "Writing sum" },
      { content: "Document sum", status: second, activeForm: "Documenting sum" },
    ],
  });
}

async function verifications(logFile: string) {
  return (await Deno.readTextFile(logFile)).trim().split("\n")
    .map((line) => JSON.parse(line) as LogRecord)
    .filter((record) => record.kind === "verification")
    .map((record) => {
      const verification = record.verification as { passed: boolean; checker: string };
      return `${record.trigger}: ${
        verification.passed ? "passed" : `failed (${verification.checker})`
      }`;
    });
}

Deno.test("the design's FileExistsChecker, a class, is instantiated with its options and reads the repository", async () => {
  await using repo = await tempRepo();
  await seededAgent(repo.path, [
    { type: "custom", path: "checks/file_exists.ts", options: { requiredFiles: ["output.txt"] } },
  ]);
  await using server = await ScriptedModelServer.start({
    scripts: [[
      completeTask("Computed the answer"),
      expecting(
        "did NOT pass (file_exists):\nMissing required files: output.txt",
        toolTurn("Bash", {
          command:
            "printf '42\\n' > output.txt && git add output.txt && git commit -qm 'feat: the answer'",
        }),
      ),
      completeTask("Computed the answer into output.txt"),
      expecting(
        "[file_exists] All required files exist.",
        textTurn("The answer is in output.txt. SHIPPED"),
      ),
    ]],
  });

  const run = await runCli(["--agent", "seeded", "--json"], { cwd: repo.path, server });

  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.deepEqual(await verifications(result.logFile), [
    "complete_task: failed (file_exists)",
    "complete_task: passed",
    "handler: passed",
  ]);
  assert.ok(
    !JSON.stringify(server.requests.map((request) => request.body)).includes("[undefined]"),
  );
});

Deno.test("the design's plan, test and LLM judge checkers read the session, the tentative output and the adapter", async () => {
  await using repo = await tempRepo();
  await seededAgent(repo.path, [
    { type: "custom", path: "checks/combined.ts" },
    { type: "custom", path: "checks/llm_judge.ts", options: { criteria: JUDGE_CRITERIA } },
  ]);
  const verdicts = ["INCOMPLETE: the README does not document sum", "COMPLETE"];
  let judged = 0;
  await using server = await ScriptedModelServer.start({
    scripts: [[
      todos("pending"),
      toolTurn("Bash", {
        command: [
          "printf 'export const sum = (a: number, b: number): number => a - b;\\n' > sum.ts",
          `printf 'import { sum } from "./sum.ts";\\nDeno.test("sum adds", () => {\\n  if (sum(1, 2) !== 3) throw new Error("1 + 2 is not 3");\\n});\\n' > sum_test.ts`,
          "git add sum.ts sum_test.ts && git commit -qm 'feat: sum'",
          "deno test sum_test.ts 2>&1",
        ].join(" && "),
      }),
      completeTask("Wrote sum"),
      expecting("You have 1 incomplete task(s) out of 2", todos("completed")),
      completeTask("Wrote sum and finished the plan"),
      expecting(
        "did NOT pass (TestPassingChecker):\n1 tests failing. Fix before completing.",
        toolTurn("Bash", {
          command:
            "sed -i 's/a - b/a + b/' sum.ts && git commit -qam 'fix: sum adds' && deno test sum_test.ts 2>&1",
        }),
      ),
      completeTask("sum adds, and its test passes"),
      expecting(
        "did NOT pass (llm_judge):\nthe README does not document sum",
        toolTurn("Bash", {
          command:
            "printf '\\n## sum\\n\\nsum(a, b) adds two numbers.\\n' >> README.md && git commit -qam 'docs: sum'",
        }),
      ),
      completeTask("sum adds, its test passes, and the README documents it"),
      expecting("the checks passed", textTurn("sum is done and documented. SHIPPED")),
    ]],
    sideReply: (ctx) => {
      if (!JSON.stringify(ctx.request.body).includes("Verify the implementation is complete")) {
        return textTurn("OK.");
      }
      return textTurn(verdicts[Math.min(judged++, verdicts.length - 1)]);
    },
  });

  const run = await runCli(["--agent", "seeded", "--json"], { cwd: repo.path, server });

  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  assert.deepEqual(await verifications(result.logFile), [
    // The design's composite returns its failing checker's own result, and names it.
    "complete_task: failed (plan)",
    "complete_task: failed (TestPassingChecker)",
    "complete_task: failed (llm_judge)",
    "complete_task: passed",
    "handler: passed",
  ]);
  const questions = server.requests.filter((request) =>
    request.side && JSON.stringify(request.body).includes("Verify the implementation is complete")
  ).map((request) => JSON.stringify(request.body));
  assert.equal(questions.length, 3, "the judge was asked at each of its three checks");
  assert.match(questions[0], /sum adds, and its test passes/, "with the complete_task report");
  assert.match(questions[0], /stopping because: complete_task/);
  assert.match(questions[2], /the README documents it/, "the handler's check sees the last report");
  assert.match(await Deno.readTextFile(`${repo.path}/README.md`), /sum\(a, b\) adds two numbers/);
});
