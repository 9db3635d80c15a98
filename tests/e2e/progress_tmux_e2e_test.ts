/**
 * The live progress under a real terminal: tmux runs the CLI for 3
 * iterations against the scripted model server, with the real Claude Code
 * binary and real git, at 60, 80 and 120 columns and across a resize. The
 * pane's text, scrollback included, must hold every iteration line with its
 * verdict whole, no row wider than the pane, and nothing left of the live
 * status line. `.ci/run` installs Debian's tmux; without tmux the test is
 * skipped.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, type SessionScript, toolTurn } from "../../agents/testing/mod.ts";
import { displayWidth } from "../../agents/iterator/terminal/fit.ts";
import { denoDir, MAIN, tempDir, tempRepo } from "../_helpers.ts";
import { HAS_TMUX, shellQuote, Tmux } from "../_tmux.ts";

const DONE = "__finishline_tmux_done__";
const COMMAND = "$ finishline --iterate-max 3 --task 'Write three notes'";

/**
 * Each session commits a file, waits for a slow reply (so the live line is
 * drawn for a while), reports with complete_task and ends.
 */
function script(index: number): SessionScript {
  const n = index + 1;
  return [
    toolTurn("Bash", {
      command: `echo "note ${n}" >> notes.txt && git add notes.txt && git commit -qm "notes ${n}"`,
    }),
    {
      ...toolTurn("Bash", { command: "git log --oneline | wc -l" }),
      delayMs: 1500,
    },
    toolTurn(COMPLETE_TASK_TOOL, {
      status: n === 3 ? "success" : "partial",
      original_request_summary: "Write three notes",
      summary: `Wrote note ${n}.`,
      remaining_work: n === 3 ? "" : "the other notes",
    }),
    { text: `Iteration ${n} done.` },
  ];
}

const LIVE = /^finishline (iteration )?\d\/3 · it \d+:\d\d(?: · run \d+:\d\d)?(?: · .*)?$/;

interface PaneRun {
  /** The pane's lines when the run ended. */
  lines: string[];
  /** A live status line seen while the run went on. */
  live: string;
}

/**
 * Run the CLI in a tmux pane of `width` columns; `onLive` runs once, when a
 * live line of iteration 1 or 2 that `liveWhen` accepts is first seen.
 */
async function runInTmux(
  width: number,
  options: { liveWhen?: (line: string) => boolean; onLive?: (tmux: Tmux) => Promise<void> } = {},
): Promise<PaneRun> {
  await using repo = await tempRepo();
  await using dir = await tempDir("finishline-tmux-");
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => script(sessionIndex),
  });
  const env = {
    ...server.env(`${dir.path}/home`),
    DENO_DIR: await denoDir(),
    NO_COLOR: "1",
    LANG: "C.UTF-8",
  };
  await using tmux = await Tmux.start(dir.path, {
    width,
    height: 40,
    env,
    commands: [
      `cd ${shellQuote(repo.path)}`,
      // What a shell shows above the run: the command line.
      `echo ${shellQuote(COMMAND)}`,
      `${shellQuote(Deno.execPath())} run -A ${
        shellQuote(MAIN)
      } --iterate-max 3 --task 'Write three notes'`,
      `echo "${DONE} $?"`,
    ],
  });
  const liveWhen = options.liveWhen ?? (() => true);
  const live = await tmux.waitFor(
    (lines) => lines.find((line) => LIVE.test(line) && !line.includes(" 3/3 ") && liveWhen(line)),
    "live status line in iteration 1 or 2",
  );
  await options.onLive?.(tmux);
  await tmux.waitFor((lines) => lines.find((line) => line.startsWith(DONE)), "end of the run");
  return { lines: await tmux.capture(), live };
}

/** The lines a finished run may leave, anchored at both ends: anything else is a fragment. */
function assertNoFragments(lines: string[]): void {
  const allowed = [
    /^\[finishline\] (iteration )?[123]\/3( · \d+\.\ds)?( · \$\d+\.\d{4})?( · tools: [^·]+)? · (continue|complete)$/,
    /^\[finishline\] completed:( Completed 3\/3 iterations)?( \(3 iterations, \d+\.\ds, \$\d+\.\d{4}\))?$/,
    /^ {2}(Completed 3\/3 iterations)?( ?\(3 iterations, \d+\.\ds, \$\d+\.\d{4}\))?$/,
    /^\[finishline\] report: \/\S+\.md$/,
    new RegExp(`^${DONE} 0$`),
    /^\$ finishline --iterate-max 3 --task 'Write three notes'$/,
    /^Pane is dead/,
    /^$/,
  ];
  for (const line of lines) {
    assert.ok(allowed.some((pattern) => pattern.test(line)), `a stray line in the pane: "${line}"`);
  }
}

/** Every iteration line is there once, its verdict whole, and rows fit the width. */
function assertVerdicts(lines: string[], width: number, from = 1): void {
  for (const [iteration, verdict] of [[1, "continue"], [2, "continue"], [3, "complete"]] as const) {
    const found = lines.filter((line) =>
      new RegExp(`^\\[finishline\\] (iteration )?${iteration}/3 · `).test(line)
    );
    assert.equal(found.length, 1, `iteration ${iteration} once:\n${lines.join("\n")}`);
    assert.ok(
      found[0].endsWith(` · ${verdict}`),
      `iteration ${iteration} ends with its verdict: "${found[0]}"`,
    );
    if (iteration >= from) {
      assert.ok(displayWidth(found[0]) <= width, `"${found[0]}" is wider than ${width}`);
    }
  }
}

Deno.test({
  name: "under tmux at 60, 80 and 120 columns every verdict shows whole and no live line is left",
  ignore: !HAS_TMUX,
  async fn(t) {
    for (const width of [60, 80, 120]) {
      await t.step(`${width} columns`, async () => {
        const { lines, live } = await runInTmux(width);
        assert.ok(
          displayWidth(live) < width,
          `the live line leaves the last column free: "${live}"`,
        );
        assert.match(live, / · it \d+:\d\d/, "the iteration's time is labelled");
        if (width >= 80) assert.match(live, / · run \d+:\d\d/, "so is the run's");
        assertNoFragments(lines);
        assertVerdicts(lines, width);
        const report = lines.filter((line) => line.startsWith("[finishline] report: "));
        assert.equal(report.length, 1);
        for (const line of lines) {
          // The report's path is printed whole, the terminal wraps it.
          if (line !== report[0]) {
            assert.ok(displayWidth(line) <= width, `wider than ${width}: "${line}"`);
          }
        }
        assert.ok(lines.includes(`${DONE} 0`));
        if (width === 120) {
          assert.ok(
            lines.some((line) =>
              / · tools: Bash×2, complete_task · (continue|complete)$/.test(line)
            ),
            `short tool names at 120 columns:\n${lines.join("\n")}`,
          );
        }
      });
    }
  },
});

Deno.test({
  name: "under tmux, narrowing the terminal while the live line shows leaves no fragment",
  ignore: !HAS_TMUX,
  async fn() {
    // A live line wider than the new width: the terminal wraps it onto two rows.
    const { lines, live } = await runInTmux(120, {
      liveWhen: (line) => displayWidth(line) > 60,
      onLive: async (tmux) => {
        await tmux.run("resize-window", "-t", "run", "-x", "50");
      },
    });
    assert.ok(displayWidth(live) > 50);
    assertNoFragments(lines);
    // Iteration 3 ends after the resize: its line fits the narrower pane.
    assertVerdicts(lines, 50, 3);
    assert.ok(lines.includes(`${DONE} 0`));
  },
});
