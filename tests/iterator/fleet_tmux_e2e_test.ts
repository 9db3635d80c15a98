/**
 * The fleet's live view under a real terminal: tmux runs `fleet` on three
 * issues, two at once, at 60 columns, with the real Claude Code binary
 * against the scripted model server and the scripted gh. While it runs, one
 * live row per run and a summary row show; when it has ended, the pane
 * (scrollback included) holds every printed line once, no row wider than the
 * pane, and nothing left of the live rows. Skipped without tmux.
 */

import assert from "node:assert/strict";
import { displayWidth } from "../../agents/iterator/_fit_line.ts";
import { ScriptedModelServer, scriptsByPrompt, textTurn } from "../../agents/testing/mod.ts";
import { denoDir, MAIN, tempDir } from "../_helpers.ts";
import { fixIssue, fleetRepo, goIssue, issueKey } from "./_fleet.ts";

const TMUX = (() => {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
})();
const DONE = "__finishline_fleet_done__";
const WIDTH = 60;
const WAIT_MS = 180_000;

/** A tmux server of its own, one session running one script. */
class Tmux implements AsyncDisposable {
  constructor(readonly dir: string) {}

  async run(...args: string[]): Promise<string> {
    const output = await new Deno.Command("tmux", {
      args: ["-L", "finishline-fleet-test", "-f", `${this.dir}/tmux.conf`, ...args],
      env: { TMUX_TMPDIR: this.dir, LANG: "C.UTF-8" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    if (!output.success) throw new Error(`tmux ${args[0]}: ${text.decode(output.stderr)}`);
    return text.decode(output.stdout);
  }

  /** The pane's lines, scrollback included, wrapped rows joined, trailing blanks cut. */
  async capture(): Promise<string[]> {
    const text = await this.run("capture-pane", "-p", "-J", "-S", "-", "-t", "fleet");
    return text.split("\n").map((line) => line.trimEnd());
  }

  async waitFor(test: (lines: string[]) => boolean, what: string): Promise<string[]> {
    const end = Date.now() + WAIT_MS;
    let lines: string[] = [];
    while (Date.now() < end) {
      lines = await this.capture();
      if (test(lines)) return lines;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${what} within ${WAIT_MS / 1000}s; the pane:\n${lines.join("\n")}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.run("kill-server").catch(() => {});
  }
}

const LIVE_ROW = /^#\d Add file \d: .*· (starting|running|finishing)|^#\d Add file \d · /;
const SUMMARY_ROW = /^fleet [0-9a-f]{8} · \d going · \d done/;

Deno.test({
  name: "fleet under tmux: live rows per run while it works, then only whole printed lines",
  ignore: !TMUX,
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
    const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
    await Deno.writeTextFile(
      `${dir.path}/run.sh`,
      [
        "unset CI",
        ...Object.entries(env).map(([name, value]) => `export ${name}=${quote(value)}`),
        `cd ${quote(fleet.repo.path)}`,
        `${quote(Deno.execPath())} run -A ${quote(MAIN)} fleet --label agent:go --parallel 2`,
        `echo "${DONE} $?"`,
      ].join("\n"),
    );
    await Deno.writeTextFile(
      `${dir.path}/tmux.conf`,
      "set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n",
    );
    await using tmux = new Tmux(dir.path);
    await tmux.run(
      "new-session",
      "-d",
      "-x",
      String(WIDTH),
      "-y",
      "30",
      "-s",
      "fleet",
      `sh ${dir.path}/run.sh`,
    );
    const live = await tmux.waitFor(
      (lines) =>
        lines.filter((line) => LIVE_ROW.test(line)).length === 2 &&
        lines.some((line) => SUMMARY_ROW.test(line)),
      "two live rows and the summary row",
    );
    for (const row of live.filter((line) => LIVE_ROW.test(line) || SUMMARY_ROW.test(line))) {
      assert.ok(displayWidth(row) < WIDTH, `a live row leaves the last column free: "${row}"`);
    }
    const lines = await tmux.waitFor((lines) => lines.some((line) => line.startsWith(DONE)), "end");
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
