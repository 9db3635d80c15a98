import assert from "node:assert/strict";
import { ISSUE_CLOSE_REFUSAL, noGithubWriteEnv } from "../../agents/completion/issue.ts";

Deno.test("the refusal catches the agent's closing or editing of the issue by any spelling, and only that", () => {
  const pattern = new RegExp(ISSUE_CLOSE_REFUSAL.pattern);
  for (
    const command of [
      "gh issue close 5",
      "gh issue close 5 --comment 'done'",
      "git commit -qam fix && gh issue close 5",
      "gh --repo octo/demo issue close 5",
      "cd x; gh issue close 7",
      // Other spellings of the same command.
      '"gh" issue close 6',
      "'gh' issue close 6",
      "/usr/bin/gh issue close 6",
      "$(which gh) issue close 6",
      '"$(command -v gh)" issue close 6',
      "gh issue edit 6 --add-label done",
      "gh issue reopen 6",
      // The API by gh, hub and plain HTTP.
      "gh api repos/octo/demo/issues/6 -f state=closed",
      "gh api -X PATCH repos/octo/demo/issues/6 --input body.json",
      "gh api --method PATCH repos/octo/demo/issues/6",
      "hub issue update 6 --state closed",
      `curl -X PATCH -H "Authorization: token $T" https://api.github.com/repos/octo/demo/issues/6 -d '{"state":"closed"}'`,
      "wget --method=PATCH https://api.github.com/repos/octo/demo/issues/6",
    ]
  ) assert.ok(pattern.test(command), command);
  for (
    const command of [
      "gh issue view 5",
      "gh issue list --state closed",
      "gh api repos/octo/demo/issues/6/comments",
      "echo 'closes #5' > notes.txt",
      "git commit -m 'fix: close the file handle'",
      "grep -rn 'issue close' docs",
      "curl https://example.com/issues",
    ]
  ) assert.ok(!pattern.test(command), command);
});

Deno.test("the agent of a run whose runner closes the issue gets no GitHub token and no gh login", () => {
  const env = noGithubWriteEnv("/run/no-gh-login");
  for (
    const name of ["GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"]
  ) {
    assert.equal(env[name], "", name);
  }
  assert.equal(env.GH_CONFIG_DIR, "/run/no-gh-login");
});
