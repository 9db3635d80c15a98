/**
 * `fleet`: several issues at once on one machine, each in its own worktree
 * and branch, each its own run (its own process, its own row in the run
 * history, its own evidence and report), each ending in a pull request or
 * with its issue labelled blocked. Everything is checked before anything is
 * written: the flags (one line naming a bad one, exit 2), the agent, git,
 * the remote, gh, and the issues.
 *
 * @module
 */

import { FLEET_TAG, guardProcesses, stopTagged } from "../../support/process_tags.ts";
import { dirname, join } from "node:path";
import { logFolder } from "../run/log_folder.ts";
import { loadDefinition } from "../../definition/load.ts";
import { UsageError } from "../../support/errors.ts";
import { GitRepo } from "../../git/repo.ts";
import { GitHubCli } from "../../github/port.ts";
import { jsonWithCosts, shellQuote } from "../../support/format.ts";
import type { RunLock } from "../../support/file_lock.ts";
import { writeRedactedFile } from "../../support/sinks.ts";
import { parameterFlags, parseRunCommand, parseRunFlags } from "../flags/command_line.ts";
import type { CommandIO } from "../run/command.ts";
import { excludeFromGit, finishlinePaths } from "../run/workspace.ts";
import { openStore, resolveStorePath, workingDirectory } from "../places.ts";
import { cliEntry } from "./child.ts";
import type { FleetCommand, FleetFlags, FleetResumeCommand } from "./flags.ts";
import { parseFleetFlags } from "./flags.ts";
import { availableMemory, parallelLimit } from "./memory.ts";
import { type FleetRecord, fleetToResume, lockFleet, UNFINISHED, writeRecord } from "./record.ts";
import { fleetJson, type FleetTotals, fleetTotals, plural, renderFleetReport } from "./report.ts";
import { FleetRunner } from "./scheduler.ts";
import { selectIssues } from "./select.ts";
import { FleetView } from "./view.ts";

/** The label a fleet puts on issues whose run ends without a pull request, unless the agent names one. */
export const DEFAULT_BLOCKED_LABEL = "blocked";

/**
 * `fleet ...`: select the issues, then run them.
 *
 * @param command The fleet command line.
 * @param io Output, the abort signal, whether stderr is a terminal.
 * @returns The exit code: 0 when every run ended with a pull request (or its
 * issue was skipped), 1 when one did not, 130 when interrupted.
 * @throws {UsageError} For bad input, before anything is written.
 */
export async function fleetCommand(command: FleetCommand, io: CommandIO): Promise<number> {
  const { record, flags, github, notes } = await prepareFleet(command);
  const view = fleetView(flags, io);
  for (const note of notes) {
    view.line([{ text: "[finishline] fleet:" }, { text: note, join: " " }]);
  }
  if (flags.dryRun) return dryRun(record, io, flags.json);
  if (record.entries.length === 0) {
    view.line("[finishline] fleet: no open issue to work on", true);
    if (flags.json) io.stdout(`${jsonWithCosts(fleetJson(record, fleetTotals(record, 0)))}\n`);
    return 0;
  }
  const lock = (await lockFleet(record.store, record.id))!;
  await excludeFromGit((await GitRepo.open(record.cwd))!, ownPaths(record));
  view.line([
    { text: `[finishline] fleet ${record.id.slice(0, 8)}:` },
    { text: `${plural(record.entries.length, "issue")}, ${record.parallel} at once:`, join: " " },
    { text: record.entries.map((entry) => `#${entry.number}`).join(", "), join: " ", elide: 12 },
  ]);
  return await goOn(record, { github, view, io, lock, json: flags.json });
}

/**
 * `fleet --resume [FLEET_ID]`: continue a fleet's unfinished issues with the
 * flags it was started with (and `--parallel`, when given).
 *
 * @param command The resume command line.
 * @param io Output, the abort signal, whether stderr is a terminal.
 * @returns The exit code, as {@linkcode fleetCommand}'s.
 * @throws {UsageError} When there is no fleet to resume.
 */
export async function fleetResumeCommand(
  command: FleetResumeCommand,
  io: CommandIO,
): Promise<number> {
  const cwd = await workingDirectory(command.cwd);
  const repo = await GitRepo.open(cwd);
  const storeFile = resolveStorePath(command.store, repo?.root ?? cwd);
  const { record, lock } = await fleetToResume(storeFile, command.fleetId);
  const view = fleetView(command, io);
  if (command.parallel !== undefined) {
    const capped = parallelLimit(command.parallel, availableMemory());
    record.parallel = capped.parallel;
    if (capped.note) view.line(`[finishline] fleet: ${capped.note}`);
  }
  const left = record.entries.filter((entry) => UNFINISHED.includes(entry.status));
  view.line(
    `[finishline] fleet ${
      record.id.slice(0, 8)
    }: resuming ${left.length} of ${record.entries.length} issues: ${
      left.map((entry) => `#${entry.number} (${entry.status})`).join(", ")
    }`,
  );
  const github = new GitHubCli({ cwd: record.cwd, repo: record.repo });
  return await goOn(record, { github, view, io, lock, json: command.json });
}

/** Run the fleet's unfinished issues, then write its report and result. */
async function goOn(
  record: FleetRecord,
  options: { github: GitHubCli; view: FleetView; io: CommandIO; lock: RunLock; json: boolean },
): Promise<number> {
  const { view, io, lock } = options;
  const started = performance.now();
  // What an earlier process of this fleet left running (its lock is ours now), then a watchdog:
  // the fleet's runs and their agents die with it, however it dies.
  const orphans = await stopTagged(FLEET_TAG, `${record.id}/`, { prefix: true });
  if (orphans > 0) view.line(`[finishline] fleet: stopped ${orphans} processes of its earlier run`);
  const watchdog = await guardProcesses(FLEET_TAG, record.id);
  const store = openStore(record.store, record.cwd);
  try {
    record.status = "running";
    record.endedAt = undefined;
    const runner = new FleetRunner({
      record,
      github: options.github,
      store,
      view,
      signal: io.signal,
    });
    await runner.run();
    const unfinished = record.entries.some((entry) => UNFINISHED.includes(entry.status));
    record.status = runner.interrupted ? "interrupted" : unfinished ? "interrupted" : "done";
    record.endedAt = new Date().toISOString();
    await writeRecord(record.store, record);
    const totals = fleetTotals(record, Math.round(performance.now() - started));
    await Deno.mkdir(dirname(record.report), { recursive: true });
    await writeRedactedFile(record.report, renderFleetReport(record, totals));
    endLines(record, totals, view);
    if (options.json) io.stdout(`${jsonWithCosts(fleetJson(record, totals))}\n`);
    if (runner.interrupted) return 130;
    const ranWithout = record.entries.some((entry) =>
      !["skipped", "busy"].includes(entry.status) && !entry.pullRequest
    );
    return ranWithout ? 1 : 0;
  } finally {
    store.close();
    await watchdog.end();
    await lock.release();
  }
}

/** The lines at the end: the outcome, the report, how to continue. */
function endLines(record: FleetRecord, totals: FleetTotals, view: FleetView): void {
  view.line([
    { text: `[finishline] fleet ${record.id.slice(0, 8)} ${record.status}:` },
    { text: plural(totals.pullRequests, "pull request"), join: " " },
    { text: `${totals.labelledBlocked} labelled blocked`, join: ", " },
    { text: `${totals.skipped} skipped`, join: ", " },
    { text: `${totals.unfinished} unfinished`, join: ", " },
    { text: `$${totals.costUsd.toFixed(4)}`, join: "; " },
  ], true);
  // Printed whole (paths are copied): the terminal wraps it.
  view.line(`[finishline] fleet report: ${record.report}`, true);
  if (record.status !== "done") {
    view.line(`[finishline] continue it with: fleet --resume ${record.id}`, true);
  }
}

/** Check everything and select the issues; nothing is written. */
async function prepareFleet(command: FleetCommand): Promise<{
  record: FleetRecord;
  flags: FleetFlags;
  github: GitHubCli;
  notes: string[];
}> {
  if (Deno.build.os === "windows") {
    throw new UsageError(
      `"fleet" needs a POSIX shell to start its runs; it does not run on Windows`,
    );
  }
  const cwd = await workingDirectory(command.cwd);
  const loaded = await loadDefinition(command.agent, { cwd });
  const { definition } = loaded;
  const flags = parseFleetFlags(command, parameterFlags(definition));
  const probe = [
    "--agent",
    flags.agent,
    "--issue",
    "1",
    "--worktree",
    "--create-pr",
    ...flags.runArgs,
  ];
  parseRunFlags(parseRunCommand(probe), definition);
  const repo = await GitRepo.open(cwd);
  if (!repo) throw new UsageError(`"fleet" works in a git repository, and "${cwd}" is not in one`);
  const logDir = await logFolder(loaded, { repoRoot: repo.root, cwd });
  const baseBranch = await checkRepository(repo, flags.baseBranch);
  const github = new GitHubCli({ cwd, repo: flags.repo });
  await github.preflight();
  const blockedLabel = definition.github.labels.blocked ?? DEFAULT_BLOCKED_LABEL;
  const selection = await selectIssues(github, { ...flags, blockedLabel });
  const capped = parallelLimit(flags.parallel, availableMemory());
  const id = crypto.randomUUID();
  const stamp = `${new Date().toISOString().replace(/[:.]/g, "-")}-fleet-${id.slice(0, 8)}`;
  const record: FleetRecord = {
    version: 1,
    id,
    status: "running",
    startedAt: new Date().toISOString(),
    cwd,
    agent: flags.agent,
    store: resolveStorePath(flags.store, repo.root),
    repo: flags.repo,
    baseBranch,
    selection: {
      label: flags.label,
      issues: flags.issues,
      limit: flags.limit,
      notes: selection.notes,
    },
    parallel: capped.parallel,
    runArgs: flags.runArgs,
    blockedLabel,
    report: join(logDir, `${stamp}.md`),
    outputDir: join(logDir, stamp),
    entries: selection.issues.map((issue) => ({
      number: issue.number,
      title: issue.title,
      url: issue.url,
      labels: issue.labels,
      status: "queued",
      attempts: 0,
    })),
  };
  const notes = [...selection.notes.map((note) => `left out: ${note}`)];
  if (capped.note) notes.unshift(capped.note);
  return { record, flags, github, notes };
}

/** The branch worktrees start from, and a remote to push to. */
async function checkRepository(repo: GitRepo, baseBranch: string | undefined): Promise<string> {
  const remote = await repo.exec(["remote", "get-url", "--push", "origin"]);
  if (remote.code !== 0) {
    throw new UsageError(
      `"fleet" opens a pull request for each issue, and "${repo.root}" has no remote "origin" to push to: add it with "git remote add origin URL"`,
    );
  }
  if (baseBranch !== undefined) {
    const exists = await repo.exec(["rev-parse", "--verify", "-q", `${baseBranch}^{commit}`]);
    if (exists.code !== 0) {
      throw new UsageError(
        `Flag "--base-branch" names "${baseBranch}", which is not a branch or commit here`,
      );
    }
    return baseBranch;
  }
  const branch = await repo.branch();
  if (!branch) {
    throw new UsageError(
      `"fleet" creates each worktree from the current branch, and HEAD is detached: give --base-branch NAME`,
    );
  }
  return branch;
}

/** The fleet's own files, kept out of git status. */
function ownPaths(record: FleetRecord): string[] {
  return finishlinePaths(record.cwd, [dirname(record.report), dirname(record.store)]);
}

function fleetView(flags: { quiet: boolean }, io: CommandIO): FleetView {
  const ci = /^(1|true|yes)$/i.test(Deno.env.get("CI") ?? "");
  const mode = flags.quiet ? "quiet" : io.stderrIsTerminal && !ci ? "live" : "plain";
  return new FleetView({
    mode,
    // The live rows draw with escapes; the view strips the texts it is given.
    write: mode === "live" ? io.stderrLive ?? io.stderr : io.stderr,
    columns: () => {
      try {
        return Deno.consoleSize().columns;
      } catch {
        return undefined;
      }
    },
  });
}

/**
 * `--dry-run`: the issues in order and each run's command line; with
 * `--json`, one JSON object on stdout (the notes stay on stderr).
 */
function dryRun(record: FleetRecord, io: CommandIO, json: boolean): number {
  const runs = record.entries.map((entry) => ({
    entry,
    argv: [
      "--agent",
      record.agent,
      "--issue",
      String(entry.number),
      "--worktree",
      "--create-pr",
      "--base-branch",
      record.baseBranch,
      ...record.runArgs,
    ],
  }));
  if (json) {
    const plan = {
      dryRun: true,
      agent: record.agent,
      parallel: record.parallel,
      baseBranch: record.baseBranch,
      selection: record.selection,
      issues: runs.map(({ entry, argv }) => ({
        number: entry.number,
        title: entry.title,
        labels: entry.labels,
        ...(entry.url ? { url: entry.url } : {}),
        command: ["deno", "run", "-A", cliEntry(), ...argv],
      })),
    };
    io.stdout(`${JSON.stringify(plan)}\n`);
    return 0;
  }
  const lines = [
    `fleet: ${record.entries.length} issues, ${record.parallel} at once, worktrees from ${record.baseBranch}`,
    ...runs.map(({ entry, argv }) =>
      `#${entry.number} ${entry.title} [${entry.labels.join(", ")}]\n  deno run -A ${
        shellQuote([cliEntry(), ...argv])
      }`
    ),
  ];
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}
