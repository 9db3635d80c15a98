import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { listAndRunChecks } from "../../../agents/iterator/run/checks_setup.ts";
import { definitionOf } from "../../checks/_helpers.ts";
import { tempDir } from "../../_helpers.ts";

Deno.test("checks prints every candidate with why, then runs each check in order", async () => {
  await using repo = await tempDir("finishline-run-checks-");
  const files: Record<string, string> = {
    "package.json": JSON.stringify({
      scripts: {
        test: "node -e \"console.log('tests ran')\"",
        check: "node -e \"console.error('lint: 1 problem'); process.exit(1)\"",
      },
    }),
    "package-lock.json": "{}",
    "Makefile": "build:\n\ttrue\n",
    ".github/workflows/ci.yml": `on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci
      - run: npm run check
      - run: npm test
      - name: Upload
        run: ./upload.sh --token "\${{ secrets.TOKEN }}"
      - run: ./scripts/smoke.sh
`,
  };
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(repo.path, path)), { recursive: true });
    await Deno.writeTextFile(join(repo.path, path), text);
  }
  let output = "";
  const code = await listAndRunChecks(repo.path, definitionOf(), (text) => output += text);
  assert.equal(code, 1);
  const lines = output.split("\n");
  const listing = lines.slice(0, lines.findIndex((line) => line.startsWith("Baseline:")));
  assert.deepEqual(listing, [
    "Checks, in the order they run:",
    '  npm run check  (.github/workflows/ci.yml, job "test" runs it; package.json has scripts.check ("node -e \\"console.error(\'lint: 1 problem\'); process.exit(1)\\""))',
    '  npm test  (package.json has scripts.test; package-lock.json names npm; CI runs it too (.github/workflows/ci.yml, job "test"))',
    "CI commands not run:",
    '  ./scripts/smoke.sh  (.github/workflows/ci.yml, job "test", step "./scripts/smoke.sh": smoke.sh is not a package manager, make, cargo, go, deno or a Python test runner; the job needs what is not here (uses secrets.TOKEN, which is not available here))',
    "Skipped:",
    '  Makefile  (no "test" target)',
    '  .github/workflows/ci.yml job "test" step "npm ci"  ("npm ci" is setup (it installs or prepares), not a check)',
    '  .github/workflows/ci.yml job "test" step "Upload"  (uses secrets.TOKEN, which is not available here)',
    "At every claim:",
    "  npm run check  (the gate CI runs)",
    "  npm test  (the test command a contributor runs)",
  ]);
  assert.match(
    output,
    /\n\[1\/2\] running npm run check \(gate, from \.github\/workflows\/ci\.yml job "test" step "npm run check"; every claim\) \.\.\.\nred {4}npm run check[^\n]*\n/,
  );
  assert.match(output, /lint: 1 problem/);
  assert.match(
    output,
    /\n\[2\/2\] running npm test \(test, from package\.json scripts\.test; every claim\) \.\.\.\ngreen {2}npm test \(\d+\.\d s\)\n/,
  );
  assert.ok(
    output.endsWith(
      "\n1 green, 1 red; 3 candidates skipped, 1 CI command not run (listed above with why)\n",
    ),
    output,
  );
});
