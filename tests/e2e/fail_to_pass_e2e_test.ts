/**
 * End to end for the worker's own test of a bug fix and the reviewer of
 * declarations: the CLI as a subprocess, the real Claude Code binary against
 * the scripted model server (worker, verifier and reviewer sessions), real
 * git, real `npm test`, and the fake `gh` for issue runs. The repository's
 * suite is green at the start and blind to the bug, so only the worker's
 * test, the held-out test or the reviewer can tell a fix from a claim.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import type { ChecksEvidence } from "../../agents/record/iteration.ts";
import {
  acceptDeclarations,
  type RoleScripts,
  ScriptedModelServer,
  type SessionScript,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";
import { CLAUDE_ACP } from "./_backends.ts";

const REPO = "octo/math";
const BROKEN = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a + b;\n";
const FIXED = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a - b;\n";
const SUITE = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;
const SUBTRACT_TEST = `const test = require("node:test");
const assert = require("node:assert");
const { subtract } = require("../src/math.js");
test("subtracts", () => assert.equal(subtract(5, 3), 2));
`;
const ISSUE = {
  number: 7,
  title: "subtract adds",
  body: "subtract(5, 3) returns 8; it must return 2.",
};

const bash = (command: string) => toolTurn("Bash", { command });
const printf = (file: string, text: string) =>
  `${file.includes("/") ? `mkdir -p ${file.replace(/\/[^/]+$/, "")} && ` : ""}printf '${
    text.replaceAll("'", "'\\''").replaceAll("\n", "\\n")
  }' > ${file}`;
const fix = bash(`${printf("src/math.js", FIXED)} && git commit -qam 'fix: subtract'`);
const addTest = bash(
  `${
    printf("test/subtract.test.js", SUBTRACT_TEST)
  } && git add test && git commit -qm 'test: subtract'`,
);
const claim = (extra: Record<string, unknown> = {}) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "subtract returns a - b",
    summary: "Fixed subtract.",
    ...extra,
  });

interface Played {
  code: number;
  stderr: string;
  status: string;
  report: string;
  /** What the worker's requests carried (its prompts and the tool results it read). */
  told: string;
  /** The worker's system prompts. */
  workerSystem: string;
  /** Each role's requests, JSON. */
  roles: Record<string, string[]>;
  checks: ChecksEvidence | undefined;
  issueState?: string;
  requests: ScriptedModelServer["requests"];
}

async function play(options: {
  worker: SessionScript;
  roles?: RoleScripts;
  issue?: { labels: string[] };
  verify?: Record<string, unknown>;
  files?: Record<string, string>;
  args?: string[];
}): Promise<Played> {
  await using repo = await tempRepo();
  const files = {
    ".gitignore": "node_modules\n",
    "package.json": JSON.stringify({
      name: "math",
      private: true,
      scripts: { test: "node --test" },
    }),
    "src/math.js": BROKEN,
    "test/math.test.js": SUITE,
    ...options.files,
  };
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(`${repo.path}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${repo.path}/${file}`, text);
  }
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "math");
  await commitAgent(repo.path, {
    name: "fixer",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 1 },
      allowedTools: ["Bash"],
    },
    ...(options.verify ? { verify: options.verify } : {}),
    probe: { enabled: false },
  });
  await using gh = options.issue
    ? await FakeGitHub.create({ repo: REPO, issues: [{ ...ISSUE, labels: options.issue.labels }] })
    : undefined;
  await using server = await ScriptedModelServer.start({
    scripts: [options.worker],
    roles: options.roles,
    fallback: textTurn("Nothing more to do."),
  });
  const args = options.issue
    ? ["--agent", "fixer", "--issue", String(ISSUE.number), "--json"]
    : ["--agent", "fixer", "--task", ISSUE.body, "--json", ...(options.args ?? [])];
  const run = await runCli(args, { cwd: repo.path, server, env: gh?.env() });
  const result = JSON.parse(run.stdout);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line));
  const finished = records.filter((record) => record.kind === "iteration_finished");
  const main = server.requests.filter((request) => !request.side);
  const worker = main.filter((request) => !request.role);
  const roles: Record<string, string[]> = {};
  for (const request of main.filter((request) => request.role)) {
    (roles[request.role!] ??= []).push(JSON.stringify(request.body));
  }
  return {
    code: run.code,
    stderr: run.stderr,
    status: result.status,
    report: result.report ? await Deno.readTextFile(result.report) : "",
    told: worker.map((request) => JSON.stringify(request.body.messages).slice(-8000)).join("\n"),
    workerSystem: worker.map((request) => JSON.stringify(request.body.system ?? "")).join("\n"),
    roles,
    checks: finished.at(-1)?.summary.checks,
    issueState: gh ? (await gh.state()).issues[0].state : undefined,
    requests: server.requests,
  };
}

Deno.test("an issue labelled bug needs the worker's own failing test: a fix without one is sent back, with one it completes", async () => {
  const run = await play({
    issue: { labels: ["bug"] },
    worker: [fix, claim(), addTest, claim({ summary: "Fixed subtract, with a test." })],
  });
  assert.equal(run.status, "completed", run.told.slice(-3000));
  assert.equal(run.code, 0);
  // The first claim was refused for want of a test, naming the label.
  assert.match(run.told, /This run needs a test of the fix \(issue #7 is labelled \\"bug\\"\)/);
  assert.match(run.workerSystem, /This is a bug fix \(issue #7 is labelled \\"bug\\"\)/);
  assert.deepEqual(run.checks?.workerTest, {
    required: 'issue #7 is labelled "bug"',
    files: ["test/subtract.test.js"],
    tests: ["subtracts"],
    failedWith: ["name: 'AssertionError'", "expected: 2", "actual: 8"],
    passed: true,
  });
  // The reviewer (scripted to accept) was asked whether that failure is the bug.
  assert.match(run.roles.reviewer?.[0] ?? "", /worker_test \\"subtracts\\"/);
  assert.match(
    run.report,
    /\*\*The agent's own test of the fix\*\* \(needed: issue #7 is labelled "bug"\): subtracts failed on the starting commit and passes on the final one/,
  );
  // Issue runs have a verifier by default; this one (scripted) wrote no test.
  assert.equal(run.roles.verifier?.length, 1);
  assert.match(run.workerSystem, /A held-out acceptance test for this task is being written/);
  assert.match(run.report, /Held-out reproduction test: none, the verifier wrote no test file/);
  assert.equal(run.issueState, "CLOSED");
});

Deno.test("an issue not labelled bug completes on the fix alone; the verifier still ran", async () => {
  const run = await play({ issue: { labels: ["enhancement"] }, worker: [fix, claim()] });
  assert.equal(run.status, "completed", run.told.slice(-3000));
  assert.equal(run.checks?.workerTest, undefined);
  assert.doesNotMatch(run.workerSystem, /This is a bug fix/);
  assert.equal(run.roles.verifier?.length, 1);
  assert.equal(run.issueState, "CLOSED");
});

/** A lint check red from the start, which the worker leaves red and declares out of scope. */
const LINTED = {
  "package.json": JSON.stringify({
    name: "math",
    private: true,
    scripts: { test: "node --test", lint: "node lint.js" },
  }),
  "lint.js": 'console.error("src/math.js: 2 problems"); process.exit(1);\n',
};
const OUT_OF_SCOPE = {
  out_of_scope: [{ check: "npm run lint", reason: "The lint problems predate this task." }],
};

Deno.test("a declaration the reviewer refuses sends the worker back with the reviewer's reason", async () => {
  let reviews = 0;
  const run = await play({
    files: LINTED,
    worker: [
      textTurn("Thinking aloud: the worker's transcript stays with the worker."),
      fix,
      claim(OUT_OF_SCOPE),
      bash(
        `${
          printf("lint.js", "process.exit(0);\n")
        } && git commit -qam 'chore: fix the lint problems'`,
      ),
      claim(),
    ],
    roles: {
      reviewer: [(ctx) => {
        reviews++;
        return acceptDeclarations(
          false,
          "lint.js is in the diff's project and fails on the file the task changes.",
        )(ctx);
      }],
    },
  });
  assert.equal(run.status, "completed", run.told.slice(-3000));
  assert.equal(reviews, 1);
  assert.match(
    run.told,
    /An independent reviewer, who read your diff and your reasons but not your session, refused a declaration: out_of_scope \\"npm run lint\\": lint.js is in the diff's project and fails on the file the task changes\. A refused/,
  );
  const [review] = run.roles.reviewer;
  assert.match(review, /\[finishline reviewer session\]/);
  assert.match(review, /out_of_scope \\"npm run lint\\"/);
  assert.match(review, /The worker's reason: The lint problems predate this task\./);
  assert.match(review, /-exports.subtract = \(a, b\) => a \+ b;/, "the reviewer reads the diff");
  assert.doesNotMatch(review, /Thinking aloud/, "never the worker's transcript");
  assert.match(run.report, /Reviewer of declarations: 1 session, 1 model request/);
});

Deno.test("an accepted declaration stands, and the report lists it with the verdict", async () => {
  const run = await play({ files: LINTED, worker: [fix, claim(OUT_OF_SCOPE)] });
  assert.equal(run.status, "completed", run.report);
  assert.equal(run.checks?.declarations?.[0].verdict, "accepted");
  assert.match(
    run.report,
    /- out_of_scope "npm run lint": \*\*accepted\*\*: The scripted reviewer accepts it\. \(the agent's reason: The lint problems predate this task\.\)/,
  );
});

Deno.test("verify.reproduceModel runs the verifier and the reviewer on another model", async () => {
  const run = await play({
    files: LINTED,
    verify: { reproduce: "held-out", reproduceModel: "claude-haiku-4-5" },
    worker: [fix, claim(OUT_OF_SCOPE)],
  });
  assert.equal(run.status, "completed", run.told.slice(-3000));
  const models = (role: string) =>
    new Set(run.requests.filter((request) => request.role === role).map((r) => r.body.model));
  assert.deepEqual(models("verifier"), new Set(["claude-haiku-4-5"]));
  assert.deepEqual(models("reviewer"), new Set(["claude-haiku-4-5"]));
  const worker = new Set(
    run.requests.filter((request) => !request.side && !request.role).map((r) => r.body.model),
  );
  assert.ok(!worker.has("claude-haiku-4-5"), `the worker keeps its model: ${[...worker]}`);
});

Deno.test('verify.reproduce "worker" on a task needs the worker\'s test; "off" on an issue runs no verifier', async () => {
  const task = await play({ verify: { reproduce: "worker" }, worker: [fix, claim()] });
  assert.notEqual(task.status, "completed");
  assert.match(
    task.told,
    /This run needs a test of the fix \(\\"verify.reproduce\\" is \\"worker\\"\)/,
  );
  assert.equal(task.roles.verifier, undefined, "worker alone starts no verifier");
  const issue = await play({
    issue: { labels: ["bug"] },
    verify: { reproduce: "off" },
    worker: [fix, claim()],
  });
  assert.equal(issue.status, "completed", issue.told.slice(-3000));
  assert.equal(issue.roles.verifier, undefined);
  assert.equal(issue.checks?.workerTest, undefined);
});

Deno.test("verify.reproduceBackend runs the verifier and the reviewer on claude-agent-acp beside an SDK worker", async () => {
  const run = await play({
    files: LINTED,
    verify: {
      reproduce: "held-out",
      // As root, claude-agent-acp needs IS_SANDBOX (tests/e2e/_backends.ts).
      reproduceBackend: { acp: { command: CLAUDE_ACP, env: { IS_SANDBOX: "1" } } },
    },
    worker: [fix, claim(OUT_OF_SCOPE)],
  });
  assert.equal(run.status, "completed", run.stderr);
  const agents = (requests: ScriptedModelServer["requests"]) =>
    new Set(requests.map((request) => request.headers["user-agent"]));
  const worker = agents(run.requests.filter((request) => !request.side && !request.role));
  const verifier = agents(run.requests.filter((request) => request.role === "verifier"));
  const reviewer = agents(run.requests.filter((request) => request.role === "reviewer"));
  assert.equal(verifier.size, 1);
  assert.deepEqual(reviewer, verifier, "one backend for both");
  assert.ok(
    [...verifier].every((agent) => !worker.has(agent)),
    `another agent than the worker's: ${[...verifier]} against ${[...worker]}`,
  );
  assert.equal(run.checks?.declarations?.[0].verdict, "accepted");
});
