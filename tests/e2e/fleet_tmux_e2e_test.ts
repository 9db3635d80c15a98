/**
 * The fleet's live view under a real terminal: tmux runs `fleet` on three
 * issues, two at once, at 60 columns, with the real Claude Code binary
 * against the scripted model server and the scripted gh. While it runs, one
 * live row per run and a summary row show; when it has ended, the pane
 * (scrollback included) holds every printed line once, no row wider than the
 * pane, and nothing left of the live rows. Skipped without tmux.
 */

import assert from "node:assert/strict";
import { displayWidth } from "../../agents/iterator/terminal/fit.ts";
import { ScriptedModelServer, scriptsByPrompt, textTurn } from "../../agents/testing/mod.ts";
import { denoDir, MAIN, tempDir } from "../_helpers.ts";
import { HAS_TMUX, shellQuote, Tmux } from "../_tmux.ts";
import { fixIssue, fleetRepo, goIssue, issueKey } from "./_fleet.ts";

const DONE = "__finishline_fleet_done__";
const WIDTH = 60;

const LIVE_ROW = /^#\d Add file \d: .*· (starting|running|finishing)|^#\d Add file \d · /;
const SUMMARY_ROW = /^fleet [0-9a-f]{8} · \d going · \d done/;

Deno.test({
  name: "fleet under tmux: live rows per run while it works, then only whole printed lines",
  ignore: !HAS_TMUX,
  async fn() {
    await using fleet = await fleetRepo([goIssue(1), goIssue(2), goIssue(3)]);
    await using dir = await tempDir("finishline-fleet-tmux-");
    await using server = await ScriptedModelServer.start({
      scripts: scriptsByPrompt({
        [issueKey(1)]: [fixIssue(1, 800)],
        [issueKey(2)]: [fixIssue(2, 800)],
        [issueKey(3)]: [fixIssue(3, 800)],
      }, [textTurn("This session was not expected.")]),
    });
    const env = {
      ...server.env(`${dir.path}/home`),
      ...fleet.gh.env(),
      DENO_DIR: await denoDir(),
      LANG: "C.UTF-8",
    };
    await using tmux = await Tmux.start(dir.path, {
      width: WIDTH,
      height: 30,
      env,
      commands: [
        `cd ${shellQuote(fleet.repo.path)}`,
        `${shellQuote(Deno.execPath())} run -A ${
          shellQuote(MAIN)
        } fleet --label agent:go --parallel 2`,
        `echo "${DONE} $?"`,
      ],
    });
    const live = await tmux.waitFor(
      (lines) =>
        lines.filter((line) => LIVE_ROW.test(line)).length === 2 &&
          lines.some((line) => SUMMARY_ROW.test(line))
          ? lines
          : undefined,
      "two live rows and the summary row",
    );
    for (const row of live.filter((line) => LIVE_ROW.test(line) || SUMMARY_ROW.test(line))) {
      assert.ok(displayWidth(row) < WIDTH, `a live row leaves the last column free: "${row}"`);
    }
    const lines = await tmux.waitFor(
      (lines) => lines.some((line) => line.startsWith(DONE)) ? lines : undefined,
      "end",
    );
    assert.ok(lines.includes(`${DONE} 0`), lines.join("\n"));
    const stray = lines.filter((line) => LIVE_ROW.test(line) || SUMMARY_ROW.test(line));
    assert.deepEqual(stray, [], "nothing left of the live rows");
    for (const n of [1, 2, 3]) {
      const started = lines.filter((line) => line === `[finishline] #${n} Add file ${n}: started`);
      assert.equal(started.length, 1, `#${n} started, once:\n${lines.join("\n")}`);
      const ended = lines.filter((line) =>
        line.startsWith(`[finishline] #${n} Add file ${n}: completed`)
      );
      assert.equal(ended.length, 1, `#${n} completed, once:\n${lines.join("\n")}`);
    }
    const report = lines.filter((line) => line.startsWith("[finishline] fleet report: "));
    assert.equal(report.length, 1);
    for (const line of lines) {
      // The report's path is printed whole: the terminal wraps it.
      if (line === report[0]) continue;
      assert.ok(displayWidth(line) <= WIDTH, `wider than ${WIDTH}: "${line}"`);
    }
  },
});
