/**
 * End to end for the package as users meet it: the CLI run as a remote module
 * (as from JSR, the built-in agent and prompts loaded by URL), the run report,
 * --quiet and --verbose, and the GitHub Actions workflow scaffold.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { denoDir, runCli, tempDir, tempRepo } from "../_helpers.ts";

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
    assert.match(run.stderr, /\[finishline\] report: .*\.md\n$/);
  });
  await t.step("--quiet", async () => {
    const run = await runCli(["--iterate-max", "1", "--quiet"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stderr.trim().split("\n").map((line) => line.split(":")[0]), [
      "[finishline] completed",
    ]);
  });
  await t.step("--verbose", async () => {
    const run = await runCli(["--iterate-max", "1", "--verbose"], { cwd: repo.path, server });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^ {2}\[tool\] Bash$/m);
    assert.match(run.stderr, /^ {2}\[agent\] Committed r\d\.txt$/m);
  });
});

Deno.test("--init NAME --github-actions writes a workflow with a matrix per issue", async () => {
  await using repo = await tempRepo();
  const init = await runCli(
    ["--init", "fixer", "--github-actions", "--trigger-label", "agent:go"],
    { cwd: repo.path },
  );
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /created \.github\/workflows\/finishline\.yml/);
  const text = await Deno.readTextFile(`${repo.path}/.github/workflows/finishline.yml`);
  const workflow = parseYaml(text);
  assert.deepEqual(workflow.on.issues.types, ["labeled"]);
  assert.equal(workflow.on.workflow_dispatch.inputs.issues.required, true);
  assert.deepEqual(Object.keys(workflow.jobs), ["plan", "run"]);
  assert.match(workflow.jobs.plan.if, /github\.event\.label\.name == "agent:go"/);
  const run = workflow.jobs.run;
  assert.equal(run.needs, "plan");
  assert.equal(run.strategy.matrix.issue, "${{ fromJSON(needs.plan.outputs.issues) }}");
  assert.equal(run.concurrency.group, "finishline-issue-${{ matrix.issue }}");
  const steps = run.steps as Array<Record<string, unknown>>;
  const agentStep = steps.find((step) => step.name === "Run the agent")!;
  assert.equal(
    (agentStep.env as Record<string, string>).ANTHROPIC_API_KEY,
    "${{ secrets.ANTHROPIC_API_KEY }}",
  );
  assert.match(
    String(agentStep.run),
    /jsr:@finishline\/agents\/iterator --agent fixer --issue \$\{\{ matrix\.issue \}\}/,
  );
  assert.ok(steps.some((step) => String(step.uses).startsWith("actions/upload-artifact@")));
  assert.ok(steps.some((step) => /gh issue comment/.test(String(step.run))));

  let actionlint: Deno.CommandOutput | undefined;
  try {
    actionlint = await new Deno.Command("actionlint", {
      args: [`${repo.path}/.github/workflows/finishline.yml`],
    }).output();
  } catch {
    actionlint = undefined;
  }
  if (actionlint) assert.equal(actionlint.code, 0, new TextDecoder().decode(actionlint.stdout));
  else console.log("actionlint is not installed: the workflow was checked by parsing it only");

  const again = await runCli(["--init", "other", "--github-actions"], { cwd: repo.path });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /finishline\.yml": it already exists/);
});
