/**
 * End to end for `fleet`: the CLI as a subprocess, each run its own
 * finishline process with the real Claude Code binary against one scripted
 * model server (each session's script chosen by its issue), real git with a
 * bare origin, the scripted gh. No timing is asserted: that runs overlap is
 * shown by their recorded intervals.
 */

import assert from "node:assert/strict";
import {
  ScriptedModelServer,
  scriptsByPrompt,
  type ScriptStep,
  textTurn,
} from "../../agents/testing/mod.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { FLEET_TAG, taggedProcesses } from "../../agents/support/process_tags.ts";
import { catalogueLine } from "./_fault_catalogue.ts";
import { type CliRun, runCli, tempDir } from "../_helpers.ts";
import { blockIssue, fixIssue, fleetRepo, goIssue, issueKey } from "./_fleet.ts";

interface IssueResult {
  number: number;
  status: string;
  runId?: string;
  pullRequest?: string;
  labelled?: string;
  startedAt?: string;
  endedAt?: string;
  reason?: string;
  attempts: number;
}

function parseFleet(run: CliRun): { status: string; issues: IssueResult[]; report: string } {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`no fleet JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** Runs of the history by issue. */
function runsByIssue(store: string): Map<number, string[]> {
  const db = SqliteStore.open(store);
  try {
    const byIssue = new Map<number, string[]>();
    for (const run of db.listRuns({ limit: 100 })) {
      const issue = run.cleanup.issue as number;
      byIssue.set(issue, [...(byIssue.get(issue) ?? []), run.status]);
    }
    return byIssue;
  } finally {
    db.close();
  }
}

/** How many agent sessions worked on each issue (told apart by their first prompt). */
function sessionsByIssue(server: ScriptedModelServer, issues: number[]): number[] {
  const first = new Map<string, string>();
  for (const request of server.requests) {
    if (request.side || first.has(request.sessionId)) continue;
    first.set(request.sessionId, JSON.stringify(request.body.messages));
  }
  return issues.map((n) => [...first.values()].filter((text) => text.includes(issueKey(n))).length);
}

const overlap = (a: IssueResult, b: IssueResult) =>
  a.startedAt! < b.endedAt! && b.startedAt! < a.endedAt!;

Deno.test("fleet --parallel 2: three issues, three pull requests, three issues closed, runs overlap", async () => {
  await using fleet = await fleetRepo([goIssue(1), goIssue(2), goIssue(3), {
    number: 4,
    title: "Not for agents",
  }]);
  await using home = await tempDir("finishline-home-");
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt({
      [issueKey(1)]: [fixIssue(1, 300)],
      [issueKey(2)]: [fixIssue(2, 300)],
      [issueKey(3)]: [fixIssue(3, 300)],
    }, [textTurn("This session was not expected.")]),
  });
  const run = await runCli(["fleet", "--label", "agent:go", "--parallel", "2", "--json"], {
    cwd: fleet.repo.path,
    server,
    home: home.path,
    env: fleet.gh.env(),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = parseFleet(run);
  assert.equal(result.status, "done");
  assert.deepEqual(result.issues.map((issue) => [issue.number, issue.status]), [
    [1, "completed"],
    [2, "completed"],
    [3, "completed"],
  ]);
  const state = await fleet.gh.state();
  assert.deepEqual(
    state.issues.map((issue) => [issue.number, issue.state ?? "OPEN"]),
    [[1, "CLOSED"], [2, "CLOSED"], [3, "CLOSED"], [4, "OPEN"]],
  );
  const prs = state.pullRequests ?? [];
  assert.deepEqual(
    prs.map((pr) => pr.head).sort(),
    [1, 2, 3].map((n) => `finishline/iterator/issue-${n}`),
  );
  for (const issue of result.issues) {
    assert.match(issue.pullRequest ?? "", /^https:\/\/github\.com\/octo\/demo\/pull\/\d+$/);
  }
  // Each issue is its own run, on its own row of the shared history.
  const store = `${fleet.repo.path}/.agent/.finishline/state.db`;
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    [[1, ["completed"]], [2, ["completed"]], [3, ["completed"]]],
  );
  assert.equal(new Set(result.issues.map((issue) => issue.runId)).size, 3);
  const [a, b, c] = result.issues;
  assert.ok(overlap(a, b), `runs 1 and 2 overlap: ${JSON.stringify([a, b])}`);
  assert.ok(!overlap(a, b) || !overlap(b, c) || !overlap(a, c), "never three at once");
  const report = await Deno.readTextFile(result.report);
  assert.match(report, /^# finishline fleet [0-9a-f]{8}$/m);
  assert.match(
    report,
    /\| #2 \| Add file 2 \| completed: .* \| https:\/\/github\.com\/octo\/demo\/pull\/\d+ \|/,
  );
  assert.match(report, /\*\*Totals:\*\* 3 issues: 3 pull requests, 0 labelled blocked/);
  assert.match(run.stderr, /\[finishline\] fleet report: .*\.md/);
});

Deno.test("fleet: an issue whose run ends blocked is labelled blocked, and the others still finish", async () => {
  await using fleet = await fleetRepo([goIssue(1), goIssue(2), goIssue(3)]);
  // The repository has no "blocked" label yet: the fleet creates it.
  await fleet.gh.update((state) =>
    state.labels = state.labels.filter((name) => name !== "blocked")
  );
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt({
      [issueKey(1)]: [blockIssue(1)],
      [issueKey(2)]: [fixIssue(2)],
      [issueKey(3)]: [fixIssue(3)],
    }, [textTurn("This session was not expected.")]),
  });
  const run = await runCli(["fleet", "--issues", "1,2,3", "--parallel", "2", "--json"], {
    cwd: fleet.repo.path,
    server,
    env: fleet.gh.env(),
  });
  assert.equal(run.code, 1, run.stderr);
  const result = parseFleet(run);
  assert.equal(result.status, "done");
  const [blocked, ...done] = result.issues;
  assert.equal(blocked.status, "blocked");
  assert.equal(blocked.labelled, "blocked");
  assert.equal(blocked.pullRequest, undefined);
  assert.match(blocked.reason ?? "", /staging account/);
  assert.deepEqual(done.map((issue) => [issue.number, issue.status]), [[2, "completed"], [
    3,
    "completed",
  ]]);
  for (const issue of done) assert.ok(issue.pullRequest);
  const state = await fleet.gh.state();
  const [one, two, three] = state.issues;
  assert.equal(one.state ?? "OPEN", "OPEN");
  assert.ok(one.labels?.includes("blocked"), "the blocked issue is labelled");
  assert.ok(state.labels.includes("blocked"), "the label was created");
  assert.match(one.comments?.at(-1)?.body ?? "", /ended without a pull request: it ended blocked/);
  assert.deepEqual([two.state, three.state], ["CLOSED", "CLOSED"]);
  assert.equal(state.pullRequests?.length, 2);
  assert.match(run.stderr, /#1 Add file 1: blocked · 1 iteration · \$[\d.]+ · labelled blocked/);

  // A second fleet leaves the blocked issue alone.
  const again = await runCli(["fleet", "--label", "agent:go", "--json"], {
    cwd: fleet.repo.path,
    server,
    env: fleet.gh.env(),
  });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(parseFleet(again).issues, []);
  assert.match(again.stderr, /#1 is labelled "blocked": left out/);
});

Deno.test("two fleets started together never take the same issue", async () => {
  const issues = [1, 2, 3, 4];
  await using fleet = await fleetRepo(issues.map((n) => goIssue(n)));
  await using server = await ScriptedModelServer.start({
    // One session per issue: a second run on an issue would get the unexpected reply.
    scripts: scriptsByPrompt(
      Object.fromEntries(issues.map((n) => [issueKey(n), [fixIssue(n, 300)]])),
      [textTurn("This session was not expected.")],
    ),
  });
  const start = () =>
    runCli(["fleet", "--label", "agent:go", "--parallel", "2", "--json"], {
      cwd: fleet.repo.path,
      server,
      env: fleet.gh.env(),
    });
  const [first, second] = await Promise.all([start(), start()]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(second.code, 0, second.stderr);
  const worked = [parseFleet(first), parseFleet(second)].flatMap((result) =>
    result.issues.filter((issue) => issue.status === "completed").map((issue) => issue.number)
  );
  assert.deepEqual(worked.sort(), issues, "each issue worked once, by one of the fleets");
  const others = [parseFleet(first), parseFleet(second)].flatMap((result) =>
    result.issues.filter((issue) => issue.status !== "completed")
  );
  for (const issue of others) {
    assert.match(
      `${issue.status}: ${issue.reason}`,
      /^(busy: another fleet has it|busy: a run is going|skipped: closed meanwhile)/,
    );
  }
  const store = `${fleet.repo.path}/.agent/.finishline/state.db`;
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    issues.map((n) => [n, ["completed"]]),
    "one run per issue in the history",
  );
  assert.deepEqual(sessionsByIssue(server, issues), issues.map(() => 1), "one session per issue");
  assert.equal((await fleet.gh.state()).pullRequests?.length, 4);
});

/** A promise and the function that resolves it. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => open = resolve);
  return { promise, open };
}

/** The fleet records in a repository's history folder. */
async function fleetRecords(repo: string): Promise<Array<{ id: string; entries: IssueResult[] }>> {
  const dir = `${repo}/.agent/.finishline/fleets`;
  const records = [];
  for await (const file of Deno.readDir(dir)) {
    if (file.name.endsWith(".json")) {
      records.push(JSON.parse(await Deno.readTextFile(`${dir}/${file.name}`)));
    }
  }
  return records;
}

Deno.test("a fleet killed outright (SIGKILL) takes its runs and their agents with it; fleet --resume finishes them", async () => {
  await using fleet = await fleetRepo([goIssue(1), goIssue(2), goIssue(3)]);
  const arrived = [latch(), latch()];
  // The first session on issues 1 and 2 waits for a model answer that never comes.
  const hang = (n: number): ScriptStep[] => [() => {
    arrived[n - 1].open();
    return { text: "never delivered", delayMs: 120_000 };
  }];
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt({
      [issueKey(1)]: [hang(1), fixIssue(1)],
      [issueKey(2)]: [hang(2), fixIssue(2)],
      [issueKey(3)]: [fixIssue(3)],
    }, [textTurn("This session was not expected.")]),
  });
  // One home for both fleets, kept until the test ends: a home removed with its CLI call
  // would stop what is left in it (see tempDir), and this test is about what is left.
  await using home = await tempDir("finishline-home-");
  const options = { cwd: fleet.repo.path, server, env: fleet.gh.env(), home: home.path };
  const started = performance.now();
  const killed = await runCli(["fleet", "--label", "agent:go", "--parallel", "2", "--json"], {
    ...options,
    onSpawn: async (child) => {
      await Promise.all(arrived.map((arrival) => arrival.promise));
      child.kill("SIGKILL");
    },
  });
  assert.equal(killed.code, 137, killed.stderr);
  const [record] = await fleetRecords(fleet.repo.path);
  // Its watchdog stops its runs (SIGTERM: they record where they stopped) and their agents.
  let left = await taggedProcesses(FLEET_TAG, `${record.id}/`, { prefix: true });
  for (let i = 0; i < 150 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await taggedProcesses(FLEET_TAG, `${record.id}/`, { prefix: true });
  }
  assert.deepEqual(left, [], "nothing of the killed fleet runs on");
  const store = `${fleet.repo.path}/.agent/.finishline/state.db`;
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    [[1, ["interrupted"]], [2, ["interrupted"]]],
    "each run recorded where it stopped",
  );
  catalogueLine(
    "SIGKILL of a fleet: its runs stop with it",
    "runs interrupted and recorded, 0 left running",
    started,
    [],
    { orphans: 0, worktrees: "run worktrees kept for --resume", lost: 0 },
  );
  const resumed = await runCli(["fleet", "--resume", "--json"], options);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.doesNotMatch(resumed.stderr, /still going from a fleet that stopped/);
  const result = parseFleet(resumed);
  assert.equal(result.status, "done");
  assert.deepEqual(
    result.issues.map((issue) => [issue.number, issue.status, issue.attempts]),
    [[1, "completed", 2], [2, "completed", 2], [3, "completed", 1]],
  );
  for (const issue of result.issues) assert.ok(issue.pullRequest, `#${issue.number} has its PR`);
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    [1, 2, 3].map((n) => [n, ["completed"]]),
    "the interrupted runs were resumed, not started again",
  );
  assert.equal((await fleet.gh.state()).pullRequests?.length, 3);
});

Deno.test("Ctrl-C stops every run of a fleet cleanly (exit 130), and fleet --resume finishes them", async () => {
  await using fleet = await fleetRepo([goIssue(1), goIssue(2), goIssue(3)]);
  const arrived = [latch(), latch()];
  // The first session on issues 1 and 2 hangs until it is aborted; the resumed runs finish.
  const hang = (n: number): ScriptStep[] => [() => {
    arrived[n - 1].open();
    return { text: "never delivered", delayMs: 120_000 };
  }];
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt({
      [issueKey(1)]: [hang(1), fixIssue(1)],
      [issueKey(2)]: [hang(2), fixIssue(2)],
      [issueKey(3)]: [fixIssue(3)],
    }, [textTurn("This session was not expected.")]),
  });
  const options = { cwd: fleet.repo.path, server, env: fleet.gh.env() };
  const stopped = await runCli(["fleet", "--label", "agent:go", "--parallel", "2", "--json"], {
    ...options,
    onSpawn: async (child) => {
      await Promise.all(arrived.map((arrival) => arrival.promise));
      child.kill("SIGINT");
    },
  });
  assert.equal(stopped.code, 130, stopped.stderr);
  const first = parseFleet(stopped);
  assert.equal(first.status, "interrupted");
  assert.deepEqual(
    first.issues.map((issue) => [issue.number, issue.status]),
    [[1, "interrupted"], [2, "interrupted"], [3, "queued"]],
  );
  assert.match(stopped.stderr, /fleet interrupted: stopping 2 runs/);
  assert.match(stopped.stderr, /continue it with: fleet --resume [0-9a-f-]{36}/);
  const store = `${fleet.repo.path}/.agent/.finishline/state.db`;
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    [[1, ["interrupted"]], [2, ["interrupted"]]],
    "each run recorded where it stopped",
  );
  const resumed = await runCli(["fleet", "--resume", "--json"], options);
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = parseFleet(resumed);
  assert.deepEqual(
    result.issues.map((issue) => [issue.number, issue.status, issue.attempts]),
    [[1, "completed", 2], [2, "completed", 2], [3, "completed", 1]],
  );
  assert.deepEqual(
    result.issues.slice(0, 2).map((issue) => issue.runId),
    first.issues.slice(0, 2).map((issue) => issue.runId),
    "the interrupted runs were resumed, not started again",
  );
  assert.deepEqual(
    [...runsByIssue(store).entries()].sort(),
    [1, 2, 3].map((n) => [n, ["completed"]]),
  );
  assert.equal((await fleet.gh.state()).pullRequests?.length, 3);
});

Deno.test("fleet: an issue a plain --issue N run is working on is skipped as busy, by its lock", async () => {
  await using fleet = await fleetRepo([goIssue(1), goIssue(2)]);
  const arrived = latch();
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt({
      // The plain run hangs in its first turn; the fleet's only session is on issue 2.
      [issueKey(1)]: [[() => {
        arrived.open();
        return { text: "never delivered", delayMs: 120_000 };
      }]],
      [issueKey(2)]: [fixIssue(2)],
    }, [textTurn("This session was not expected.")]),
  });
  const options = { cwd: fleet.repo.path, server, env: fleet.gh.env() };
  let result: ReturnType<typeof parseFleet> | undefined;
  let fleetRun: CliRun | undefined;
  const plain = await runCli(["--issue", "1", "--json"], {
    ...options,
    onSpawn: async (child) => {
      await arrived.promise;
      fleetRun = await runCli(["fleet", "--issues", "1,2", "--json"], options);
      result = parseFleet(fleetRun);
      child.kill("SIGKILL");
    },
  });
  assert.equal(plain.code, 137, plain.stderr);
  assert.equal(fleetRun?.code, 0, fleetRun?.stderr);
  const [busy, done] = result!.issues;
  assert.equal(busy.status, "busy");
  assert.match(busy.reason ?? "", /^a run is going on it \(run [0-9a-f]{8}\)$/);
  assert.equal(busy.attempts, 0, "no run was started on it");
  assert.equal(done.status, "completed");
  assert.ok(done.pullRequest);
  assert.deepEqual(sessionsByIssue(server, [1, 2]), [1, 1]);
});
