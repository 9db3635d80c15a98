// Every file in tests/fixtures/test_output/ is a real capture (stdout and stderr)
// of the runner on a small sample project with passing tests, a failing nested
// test and a failing top-level one: node 20.20 (`node --test
// --test-reporter=spec|tap`), deno 2.9 (`deno test`, with and without colour),
// pytest 9.0 (`-p no:cacheprovider`, plain and `-v`), go 1.19 (`go test ./...`,
// plain and `-v`, over two packages), cargo 1.95 (`cargo test --no-fail-fast`:
// lib, integration test and doc tests), jest 30.5 and vitest 4.1 (`vitest run`,
// with and without colour). Stack traces were shortened with
// NODE_OPTIONS=--stack-trace-limit=2 and RUST_BACKTRACE=0 to keep them small.
//
// The files named *_skips, *_ignored, *_skipped and *_failing add tests set
// aside: `it.skip`, `{ todo }`, `t.step({ ignore })`, `@pytest.mark.skip` and
// `xfail` (pytest 7.2, plain, `-v` and `-rA`), `t.Skip`, `#[ignore]`,
// `test.skip` and `test.todo` (jest with CI=true; vitest with CI=true, which
// colours it). cargo_failing.txt and cargo_ignored.txt are the same crate
// before and after `#[ignore]` was put on its two failing tests;
// pytest_failing.txt and pytest_skipped.txt the same for pytest. mocha 11.8's
// spec (plain and `--colors`), TAP and json reporters ran on the same kind of
// sample. The workspace files are one monorepo with packages a and b whose
// `test` runs `node --test --test-reporter=spec`: `pnpm -r --no-bail test`
// (pnpm 10.34, plain and with FORCE_COLOR=1), `pnpm -r --include-workspace-root`
// on a root script `test:coverage`, `npm test --workspaces` (npm 11.19),
// `yarn workspaces foreach -A -pvv run test` (yarn 4.18), `turbo run test
// --continue` (turbo 2.11) and `nx run-many -t test` (nx 21.6).
//
// The short snippets written inline below are real captures too, trimmed of
// stack traces, unless a comment says they were written by hand.

import assert from "node:assert/strict";
import {
  parseTestReport,
  testCounts,
  type TestReport,
  testsRun,
} from "../../../agents/evidence/run/test_report.ts";

const FIXTURES = new URL("../../fixtures/test_output/", import.meta.url);

function fixture(name: string): string {
  return Deno.readTextFileSync(new URL(name, FIXTURES));
}

/** The first `count` lines of a fixture, as if the run was cut off there. */
function head(name: string, count: number): string {
  return fixture(name).split("\n").slice(0, count).join("\n");
}

const NODE_ZERO = { skipped: 0, todo: 0 };

const EXPECTED: Record<string, TestReport> = {
  "node_spec.txt": {
    runner: "node",
    failed: ["math > adds", "divides"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
  },
  "node_tap.txt": {
    runner: "node",
    failed: ["math > adds", "divides"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
  },
  "deno.txt": {
    runner: "deno",
    failed: ["math > adds", "divides"],
    passed: 2,
    failedCount: 2,
    ignored: 0,
  },
  "pytest.txt": {
    runner: "pytest",
    failed: [
      "tests/test_math.py::test_add",
      "tests/test_math.py::TestMul::test_double[2]",
      "tests/test_math.py::test_uses_broken",
    ],
    passed: 3,
    failedCount: 3,
    skipped: 0,
    todo: 0,
  },
  "pytest_verbose.txt": {
    runner: "pytest",
    failed: [
      "tests/test_math.py::test_add",
      "tests/test_math.py::TestMul::test_double[2]",
      "tests/test_math.py::test_uses_broken",
    ],
    passed: 3,
    failedCount: 3,
    skipped: 0,
    todo: 0,
  },
  "go.txt": { runner: "go", failed: ["TestAdd/carry", "TestDiv"], failedCount: 2 },
  "go_verbose.txt": {
    runner: "go",
    failed: ["TestAdd/carry", "TestDiv"],
    passed: 3,
    failedCount: 2,
    skipped: 0,
  },
  "cargo.txt": {
    runner: "cargo",
    failed: ["tests::adds", "tests::nested::multiplies", "public_add_negative"],
    passed: 3,
    failedCount: 3,
    ignored: 0,
  },
  "jest.txt": {
    runner: "jest",
    failed: ["math > integers > adds", "divides"],
    passed: 2,
    failedCount: 2,
    skipped: 0,
    todo: 0,
  },
  "vitest.txt": {
    runner: "vitest",
    failed: ["math > integers > adds", "divides"],
    passed: 2,
    failedCount: 2,
    skipped: 0,
    todo: 0,
  },
  "mocha_spec.txt": {
    runner: "mocha",
    failed: ["divides", "math > integers > adds"],
    passed: 2,
    failedCount: 2,
    skipped: 2,
    skippedTests: ["math > rounds", "math > floors"],
  },
  "mocha_tap.txt": {
    runner: "mocha",
    failed: ["divides", "math integers adds"],
    passed: 2,
    failedCount: 2,
    skipped: 2,
    skippedTests: ["math rounds", "math floors"],
  },
  "mocha_json.txt": {
    runner: "mocha",
    failed: ["divides", "math integers adds"],
    passed: 2,
    failedCount: 2,
    skipped: 2,
    skippedTests: ["math rounds", "math floors"],
  },
};

/** The captures of tests set aside (skipped, ignored, todo), with what each says. */
const SET_ASIDE: Record<string, TestReport> = {
  "node_spec_skips.txt": {
    runner: "node",
    failed: ["math > adds"],
    passed: 2,
    failedCount: 1,
    skipped: 2,
    todo: 1,
    skippedTests: ["math > rounds", "divides", "floors"],
  },
  "node_tap_skips.txt": {
    runner: "node",
    failed: ["math > adds"],
    passed: 2,
    failedCount: 1,
    skipped: 2,
    todo: 1,
    skippedTests: ["math > rounds", "divides", "floors"],
  },
  "deno_ignored.txt": {
    runner: "deno",
    failed: ["math > adds"],
    passed: 1,
    failedCount: 1,
    ignored: 2,
    skippedTests: ["math > rounds", "divides"],
  },
  "pytest_skips.txt": {
    runner: "pytest",
    failed: ["tests/test_math.py::test_add"],
    passed: 1,
    failedCount: 1,
    skipped: 2,
    todo: 1,
  },
  "pytest_skips_verbose.txt": {
    runner: "pytest",
    failed: ["tests/test_math.py::test_add"],
    passed: 1,
    failedCount: 1,
    skipped: 2,
    todo: 1,
    skippedTests: [
      "tests/test_math.py::test_round",
      "tests/test_math.py::test_div",
      "tests/test_math.py::test_floor",
    ],
  },
  "pytest_skips_short.txt": {
    runner: "pytest",
    failed: ["tests/test_math.py::test_add"],
    passed: 1,
    failedCount: 1,
    skipped: 2,
    todo: 1,
    // -rs names a skip by where it was decided, not by the test.
    skippedTests: [
      "tests/test_math.py:12",
      "tests/test_math.py:23",
      "tests/test_math.py::test_div",
    ],
  },
  "pytest_failing.txt": {
    runner: "pytest",
    failed: ["tests/test_math.py::test_add", "tests/test_math.py::test_mul"],
    passed: 1,
    failedCount: 2,
    skipped: 0,
    todo: 0,
  },
  "pytest_skipped.txt": {
    runner: "pytest",
    failed: [],
    passed: 1,
    failedCount: 0,
    skipped: 2,
    todo: 0,
    skippedTests: ["tests/test_math.py:4", "tests/test_math.py:13"],
  },
  "go_skips_verbose.txt": {
    runner: "go",
    failed: ["TestDiv"],
    passed: 2,
    failedCount: 1,
    skipped: 2,
    skippedTests: ["TestAdd/carry", "TestRound"],
  },
  // Without -v go prints neither passes nor skips: both counts are unknown.
  "go_skips.txt": { runner: "go", failed: ["TestDiv"], failedCount: 1 },
  "cargo_failing.txt": {
    runner: "cargo",
    failed: ["tests::adds", "tests::adds_negative"],
    passed: 1,
    failedCount: 2,
    ignored: 0,
  },
  "cargo_ignored.txt": {
    runner: "cargo",
    failed: [],
    passed: 1,
    failedCount: 0,
    ignored: 2,
    skippedTests: ["tests::adds", "tests::adds_negative"],
  },
  "jest_skips.txt": {
    runner: "jest",
    failed: ["math > integers > adds"],
    passed: 2,
    failedCount: 1,
    skipped: 1,
    todo: 1,
    skippedTests: ["divides", "rounds"],
  },
  "vitest_skips_color.txt": {
    runner: "vitest",
    failed: ["math > integers > adds"],
    passed: 2,
    failedCount: 1,
    skipped: 1,
    todo: 1,
    skippedTests: ["rounds", "divides"],
  },
  "mocha_spec_color.txt": EXPECTED["mocha_spec.txt"],
};

/** The workspace captures: each package's failures under its name, counts summed. */
const WORKSPACES: Record<string, TestReport> = {
  "pnpm_recursive.txt": {
    runner: "node",
    failed: ["packages/b: adds", "packages/a: math > adds"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["packages/b: lower"],
  },
  "pnpm_color.txt": {
    runner: "node",
    failed: ["packages/b: adds", "packages/a: math > adds"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["packages/b: lower"],
  },
  // The workspace root (".") keeps its names as they are.
  "pnpm_root.txt": {
    runner: "node",
    failed: ["root works", "packages/b: adds"],
    passed: 1,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["packages/b: lower"],
  },
  "npm_workspaces.txt": {
    runner: "node",
    failed: ["a: math > adds", "b: adds"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["b: lower"],
  },
  "yarn_workspaces.txt": {
    runner: "node",
    failed: ["b: adds"],
    passed: 2,
    failedCount: 1,
    ...NODE_ZERO,
    skipped: 2,
    skippedTests: ["a: math > subtracts", "b: lower"],
  },
  "turbo.txt": {
    runner: "node",
    failed: ["b: adds", "a: math > adds"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["b: lower"],
  },
  "nx.txt": {
    runner: "node",
    failed: ["b: adds", "a: math > adds"],
    passed: 2,
    failedCount: 2,
    ...NODE_ZERO,
    skipped: 1,
    skippedTests: ["b: lower"],
  },
};

const ALL: Record<string, TestReport> = { ...EXPECTED, ...SET_ASIDE, ...WORKSPACES };

Deno.test("each runner's real output yields its failing tests and summary counts", async (t) => {
  for (const [name, expected] of Object.entries({ ...EXPECTED, ...SET_ASIDE })) {
    await t.step(`${name} is recognised without a hint`, () => {
      assert.deepEqual(parseTestReport(fixture(name)), expected);
    });
    await t.step(`${name} reads the same with its runner as the hint`, () => {
      assert.deepEqual(parseTestReport(fixture(name), expected.runner), expected);
    });
  }

  await t.step("every fixture is small and is read by a test", () => {
    for (const entry of Deno.readDirSync(FIXTURES)) {
      assert.ok(Deno.statSync(new URL(entry.name, FIXTURES)).size < 4096, entry.name);
      const used = ["deno_color.txt", "vitest_color.txt"].includes(entry.name);
      assert.ok(used || entry.name in ALL, entry.name);
    }
  });
});

Deno.test("nested and unusual failures are named as the runner names them", async (t) => {
  await t.step("a suite or deno test failing only through its children is left out", () => {
    for (const name of ["node_spec.txt", "node_tap.txt", "deno.txt"]) {
      assert.ok(!parseTestReport(fixture(name)).failed.includes("math"), name);
    }
    assert.ok(!parseTestReport(fixture("go.txt")).failed.includes("TestAdd"));
  });

  await t.step("deeply nested deno steps are joined with ' > '", () => {
    // Written by hand in deno test's format (steps indented two spaces a level).
    const output = [
      "running 1 test from ./a_test.ts",
      "api ...",
      "  users ...",
      "    creates ... FAILED (2ms)",
      "    lists ... ok (1ms)",
      "  users ... FAILED (due to 1 failed step) (4ms)",
      "api ... FAILED (due to 1 failed step) (5ms)",
      "",
      "FAILED | 0 passed (1 step) | 1 failed (2 steps) (9ms)",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "deno",
      failed: ["api > users > creates"],
      passed: 0,
      failedCount: 1,
      ignored: 0,
    });
  });

  await t.step("deno names an uncaught error after its module", () => {
    const output = [
      "Check unc_test.ts",
      "Uncaught error from ./unc_test.ts FAILED",
      "",
      " ERRORS ",
      "",
      "./unc_test.ts (uncaught error)",
      "error: Error: late",
      "",
      " FAILURES ",
      "",
      "./unc_test.ts (uncaught error)",
      "",
      "FAILED | 0 passed | 1 failed (0ms)",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "deno",
      failed: ["./unc_test.ts (uncaught error)"],
      passed: 0,
      failedCount: 1,
      ignored: 0,
    });
  });

  await t.step("TAP escapes are undone and failing TODO tests are not failures", () => {
    // Written by hand in node's TAP format.
    const output = [
      "TAP version 13",
      "# Subtest: handles \\# signs",
      "not ok 1 - handles \\# signs",
      "  ---",
      "  ...",
      "# Subtest: later",
      "not ok 2 - later # TODO",
      "# Subtest: skipped",
      "ok 3 - skipped # SKIP",
      "1..3",
      "# tests 3",
      "# pass 0",
      "# fail 1",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "node",
      failed: ["handles # signs"],
      passed: 0,
      failedCount: 1,
      skippedTests: ["later", "skipped"],
    });
  });

  await t.step("a pytest module that cannot be collected is named by its path", () => {
    const output = [
      "E   ModuleNotFoundError: No module named 'missing_module'",
      "=========================== short test summary info ============================",
      "ERROR tests/test_broken.py",
      "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
      "=============================== 1 error in 0.07s ===============================",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "pytest",
      failed: ["tests/test_broken.py"],
      passed: 0,
      failedCount: 1,
      skipped: 0,
      todo: 0,
    });
  });

  await t.step("pytest's quiet summary and 'no tests ran' are summaries", () => {
    assert.deepEqual(parseTestReport("..F\n1 failed, 2 passed in 0.02s"), {
      runner: "pytest",
      failed: [],
      passed: 2,
      failedCount: 1,
      skipped: 0,
      todo: 0,
    });
    assert.deepEqual(parseTestReport("===== no tests ran in 0.01s ====="), {
      runner: "pytest",
      failed: [],
      passed: 0,
      failedCount: 0,
      skipped: 0,
      todo: 0,
    });
  });

  await t.step("a go package that does not build is named by its import path", () => {
    // Written by hand in go test's format.
    const output = [
      "# example.com/m [example.com/m.test]",
      "./m_test.go:5:2: undefined: Add",
      "FAIL\texample.com/m [build failed]",
      "?   \texample.com/m/cmd\t[no test files]",
      "ok  \texample.com/m/util\t(cached)",
      "FAIL",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "go",
      failed: ["example.com/m"],
      failedCount: 1,
    });
  });

  await t.step("a jest suite that fails to load is named by its file", () => {
    const output = [
      "FAIL ./bad.test.js",
      "  ● Test suite failed to run",
      "",
      "    Jest encountered an unexpected token",
      "",
      "Test Suites: 1 failed, 1 total",
      "Tests:       0 total",
      "Snapshots:   0 total",
      "Time:        0.286 s",
      "Ran all test suites.",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "jest",
      failed: ["./bad.test.js"],
      passed: 0,
      failedCount: 0,
      skipped: 0,
      todo: 0,
    });
  });

  await t.step("a vitest file that fails to load is named by its file", () => {
    const output = [
      " RUN  v4.1.12 /tmp/samples/js/vbad",
      "",
      " ❯ bad.test.js (0 test)",
      "",
      "⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯",
      "",
      " FAIL  bad.test.js [ bad.test.js ]",
      "Error: boom at load",
      "",
      " Test Files  1 failed (1)",
      "      Tests  no tests",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "vitest",
      failed: ["bad.test.js"],
      passed: 0,
      failedCount: 0,
      skipped: 0,
      todo: 0,
    });
  });

  await t.step("vitest's '×' lines name tests when no FAIL header does", () => {
    // Written by hand: the list an older vitest prints, with full names.
    const output = [
      " ❯ src/math.test.ts (3 tests | 1 failed) 5ms",
      "   × math > adds 3ms",
      "   ✓ math > subtracts 1ms",
      "",
      "      Tests  1 failed | 2 passed (3)",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "vitest",
      failed: ["math > adds"],
      passed: 2,
      failedCount: 1,
      skipped: 0,
      todo: 0,
    });
  });
});

Deno.test("colour codes and carriage returns do not change what is read", async (t) => {
  await t.step("coloured deno output reads as the plain one", () => {
    assert.ok(fixture("deno_color.txt").includes("\x1b["));
    assert.deepEqual(parseTestReport(fixture("deno_color.txt")), EXPECTED["deno.txt"]);
  });

  await t.step("coloured vitest output reads as the plain one", () => {
    assert.ok(fixture("vitest_color.txt").includes("\x1b["));
    assert.deepEqual(parseTestReport(fixture("vitest_color.txt")), EXPECTED["vitest.txt"]);
  });

  await t.step("codes inside a name and hyperlinks are stripped", () => {
    const output = [
      "\x1b[31m--- FAIL: \x1b[1mTestAdd\x1b[22m (0.00s)\x1b[0m",
      "\x1b]8;;file:///m_test.go\x07m_test.go:3\x1b]8;;\x07: wrong",
      "FAIL\texample.com/m\t0.002s",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "go",
      failed: ["TestAdd"],
      failedCount: 1,
    });
  });

  await t.step("CRLF line ends and progress redrawn with \\r are read", () => {
    const output = fixture("cargo.txt").replaceAll("\n", "\r\n").replace(
      "test tests::adds ... FAILED",
      "running...\rtest tests::adds ... FAILED",
    );
    assert.deepEqual(parseTestReport(output), EXPECTED["cargo.txt"]);
  });
});

Deno.test("the hint picks the format first and auto-detection decides otherwise", async (t) => {
  const both = `${fixture("cargo.txt")}\n${fixture("jest.txt")}`;

  await t.step("without a hint the first format with a summary wins", () => {
    assert.deepEqual(parseTestReport(both), EXPECTED["cargo.txt"]);
  });

  await t.step("a hint reads the output in its format", () => {
    assert.deepEqual(parseTestReport(both, "jest"), EXPECTED["jest.txt"]);
  });

  await t.step("a hint that recognises nothing falls back to auto-detection", () => {
    assert.deepEqual(parseTestReport(fixture("pytest.txt"), "go"), EXPECTED["pytest.txt"]);
  });

  await t.step("each fixture is read by its own format whatever the hint", () => {
    const runners = ["node", "deno", "pytest", "go", "cargo", "jest", "vitest", "mocha"] as const;
    for (const [name, expected] of Object.entries(ALL)) {
      for (const hint of runners) {
        assert.deepEqual(parseTestReport(fixture(name), hint), expected, `${name} with ${hint}`);
      }
    }
  });
});

Deno.test("output that no format recognises gives no failures", async (t) => {
  await t.step("plain text", () => {
    assert.deepEqual(parseTestReport("Compiling app v0.1.0\nBuild finished in 2.1s\n"), {
      failed: [],
    });
  });

  await t.step("empty output, with or without a hint", () => {
    assert.deepEqual(parseTestReport(""), { failed: [] });
    assert.deepEqual(parseTestReport("", "node"), { failed: [] });
  });

  await t.step("a value that is not a string does not throw", () => {
    assert.deepEqual(parseTestReport(undefined as never), { failed: [] });
    assert.deepEqual(parseTestReport(42 as never, "deno"), { failed: [] });
  });
});

Deno.test("output cut off part-way still names the failures it holds", async (t) => {
  await t.step("node spec before its summary: names, no counts", () => {
    assert.deepEqual(parseTestReport(head("node_spec.txt", 30)), {
      runner: "node",
      failed: ["math > adds", "divides"],
    });
  });

  await t.step("node spec and TAP before the suite's result keep the suite's name", () => {
    assert.deepEqual(parseTestReport(head("node_spec.txt", 2)), {
      runner: "node",
      failed: ["math > adds"],
    });
    assert.deepEqual(parseTestReport(head("node_tap.txt", 6)), {
      runner: "node",
      failed: ["math > adds"],
    });
  });

  await t.step("deno inside a test's steps keeps the test's name", () => {
    assert.deepEqual(parseTestReport(head("deno.txt", 4)), {
      runner: "deno",
      failed: ["math > adds"],
    });
  });

  await t.step("cargo cut in the middle of a line", () => {
    const text = fixture("cargo.txt");
    const cut = text.slice(0, text.indexOf("test tests::nested::multiplies") + 36);
    assert.deepEqual(parseTestReport(cut), { runner: "cargo", failed: ["tests::adds"] });
  });

  await t.step("pytest cut in the middle of its short summary", () => {
    const text = fixture("pytest.txt");
    const cut = text.slice(0, text.indexOf("FAILED tests/test_math.py::TestMul") + 20);
    assert.deepEqual(parseTestReport(cut), {
      runner: "pytest",
      failed: ["tests/test_math.py::test_add"],
    });
  });

  await t.step("go verbose before the package line gives no counts", () => {
    assert.deepEqual(parseTestReport(head("go_verbose.txt", 12)), {
      runner: "go",
      failed: ["TestAdd/carry", "TestDiv"],
    });
  });
});

Deno.test("a test named several times is listed once", async (t) => {
  await t.step("deno's list, ERRORS and FAILURES name each failure once", () => {
    assert.equal(fixture("deno.txt").split("math ... adds").length - 1, 2);
    assert.deepEqual(parseTestReport(fixture("deno.txt")).failed, ["math > adds", "divides"]);
  });

  await t.step("pytest -v names failures in its progress and its short summary", () => {
    assert.deepEqual(
      parseTestReport(fixture("pytest_verbose.txt")).failed,
      EXPECTED["pytest_verbose.txt"].failed,
    );
  });

  await t.step("jest's closing summary of all failing tests repeats the headers", () => {
    // Written by hand: jest prints this section when several files ran.
    const output = [
      fixture("jest.txt"),
      "Summary of all failing tests",
      "FAIL ./math.test.js",
      "  ● math › integers › adds",
      "",
      "  ● divides",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), EXPECTED["jest.txt"]);
  });

  await t.step("node's closing list of failing tests adds no bare leaf names", () => {
    assert.deepEqual(parseTestReport(fixture("node_spec.txt")).failed, [
      "math > adds",
      "divides",
    ]);
  });
});

Deno.test("testsRun adds passed and failed when both are known", async (t) => {
  await t.step("from a summary", () => {
    assert.equal(testsRun(parseTestReport(fixture("cargo.txt"))), 6);
    assert.equal(testsRun(parseTestReport(fixture("go_verbose.txt"))), 5);
  });

  await t.step("unknown when a count is missing", () => {
    assert.equal(testsRun(parseTestReport(fixture("go.txt"))), undefined);
    assert.equal(testsRun({ failed: [] }), undefined);
    assert.equal(testsRun({ failed: [], passed: 4 }), undefined);
  });

  await t.step("zero when no test ran", () => {
    assert.equal(testsRun({ failed: [], passed: 0, failedCount: 0 }), 0);
  });
});

Deno.test("tests set aside are counted and named", async (t) => {
  await t.step("a failing node todo is set aside, not failed", () => {
    const report = parseTestReport(fixture("node_spec_skips.txt"));
    assert.ok(!report.failed.includes("divides"));
    assert.ok(report.skippedTests?.includes("divides"));
  });

  await t.step("deno counts ignored steps with ignored tests", () => {
    assert.equal(parseTestReport(fixture("deno_ignored.txt")).ignored, 2);
    const stepOnly = "ok | 1 passed (1 step) | 0 failed | 0 ignored (1 step) (51ms)";
    assert.equal(parseTestReport(stepOnly).ignored, 1);
  });

  await t.step("a count a runner leaves out when it is zero reads as zero", () => {
    assert.equal(parseTestReport(fixture("jest.txt")).skipped, 0);
    assert.equal(parseTestReport(fixture("pytest.txt")).todo, 0);
  });

  await t.step("a count a runner never reports stays unknown", () => {
    const cargo = parseTestReport(fixture("cargo.txt"));
    assert.equal(cargo.skipped, undefined);
    assert.equal(cargo.todo, undefined);
    assert.equal(parseTestReport(fixture("go_skips.txt")).skipped, undefined);
  });
});

Deno.test("testCounts gathers a report's counts for comparing two runs", async (t) => {
  await t.step("the failing cargo tests once ignored run fewer and ignore more", () => {
    assert.deepEqual(testCounts(parseTestReport(fixture("cargo_failing.txt"))), {
      run: 3,
      passed: 1,
      failed: 2,
      ignored: 0,
    });
    assert.deepEqual(testCounts(parseTestReport(fixture("cargo_ignored.txt"))), {
      run: 1,
      passed: 1,
      failed: 0,
      ignored: 2,
    });
  });

  await t.step("every kind a runner reports", () => {
    assert.deepEqual(testCounts(parseTestReport(fixture("jest_skips.txt"))), {
      run: 3,
      passed: 2,
      failed: 1,
      skipped: 1,
      todo: 1,
    });
  });

  await t.step("nothing known gives undefined", () => {
    assert.equal(testCounts({ failed: ["adds"] }), undefined);
  });
});

Deno.test("workspace runners' output is read package by package", async (t) => {
  for (const [name, expected] of Object.entries(WORKSPACES)) {
    await t.step(`${name}: each package's failures under its name, counts summed`, () => {
      assert.deepEqual(parseTestReport(fixture(name)), expected);
    });
  }

  await t.step("interleaved lines of packages run in parallel are told apart", () => {
    const lines = fixture("pnpm_recursive.txt").split("\n");
    const a = lines.filter((line) => line.startsWith("packages/a test: "));
    const b = lines.filter((line) => line.startsWith("packages/b test: "));
    const rest = lines.filter((line) => !a.includes(line) && !b.includes(line));
    const mixed = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [b[i], a[i]])
      .flat().filter((line) => line !== undefined);
    assert.deepEqual(
      parseTestReport([...rest.slice(0, 3), ...mixed, ...rest.slice(3)].join("\n")),
      WORKSPACES["pnpm_recursive.txt"],
    );
  });

  await t.step("yarn 3's report prefix reads as yarn 4's", () => {
    // Written by hand: yarn 4's capture with yarn 3's "➤ YN0000: " before each line.
    const output = fixture("yarn_workspaces.txt").split("\n").map((line) =>
      line.startsWith("[") ? `➤ YN0000: ${line}` : line
    ).join("\n");
    assert.deepEqual(parseTestReport(output), WORKSPACES["yarn_workspaces.txt"]);
  });

  await t.step("one package's run keeps its names as its runner prints them", () => {
    const text = fixture("npm_workspaces.txt");
    const onlyA = text.slice(0, text.indexOf("> b@1.0.0 test"));
    assert.deepEqual(parseTestReport(onlyA).failed, ["math > adds"]);
    const pnpmOne = fixture("pnpm_recursive.txt").split("\n").filter((line) =>
      !line.startsWith("packages/b ")
    ).join("\n");
    assert.deepEqual(parseTestReport(pnpmOne).failed, ["math > adds"]);
  });

  await t.step("a lone '[name]: ' line is a log line, not a package", () => {
    const output = `[vite]: ready\n${fixture("node_spec.txt")}`;
    assert.deepEqual(parseTestReport(output), EXPECTED["node_spec.txt"]);
  });
});

Deno.test("mocha's spec output cut off before its details names its failures", () => {
  assert.deepEqual(parseTestReport(head("mocha_spec.txt", 12)), {
    runner: "mocha",
    failed: ["divides", "math > integers > adds"],
    skippedTests: ["math > rounds", "math > floors"],
  });
});

Deno.test("a hand-written script's summary line gives counts, a stray word does not", async (t) => {
  await t.step("'Tests failed: 4' and '4 tests failed' are counts without a runner", () => {
    assert.deepEqual(parseTestReport("running...\nTests passed: 6\nTests failed: 4\n"), {
      failed: [],
      passed: 6,
      failedCount: 4,
    });
    assert.deepEqual(parseTestReport("10 tests passed\n4 tests failed.\n"), {
      failed: [],
      passed: 10,
      failedCount: 4,
    });
  });

  await t.step("'failed' inside a sentence is not a count", () => {
    for (
      const output of [
        "Build failed: see the log",
        "3 of 4 tests failed",
        "warning: 2 tests failed to compile last time",
        "retrying the 1 test failed earlier",
      ]
    ) {
      assert.deepEqual(parseTestReport(output), { failed: [] }, output);
    }
  });

  await t.step("a runner's summary wins over such a line", () => {
    const output = `${fixture("cargo.txt")}\nTests failed: 40\n`;
    assert.deepEqual(parseTestReport(output), EXPECTED["cargo.txt"]);
  });
});
