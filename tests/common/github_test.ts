import assert from "node:assert/strict";
import { UsageError } from "../../agents/common/errors.ts";
import { type GhFault, GitHubCli, type GitHubOptions } from "../../agents/common/github.ts";
import { type FakeGhState, FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { tempDir } from "../_helpers.ts";

const BAD_GATEWAY = "HTTP 502: Bad Gateway (https://api.github.com/graphql)";

const SEED: Partial<FakeGhState> = {
  repo: "octo/demo",
  labels: ["bug", "enhancement"],
  issues: [
    {
      number: 42,
      title: "Add a greeting",
      body: "Create greet.txt saying hello.",
      labels: ["enhancement"],
      comments: [
        { author: "alice", body: "Please keep it short.", createdAt: "2026-01-02T03:04:05Z" },
        { author: "bob", body: "+1" },
      ],
    },
    { number: 7, title: "Old bug", state: "CLOSED", labels: ["bug"] },
  ],
  projects: [{
    number: 1,
    owner: "octo",
    title: "Roadmap",
    items: [
      { id: "PVTI_a", title: "stale title", issue: 42, status: "In Progress" },
      { id: "PVTI_b", title: "Write the announcement" },
      { id: "PVTI_c", title: "Labelled draft", labels: ["docs"], status: "Done" },
    ],
  }],
};

/** A gh port over a fresh fake, with instant retries; faults and backoff waits are recorded. */
async function setup(
  state: Partial<FakeGhState> = SEED,
  options: Partial<GitHubOptions> = {},
) {
  const fake = await FakeGitHub.create(state);
  const dir = await tempDir("finishline-gh-");
  const faults: GhFault[] = [];
  const waits: number[] = [];
  const github = new GitHubCli({
    cwd: dir.path,
    gh: `${fake.binDir}/gh`,
    env: fake.env(),
    backoffMs: 1,
    onFault: (fault) => faults.push(fault),
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    ...options,
  });
  return {
    fake,
    github,
    faults,
    waits,
    async [Symbol.asyncDispose]() {
      await fake[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** The message of the UsageError `fn` rejects with. */
async function usageErrorOf(fn: () => Promise<unknown>): Promise<string> {
  let message = "";
  await assert.rejects(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

Deno.test("preflight checks that gh is installed and logged in", async (t) => {
  await t.step("an installed, logged-in gh gives its version line", async () => {
    await using env = await setup();
    assert.equal(await env.github.preflight(), "gh version 2.62.0 (2024-11-14)");
    assert.deepEqual((await env.fake.calls()).map((call) => call.argv.join(" ")), [
      "--version",
      "auth status",
    ]);
  });

  await t.step("a missing gh is a UsageError telling how to install it", async () => {
    await using env = await setup(SEED, { gh: "/nonexistent/gh" });
    assert.equal(
      await usageErrorOf(() => env.github.preflight()),
      'Cannot find the GitHub CLI "gh": install it (https://cli.github.com, or "apt install gh" / "brew install gh") and run "gh auth login"',
    );
  });

  await t.step("a gh that is not logged in is a UsageError quoting gh", async () => {
    await using env = await setup({ ...SEED, authenticated: false });
    assert.equal(
      await usageErrorOf(() => env.github.preflight()),
      'The GitHub CLI is not logged in: run "gh auth login" (or set GH_TOKEN); gh said: You are not logged into any GitHub hosts. To log in, run: gh auth login',
    );
  });

  await t.step("a gh whose --version fails is a UsageError with its stderr", async () => {
    await using env = await setup({
      ...SEED,
      failures: [{ match: "--version", times: 1, stderr: "segmentation fault", exitCode: 139 }],
    });
    assert.equal(
      await usageErrorOf(() => env.github.preflight()),
      'Cannot run "gh --version": segmentation fault',
    );
  });
});

Deno.test("repository names the repository gh works on", async (t) => {
  await t.step("the working directory's repository", async () => {
    await using env = await setup();
    assert.deepEqual(await env.github.repository(), { nameWithOwner: "octo/demo", owner: "octo" });
  });

  await t.step("a --repo that does not exist is a UsageError naming the flag", async () => {
    await using env = await setup(SEED, { repo: "octo/other" });
    const message = await usageErrorOf(() => env.github.repository());
    assert.match(message, /^Cannot find repository "octo\/other" \(flag "--repo"\): GraphQL: /);
  });
});

Deno.test("issue reads an issue before the run", async (t) => {
  await t.step("a found issue has its fields and label names", async () => {
    await using env = await setup();
    assert.deepEqual(await env.github.issue(42), {
      number: 42,
      title: "Add a greeting",
      body: "Create greet.txt saying hello.",
      state: "OPEN",
      labels: ["enhancement"],
      url: "https://github.com/octo/demo/issues/42",
    });
  });

  await t.step("a missing issue is a UsageError naming --issue", async () => {
    await using env = await setup();
    assert.equal(
      await usageErrorOf(() => env.github.issue(99)),
      'Cannot find issue #99 (flag "--issue"): GraphQL: Could not resolve to an issue or pull request with the number of 99. (repository.issue)',
    );
  });

  await t.step("with a repository, it is passed with --repo and named in the error", async () => {
    await using env = await setup(SEED, { repo: "octo/demo" });
    assert.equal((await env.github.issue(7)).state, "CLOSED");
    assert.deepEqual((await env.fake.calls())[0].argv.slice(0, 5), [
      "issue",
      "view",
      "7",
      "--repo",
      "octo/demo",
    ]);
    const message = await usageErrorOf(() => env.github.issue(99));
    assert.match(message, /^Cannot find issue #99 in "octo\/demo" \(flag "--issue"\): /);
  });

  await t.step("before the run a gh failure is not retried", async () => {
    await using env = await setup({ ...SEED, failures: [{ match: "issue view", times: 1 }] });
    const message = await usageErrorOf(() => env.github.issue(42));
    assert.equal(message, `Cannot find issue #42 (flag "--issue"): ${BAD_GATEWAY}`);
    assert.equal(env.github.calls, 1);
    assert.deepEqual(env.faults, [], "faults are for calls during the run");
  });
});

Deno.test("issueState reads an issue's state during the run, retrying", async (t) => {
  await t.step("OPEN and CLOSED, by number and by URL", async () => {
    await using env = await setup();
    assert.equal(await env.github.issueState(42), "OPEN");
    assert.equal(await env.github.issueState(7), "CLOSED");
    assert.equal(await env.github.issueState("https://github.com/octo/demo/issues/7"), "CLOSED");
    assert.deepEqual(env.faults, []);
  });

  await t.step(
    "failures are retried with doubling backoff, each reported with willRetry",
    async () => {
      await using env = await setup({ ...SEED, failures: [{ match: "issue view", times: 2 }] });
      assert.equal(await env.github.issueState(42), "OPEN");
      const args = ["issue", "view", "42", "--json", "state"];
      assert.deepEqual(env.faults, [
        { args, code: 1, message: BAD_GATEWAY, attempt: 1, willRetry: true },
        { args, code: 1, message: BAD_GATEWAY, attempt: 2, willRetry: true },
      ]);
      assert.deepEqual(env.waits, [1, 2]);
      assert.equal(env.github.calls, 3);
    },
  );

  await t.step(
    "after every attempt fails it is undefined and the last fault gives up",
    async () => {
      await using env = await setup(
        { ...SEED, failures: [{ match: "issue view", times: 10 }] },
        { attempts: 3 },
      );
      assert.equal(await env.github.issueState(42), undefined);
      assert.deepEqual(env.faults.map((fault) => [fault.attempt, fault.willRetry]), [
        [1, true],
        [2, true],
        [3, false],
      ]);
      assert.deepEqual(env.waits, [1, 2]);
    },
  );

  await t.step(
    "options given as undefined keep their defaults (attempts, timeout, sleep)",
    async () => {
      await using env = await setup(
        { ...SEED, failures: [{ match: "issue view", times: 1 }] },
        { attempts: undefined, timeoutMs: undefined, sleep: undefined, backoffMs: 1 },
      );
      assert.equal(await env.github.issueState(42), "OPEN");
      assert.deepEqual(env.faults.map((fault) => [fault.attempt, fault.willRetry]), [[1, true]]);
    },
  );

  await t.step("a missing gh is not retried", async () => {
    await using env = await setup(SEED, { gh: "/nonexistent/gh" });
    assert.equal(await env.github.issueState(42), undefined);
    assert.equal(env.faults.length, 1);
    assert.equal(env.faults[0].code, 127);
    assert.equal(env.faults[0].willRetry, false);
  });

  await t.step("a hanging call is cut at the timeout and retried", async () => {
    await using env = await setup(
      { ...SEED, failures: [{ match: "issue view", times: 1, mode: "hang" }] },
      { timeoutMs: 1500, attempts: 2 },
    );
    const started = performance.now();
    assert.equal(await env.github.issueState(42), "OPEN");
    assert.ok(performance.now() - started < 10_000);
    assert.deepEqual(env.faults, [{
      args: ["issue", "view", "42", "--json", "state"],
      code: 124,
      message: "timed out after 1500 ms",
      attempt: 1,
      willRetry: true,
    }]);
    assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [-1, 0]);
  });
});

Deno.test("issueComments lists an issue's comments, oldest first", async (t) => {
  await t.step("id, author login, body and timestamp", async () => {
    await using env = await setup();
    const comments = await env.github.issueComments(42);
    assert.equal(comments?.length, 2);
    assert.deepEqual(comments?.[0], {
      id: "IC_42001",
      author: "alice",
      body: "Please keep it short.",
      createdAt: "2026-01-02T03:04:05Z",
    });
    assert.equal(comments?.[1].author, "bob");
    assert.notEqual(comments?.[0].id, comments?.[1].id);
  });

  await t.step("an issue without comments gives an empty list", async () => {
    await using env = await setup();
    assert.deepEqual(await env.github.issueComments(7), []);
  });

  await t.step("a missing issue is undefined after the retries", async () => {
    await using env = await setup(SEED, { attempts: 2 });
    assert.equal(await env.github.issueComments(99), undefined);
    assert.equal(env.faults.length, 2);
  });
});

Deno.test("labels and comments change the issue during the run", async (t) => {
  await t.step("ensureLabel creates a missing label, and is fine when it exists", async () => {
    await using env = await setup();
    assert.equal(await env.github.ensureLabel("agent:working"), true);
    assert.equal(await env.github.ensureLabel("agent:working"), true);
    assert.deepEqual((await env.fake.state()).labels, ["bug", "enhancement", "agent:working"]);
  });

  await t.step("editLabel adds and removes a label", async () => {
    await using env = await setup();
    assert.equal(await env.github.editLabel(42, { add: "bug" }), true);
    assert.deepEqual((await env.fake.state()).issues[0].labels, ["enhancement", "bug"]);
    assert.equal(await env.github.editLabel(42, { remove: "enhancement" }), true);
    assert.deepEqual((await env.fake.state()).issues[0].labels, ["bug"]);
    assert.equal(await env.github.editLabel(42, { add: "enhancement", remove: "bug" }), true);
    assert.deepEqual((await env.fake.state()).issues[0].labels, ["enhancement"]);
  });

  await t.step("editLabel with a label the repository lacks fails after its retries", async () => {
    await using env = await setup(SEED, { attempts: 2 });
    assert.equal(await env.github.editLabel(42, { add: "nope" }), false);
    assert.equal(env.faults.length, 2);
    assert.match(env.faults[1].message, /'nope' not found/);
  });

  await t.step("comment posts the body as it is", async () => {
    await using env = await setup();
    const body = "<!-- finishline -->\n**finishline** iteration 1/3: `continue`";
    assert.equal(await env.github.comment(42, body), true);
    const comments = (await env.fake.state()).issues[0].comments ?? [];
    assert.equal(comments.at(-1)?.body, body);
  });

  await t.step("a comment that fails once is retried and posted once", async () => {
    await using env = await setup({ ...SEED, failures: [{ match: "issue comment", times: 1 }] });
    assert.equal(await env.github.comment(42, "progress"), true);
    const comments = (await env.fake.state()).issues[0].comments ?? [];
    assert.equal(comments.filter((comment) => comment.body === "progress").length, 1);
    assert.equal(env.faults.length, 1);
  });
});

Deno.test("project and projectItems read a Projects v2 board", async (t) => {
  await t.step("project gives number, title, url, node id and the owner asked for", async () => {
    await using env = await setup();
    assert.deepEqual(await env.github.project(1, "octo"), {
      number: 1,
      title: "Roadmap",
      url: "https://github.com/users/octo/projects/1",
      id: "PVT_kw1",
      owner: "octo",
    });
  });

  await t.step("--owner @me is passed through to gh", async () => {
    await using env = await setup();
    const project = await env.github.project(1, "@me");
    assert.equal(project.owner, "@me");
    assert.equal(project.title, "Roadmap");
    const items = await env.github.projectItems(1, "@me");
    assert.equal(items?.length, 3);
    const argv = (await env.fake.calls()).map((call) => call.argv);
    assert.deepEqual(argv[0], ["project", "view", "1", "--owner", "@me", "--format", "json"]);
    assert.deepEqual(argv[1].slice(0, 5), ["project", "item-list", "1", "--owner", "@me"]);
  });

  await t.step("a missing project is a UsageError naming the flags", async () => {
    await using env = await setup();
    const message = await usageErrorOf(() => env.github.project(9, "octo"));
    assert.match(
      message,
      /^Cannot find project #9 of owner "octo" \(flags "--project" and "--owner"\): GraphQL: /,
    );
  });

  await t.step(
    "items: issues with number, url, repository and labels; drafts without",
    async () => {
      await using env = await setup();
      assert.deepEqual(await env.github.projectItems(1, "octo"), [
        {
          id: "PVTI_a",
          title: "Add a greeting",
          status: "In Progress",
          labels: ["enhancement"],
          type: "Issue",
          number: 42,
          url: "https://github.com/octo/demo/issues/42",
          repository: "octo/demo",
        },
        {
          id: "PVTI_b",
          title: "Write the announcement",
          status: undefined,
          labels: [],
          type: "DraftIssue",
          number: undefined,
          url: undefined,
          repository: undefined,
        },
        {
          id: "PVTI_c",
          title: "Labelled draft",
          status: "Done",
          labels: ["docs"],
          type: "DraftIssue",
          number: undefined,
          url: undefined,
          repository: undefined,
        },
      ]);
    },
  );

  await t.step("strict items failing is a UsageError, not retried", async () => {
    await using env = await setup({
      ...SEED,
      failures: [{ match: "project item-list", times: 1 }],
    });
    const message = await usageErrorOf(() => env.github.projectItems(1, "octo", { strict: true }));
    assert.equal(message, `Cannot list the items of project #1 of owner "octo": ${BAD_GATEWAY}`);
  });

  await t.step("items during the run are retried, then undefined", async () => {
    await using env = await setup(
      { ...SEED, failures: [{ match: "project item-list", times: 5 }] },
      { attempts: 2 },
    );
    assert.equal(await env.github.projectItems(1, "octo"), undefined);
    assert.equal(env.faults.length, 2);
  });
});
