import assert from "node:assert/strict";
import { countTools, seconds, shortId, usd } from "../../agents/common/format.ts";

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
