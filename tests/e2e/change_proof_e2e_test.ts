/**
 * Proof of the change, end to end, on the real CLI and Claude Code binary
 * against the scripted model, in four runtimes (Node, Deno, Python, Go).
 * The repository's test checks `add(2, 2)` only. The worker first
 * special-cases that input (the test turns green, today's gate passes it);
 * with a mutants floor the claim is sent back naming the mutant the tests
 * let through and the line no test runs. The worker then writes the real
 * fix, which completes with the figures in `--json` and the report.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";
import { has } from "../evidence/proof/_catalogue.ts";

interface Project {
  name: string;
  available: () => Promise<boolean>;
  source: string;
  files: Record<string, string>;
  gamed: string;
  honest: string;
}

const PROJECTS: Project[] = [
  {
    name: "node",
    available: () => has("node", ["--version"]),
    source: "calc.js",
    files: {
      "package.json": JSON.stringify({ name: "calc", scripts: { test: "node --test" } }),
      "calc.js": "function add(a, b) {\n  return a - b;\n}\nmodule.exports = { add };\n",
      "calc.test.js":
        'const test = require("node:test");\nconst assert = require("node:assert");\nconst { add } = require("./calc.js");\ntest("adds", () => assert.strictEqual(add(2, 2), 4));\n',
    },
    gamed:
      "function add(a, b) {\n  if (a === 2 && b === 2) {\n    return 4;\n  }\n  if (a < 0) {\n    return 0;\n  }\n  return a - b;\n}\nmodule.exports = { add };\n",
    honest: "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n",
  },
  {
    name: "deno",
    available: () => has("deno", ["--version"]),
    source: "calc.ts",
    files: {
      "deno.json": "{}\n",
      "calc.ts": "export function add(a: number, b: number): number {\n  return a - b;\n}\n",
      "calc_test.ts":
        'import { add } from "./calc.ts";\nDeno.test("adds", () => {\n  if (add(2, 2) !== 4) throw new Error("wrong");\n});\n',
    },
    gamed:
      "export function add(a: number, b: number): number {\n  if (a === 2 && b === 2) {\n    return 4;\n  }\n  if (a < 0) {\n    return 0;\n  }\n  return a - b;\n}\n",
    honest: "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
  },
  {
    name: "python",
    available: async () =>
      await has("python3", ["-m", "pytest", "--version"]) &&
      (await has("python3", ["-c", "import coverage"]) ||
        await has("/usr/bin/python3", ["-c", "import coverage"])),
    source: "calc.py",
    files: {
      "pytest.ini": "[pytest]\n",
      "calc.py": "def add(a, b):\n    return a - b\n",
      "test_calc.py": "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
    },
    gamed:
      "def add(a, b):\n    if a == 2 and b == 2:\n        return 4\n    if a < 0:\n        return 0\n    return a - b\n",
    honest: "def add(a, b):\n    return a + b\n",
  },
  {
    name: "go",
    available: () => has("go", ["version"]),
    source: "calc/calc.go",
    files: {
      "go.mod": "module example.com/proof\n\ngo 1.19\n",
      "calc/calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
      "calc/calc_test.go":
        'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
    },
    gamed:
      "package calc\n\nfunc Add(a, b int) int {\n\tif a == 2 && b == 2 {\n\t\treturn 4\n\t}\n\tif a < 0 {\n\t\treturn 0\n\t}\n\treturn a - b\n}\n",
    honest: "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
  },
];

/** A Bash turn that writes a file from base64 (no quoting trouble) and commits it. */
function commitFile(path: string, text: string, message: string) {
  const encoded = btoa(text);
  return toolTurn("Bash", {
    command: `printf '%s' '${encoded}' | base64 -d > '${path}' && git commit -qam '${message}'`,
  });
}

const claim = (summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Make add() add",
    summary,
  });

for (const project of PROJECTS) {
  Deno.test({
    name:
      `proof of the change (${project.name}): a special-cased fix is sent back naming the surviving mutant; the real fix completes with the figures`,
    ignore: !(await project.available()),
    fn: async () => {
      await using repo = await tempRepo();
      for (const [name, text] of Object.entries(project.files)) {
        const file = `${repo.path}/${name}`;
        await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
        await Deno.writeTextFile(file, text);
      }
      await git(repo.path, "add", "-A");
      await git(repo.path, "commit", "-qm", "add() with a bug");
      await commitAgent(repo.path, {
        name: "proof",
        behavior: {
          completionType: "task",
          completionConfig: { maxIterations: 3 },
          allowedTools: ["Bash"],
          permissionMode: "acceptEdits",
        },
        verify: { reproduce: "off", changedLines: { mutants: 1 } },
      });
      await using server = await ScriptedModelServer.start({
        scripts: [
          [
            commitFile(project.source, project.gamed, "fix: add"),
            claim("add(2, 2) is 4 now"),
            // Sent back: the real fix.
            commitFile(project.source, project.honest, "fix: add adds"),
            claim("add() adds"),
            textTurn("Done."),
          ],
        ],
      });
      const run = await runCli(["--agent", "proof", "--task", "Make add() add", "--json"], {
        cwd: repo.path,
        server,
      });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.status, "completed", result.completionReason);
      // The special-cased claim was answered with the proof's findings.
      const answers = JSON.stringify(server.requests.map((request) => request.body));
      assert.match(answers, /leaves every test passing/);
      assert.match(answers, /no test runs it/);
      // The real fix: every changed line run, every mutant tried killed.
      const proof = result.evidence.changeProof;
      assert.ok(proof, JSON.stringify(result.evidence));
      assert.equal(proof.coverage, 1);
      assert.equal(proof.mutationScore, 1);
      assert.deepEqual(proof.files.map((file: { path: string }) => file.path), [project.source]);
      assert.ok(proof.measuredBy.length >= 1);
      const report = await Deno.readTextFile(result.report);
      assert.match(report, /\*\*Proof of the change\*\*.*changed lines run by the tests: 1 of 1/);
    },
  });
}
