// Every file in tests/fixtures/test_output/ is a real capture (stdout and stderr)
// of the runner on a small sample project with passing tests, a failing nested
// test and a failing top-level one: node 20.20 (`node --test
// --test-reporter=spec|tap`), deno 2.9 (`deno test`, with and without colour),
// pytest 9.0 (`-p no:cacheprovider`, plain and `-v`), go 1.19 (`go test ./...`,
// plain and `-v`, over two packages), cargo 1.95 (`cargo test --no-fail-fast`:
// lib, integration test and doc tests), jest 30.5 and vitest 4.1 (`vitest run`,
// with and without colour). Stack traces were shortened with
// NODE_OPTIONS=--stack-trace-limit=2 and RUST_BACKTRACE=0 to keep them small.
// The short snippets written inline below are real captures too, trimmed of
// stack traces, unless a comment says they were written by hand.

import assert from "node:assert/strict";
import {
  parseTestReport,
  type TestReport,
  testsRun,
} from "../../../agents/common/checks/test_report.ts";

const FIXTURES = new URL("../../fixtures/test_output/", import.meta.url);

function fixture(name: string): string {
  return Deno.readTextFileSync(new URL(name, FIXTURES));
}

/** The first `count` lines of a fixture, as if the run was cut off there. */
function head(name: string, count: number): string {
  return fixture(name).split("\n").slice(0, count).join("\n");
}

const EXPECTED: Record<string, TestReport> = {
  "node_spec.txt": {
    runner: "node",
    failed: ["math > adds", "divides"],
    passed: 2,
    failedCount: 2,
  },
  "node_tap.txt": {
    runner: "node",
    failed: ["math > adds", "divides"],
    passed: 2,
    failedCount: 2,
  },
  "deno.txt": { runner: "deno", failed: ["math > adds", "divides"], passed: 2, failedCount: 2 },
  "pytest.txt": {
    runner: "pytest",
    failed: [
      "tests/test_math.py::test_add",
      "tests/test_math.py::TestMul::test_double[2]",
      "tests/test_math.py::test_uses_broken",
    ],
    passed: 3,
    failedCount: 3,
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
  },
  "go.txt": { runner: "go", failed: ["TestAdd/carry", "TestDiv"], failedCount: 2 },
  "go_verbose.txt": {
    runner: "go",
    failed: ["TestAdd/carry", "TestDiv"],
    passed: 3,
    failedCount: 2,
  },
  "cargo.txt": {
    runner: "cargo",
    failed: ["tests::adds", "tests::nested::multiplies", "public_add_negative"],
    passed: 3,
    failedCount: 3,
  },
  "jest.txt": {
    runner: "jest",
    failed: ["math > integers > adds", "divides"],
    passed: 2,
    failedCount: 2,
  },
  "vitest.txt": {
    runner: "vitest",
    failed: ["math > integers > adds", "divides"],
    passed: 2,
    failedCount: 2,
  },
};

Deno.test("each runner's real output yields its failing tests and summary counts", async (t) => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    await t.step(`${name} is recognised without a hint`, () => {
      assert.deepEqual(parseTestReport(fixture(name)), expected);
    });
    await t.step(`${name} reads the same with its runner as the hint`, () => {
      assert.deepEqual(parseTestReport(fixture(name), expected.runner), expected);
    });
  }

  await t.step("every fixture is small", () => {
    for (const entry of Deno.readDirSync(FIXTURES)) {
      assert.ok(Deno.statSync(new URL(entry.name, FIXTURES)).size < 4096, entry.name);
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
    });
  });

  await t.step("pytest's quiet summary and 'no tests ran' are summaries", () => {
    assert.deepEqual(parseTestReport("..F\n1 failed, 2 passed in 0.02s"), {
      runner: "pytest",
      failed: [],
      passed: 2,
      failedCount: 1,
    });
    assert.deepEqual(parseTestReport("===== no tests ran in 0.01s ====="), {
      runner: "pytest",
      failed: [],
      passed: 0,
      failedCount: 0,
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
    const runners = ["node", "deno", "pytest", "go", "cargo", "jest", "vitest"] as const;
    for (const [name, expected] of Object.entries(EXPECTED)) {
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
