/**
 * A fleet at work: at most `parallel` runs at once, the next issue starting
 * as soon as a slot frees (and one run's worth of memory is available).
 * For each issue the fleet takes its claim (a lock the operating system
 * releases, so two fleets never take one issue), skips it when a run on it
 * is already going (the issue's own lock, tried, never a pid), re-reads it
 * (closed or labelled blocked since: skipped), starts its run as a process
 * of its own, follows it in the run history, and when the run ended without
 * a pull request labels the issue blocked. A Ctrl-C is passed on to every
 * run, once per Ctrl-C, and the fleet waits for them.
 *
 * @module
 */

import { inline } from "../../support/markdown.ts";
import { join } from "node:path";
import { firstLine } from "../../support/errors.ts";
import { GitHubCli } from "../../github/port.ts";
import { RunLock } from "../../support/file_lock.ts";
import type { SqliteStore, StoredRun } from "../../store/mod.ts";
import { locksDir } from "../run/locks.ts";
import { lastError, readResult, type RunProcess, spawnRun } from "./child.ts";
import { availableMemory, roomForAnother } from "./memory.ts";
import {
  type EntryStatus,
  type FleetEntry,
  type FleetRecord,
  UNFINISHED,
  writeRecord,
} from "./record.ts";
import type { Field } from "../terminal/fit.ts";
import { type FleetView, issueFields, runRowText, summaryRowText } from "./view.ts";

/** What a fleet works with. */
export interface FleetContext {
  /** The fleet's record (changed in place, and saved on every change). */
  record: FleetRecord;
  /** The gh port of the repository. */
  github: GitHubCli;
  /** The run history, read to follow the runs. */
  store: SqliteStore;
  /** The live view and lines. */
  view: FleetView;
  /** Aborting it is a Ctrl-C; when absent, SIGINT and SIGTERM are listened to. */
  signal?: AbortSignal;
}

/** A run going, as the fleet follows it. */
interface Going {
  entry: FleetEntry;
  process?: RunProcess;
  started: number;
  status: string;
  seen: number;
}

const FINAL_RUN = [
  "completed",
  "failed",
  "max_iterations",
  "stalled",
  "blocked",
  "budget_exhausted",
  "unverified",
];
const POLL_MS = 1000;

/** Runs a fleet's unfinished issues; see the module doc. */
export class FleetRunner {
  #ctx: FleetContext;
  #going = new Map<number, Going>();
  #stops = 0;
  #stopped: Promise<void>;
  #stop: () => void = () => {};
  #saving: Promise<void> = Promise.resolve();
  #started = performance.now();

  /**
   * A fleet ready to run.
   *
   * @param ctx The record, gh, the history, the view, the abort signal.
   */
  constructor(ctx: FleetContext) {
    this.#ctx = ctx;
    this.#stopped = new Promise((resolve) => this.#stop = resolve);
  }

  /** Whether a Ctrl-C (or SIGTERM, or the abort signal) stopped the fleet. */
  get interrupted(): boolean {
    return this.#stops > 0;
  }

  /**
   * Work on every unfinished issue; resolves when all are done or, after a
   * stop, when the runs going have ended.
   */
  async run(): Promise<void> {
    const dispose = this.#listen();
    const timer = setInterval(() => this.#poll(), POLL_MS);
    try {
      await this.#save();
      await this.#pool(
        this.#ctx.record.entries.filter((entry) => UNFINISHED.includes(entry.status)),
      );
    } finally {
      clearInterval(timer);
      dispose();
      this.#ctx.view.finish();
      await this.#saving;
    }
  }

  /** At most `parallel` at once; the next starts when a slot frees and memory allows. */
  async #pool(entries: FleetEntry[]): Promise<void> {
    const tasks = new Set<Promise<void>>();
    let waitedForMemory = false;
    for (const entry of entries) {
      for (;;) {
        if (this.interrupted) break;
        const full = tasks.size >= this.#ctx.record.parallel;
        if (!full && roomForAnother(tasks.size, availableMemory())) break;
        if (!full && !waitedForMemory) {
          waitedForMemory = true;
          this.#ctx.view.line("[finishline] fleet: waiting for memory before starting another run");
        }
        const pause = full ? [] : [new Promise((resolve) => setTimeout(resolve, 2000))];
        await Promise.race([...tasks, this.#stopped, ...pause]);
      }
      if (this.interrupted) break;
      const task: Promise<void> = this.#work(entry).finally(() => tasks.delete(task));
      tasks.add(task);
    }
    await Promise.all(tasks);
  }

  /** One issue, from its claim to its outcome; never throws. */
  async #work(entry: FleetEntry): Promise<void> {
    const claim = await this.#claim(entry);
    if (!claim) return await this.#save();
    try {
      const args = await this.#startArgs(entry);
      // Stopped while the run was being prepared: it stays to do, for a resume.
      if (args && !this.interrupted) await this.#launch(entry, args);
    } catch (error) {
      this.#end(entry, "failed", `the fleet could not follow the run: ${firstLine(error)}`);
    } finally {
      this.#going.delete(entry.number);
      await claim.release();
      await this.#save();
      this.#redraw();
    }
  }

  /** The fleet's claim on an issue: one fleet per issue, released when it dies. */
  async #claim(entry: FleetEntry): Promise<RunLock | undefined> {
    const dir = locksDir(this.#ctx.record.store);
    const key = `fleet-issue-${entry.number}`;
    const claim = await RunLock.tryAcquire(dir, key, { note: this.#ctx.record.id });
    if (claim) return claim;
    const other = (await RunLock.holder(dir, key))?.note;
    this.#skip(
      entry,
      "busy",
      `another fleet has it${other ? ` (fleet ${other.slice(0, 8)})` : ""}`,
    );
    return undefined;
  }

  /**
   * The arguments of the issue's run: `--resume RUN_ID` for a run of this
   * fleet that stopped part way, else a new run; undefined when the issue
   * is skipped or its run had ended meanwhile.
   */
  async #startArgs(entry: FleetEntry): Promise<string[] | undefined> {
    const { record } = this.#ctx;
    // A fleet killed outright left its runs "running": find them by issue and start time.
    const since = entry.status === "running" ? entry.startedAt : undefined;
    const earlier = entry.runId ?? (since ? this.#findRun(entry.number, since)?.id : undefined);
    if (earlier) {
      // A run of a fleet killed outright may still be going: wait for it.
      if (!await this.#waitForRun(entry, earlier)) return undefined;
      const run = this.#ctx.store.getRun(earlier);
      if (run && FINAL_RUN.includes(run.status)) {
        await this.#settle(entry, { code: 0, signal: null }, run);
        return undefined;
      }
      if (run) return ["--resume", run.id, "--json", "--store", record.store, "--cwd", record.cwd];
    }
    if (!await this.#available(entry)) return undefined;
    return [
      "--agent",
      record.agent,
      "--issue",
      String(entry.number),
      ...(record.repo ? ["--repo", record.repo] : []),
      "--worktree",
      "--create-pr",
      "--base-branch",
      record.baseBranch,
      "--store",
      record.store,
      "--cwd",
      record.cwd,
      "--json",
      ...record.runArgs,
    ];
  }

  /** Whether nobody works on the issue and it still wants work (open, not labelled blocked). */
  async #available(entry: FleetEntry): Promise<boolean> {
    const dir = locksDir(this.#ctx.record.store);
    const probe = await RunLock.tryAcquire(dir, `issue-${entry.number}`);
    if (!probe) {
      const runId = (await RunLock.holder(dir, `issue-${entry.number}`))?.note;
      this.#skip(
        entry,
        "busy",
        `a run is going on it${runId ? ` (run ${runId.slice(0, 8)})` : ""}`,
      );
      return false;
    }
    await probe.release();
    const now = await this.#ctx.github.issueStatus(entry.number);
    const blocked = this.#ctx.record.blockedLabel.toLowerCase();
    if (now?.state === "CLOSED") {
      this.#skip(entry, "skipped", "closed meanwhile");
      return false;
    }
    if (now?.labels.some((label) => label.toLowerCase() === blocked)) {
      this.#skip(entry, "skipped", `labelled "${this.#ctx.record.blockedLabel}" meanwhile`);
      return false;
    }
    return true;
  }

  /** Wait while another process holds the run's lock; false when the fleet was stopped. */
  async #waitForRun(entry: FleetEntry, runId: string): Promise<boolean> {
    const dir = locksDir(this.#ctx.record.store);
    let going: Going | undefined;
    for (;;) {
      const lock = await RunLock.tryAcquire(dir, `run-${runId}`);
      if (lock) {
        await lock.release();
        return true;
      }
      if (this.interrupted) return false;
      if (!going) {
        going = this.#follow(entry, `waiting for run ${runId.slice(0, 8)}`);
        entry.runId = runId;
        entry.reason = `waiting for run ${
          runId.slice(0, 8)
        }, still going from a fleet that stopped`;
        this.#ctx.view.line(
          issueFields(entry.number, entry.title, { text: entry.reason, join: " ", elide: 24 }),
        );
        await this.#save();
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, POLL_MS)), this.#stopped]);
    }
  }

  /** Start the run's process, follow it until it ends, and record how. */
  async #launch(entry: FleetEntry, args: string[]): Promise<void> {
    const { record } = this.#ctx;
    entry.attempts += 1;
    const base = join(record.outputDir, `issue-${entry.number}-${entry.attempts}`);
    entry.output = { stdout: `${base}.json`, stderr: `${base}.log` };
    entry.status = "running";
    entry.startedAt = new Date().toISOString();
    entry.reason = undefined;
    await Deno.mkdir(record.outputDir, { recursive: true });
    const going = this.#follow(entry, "starting");
    going.process = spawnRun(args, { cwd: record.cwd, files: entry.output });
    const resumed = args[0] === "--resume" ? " (resumed)" : "";
    this.#ctx.view.line(
      issueFields(entry.number, entry.title, { text: `started${resumed}`, join: " " }),
    );
    await this.#save();
    const status = await going.process.status;
    entry.durationMs = (entry.durationMs ?? 0) + Math.round(performance.now() - going.started);
    try {
      this.#pollOne(going); // the iterations recorded since the last poll
    } catch {
      // the history is busy: the outcome below is read again
    }
    await this.#settle(
      entry,
      status,
      entry.runId ? this.#ctx.store.getRun(entry.runId) : undefined,
    );
  }

  /** Begin following an issue in the live view. */
  #follow(entry: FleetEntry, status: string): Going {
    const going: Going = { entry, started: performance.now(), status, seen: 0 };
    this.#going.set(entry.number, going);
    this.#redraw();
    return going;
  }

  /** Record how the issue's run ended, and label the issue when it has no pull request. */
  async #settle(
    entry: FleetEntry,
    exit: { code: number; signal: string | null },
    run: StoredRun | undefined,
  ): Promise<void> {
    entry.exitCode = exit.signal ? undefined : exit.code;
    entry.endedAt = new Date().toISOString();
    const result = entry.output ? await readResult(entry.output.stdout) : undefined;
    // A run refused at its start (exit 2) recorded nothing: a run found would be another's.
    if (exit.code !== 2) run ??= this.#findRun(entry.number, entry.startedAt ?? entry.endedAt);
    if (run) this.#fromRun(entry, run);
    if (result) this.#fromResult(entry, result);
    if (!result && !(run && FINAL_RUN.includes(run.status))) {
      await this.#withoutResult(entry, exit);
    }
    if (FINAL_RUN.includes(entry.status) && !entry.pullRequest) await this.#labelBlocked(entry);
    this.#ctx.view.line(endFields(entry), true);
  }

  /** A run that printed no result: interrupted, refused (exit 2), or crashed. */
  async #withoutResult(entry: FleetEntry, exit: { code: number; signal: string | null }) {
    const why = entry.output ? await lastError(entry.output.stderr) : undefined;
    if (exit.signal || exit.code === 130) {
      this.#end(entry, "interrupted", `stopped by ${exit.signal ?? "an interrupt"}`);
    } else if (exit.code === 2 && why && /already has a run going|is still going/.test(why)) {
      this.#end(entry, "busy", why);
    } else if (exit.code === 2) {
      this.#end(entry, "skipped", why ?? "the run refused to start (exit 2)");
    } else {
      this.#end(entry, "failed", why ?? `exit code ${exit.code}`);
    }
  }

  #fromRun(entry: FleetEntry, run: StoredRun): void {
    entry.runId = run.id;
    entry.iterations = run.iterations;
    entry.costUsd = run.costUsd;
    if (run.status !== "running") {
      this.#end(entry, run.status as EntryStatus, run.reason ?? undefined);
    }
  }

  #fromResult(entry: FleetEntry, result: Record<string, unknown>): void {
    const worktree = result.worktree as { pullRequest?: string } | undefined;
    entry.runId = String(result.runId ?? entry.runId);
    entry.iterations = Number(result.iterations ?? entry.iterations ?? 0);
    entry.costUsd = Number(result.costUsd ?? entry.costUsd ?? 0);
    if (typeof result.report === "string") entry.report = result.report;
    if (worktree?.pullRequest) entry.pullRequest = worktree.pullRequest;
    this.#end(entry, String(result.status) as EntryStatus, String(result.completionReason ?? ""));
  }

  /** Label the issue blocked (and say why on it): its run ended without a pull request. */
  async #labelBlocked(entry: FleetEntry): Promise<void> {
    const { github, record } = this.#ctx;
    const label = record.blockedLabel;
    const why = entry.status === "completed"
      ? "it completed, but its pull request could not be opened"
      : `it ended ${entry.status}${entry.reason ? ` (${inline(entry.reason)})` : ""}`;
    // An existing label is used as it is (one attempt); a missing one is created first.
    const once = new GitHubCli({ cwd: record.cwd, repo: record.repo, attempts: 1 });
    let added = await once.editLabel(entry.number, { add: label });
    if (!added && await github.ensureLabel(label)) {
      added = await github.editLabel(entry.number, { add: label });
    }
    await github.comment(
      entry.number,
      `**finishline** fleet \`${record.id.slice(0, 8)}\`: run \`${
        entry.runId?.slice(0, 8) ?? "?"
      }\` on this issue ended without a pull request: ${why}. Labelled \`${label}\` for a person to look at; remove the label to let a fleet take it again.`,
    );
    if (added) entry.labelled = label;
  }

  #end(entry: FleetEntry, status: EntryStatus, reason?: string): void {
    entry.status = status;
    entry.reason = reason || undefined;
  }

  #skip(entry: FleetEntry, status: "skipped" | "busy", reason: string): void {
    this.#end(entry, status, reason);
    this.#ctx.view.line(
      issueFields(entry.number, entry.title, { text: `${status}:`, join: " " }, {
        text: reason,
        join: " ",
        elide: 24,
        rank: 1,
      }),
    );
  }

  /** The run of an issue recorded since a time (the newest). */
  #findRun(issue: number, since: string): StoredRun | undefined {
    try {
      return this.#ctx.store.listRuns({ limit: 200, agent: this.#ctx.record.agent })
        .find((run) => run.cleanup.issue === issue && run.startedAt >= since);
    } catch {
      return undefined;
    }
  }

  /** Follow the runs going in the history: their run ids, iterations and costs. */
  #poll(): void {
    for (const going of this.#going.values()) {
      try {
        this.#pollOne(going);
      } catch {
        // the history is busy: the next poll catches up
      }
    }
    this.#redraw();
  }

  #pollOne(going: Going): void {
    const { entry } = going;
    const run = entry.runId
      ? this.#ctx.store.getRun(entry.runId)
      : entry.startedAt && going.process
      ? this.#findRun(entry.number, entry.startedAt)
      : undefined;
    if (!run) return;
    if (!entry.runId) {
      entry.runId = run.id;
      void this.#save();
    }
    if (going.process) going.status = run.status === "running" ? "running" : "finishing";
    entry.iterations = run.iterations;
    entry.costUsd = run.costUsd;
    this.#iterationLines(going, run);
  }

  /** A plain line for each iteration recorded since the last poll. */
  #iterationLines(going: Going, run: StoredRun): void {
    if (run.iterations <= going.seen) return;
    const rows = this.#ctx.store.iterations(run.id).slice(going.seen);
    going.seen = run.iterations;
    for (const row of rows) {
      const of = `${row.number}/${run.maxIterations}`;
      this.#ctx.view.line([
        { text: `[finishline] #${going.entry.number}` },
        { text: `iteration ${of}:`, join: " ", shorter: [`${of}:`], rank: 1 },
        { text: row.verdict, join: " " },
        { text: `$${row.summary.costUsd.toFixed(4)}`, shorter: [""], rank: 2 },
      ]);
    }
  }

  #redraw(): void {
    const { record, view } = this.#ctx;
    if (!view.live) return;
    const rows = [...this.#going.values()].map((going) => {
      const run = going.entry.runId ? safeRun(this.#ctx.store, going.entry.runId) : undefined;
      return {
        number: going.entry.number,
        title: going.entry.title,
        iteration: run ? run.iterations + (run.status === "running" ? 1 : 0) : 0,
        maxIterations: run?.maxIterations,
        status: going.status,
        costUsd: going.entry.costUsd ?? 0,
        elapsedMs: performance.now() - going.started,
      };
    });
    const summary = {
      id: record.id.slice(0, 8),
      going: rows.length,
      done: record.entries.filter((entry) => !UNFINISHED.includes(entry.status)).length,
      queued: record.entries.filter((entry) => entry.status === "queued").length,
      costUsd: record.entries.reduce((sum, entry) => sum + (entry.costUsd ?? 0), 0),
      elapsedMs: performance.now() - this.#started,
    };
    view.show((width) => [
      ...rows.map((row) => runRowText(row, width)),
      summaryRowText(summary, width),
    ]);
  }

  /** Save the record; saves happen one after another, the last one wins. */
  #save(): Promise<void> {
    const { record } = this.#ctx;
    this.#saving = this.#saving.then(() => writeRecord(record.store, record)).catch((error) =>
      this.#ctx.view.line(`[finishline] fleet: cannot save its record: ${firstLine(error)}`, true)
    );
    return this.#saving;
  }

  /** A Ctrl-C (or SIGTERM) stops starting runs and passes the signal on to each run going. */
  #listen(): () => void {
    const onStop = () => {
      this.#stops += 1;
      const runs = [...this.#going.values()].filter((going) => going.process);
      this.#ctx.view.line(
        this.#stops === 1
          ? `[finishline] fleet interrupted: stopping ${runs.length} run${
            runs.length === 1 ? "" : "s"
          }, each records where it stopped (press Ctrl-C again to stop them at once)`
          : "[finishline] second interrupt: stopping the runs at once",
        true,
      );
      for (const going of runs) going.process!.kill("SIGINT");
      this.#stop();
    };
    if (this.#ctx.signal) {
      this.#ctx.signal.addEventListener("abort", onStop, { once: true });
      return () => this.#ctx.signal?.removeEventListener("abort", onStop);
    }
    const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
    for (const signal of signals) Deno.addSignalListener(signal, onStop);
    return () => signals.forEach((signal) => Deno.removeSignalListener(signal, onStop));
  }
}

function safeRun(store: SqliteStore, id: string): StoredRun | undefined {
  try {
    return store.getRun(id);
  } catch {
    return undefined;
  }
}

/** The fields of the line that says how an issue ended. */
function endFields(entry: FleetEntry): Field[] {
  const { iterations, costUsd, pullRequest, labelled, reason } = entry;
  const fields: Field[] = [{ text: entry.status, join: " " }];
  if (iterations !== undefined) {
    const text = `${iterations} iteration${iterations === 1 ? "" : "s"}`;
    fields.push({ text, shorter: [""], rank: 2 });
  }
  if (costUsd !== undefined) {
    fields.push({ text: `$${costUsd.toFixed(4)}`, shorter: [""], rank: 3 });
  }
  if (pullRequest) fields.push({ text: `pull request ${pullRequest}`, shorter: [pullRequest] });
  if (labelled) fields.push({ text: `labelled ${labelled}` });
  if (reason && !pullRequest) fields.push({ text: reason, elide: 24, rank: 4 });
  return issueFields(entry.number, entry.title, ...fields);
}
