// The output of ctest 3.25, meson 1.0 (`meson test --print-errorlogs`),
// minitest 5.15 (through `rake test`) and test-unit 3.5 (`ruby -Itest`),
// captured on this machine from small samples with a passing, a failing and
// a skipped test (stack traces and source excerpts trimmed). automake's,
// Maven's and Gradle's were written by hand from their documented formats:
// none of the three is installed here.

import assert from "node:assert/strict";
import { parseTestReport, testCounts } from "../../../agents/evidence/run/test_report.ts";
import { filterArgs } from "../../../agents/evidence/run/test_filter.ts";

const CTEST = `Internal ctest changing into directory: /tmp/tmp.l99zrCJt0S
Test project /tmp/tmp.l99zrCJt0S
    Start 1: adds
1/3 Test #1: adds .............................   Passed    0.00 sec
    Start 2: subtracts
2/3 Test #2: subtracts ........................***Failed    0.00 sec
expected 2 got 3

    Start 3: skipper
3/3 Test #3: skipper ..........................***Skipped   0.00 sec

67% tests passed, 1 tests failed out of 3

Total Test time (real) =   0.01 sec

The following tests did not run:
\t  3 - skipper (Skipped)

The following tests FAILED:
\t  2 - subtracts (Failed)
Errors while running CTest
`;

const MESON = `ninja: Entering directory \`/tmp/tmp.7E16NcS5gv'
[6/6] Linking target t_skip
1/3 demo / adds           OK              0.01s
2/3 demo:math / subtracts FAIL            0.01s   exit status 1
>>> MALLOC_PERTURB_=227 /tmp/tmp.7E16NcS5gv/t_bad
expected 2 got 3

3/3 demo / skipper        SKIP            0.01s   exit status 77

Summary of Failures:

2/3 demo:math / subtracts FAIL            0.01s   exit status 1

Ok:                 1   
Expected Fail:      0   
Fail:               1   
Unexpected Pass:    0   
Skipped:            1   
Timeout:            0   

Full log written to /tmp/tmp.7E16NcS5gv/meson-logs/testlog.txt
`;

const MINITEST = `Run options: --seed 8050

# Running:

S.EF

Finished in 0.002863s, 1397.1886 runs/s, 698.5943 assertions/s.

  1) Error:
TestMath#test_boom:
RuntimeError: boom
    /tmp/fl-samp/r/test/test_m.rb:5:in \`test_boom'

  2) Failure:
TestMath#test_subtracts [/tmp/fl-samp/r/test/test_m.rb:4]:
Expected: 2
  Actual: 3

4 runs, 2 assertions, 1 failures, 1 errors, 1 skips

You have skipped tests. Run with --verbose for details.
rake aborted!
Command failed with status (1)
`;

const TEST_UNIT = `Loaded suite test/test_u
Started
.E
===============================================================================
Error: test_boom(TestMath): RuntimeError: boom
test/test_u.rb:5:in \`test_boom'
===============================================================================
P
===============================================================================
Pending: test_pend(TestMath): later
test/test_u.rb:7:in \`test_pend'
===============================================================================
O
===============================================================================
Omission: later [test_skip(TestMath)]
test/test_u.rb:6:in \`test_skip'
===============================================================================
F
===============================================================================
Failure: test_subtracts(TestMath)
test/test_u.rb:4:in \`test_subtracts'
<2> expected but was
<3>
===============================================================================

Finished in 0.006685589 seconds.
-------------------------------------------------------------------------------
5 tests, 2 assertions, 1 failures, 1 errors, 1 pendings, 1 omissions, 0 notifications
25% passed
-------------------------------------------------------------------------------
`;

Deno.test("build systems' test drivers name their failing tests and count what ran", async (t) => {
  await t.step("ctest: the failing test, the skipped one apart, and passed without it", () => {
    const report = parseTestReport(CTEST);
    assert.deepEqual(report, {
      runner: "ctest",
      failed: ["subtracts"],
      passed: 1,
      failedCount: 1,
      skipped: 1,
      skippedTests: ["skipper"],
    });
    const green = parseTestReport(
      "1/1 Test #1: adds .............................   Passed    0.01 sec\n\n" +
        "100% tests passed, 0 tests failed out of 1\n",
    );
    assert.deepEqual(testCounts(green), { run: 1, passed: 1, failed: 0, skipped: 0 });
  });
  await t.step("ctest: output cut off before the summary still names the failure", () => {
    const cut = CTEST.split("\n").slice(0, 7).join("\n");
    assert.deepEqual(parseTestReport(cut, "ctest").failed, ["subtracts"]);
  });
  await t.step("meson test: project:suite / name, the summary's repeat not counted twice", () => {
    assert.deepEqual(parseTestReport(MESON), {
      runner: "meson",
      failed: ["demo:math / subtracts"],
      passed: 1,
      failedCount: 1,
      skipped: 1,
      todo: 0,
      skippedTests: ["demo / skipper"],
    });
  });
  await t.step("automake's harness (written by hand): FAIL, XPASS and ERROR fail", () => {
    const output = [
      "PASS: tests/t_ok",
      "FAIL: tests/t_bad",
      "SKIP: tests/t_skip",
      "XPASS: tests/t_xpass",
      "============================================================================",
      "Testsuite summary for demo 1.0",
      "============================================================================",
      "# TOTAL: 4",
      "# PASS:  1",
      "# SKIP:  1",
      "# XFAIL: 0",
      "# FAIL:  1",
      "# XPASS: 1",
      "# ERROR: 0",
    ].join("\n");
    assert.deepEqual(parseTestReport(output), {
      runner: "automake",
      failed: ["tests/t_bad", "tests/t_xpass"],
      passed: 1,
      failedCount: 2,
      skipped: 1,
      todo: 0,
      skippedTests: ["tests/t_skip"],
    });
  });
  await t.step("minitest: failures and errors by Class#test, skips counted", () => {
    assert.deepEqual(parseTestReport(MINITEST), {
      runner: "minitest",
      failed: ["TestMath#test_boom", "TestMath#test_subtracts"],
      passed: 1,
      failedCount: 2,
      skipped: 1,
    });
  });
  await t.step("test-unit: named as minitest names them, omissions skipped, pendings todo", () => {
    assert.deepEqual(parseTestReport(TEST_UNIT), {
      runner: "test-unit",
      failed: ["TestMath#test_boom", "TestMath#test_subtracts"],
      passed: 1,
      failedCount: 2,
      skipped: 1,
      todo: 1,
      skippedTests: ["TestMath#test_pend", "TestMath#test_skip"],
    });
  });
  await t.step("Maven and Gradle (written by hand): the results' tests and totals", () => {
    const maven = [
      "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.05 s <<< FAILURE! -- in com.example.AppTest",
      "[INFO] ",
      "[INFO] Results:",
      "[INFO] ",
      "[ERROR] Failures: ",
      "[ERROR]   AppTest.testSub:20 expected: <2> but was: <3>",
      "[INFO] ",
      "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1",
    ].join("\n");
    assert.deepEqual(parseTestReport(maven), {
      runner: "maven",
      failed: ["AppTest.testSub"],
      passed: 1,
      failedCount: 1,
      skipped: 1,
    });
    const gradle = [
      "> Task :test FAILED",
      "",
      "AppTest > testSub() FAILED",
      "    org.opentest4j.AssertionFailedError at AppTest.java:20",
      "",
      "3 tests completed, 1 failed, 1 skipped",
    ].join("\n");
    assert.deepEqual(parseTestReport(gradle), {
      runner: "gradle",
      failed: ["AppTest > testSub()"],
      passed: 1,
      failedCount: 1,
      skipped: 1,
    });
  });
  await t.step(
    "Maven (Debian's 3.8.7, Surefire 2.22.3, json-simple with a bug): colours and all",
    () => {
      // Debian's Maven colours its output even into a pipe.
      const maven = [
        "[\x1b[1;31mERROR\x1b[m] \x1b[1;31mTests \x1b[0;1mrun: \x1b[0;1m17\x1b[m, \x1b[1;31mFailures: \x1b[0;1;31m1\x1b[m, Errors: 0, Skipped: 0, Time elapsed: 0.021 s\x1b[1;31m <<< FAILURE!\x1b[m - in org.json.simple.\x1b[1mJsonerTest\x1b[m",
        "[\x1b[1;31mERROR\x1b[m] testStringSerialization(org.json.simple.JsonerTest)  Time elapsed: 0.011 s  <<< FAILURE!",
        "[\x1b[1;34mINFO\x1b[m] Results:",
        "[\x1b[1;34mINFO\x1b[m] ",
        "[\x1b[1;31mERROR\x1b[m] \x1b[1;31mFailures: \x1b[m",
        "[\x1b[1;31mERROR\x1b[m] \x1b[1;31m  JsonerTest.testStringSerialization:496 expected:<...mnopqrstuvwxyz,.;'[][\\]/`123456789-=~!@#$%^...> but was:<...mnopqrstuvwxyz,.;'[][]/`123456789-=~!@#$%^...>\x1b[m",
        "[\x1b[1;34mINFO\x1b[m] ",
        "[\x1b[1;31mERROR\x1b[m] \x1b[1;31mTests run: 73, Failures: 1, Errors: 0, Skipped: 0\x1b[m",
      ].join("\n");
      assert.deepEqual(parseTestReport(maven), {
        runner: "maven",
        failed: ["JsonerTest.testStringSerialization"],
        passed: 72,
        failedCount: 1,
        skipped: 0,
      });
    },
  );
  await t.step(
    "filters: ctest -R, meson's test names, one rake --name; Maven is not narrowed",
    () => {
      assert.deepEqual(filterArgs("ctest", ["adds", "a.b(c)"]), ["-R", "^(adds|a\\.b\\(c\\))$"]);
      assert.deepEqual(filterArgs("meson", ["demo:math / subtracts", "demo / adds"]), [
        "subtracts",
        "adds",
      ]);
      assert.deepEqual(filterArgs("minitest", ["TestMath#test_subtracts"]), [
        "TESTOPTS=--name=TestMath#test_subtracts",
      ]);
      assert.deepEqual(filterArgs("test-unit", ["T#a", "T#b"]), {
        why: "test-unit through rake takes one test name (--name), not a pattern",
      });
      assert.deepEqual(filterArgs("minitest", ["T#a; rm -rf x"]), {
        why: 'the test name "T#a; rm -rf x" is not a plain Class#test name',
      });
      assert.deepEqual(filterArgs("maven", ["AppTest.testSub"]), {
        why: "finishline adds no test filter for maven",
      });
    },
  );
});
