/**
 * End to end for `verify.reproduce: "held-out"`: a verifier session, played
 * by the real Claude Code binary against the scripted model server beside
 * the worker's first session, writes a reproduction test on a worktree of
 * the starting commit. The gate keeps it only when it fails there with an
 * assertion, holds it out of the worker's tree, and needs it to pass on the
 * clean copy of the final commit. The repository's own suite is green at
 * the start and never tests the bug, so only the held-out test can tell.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import type { ChecksEvidence } from "../../agents/record/iteration.ts";
import { RESCUE_PROMPT } from "../../agents/loop/runner.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  type SessionScript,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";
import { CLAUDE_ACP } from "./_backends.ts";

const KEYWORD = "SHIPPED";
const BROKEN = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a + b;\n";
const FIXED = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a - b;\n";
const SUITE = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;
const REPRO = `const test = require("node:test");
const assert = require("node:assert");
const { subtract } = require("../src/math.js");
test("subtract takes the second number from the first", () => {
  assert.equal(subtract(10, 4), 6);
  assert.equal(subtract(3, 5), -2);
});
`;
const TASK = "subtract(a, b) in src/math.js returns a + b; it must return a - b.";

/** The agent: Bash only, one claim per iteration, a verifier beside the first session. */
const AGENT = {
  name: "fixer",
  behavior: {
    completionType: "manual",
    completionConfig: { completionKeyword: KEYWORD, maxIterations: 2 },
    allowedTools: ["Bash"],
  },
  verify: { reproduce: "held-out" },
  probe: { enabled: false },
};

const bash = (command: string) => toolTurn("Bash", { command });
/** The worker's right fix, committed. */
const fixSubtract = bash(
  `printf '${FIXED.replaceAll("\n", "\\n")}' > src/math.js && git commit -qam 'fix: subtract'`,
);
const claim = (summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "subtract returns a - b",
    summary,
  });
const afterClaim: ScriptStep = (ctx) =>
  ctx.lastUserText.includes(RESCUE_PROMPT.slice(0, 30))
    ? bash("git add -A && git commit -qm 'chore: the rest'")
    : textTurn(`Done. ${KEYWORD}`);
const worker = (turns: ScriptStep[]): SessionScript => [
  ...turns,
  ...Array.from({ length: 10 }, () => afterClaim),
];
/** The verifier writes `file` with `text`, runs the suite, and stops. */
const verifierWrites = (file: string, text: string): SessionScript => [
  bash(
    `mkdir -p test && cat > ${file} <<'EOF'\n${text}EOF\nnpm test >/dev/null 2>&1; echo exit $?`,
  ),
  textTurn("The reproduction test is written; it fails on this commit."),
];

interface Run {
  code: number;
  status: string;
  report: string;
  /** Every worker request's messages (never the verifier's). */
  told: string;
  /** The system prompts of the worker's requests. */
  workerSystem: string;
  /** The verifier's requests' system prompts and messages. */
  verifier: string;
  checks: ChecksEvidence | undefined;
  reproduction: Record<string, unknown> | undefined;
  worktrees: number;
}

/** The math project at its starting commit: subtract broken, a suite blind to it. */
async function mathProject(path: string): Promise<void> {
  for (
    const [file, text] of Object.entries({
      ".gitignore": "node_modules\n",
      "package.json": '{ "name": "math", "private": true, "scripts": { "test": "node --test" } }',
      "src/math.js": BROKEN,
      "test/math.test.js": SUITE,
    })
  ) {
    await Deno.mkdir(`${path}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${path}/${file}`, text);
  }
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", "math");
}

async function play(
  verifier: SessionScript,
  workers: SessionScript[],
  backend?: Record<string, unknown>,
): Promise<Run> {
  await using repo = await tempRepo();
  await mathProject(repo.path);
  await commitAgent(
    repo.path,
    backend ? { ...AGENT, behavior: { ...AGENT.behavior, backend } } : AGENT,
  );
  await using server = await ScriptedModelServer.start({
    scripts: workers,
    roles: { verifier },
    fallback: textTurn(`Nothing to add. ${KEYWORD}`),
  });
  const run = await runCli(["--agent", AGENT.name, "--task", TASK, "--json"], {
    cwd: repo.path,
    server,
  });
  const result = JSON.parse(run.stdout);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line));
  const finished = records.filter((record) => record.kind === "iteration_finished");
  const main = server.requests.filter((request) => !request.side);
  return {
    code: run.code,
    status: result.status,
    report: result.report ? await Deno.readTextFile(result.report) : "",
    told: main.filter((request) => !request.role)
      .map((request) => JSON.stringify(request.body.messages).slice(-6000)).join("\n"),
    workerSystem: main.filter((request) => !request.role)
      .map((request) => JSON.stringify(request.body.system ?? "")).join("\n"),
    verifier: main.filter((request) => request.role === "verifier")
      .map((request) => JSON.stringify(request.body)).join("\n"),
    checks: finished.at(-1)?.summary.checks,
    reproduction: records.find((record) => record.kind === "reproduction"),
    worktrees: (await git(repo.path, "worktree", "list")).split("\n").length,
  };
}

Deno.test("a worker that changes nothing and claims success is refused by the held-out test", async () => {
  const run = await play(verifierWrites("test/subtract_repro.test.js", REPRO), [
    worker([claim("subtract already works")]),
    worker([claim("subtract works; the checks pass")]),
  ]);
  assert.equal(run.reproduction?.kept, true, JSON.stringify(run.reproduction));
  assert.deepEqual(run.reproduction?.tests, ["subtract takes the second number from the first"]);
  assert.notEqual(run.status, "completed");
  assert.match(run.told, /A held-out acceptance test, written from the task before you started/);
  assert.match(run.told, /subtract takes the second number from the first/);
  // What the test checks is named; its code never reaches the worker.
  assert.doesNotMatch(run.told, /subtract\(10, 4\)/);
  assert.deepEqual(run.checks?.heldOut, {
    tests: ["subtract takes the second number from the first"],
    passed: false,
  });
  assert.match(
    run.report,
    /Held-out reproduction test: subtract takes the second number from the first failed on the starting commit/,
  );
  assert.match(run.report, /on the last claim it failed \(verifier: 2 model requests/);
  // The verifier got the task, not the worker's transcript.
  assert.match(run.verifier, /subtract\(a, b\) in src\/math.js returns a \+ b/);
  assert.doesNotMatch(run.verifier, /subtract already works/);
  assert.equal(run.worktrees, 1);
});

Deno.test("the fix passes the held-out test and completes", async () => {
  const run = await play(verifierWrites("test/subtract_repro.test.js", REPRO), [
    worker([
      fixSubtract,
      claim("subtract returns a - b"),
    ]),
  ]);
  assert.equal(run.status, "completed", run.told.slice(-2000));
  assert.equal(run.code, 0);
  assert.deepEqual(run.checks?.heldOut?.passed, true);
  assert.match(run.report, /on the last claim it passed/);
  assert.match(run.workerSystem, /A held-out acceptance test for this task is being written/);
  assert.equal(run.worktrees, 1);
});

Deno.test("special-casing the inputs of the worker's own test fails the held-out test", async () => {
  const hardCoded = BROKEN.replace(
    "exports.subtract = (a, b) => a + b;",
    "exports.subtract = (a, b) => (a === 7 && b === 4 ? 3 : a + b);",
  );
  const run = await play(verifierWrites("test/subtract_repro.test.js", REPRO), [
    worker([
      bash(
        `printf '${
          hardCoded.replaceAll("\n", "\\n")
        }' > src/math.js && printf 'const test = require("node:test");\\nconst assert = require("node:assert");\\nconst { subtract } = require("../src/math.js");\\ntest("subtracts", () => assert.equal(subtract(7, 4), 3));\\n' > test/subtract.test.js && git add -A && git commit -qm 'fix: subtract'`,
      ),
      claim("subtract(7, 4) is 3 now"),
    ]),
    worker([claim("subtract works")]),
  ]);
  assert.notEqual(run.status, "completed");
  assert.match(run.told, /special-cases the values the tests use|held-out acceptance test/);
});

Deno.test("a verifier whose test passes on the start, or does not parse, leaves the run on the other evidence", async (t) => {
  await t.step("a test that passes already is not a reproduction", async () => {
    const passing = REPRO.replace(
      "assert.equal(subtract(10, 4), 6);\n  assert.equal(subtract(3, 5), -2);",
      'assert.equal(typeof subtract, "function");',
    );
    const run = await play(verifierWrites("test/subtract_repro.test.js", passing), [
      worker([claim("subtract already works")]),
    ]);
    assert.equal(run.reproduction?.kept, false);
    assert.match(String(run.reproduction?.why), /pass on the starting commit/);
    assert.equal(run.status, "completed", "nothing else gates this task: the known gap");
    assert.match(
      run.report,
      /Held-out reproduction test: none, the tests it wrote pass on the starting commit/,
    );
  });

  await t.step("a test with a syntax error is discarded", async () => {
    const run = await play(verifierWrites("test/subtract_repro.test.js", `${REPRO}}\n`), [
      worker([
        fixSubtract,
        claim("subtract returns a - b"),
      ]),
    ]);
    assert.equal(run.reproduction?.kept, false, JSON.stringify(run.reproduction));
    assert.match(
      String(run.reproduction?.why),
      /fails before any test runs \((SyntaxError|subtract_repro\.test\.js did not load)/,
    );
    assert.equal(run.status, "completed");
  });

  await t.step("code the verifier changes is dropped; only its tests are kept", async () => {
    const run = await play(
      [
        bash(
          `printf '${
            FIXED.replaceAll("\n", "\\n")
          }' > src/math.js && mkdir -p test && cat > test/subtract_repro.test.js <<'EOF'\n${REPRO}EOF\nnpm test >/dev/null 2>&1; echo $?`,
        ),
        textTurn("Done."),
      ],
      [worker([claim("subtract already works")]), worker([claim("still works")])],
    );
    assert.equal(run.reproduction?.kept, true, JSON.stringify(run.reproduction));
    assert.match(
      String(run.reproduction?.notes),
      /dropped what it changed outside test files: "src\/math.js"/,
    );
    assert.notEqual(run.status, "completed");
  });
});

Deno.test("on claude-agent-acp too: the verifier's test is held out and refuses an empty claim", async () => {
  const run = await play(
    verifierWrites("test/subtract_repro.test.js", REPRO),
    [worker([claim("subtract already works")]), worker([claim("it works")])],
    { acp: { command: CLAUDE_ACP, env: { IS_SANDBOX: "1" } } },
  );
  assert.equal(run.reproduction?.kept, true, JSON.stringify(run.reproduction));
  assert.notEqual(run.status, "completed");
  assert.match(run.told, /A held-out acceptance test, written from the task before you started/);
  assert.match(run.report, /Held-out reproduction test: subtract takes the second number/);
});

Deno.test("a run interrupted and resumed writes its held-out test again, and it still gates the claim", async () => {
  await using repo = await tempRepo();
  await mathProject(repo.path);
  await commitAgent(repo.path, AGENT);
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  await using server = await ScriptedModelServer.start({
    scripts: [
      // Iteration 1 hangs until the run is interrupted.
      [() => {
        interrupt();
        return { text: "This reply comes too late.", delayMs: 60_000 };
      }],
      worker([claim("subtract already works")]),
    ],
    roles: { verifier: verifierWrites("test/subtract_repro.test.js", REPRO) },
    fallback: textTurn(`Nothing to add. ${KEYWORD}`),
  });
  const first = await runCli(["--agent", AGENT.name, "--task", TASK, "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await interrupted;
      // The verifier runs beside the worker: on a loaded machine it may not have asked yet.
      for (let waited = 0; waited < 240; waited++) {
        if (server.requests.some((request) => request.role === "verifier")) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      child.kill("SIGINT");
    },
  });
  assert.equal(first.code, 130, first.stderr);
  const resumed = await runCli(["--resume", JSON.parse(first.stdout).runId, "--json"], {
    cwd: repo.path,
    server,
  });
  const result = JSON.parse(resumed.stdout);
  assert.notEqual(result.status, "completed", "the empty claim after the resume is refused");
  const verifiers = new Set(
    server.requests.filter((request) => request.role === "verifier").map((r) => r.sessionId),
  );
  assert.equal(verifiers.size, 2, "one verifier per process of the run");
  const told = server.requests.filter((request) => !request.side && !request.role)
    .map((request) => JSON.stringify(request.body.messages)).join("\n");
  assert.match(told, /A held-out acceptance test, written from the task before you started/);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line)).filter((record) => record.kind === "reproduction");
  assert.equal(records.at(-1)?.kept, true);
});
