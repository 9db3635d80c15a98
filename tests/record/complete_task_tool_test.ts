import assert from "node:assert/strict";
import { z } from "zod";
import {
  COMPLETE_TASK_SHAPE,
  COMPLETE_TASK_TOOL,
  type CompleteTaskCall,
  completeTaskInstructions,
} from "../../agents/record/complete_task_tool.ts";
import { definitionOf } from "../completion/_helpers.ts";

const MANUAL = { completionType: "manual", completionConfig: { completionKeyword: "DONE" } };

Deno.test("complete_task has one name, one input schema and one prompt text", async (t) => {
  await t.step("the name Claude Code reports for the finishline MCP server's tool", () => {
    assert.equal(COMPLETE_TASK_TOOL, "mcp__finishline__complete_task");
  });

  await t.step("the schema accepts a full call and refuses an unknown status", () => {
    const schema = z.object(COMPLETE_TASK_SHAPE);
    const call: CompleteTaskCall = {
      status: "partial",
      original_request_summary: "Fix the flaky login test",
      summary: "Pinned the timezone",
      remaining_work: "The CI image still differs",
      learned: ["TZ matters"],
      skills_used: ["git bisect"],
      new_skills_needed: [],
      files_modified: ["ci.yml"],
      next_steps: "Rebuild the image",
      out_of_scope: [{ check: "lint", reason: "red before the run" }],
      tests_changed: [{ path: "login_test.ts", reason: "the clock is injected now" }],
    };
    assert.deepEqual(schema.parse(call), call);
    assert.equal(schema.safeParse({ ...call, status: "done" }).success, false);
  });

  await t.step("the system prompt tells the agent to call it, unless it is not required", () => {
    const required = definitionOf({ name: "x", behavior: MANUAL });
    assert.match(completeTaskInstructions(required), /always call the `complete_task` tool/);
    // The seed's statuses, each explained.
    for (const status of ["success", "blocked", "partial"]) {
      assert.match(completeTaskInstructions(required), new RegExp(`\`${status}\` when`));
    }
    const optional = definitionOf({
      name: "x",
      behavior: { ...MANUAL, requireCompleteTask: false },
    });
    assert.equal(completeTaskInstructions(optional), "");
  });
});
