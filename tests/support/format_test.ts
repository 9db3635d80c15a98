import assert from "node:assert/strict";
import {
  countTools,
  jsonWithCosts,
  roundUsd,
  seconds,
  shellQuote,
  shortId,
  usd,
} from "../../agents/support/format.ts";

Deno.test("format writes tool counts, durations, costs and run ids the same everywhere", async (t) => {
  await t.step("tools in order of first use, repeats counted", () => {
    assert.equal(countTools(["Read", "Bash", "Read", "Edit", "Read"]), "Read×3, Bash, Edit");
    assert.equal(countTools([]), "");
  });

  await t.step("durations in seconds with one decimal", () => {
    assert.equal(seconds(0), "0.0s");
    assert.equal(seconds(61_250), "61.3s");
  });

  await t.step("costs in dollars with four decimals", () => {
    assert.equal(usd(0), "$0.0000");
    assert.equal(usd(1.23456), "$1.2346");
  });

  await t.step("run ids by their first eight characters", () => {
    assert.equal(shortId("7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"), "7c1d2e3f");
  });
});

Deno.test("costs in JSON carry no float noise", async (t) => {
  await t.step("roundUsd keeps a millionth of a dollar", () => {
    // Three iterations at $0.0008 each, as the history sums them.
    const sum = 0.0008 + 0.0008 + 0.0008;
    assert.equal(String(sum), "0.0024000000000000002");
    assert.equal(String(roundUsd(sum)), "0.0024");
    assert.equal(String(roundUsd(0.1 + 0.2)), "0.3");
    assert.equal(roundUsd(0.0123455), 0.012346);
    assert.equal(roundUsd(0), 0);
  });

  await t.step("jsonWithCosts rounds every cost, however deep, and nothing else", () => {
    const noisy = 0.1 + 0.2;
    assert.equal(
      jsonWithCosts({
        run: { costUsd: noisy, turns: 3, ratio: noisy },
        iterations: [{ summary: { costUsd: noisy, total_cost_usd: noisy } }],
      }),
      '{"run":{"costUsd":0.3,"turns":3,"ratio":0.30000000000000004},' +
        '"iterations":[{"summary":{"costUsd":0.3,"total_cost_usd":0.3}}]}',
    );
  });
});

Deno.test("shellQuote gives a line a POSIX shell reads back as the same arguments", async () => {
  const args = [
    "--task",
    'Fix the user\'s "login" page',
    "--iterate-max",
    "3",
    "",
    "$HOME `id` $(id) * ? ~ ; & | < > ( ) { } [ ] # ! \\",
    "two\nlines",
    "Größe über",
    "plain-word_1.2/x:y=z,@%+",
  ];
  const line = shellQuote(args);
  assert.ok(line.startsWith("--task 'Fix the user'\\''s \"login\" page' --iterate-max 3 ''"));
  assert.ok(line.endsWith(" plain-word_1.2/x:y=z,@%+"), "safe arguments stay bare");
  const output = await new Deno.Command("sh", {
    args: ["-c", `for arg in ${line}; do printf '%s\\0' "$arg"; done`],
    stdout: "piped",
  }).output();
  assert.ok(output.success);
  assert.deepEqual(new TextDecoder().decode(output.stdout).split("\0").slice(0, -1), args);
});
