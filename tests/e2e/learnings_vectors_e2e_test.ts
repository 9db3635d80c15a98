/**
 * End to end for learnings by meaning: an agent whose agent.json sets
 * `learnings.embeddings` to an OpenAI-compatible endpoint (a local one in a
 * worker, standing in for a hosted model). The CLI as a subprocess, the real
 * Claude Code binary against the scripted model, real git, real SQLite with
 * sqlite-vec.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { runCli, tempRepo } from "../_helpers.ts";
import { EmbeddingsServer } from "../_embeddings_server.ts";

const KEY = "sk-test-e2e-embeddings-0123456789";
/** The user allows this key to go to the local endpoint (agent.json alone cannot). */
const ALLOW = { FINISHLINE_KEY_HOSTS: "FINISHLINE_E2E_EMBEDDINGS_KEY=127.0.0.1" };
const LEARNED = "The login test is flaky: wait for the redirect before asserting";

const commitTurn = (n: number) =>
  toolTurn("Bash", {
    command:
      `printf '${n}' > step${n}.txt && git add step${n}.txt && git commit -qm 'feat: step ${n}'`,
  });

const reportTurn = (task: string, learned: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: task,
    summary: "Done",
    learned: [learned],
  });

async function writeAgent(root: string, url: string): Promise<void> {
  await Deno.mkdir(`${root}/.agent/recall`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/.agent/recall/agent.json`,
    JSON.stringify({
      name: "recall",
      behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
      learnings: {
        embeddings: {
          provider: "http",
          url,
          model: "concepts",
          apiKeyEnv: "FINISHLINE_E2E_EMBEDDINGS_KEY",
        },
      },
    }),
  );
}

/** Every file under a folder, as text. */
async function filesUnder(dir: string): Promise<Array<[string, string]>> {
  const files: Array<[string, string]> = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) files.push(...await filesUnder(path));
    else files.push([path, new TextDecoder().decode(await Deno.readFile(path))]);
  }
  return files;
}

Deno.test("with embeddings, a later run gets a learning phrased in other words, and a reworded repeat counts as seen again", async () => {
  await using repo = await tempRepo();
  await using embeddings = await EmbeddingsServer.start();
  await writeAgent(repo.path, embeddings.url);
  await using server = await ScriptedModelServer.start({
    scripts: [
      [commitTurn(1), reportTurn("Fix the login test", LEARNED), textTurn("Done.")],
      [
        commitTurn(2),
        reportTurn(
          "the sign-in spec is unreliable",
          "the sign-in spec is intermittent: wait for the redirect before asserting",
        ),
        textTurn("Done again."),
      ],
    ],
  });
  const env = { ...ALLOW, FINISHLINE_E2E_EMBEDDINGS_KEY: KEY };
  const first = await runCli(["-a", "recall", "--task", "Fix the login test"], {
    cwd: repo.path,
    server,
    env,
  });
  assert.equal(first.code, 0, first.stderr);

  const second = await runCli(["-a", "recall", "--task", "the sign-in spec is unreliable"], {
    cwd: repo.path,
    server,
    env,
  });
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /learnings:/, "no note: vectors were used");
  const prompt = JSON.stringify(
    server.requests.find((request) => !request.side && request.sessionIndex === 1)!.body,
  );
  assert.ok(
    prompt.includes(LEARNED),
    "uv-learnings holds the learning no word of the task matches",
  );

  const search = await runCli(
    ["learnings", "search", "unreliable signin tests", "--agent", "recall", "--json"],
    { cwd: repo.path, env },
  );
  assert.equal(search.code, 0, search.stderr);
  const found = JSON.parse(search.stdout);
  assert.equal(found.length, 1, "the reworded repeat is no second learning");
  assert.equal(found[0].text, LEARNED);
  assert.equal(found[0].seen, 2);
  assert.ok(found[0].similarity > 0.3);
  const keywordOnly = await runCli(["learnings", "search", "unreliable signin tests", "--json"], {
    cwd: repo.path,
  });
  assert.deepEqual(JSON.parse(keywordOnly.stdout), [], "the default agent searches by keyword");

  const requests = await embeddings.requests();
  assert.ok(requests.length >= 4, `${requests.length} requests`);
  assert.ok(requests.every((request) => request.authorization === `Bearer ${KEY}`));
  for (const [path, text] of await filesUnder(`${repo.path}/.agent`)) {
    assert.ok(!text.includes(KEY), `the key is not in ${path}`);
  }
});

Deno.test("learnings search with an embeddings key that is not set: a note, and keyword results", async () => {
  await using repo = await tempRepo();
  await using embeddings = await EmbeddingsServer.start();
  await writeAgent(repo.path, embeddings.url);
  await using server = await ScriptedModelServer.start({
    scripts: [[commitTurn(1), reportTurn("Fix the login test", LEARNED), textTurn("Done.")]],
  });
  const run = await runCli(["-a", "recall", "--task", "Fix the login test"], {
    cwd: repo.path,
    server,
    env: ALLOW,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stderr,
    /\[finishline\] learnings: embeddings from http:concepts failed \(The embeddings API key variable FINISHLINE_E2E_EMBEDDINGS_KEY is not set \(learnings\.embeddings\.apiKeyEnv\)\): stored without vectors for now/,
  );
  const search = await runCli(["learnings", "search", "login", "--agent", "recall"], {
    cwd: repo.path,
    env: ALLOW,
  });
  assert.equal(search.code, 0, search.stderr);
  assert.match(search.stdout, /^- The login test is flaky/m);
  assert.match(search.stderr, /searching by keyword only/);
  assert.deepEqual(await embeddings.requests(), []);
});
