import assert from "node:assert/strict";
import { unanswered } from "../../agents/github/_calls.ts";
import { UsageError } from "../../agents/support/errors.ts";
import {
  type GhFault,
  GitHubCli,
  type GitHubOptions,
  type PullRequestCheck,
} from "../../agents/github/port.ts";
import { type FakeGhState, FakeGitHub, type FakePrCheckRound } from "../fixtures/fake_gh/mod.ts";
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

  await t.step("auth status is retried while GitHub is not answering", async () => {
    await using env = await setup({ ...SEED, failures: [{ match: "auth status", times: 1 }] });
    assert.equal(await env.github.preflight(), "gh version 2.62.0 (2024-11-14)");
    assert.equal(env.github.calls, 3);
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

  await t.step("before the run a 502 is retried with the run's backoff, then read", async () => {
    await using env = await setup({ ...SEED, failures: [{ match: "issue view", times: 2 }] });
    assert.equal((await env.github.issue(42)).title, "Add a greeting");
    assert.equal(env.github.calls, 3);
    assert.deepEqual(env.waits, [1, 2], "the backoff doubles, as during the run");
    assert.deepEqual(
      env.faults.map((fault) => [fault.attempt, fault.message, fault.willRetry]),
      [[1, "HTTP 502: Bad Gateway", true], [2, "HTTP 502: Bad Gateway", true]],
      "the unanswered attempts are reported, so a user sees why the start waits",
    );
  });

  await t.step(
    "a gh that keeps answering 502 is 'GitHub is not answering', not 'Cannot find'",
    async () => {
      await using env = await setup({ ...SEED, failures: [{ match: "issue view", times: 99 }] });
      assert.equal(
        await usageErrorOf(() => env.github.issue(42)),
        "GitHub is not answering (HTTP 502: Bad Gateway after 4 attempts): try again later",
      );
      assert.equal(env.github.calls, 4);
    },
  );

  await t.step("a real not-found is answered at once, with no retry", async () => {
    await using env = await setup();
    assert.match(await usageErrorOf(() => env.github.issue(99)), /^Cannot find issue #99 /);
    assert.equal(env.github.calls, 1);
    assert.deepEqual(env.waits, []);
  });

  await t.step("a 4xx other than not-found is an answer too", async () => {
    await using env = await setup({
      ...SEED,
      failures: [{
        match: "issue view",
        times: 1,
        stderr: "HTTP 403: Resource not accessible by integration",
      }],
    });
    assert.equal(
      await usageErrorOf(() => env.github.issue(42)),
      'Cannot find issue #42 (flag "--issue"): HTTP 403: Resource not accessible by integration',
    );
    assert.equal(env.github.calls, 1);
  });

  await t.step("a gh that never answers times out on each attempt", async () => {
    await using env = await setup(
      { ...SEED, failures: [{ match: "issue view", times: 2, mode: "hang" }] },
      { timeoutMs: 1500, attempts: 2 },
    );
    assert.equal(
      await usageErrorOf(() => env.github.issue(42)),
      "GitHub is not answering (no answer within 1.5 s after 2 attempts): try again later",
    );
  });
});

Deno.test("unanswered tells GitHub not answering from an answer", () => {
  const said = (stderr: string, code = 1) => unanswered({ code, stdout: "", stderr }, 30_000);
  assert.equal(said(BAD_GATEWAY), "HTTP 502: Bad Gateway");
  assert.equal(said("HTTP 503"), "HTTP 503");
  assert.equal(
    said(
      "error connecting to api.github.com\ncheck your internet connection or https://githubstatus.com",
    ),
    "error connecting to api.github.com",
  );
  assert.equal(
    said(
      'Post "https://api.github.com/graphql": dial tcp 140.82.112.6:443: connect: connection refused',
    ),
    'Post "https://api.github.com/graphql": dial tcp 140.82.112.6:443: connect: connection refused',
  );
  assert.equal(said("", 124), "no answer within 30 s");
  for (
    const answer of [
      "GraphQL: Could not resolve to an issue or pull request with the number of 9. (repository.issue)",
      "HTTP 404: Not Found (https://api.github.com/repos/o/r)",
      "HTTP 401: Bad credentials (https://api.github.com/graphql)",
    ]
  ) {
    assert.equal(said(answer), undefined, answer);
  }
  assert.equal(said("", 0), undefined);
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

  await t.step(
    "strict items: a 502 is retried, any other failure is a UsageError at once",
    async () => {
      await using env = await setup({
        ...SEED,
        failures: [
          { match: "project item-list", times: 1 },
          { match: "project item-list", times: 1, stderr: "HTTP 404: Not Found" },
        ],
      });
      const message = await usageErrorOf(() =>
        env.github.projectItems(1, "octo", { strict: true })
      );
      assert.equal(
        message,
        `Cannot list the items of project #1 of owner "octo": HTTP 404: Not Found`,
      );
      assert.equal(env.github.calls, 2);
    },
  );

  await t.step("items during the run are retried, then undefined", async () => {
    await using env = await setup(
      { ...SEED, failures: [{ match: "project item-list", times: 5 }] },
      { attempts: 2 },
    );
    assert.equal(await env.github.projectItems(1, "octo"), undefined);
    assert.equal(env.faults.length, 2);
  });
});

/** The seed with an open pull request from `finishline/greeting`. */
const PR_SEED: Partial<FakeGhState> = {
  ...SEED,
  pullRequests: [{
    number: 43,
    base: "main",
    head: "finishline/greeting",
    title: "Add a greeting",
    body: "Closes #42",
  }],
};

const BRANCH = "finishline/greeting";

/** A port over a fake whose pull request lists the given rounds of checks. */
async function withChecks(
  rounds: FakePrCheckRound[],
  options: Partial<GitHubOptions> = {},
  state: Partial<FakeGhState> = {},
) {
  return await setup({ ...PR_SEED, prChecks: { [BRANCH]: rounds }, ...state }, options);
}

const PENDING: FakePrCheckRound = [
  { name: "lint", state: "pass", elapsed: "12s", runId: 100 },
  { name: "test", state: "pending", runId: 100, jobId: 102 },
];
const PASSING: FakePrCheckRound = [
  { name: "lint", state: "pass", elapsed: "12s", runId: 100 },
  { name: "test", state: "pass", elapsed: "2m3s", runId: 100, jobId: 102 },
];
const FAILING: FakePrCheckRound = [
  { name: "lint", state: "pass", elapsed: "12s", runId: 100 },
  { name: "test", state: "fail", elapsed: "1m1s", runId: 100, jobId: 102, description: "exit 1" },
];

const LINT = {
  name: "lint",
  state: "pass",
  link: "https://github.com/octo/demo/actions/runs/100/job/101",
  runId: "100",
} as const;

function testCheck(state: PullRequestCheck["state"]): PullRequestCheck {
  return {
    name: "test",
    state,
    link: "https://github.com/octo/demo/actions/runs/100/job/102",
    runId: "100",
  };
}

Deno.test("pullRequestChecks reads a pull request's checks from gh's plain table", async (t) => {
  await t.step("passing and skipped checks pass; Actions links give their run id", async () => {
    await using env = await withChecks([[
      ...PASSING,
      { name: "deploy", state: "skipping" },
    ]]);
    assert.deepEqual(await env.github.pullRequestChecks(BRANCH), {
      state: "pass",
      checks: [{ name: "deploy", state: "skipping" }, LINT, testCheck("pass")],
    });
    assert.deepEqual((await env.fake.calls()).map((call) => [call.argv, call.exit]), [
      [["pr", "checks", BRANCH], 0],
    ]);
    assert.deepEqual(env.faults, []);
  });

  await t.step("a failed check is an answer though gh exits 1, and fails the whole", async () => {
    await using env = await withChecks([FAILING]);
    assert.deepEqual(await env.github.pullRequestChecks(BRANCH), {
      state: "fail",
      checks: [testCheck("fail"), LINT],
    });
    assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [1]);
    assert.deepEqual(env.faults, []);
    assert.equal(env.github.calls, 1);
  });

  await t.step("a pending check is an answer with gh's exit 8 (gh 2.36 and later)", async () => {
    await using env = await withChecks([PENDING]);
    assert.deepEqual(await env.github.pullRequestChecks(BRANCH), {
      state: "pending",
      checks: [LINT, testCheck("pending")],
    });
    assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [8]);
    assert.deepEqual(env.faults, []);
  });

  await t.step(
    "gh 2.23's table (no description column, exit 1 when pending) reads the same",
    async () => {
      for (const [round, state, exit] of [[PENDING, "pending", 1], [FAILING, "fail", 1]] as const) {
        await using env = await withChecks([round], {}, { version: "2.23.0" });
        const checks = await env.github.pullRequestChecks(BRANCH);
        assert.equal(checks?.state, state);
        assert.deepEqual(checks?.checks.map((check) => [check.name, check.state, check.runId]), [
          ...(state === "fail" ? [["test", "fail", "100"], ["lint", "pass", "100"]] : [
            ["lint", "pass", "100"],
            ["test", "pending", "100"],
          ]),
        ]);
        assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [exit]);
        assert.deepEqual(env.faults, []);
      }
    },
  );

  await t.step("a failure outweighs a pending check", async () => {
    await using env = await withChecks([[...FAILING, { name: "e2e", state: "pending" }]]);
    assert.equal((await env.github.pullRequestChecks(BRANCH))?.state, "fail");
  });

  await t.step("a cancelled check, which gh prints as fail and exits 0 for, fails", async () => {
    await using env = await withChecks([[PASSING[0], { name: "test", state: "cancel" }]]);
    assert.deepEqual(await env.github.pullRequestChecks(BRANCH), {
      state: "fail",
      // gh sorts by bucket, and a cancelled check's bucket is not "fail": not first.
      checks: [LINT, { name: "test", state: "fail" }],
    });
    assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [0]);
  });

  await t.step("no checks reported is none, not a fault", async () => {
    await using env = await withChecks([[]]);
    assert.deepEqual(await env.github.pullRequestChecks(BRANCH), { state: "none", checks: [] });
    assert.deepEqual((await env.fake.calls()).map((call) => call.exit), [1]);
    assert.deepEqual(env.faults, []);
    assert.equal(env.github.calls, 1);
  });

  await t.step("by number, URL or branch; --repo with a number or branch only", async () => {
    await using env = await withChecks([PASSING], { repo: "octo/demo" });
    for (const pr of ["43", "https://github.com/octo/demo/pull/43", BRANCH]) {
      assert.equal((await env.github.pullRequestChecks(pr))?.state, "pass", pr);
    }
    assert.deepEqual((await env.fake.calls()).map((call) => call.argv), [
      ["pr", "checks", "43", "--repo", "octo/demo"],
      ["pr", "checks", "https://github.com/octo/demo/pull/43"],
      ["pr", "checks", BRANCH, "--repo", "octo/demo"],
    ]);
  });

  await t.step("run ids come from Actions links only, old and new shapes", async () => {
    await using env = await withChecks([[
      { name: "a", state: "pass", link: "https://github.com/octo/demo/actions/runs/555/jobs/666" },
      {
        name: "b",
        state: "pass",
        link: "https://github.com/octo/demo/actions/runs/12345678901/job/2?pr=43",
      },
      { name: "c", state: "pass", link: "https://github.com/octo/demo/actions/runs/777" },
      { name: "d", state: "pass", link: "https://ci.example.com/builds/888" },
      { name: "e", state: "pass", link: "https://github.com/octo/demo/actions/runs/abc/job/1" },
    ]]);
    const checks = await env.github.pullRequestChecks(BRANCH);
    assert.deepEqual(checks?.checks.map((check) => [check.name, check.runId]), [
      ["a", "555"],
      ["b", "12345678901"],
      ["c", "777"],
      ["d", undefined],
      ["e", undefined],
    ]);
    assert.deepEqual(checks?.checks.map((check) => "runId" in check), [
      true,
      true,
      true,
      false,
      false,
    ]);
    assert.equal(checks?.checks[3].link, "https://ci.example.com/builds/888");
  });

  await t.step(
    "a pull request opened through the port is found by the URL it returned",
    async () => {
      await using env = await setup({ ...SEED, prChecks: { "feature/x": [FAILING] } });
      const url = await env.github.createPullRequest({
        base: "main",
        head: "feature/x",
        title: "X",
        body: "",
      });
      assert.equal(url, "https://github.com/octo/demo/pull/43");
      assert.equal((await env.github.pullRequestChecks(url!))?.state, "fail");
    },
  );

  await t.step("an unknown pull request is undefined after the retries", async () => {
    await using env = await withChecks([PASSING], { attempts: 2 });
    assert.equal(await env.github.pullRequestChecks("nope"), undefined);
    assert.deepEqual(
      env.faults,
      [1, 2].map((attempt) => ({
        args: ["pr", "checks", "nope"],
        code: 1,
        message: 'no pull requests found for branch "nope"',
        attempt,
        willRetry: attempt === 1,
      })),
    );
  });

  await t.step("a gh failure is retried, and the retry reads the same round", async () => {
    await using env = await withChecks([PENDING, PASSING], {}, {
      failures: [{ match: "pr checks", times: 1 }],
    });
    assert.equal((await env.github.pullRequestChecks(BRANCH))?.state, "pending");
    assert.deepEqual(env.faults.map((fault) => [fault.message, fault.willRetry]), [
      [BAD_GATEWAY, true],
    ]);
    assert.equal((await env.github.pullRequestChecks(BRANCH))?.state, "pass");
  });

  await t.step("output that is not gh's table is a fault, not an answer", async () => {
    await using dir = await tempDir("finishline-gh-odd-");
    const script = `#!/bin/sh\necho "Some checks were not successful"\nexit 1\n`;
    await Deno.writeTextFile(`${dir.path}/gh`, script, { mode: 0o755 });
    const faults: GhFault[] = [];
    const github = new GitHubCli({
      cwd: dir.path,
      gh: `${dir.path}/gh`,
      attempts: 1,
      onFault: (fault) => faults.push(fault),
    });
    assert.equal(await github.pullRequestChecks("9"), undefined);
    assert.deepEqual(faults.map((fault) => [fault.code, fault.message]), [
      [1, 'unexpected "gh pr checks" row: "Some checks were not successful"'],
    ]);
  });
});

Deno.test("waitForPullRequestChecks polls until no check is pending", async (t) => {
  await t.step("pending, pending, then pass: one poll per interval, each reported", async () => {
    await using env = await withChecks([PENDING, PENDING, PASSING]);
    const polls: string[] = [];
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      intervalMs: 1_000,
      onPoll: (checks) => polls.push(checks.state),
    });
    assert.deepEqual(result, {
      state: "pass",
      checks: [LINT, testCheck("pass")],
      timedOut: false,
    });
    assert.deepEqual(polls, ["pending", "pending", "pass"]);
    assert.deepEqual(env.waits, [1_000, 1_000]);
    assert.equal((await env.fake.calls()).length, 3);
  });

  await t.step("a failure ends the wait; the default interval is 15 s", async () => {
    await using env = await withChecks([PENDING, FAILING]);
    const result = await env.github.waitForPullRequestChecks(BRANCH, { timeoutMs: 600_000 });
    assert.deepEqual(result, { state: "fail", checks: [testCheck("fail"), LINT], timedOut: false });
    assert.deepEqual(env.waits, [15_000]);
  });

  await t.step("no checks at all is an answer, not a reason to wait", async () => {
    await using env = await withChecks([[]]);
    assert.deepEqual(await env.github.waitForPullRequestChecks(BRANCH, { timeoutMs: 60_000 }), {
      state: "none",
      checks: [],
      timedOut: false,
    });
    assert.deepEqual(env.waits, []);
  });

  await t.step("still pending at the deadline: the last answer, timed out", async () => {
    await using env = await withChecks([PENDING]);
    const polls: string[] = [];
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      intervalMs: 15_000,
      onPoll: (checks) => polls.push(checks.state),
    });
    assert.deepEqual(result, {
      state: "pending",
      checks: [LINT, testCheck("pending")],
      timedOut: true,
    });
    // Polls at 0, 15, 30, 45 s and at the deadline; the last wait is shortened
    // by the time the gh calls took, which counts against the budget.
    assert.deepEqual(polls, ["pending", "pending", "pending", "pending", "pending"]);
    assert.equal(env.waits.length, 4);
    assert.deepEqual(env.waits.slice(0, 3), [15_000, 15_000, 15_000]);
    assert.ok(env.waits[3] > 10_000 && env.waits[3] <= 15_000, `last wait ${env.waits[3]}`);
  });

  await t.step("a timeout of 0 polls once", async () => {
    await using env = await withChecks([PENDING]);
    const result = await env.github.waitForPullRequestChecks(BRANCH, { timeoutMs: 0 });
    assert.equal(result.timedOut, true);
    assert.equal(result.state, "pending");
    assert.equal((await env.fake.calls()).length, 1);
    assert.deepEqual(env.waits, []);
  });

  await t.step(
    "gh failing on every poll: faults reported, pending with no checks at the end",
    async () => {
      await using env = await withChecks([PASSING], { attempts: 1 }, {
        failures: [{ match: "pr checks", times: 100 }],
      });
      const polls: unknown[] = [];
      const result = await env.github.waitForPullRequestChecks(BRANCH, {
        timeoutMs: 30_000,
        intervalMs: 10_000,
        onPoll: (checks) => polls.push(checks),
      });
      assert.deepEqual(result, { state: "pending", checks: [], timedOut: true });
      assert.deepEqual(polls, []);
      assert.equal(env.faults.length, 4);
      assert.ok(env.faults.every((fault) => fault.message === BAD_GATEWAY));
    },
  );

  await t.step("a gh failure in the middle does not end the wait", async () => {
    await using env = await withChecks([PENDING, PASSING], {}, {
      failures: [{ match: "pr checks", times: 1 }],
    });
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      intervalMs: 5_000,
    });
    assert.equal(result.state, "pass");
    assert.equal(env.faults.length, 1);
    // One backoff wait for the retry, one poll interval.
    assert.deepEqual(env.waits, [1, 5_000]);
  });

  await t.step("an abort ends the wait like the deadline: the last answer, timed out", async () => {
    await using env = await withChecks([PENDING]);
    const controller = new AbortController();
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      signal: controller.signal,
      onPoll: () => controller.abort(),
    });
    assert.deepEqual(result, {
      state: "pending",
      checks: [LINT, testCheck("pending")],
      timedOut: true,
    });
    assert.equal((await env.fake.calls()).length, 1);
    assert.deepEqual(env.waits, []);
  });

  await t.step("an abort during a wait ends it at once, without another poll", async () => {
    const controller = new AbortController();
    const waits: number[] = [];
    await using env = await withChecks([PENDING], {
      sleep: (ms) => {
        waits.push(ms);
        controller.abort();
        // A wait that never ends by itself: only the abort can end it.
        return new Promise(() => {});
      },
    });
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    assert.equal(result.state, "pending");
    assert.equal(result.timedOut, true);
    assert.deepEqual(waits, [15_000]);
    assert.equal((await env.fake.calls()).length, 1);
  });

  await t.step("a signal aborted before the wait polls nothing", async () => {
    await using env = await withChecks([PASSING]);
    const result = await env.github.waitForPullRequestChecks(BRANCH, {
      timeoutMs: 60_000,
      signal: AbortSignal.abort(),
    });
    assert.deepEqual(result, { state: "pending", checks: [], timedOut: true });
    assert.equal(env.github.calls, 0);
  });

  await t.step("a negative timeout or an interval of 0 is a RangeError", async () => {
    await using env = await withChecks([PENDING]);
    await assert.rejects(
      env.github.waitForPullRequestChecks("43", { timeoutMs: -1 }),
      RangeError,
      'Cannot wait for the checks of "43": "timeoutMs" must be 0 or more, got -1',
    );
    await assert.rejects(
      env.github.waitForPullRequestChecks("43", { timeoutMs: 1_000, intervalMs: 0 }),
      RangeError,
      'Cannot wait for the checks of "43": "intervalMs" must be more than 0, got 0',
    );
    assert.equal(env.github.calls, 0);
  });
});

Deno.test("failedRunLog gives the end of a run's failed-step log", async (t) => {
  const lines = Array.from(
    { length: 100 },
    (_, i) => `test\tRun tests\t2026-01-01T00:00:${String(i % 60).padStart(2, "0")}Z line ${i + 1}`,
  );

  await t.step("the last 40 lines by default, or as many as asked", async () => {
    await using env = await setup({ ...SEED, runLogs: { "123": lines.join("\n") + "\n" } });
    assert.equal(await env.github.failedRunLog("123"), lines.slice(60).join("\n"));
    assert.equal(await env.github.failedRunLog("123", 3), lines.slice(97).join("\n"));
    assert.deepEqual((await env.fake.calls()).map((call) => call.argv), [
      ["run", "view", "123", "--log-failed"],
      ["run", "view", "123", "--log-failed"],
    ]);
  });

  await t.step("a log shorter than the tail is whole; an empty log is empty", async () => {
    await using env = await setup({ ...SEED, runLogs: { "1": "a\tb\tc\n", "2": "" } });
    assert.equal(await env.github.failedRunLog("1"), "a\tb\tc");
    assert.equal(await env.github.failedRunLog("2"), "");
  });

  await t.step("with a repository, --repo is passed", async () => {
    await using env = await setup({ ...SEED, runLogs: { "1": "x\n" } }, { repo: "octo/demo" });
    assert.equal(await env.github.failedRunLog("1"), "x");
    assert.deepEqual((await env.fake.calls())[0].argv, [
      "run",
      "view",
      "1",
      "--repo",
      "octo/demo",
      "--log-failed",
    ]);
  });

  await t.step("an unknown run is undefined after the retries", async () => {
    await using env = await setup(SEED, { attempts: 2 });
    assert.equal(await env.github.failedRunLog("999"), undefined);
    assert.equal(env.faults.length, 2);
    assert.match(env.faults[0].message, /^failed to get run: HTTP 404: Not Found/);
  });

  await t.step("a tail that is not a positive integer is a RangeError", async () => {
    await using env = await setup();
    for (const tail of [0, -1, 1.5]) {
      await assert.rejects(
        env.github.failedRunLog("123", tail),
        RangeError,
        `Cannot read the log of run "123": "tailLines" must be a positive integer, got ${tail}`,
      );
    }
    assert.equal(env.github.calls, 0);
  });
});

Deno.test("closeIssue and reopenIssue change an issue's state, with an optional comment", async (t) => {
  const issue42 = async (fake: FakeGitHub) =>
    (await fake.state()).issues.find((issue) => issue.number === 42)!;

  await t.step("close with a comment, then reopen with one", async () => {
    await using env = await setup();
    assert.equal(await env.github.closeIssue(42, "Done in #43"), true);
    let issue = await issue42(env.fake);
    assert.equal(issue.state, "CLOSED");
    assert.equal(issue.stateReason, "COMPLETED");
    assert.deepEqual(
      issue.comments?.slice(2).map((comment) => [comment.author, comment.body]),
      [["finishline-bot", "Done in #43"]],
    );
    assert.equal(await env.github.issueState(42), "CLOSED");

    assert.equal(await env.github.reopenIssue(42, "The test still fails"), true);
    issue = await issue42(env.fake);
    assert.equal(issue.state, "OPEN");
    assert.equal(issue.stateReason, "REOPENED");
    assert.deepEqual(issue.comments?.slice(2).map((comment) => comment.body), [
      "Done in #43",
      "The test still fails",
    ]);
    assert.deepEqual((await env.fake.calls()).map((call) => call.argv), [
      ["issue", "close", "42", "--comment", "Done in #43"],
      ["issue", "view", "42", "--json", "state"],
      ["issue", "reopen", "42", "--comment", "The test still fails"],
    ]);
    assert.deepEqual(env.faults, []);
  });

  await t.step("without a comment, no --comment and no comment", async () => {
    await using env = await setup(SEED, { repo: "octo/demo" });
    assert.equal(await env.github.closeIssue(42), true);
    assert.equal(await env.github.reopenIssue(42, ""), true);
    assert.equal((await issue42(env.fake)).comments?.length, 2);
    assert.deepEqual((await env.fake.calls()).map((call) => call.argv), [
      ["issue", "close", "42", "--repo", "octo/demo"],
      ["issue", "reopen", "42", "--repo", "octo/demo"],
    ]);
  });

  await t.step("closing a closed issue succeeds and changes nothing", async () => {
    await using env = await setup();
    assert.equal(await env.github.closeIssue(7), true);
    const issue = (await env.fake.state()).issues.find((issue) => issue.number === 7)!;
    assert.equal(issue.state, "CLOSED");
    assert.equal(issue.stateReason, undefined);
  });

  await t.step("a failure is retried and the comment posted once", async () => {
    await using env = await setup({ ...SEED, failures: [{ match: "issue close", times: 1 }] });
    assert.equal(await env.github.closeIssue(42, "Done"), true);
    const issue = await issue42(env.fake);
    assert.equal(issue.state, "CLOSED");
    assert.equal(issue.comments?.filter((comment) => comment.body === "Done").length, 1);
    assert.deepEqual(env.faults.map((fault) => [fault.args, fault.willRetry]), [
      [["issue", "close", "42", "--comment", "Done"], true],
    ]);
  });

  await t.step("a missing issue is false after the retries", async () => {
    await using env = await setup(SEED, { attempts: 2 });
    assert.equal(await env.github.reopenIssue(99, "again"), false);
    assert.equal(env.faults.length, 2);
    assert.match(env.faults[1].message, /Could not resolve to an issue or pull request/);
  });
});
