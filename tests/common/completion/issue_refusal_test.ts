import assert from "node:assert/strict";
import { ISSUE_CLOSE_REFUSAL } from "../../../agents/common/completion/issue.ts";

Deno.test("the refusal catches the agent's own gh issue close, and only that", () => {
  const pattern = new RegExp(ISSUE_CLOSE_REFUSAL.pattern);
  for (
    const command of [
      "gh issue close 5",
      "gh issue close 5 --comment 'done'",
      "git commit -qam fix && gh issue close 5",
      "gh --repo octo/demo issue close 5",
      "cd x; gh issue close 7",
    ]
  ) assert.ok(pattern.test(command), command);
  for (
    const command of [
      "gh issue view 5",
      "gh issue list --state closed",
      "echo 'closes #5' > notes.txt",
      "git commit -m 'fix: close the file handle'",
    ]
  ) assert.ok(!pattern.test(command), command);
});
