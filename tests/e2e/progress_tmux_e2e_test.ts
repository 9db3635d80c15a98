/**
 * The live progress under a real terminal: tmux runs the CLI for 3
 * iterations against the scripted model server, with the real Claude Code
 * binary and real git, at 60, 80 and 120 columns and across a resize. The
 * pane's text, scrollback included, must hold every iteration line with its
 * verdict whole, no row wider than the pane, nothing left of the live status
 * line, and a final line that reads as one sentence. A second run, whose
 * repository check takes seconds and fails, must show the check running on
 * the live line and end at the cap saying what failed. `.ci/run` installs
 * Debian's tmux; without tmux the tests are skipped.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, type SessionScript, toolTurn } from "../../agents/testing/mod.ts";
import { displayWidth } from "../../agents/iterator/terminal/fit.ts";
import { denoDir, git, MAIN, tempDir, tempRepo } from "../_helpers.ts";
import { HAS_TMUX, shellQuote, Tmux } from "../_tmux.ts";

const DONE = "__finishline_tmux_done__";

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

/** What runs in the pane: the repository, the model's sessions, the command line. */
interface PaneSetup {
  /** Prepares the repository (after its first commit). */
  repo?: (path: string) => Promise<void>;
  /** The session of each index. */
  script: (index: number) => SessionScript;
  /** The CLI's arguments, as a shell would show them. */
  args: string;
  /** The live line waited for. */
  live: (line: string) => boolean;
}

/** The notes run of {@linkcode script}, its live line in iteration 1 or 2. */
const NOTES: PaneSetup = {
  script,
  args: "--iterate-max 3 --task 'Write three notes'",
  live: (line) => LIVE.test(line) && !line.includes(" 3/3 "),
};

/**
 * Run the CLI in a tmux pane of `width` columns; `onLive` runs once, when a
 * live line that `setup.live` and `liveWhen` accept is first seen.
 */
async function runInTmux(
  width: number,
  options: {
    setup?: PaneSetup;
    liveWhen?: (line: string) => boolean;
    onLive?: (tmux: Tmux) => Promise<void>;
  } = {},
): Promise<PaneRun> {
  const setup = options.setup ?? NOTES;
  await using repo = await tempRepo();
  await setup.repo?.(repo.path);
  await using dir = await tempDir("finishline-tmux-");
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => setup.script(sessionIndex),
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
      `echo ${shellQuote(`$ finishline ${setup.args}`)}`,
      `${shellQuote(Deno.execPath())} run -A ${shellQuote(MAIN)} ${setup.args}`,
      `echo "${DONE} $?"`,
    ],
  });
  const liveWhen = options.liveWhen ?? (() => true);
  const live = await tmux.waitFor(
    (lines) => lines.find((line) => setup.live(line) && liveWhen(line)),
    "the live status line",
  );
  await options.onLive?.(tmux);
  await tmux.waitFor((lines) => lines.find((line) => line.startsWith(DONE)), "end of the run");
  return { lines: await tmux.capture(), live };
}

/**
 * The final line's rows (it wraps at spaces onto rows indented by two, the
 * report's path last, whole): each row but the path's fits the width, and
 * joined they read as `sentence`.
 */
function finalRows(lines: string[], width: number, sentence: RegExp): string[] {
  const first = lines.findIndex((line) => /^\[finishline\] [A-Z]/.test(line));
  assert.ok(first >= 0, `no final line:\n${lines.join("\n")}`);
  const last = lines.findIndex((line, index) =>
    index >= first && line.includes("details in the report: ")
  );
  assert.ok(last >= first, `the final line names no report:\n${lines.join("\n")}`);
  const rows = lines.slice(first, last + 1);
  for (const row of rows.slice(1)) assert.ok(row.startsWith("  "), `not indented: "${row}"`);
  for (const row of rows.slice(0, -1)) {
    assert.ok(displayWidth(row) <= width, `wider than ${width}: "${row}"`);
  }
  assert.match(rows.map((row) => row.trim()).join(" "), sentence);
  return rows;
}

/** The lines a finished run may leave, anchored at both ends: anything else is a fragment. */
function assertNoFragments(lines: string[], final: string[] = []): void {
  const allowed = [
    // At a narrow width the label goes first, before the time and the tools.
    /^(\[finishline\] )?(iteration )?[123]\/3( · \d+\.\ds)?( · \$\d+\.\d{4})?( · tools: [^·]+)? · (continue|complete)$/,
    new RegExp(`^${DONE} 0$`),
    /^\$ finishline /,
    /^Pane is dead/,
    /^$/,
  ];
  for (const line of lines) {
    if (final.includes(line)) continue;
    assert.ok(allowed.some((pattern) => pattern.test(line)), `a stray line in the pane: "${line}"`);
  }
}

/** How the run of {@linkcode script} ends, in one sentence. */
const COMPLETED =
  /^\[finishline\] Done: Completed 3\/3 iterations; unverified: no checks found; 3 iterations in \d+\.\ds for \$\d+\.\d{4}; details in the report: \/\S+\.md$/;

/** Every iteration line is there once, its verdict whole, and rows fit the width. */
function assertVerdicts(lines: string[], width: number, from = 1): void {
  for (const [iteration, verdict] of [[1, "continue"], [2, "continue"], [3, "complete"]] as const) {
    const found = lines.filter((line) =>
      new RegExp(`^(\\[finishline\\] )?(iteration )?${iteration}/3 · `).test(line)
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
        const final = finalRows(lines, width, COMPLETED);
        assertNoFragments(lines, final);
        assertVerdicts(lines, width);
        for (const line of lines) {
          // The report's path is printed whole, the terminal wraps it.
          if (line !== final.at(-1)) {
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
    assertNoFragments(lines, finalRows(lines, 50, COMPLETED));
    // Iteration 3 ends after the resize: its line fits the narrower pane.
    assertVerdicts(lines, 50, 3);
    assert.ok(lines.includes(`${DONE} 0`));
  },
});

/** A Node project whose one test takes seconds and fails: the check the gate runs. */
async function slowFailingProject(path: string): Promise<void> {
  await Deno.mkdir(`${path}/test`);
  await Deno.writeTextFile(
    `${path}/package.json`,
    JSON.stringify({ name: "math", scripts: { test: "node --test" } }),
  );
  await Deno.writeTextFile(`${path}/math.js`, "exports.add = (a, b) => a - b;\n");
  await Deno.writeTextFile(
    `${path}/test/math.test.js`,
    `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../math.js");
test("adds", async () => {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal(add(2, 2), 4);
});
`,
  );
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", "math with a bug");
}

/** Each session commits a note and claims the task done; the check sends the claim back. */
function claimScript(index: number): SessionScript {
  const n = index + 1;
  return [
    toolTurn("Bash", {
      command: `echo "note ${n}" >> notes.txt && git add notes.txt && git commit -qm "notes ${n}"`,
    }),
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "success",
      original_request_summary: "Fix add()",
      summary: `Wrote note ${n}.`,
    }),
    { text: `Iteration ${n} done.` },
  ];
}

const CHECKING =
  /^(finishline )?(iteration )?[12]\/2 · it \d+:\d\d · checking npm test \d+:\d\d( · .*)?$/;

Deno.test({
  name:
    "under tmux at 60, 80 and 120 columns the live line shows the check running, and the cap ends in one sentence",
  ignore: !HAS_TMUX,
  async fn(t) {
    for (const width of [60, 80, 120]) {
      await t.step(`${width} columns`, async () => {
        const { lines, live } = await runInTmux(width, {
          setup: {
            repo: slowFailingProject,
            script: claimScript,
            args: "--iterate-max 2 --task 'Fix add()'",
            live: (line) => CHECKING.test(line),
          },
        });
        assert.ok(
          displayWidth(live) < width,
          `the live line leaves the last column free: "${live}"`,
        );
        if (width >= 80) assert.match(live, / · run \d+:\d\d/, `the run's time too: "${live}"`);
        const final = finalRows(
          lines,
          width,
          /^\[finishline\] Stopped at the iteration cap \(2\): `npm test` still fails \(1 failing test: adds\); 2 iterations in \d+\.\ds for \$\d+\.\d{4}; details in the report: \/\S+\.md$/,
        );
        const text = lines.join("\n");
        assert.doesNotMatch(text, /Last lines of its output|complete_task out_of_scope|Warning/);
        assert.ok(lines.includes(`${DONE} 3`), text);
        for (const line of lines) {
          if (line !== final.at(-1)) {
            assert.ok(displayWidth(line) <= width, `wider than ${width}: "${line}"`);
          }
        }
      });
    }
  },
});
