/**
 * The contract between finishline's `gh` calls, the real GitHub CLI and the
 * scripted one in `tests/fixtures/fake_gh/`: every flag finishline passes
 * must be in the real gh's help, and the fake must accept it too, while the
 * fake accepts no flag the real gh lacks. {@linkcode GH_CALLS} is the one
 * list both sides are checked against.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type FakeGhState, FakeGitHub } from "../fixtures/fake_gh/mod.ts";

/** One `gh` subcommand finishline calls, the flags it passes, and a call to try on the fake. */
export interface GhCall {
  /** The subcommand, e.g. `"issue view"`. */
  command: string;
  /** The long flags finishline passes to it. */
  flags: readonly string[];
  /** Arguments after the subcommand that use every flag, valid against {@linkcode CONTRACT_STATE}. */
  args: readonly string[];
}

/** Every `gh` call finishline makes (see `agents/github/port.ts`), in an order the fake can replay. */
export const GH_CALLS: readonly GhCall[] = [
  { command: "auth status", flags: [], args: [] },
  { command: "repo view", flags: ["--json"], args: ["o/r", "--json", "nameWithOwner,owner"] },
  {
    command: "issue view",
    flags: ["--json", "--repo"],
    args: ["1", "--repo", "o/r", "--json", "number,title,body,state,labels,url,comments"],
  },
  {
    command: "issue list",
    flags: ["--repo", "--state", "--label", "--limit", "--json"],
    args: [
      "--repo",
      "o/r",
      "--state",
      "open",
      "--label",
      "bug",
      "--limit",
      "500",
      "--json",
      "number,title,labels,createdAt,url",
    ],
  },
  {
    command: "pr create",
    flags: ["--repo", "--base", "--head", "--title", "--body"],
    args: [
      "--repo",
      "o/r",
      "--base",
      "main",
      "--head",
      "finishline/x/1",
      "--title",
      "t",
      "--body",
      "b",
    ],
  },
  {
    command: "pr checks",
    flags: ["--repo"],
    args: ["finishline/x/1", "--repo", "o/r"],
  },
  {
    command: "run view",
    flags: ["--repo", "--log-failed"],
    args: ["123", "--repo", "o/r", "--log-failed"],
  },
  {
    command: "label create",
    flags: ["--force", "--color", "--description", "--repo"],
    args: [
      "finishline:done",
      "--repo",
      "o/r",
      "--force",
      "--color",
      "ededed",
      "--description",
      "Managed by finishline",
    ],
  },
  {
    command: "issue edit",
    flags: ["--add-label", "--remove-label", "--repo"],
    args: ["1", "--repo", "o/r", "--add-label", "finishline:done", "--remove-label", "bug"],
  },
  {
    command: "issue comment",
    flags: ["--body", "--repo"],
    args: ["1", "--repo", "o/r", "--body", "Progress report"],
  },
  {
    command: "issue reopen",
    flags: ["--comment", "--repo"],
    args: ["1", "--repo", "o/r", "--comment", "Still failing"],
  },
  {
    command: "issue close",
    flags: ["--comment", "--repo"],
    args: ["1", "--repo", "o/r", "--comment", "Done"],
  },
  {
    command: "project view",
    flags: ["--owner", "--format"],
    args: ["1", "--owner", "o", "--format", "json"],
  },
  {
    command: "project item-list",
    flags: ["--owner", "--format", "--limit"],
    args: ["1", "--owner", "o", "--format", "json", "--limit", "1000"],
  },
  {
    command: "project field-list",
    flags: ["--owner", "--format"],
    args: ["1", "--owner", "o", "--format", "json"],
  },
  {
    command: "project item-edit",
    flags: ["--id", "--project-id", "--field-id", "--single-select-option-id"],
    args: [
      "--id",
      "PVTI_1",
      "--project-id",
      "PVT_kw1",
      "--field-id",
      "PVTSSF_status",
      "--single-select-option-id",
      "opt_done",
    ],
  },
];

/** Commands the fake implements beyond {@linkcode GH_CALLS}, held to the real gh's flags too. */
const FAKE_ONLY_COMMANDS: readonly string[] = ["pr view"];

/** The fake's state that every call in {@linkcode GH_CALLS} succeeds against. */
export const CONTRACT_STATE: Partial<FakeGhState> = {
  repo: "o/r",
  labels: ["bug"],
  issues: [{ number: 1, title: "Fix it", body: "Details", labels: ["bug"] }],
  projects: [{
    number: 1,
    owner: "o",
    title: "Roadmap",
    items: [{ id: "PVTI_1", title: "Fix it", issue: 1, status: "Todo" }],
  }],
  // The branch `pr create` opens; passing checks, so `pr checks` exits 0.
  prChecks: { "finishline/x/1": [[{ name: "test", state: "pass", runId: 123 }]] },
  runLogs: { "123": "test\tRun tests\t2026-01-01T00:00:00.0000000Z ok\n" },
};

const FAKE_BIN = fileURLToPath(new URL("../fixtures/fake_gh/", import.meta.url)).replace(/\/$/, "");

/** A flag as a help text lists it. */
interface HelpFlag {
  long: string;
  short?: string;
}

interface Help {
  /** The command group is missing from this gh (e.g. `project` before 2.31). */
  missingGroup: boolean;
  text: string;
  flags: HelpFlag[];
}

/** The first `gh` on PATH that is not the fake, like `which`. */
async function findRealGh(): Promise<string | undefined> {
  const fake = await Deno.realPath(`${FAKE_BIN}/gh`).catch(() => undefined);
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir === "") continue;
    const candidate = `${dir}/gh`;
    const info = await Deno.stat(candidate).catch(() => undefined);
    if (!info?.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
    if ((await Deno.realPath(candidate)) === fake) continue;
    return candidate;
  }
  return undefined;
}

/** Run a gh logged out, with an empty config, so nothing can reach the network. */
async function run(
  gh: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = await Deno.makeTempDir({ prefix: "finishline-gh-contract-" });
  try {
    const output = await new Deno.Command(gh, {
      args,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        GH_CONFIG_DIR: home,
        GH_NO_UPDATE_NOTIFIER: "1",
        GH_PROMPT_DISABLED: "1",
        NO_COLOR: "1",
        ...env,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** The flags listed under the FLAGS and INHERITED FLAGS headings of a help text. */
function helpFlags(text: string): HelpFlag[] {
  const flags: HelpFlag[] = [];
  let inFlags = false;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) {
      inFlags = /^(INHERITED )?FLAGS$/.test(line.trim());
      continue;
    }
    const match = inFlags ? line.match(/^\s+(?:-(\w), )?--([\w-]+)/) : null;
    if (match) {
      flags.push({ long: `--${match[2]}`, ...(match[1] ? { short: `-${match[1]}` } : {}) });
    }
  }
  return flags;
}

async function help(gh: string, command: string, env?: Record<string, string>): Promise<Help> {
  const result = await run(gh, [...command.split(" "), "--help"], env);
  const group = command.split(" ")[0];
  const text = result.stdout + result.stderr;
  const missingGroup = result.code !== 0 && text.includes(`unknown command "${group}" for "gh"`);
  if (!missingGroup) {
    assert.equal(result.code, 0, `gh ${command} --help failed: ${text}`);
    assert.match(
      text,
      new RegExp(`^USAGE\\n {2}gh ${command}\\b`, "m"),
      `not the help of "gh ${command}"`,
    );
  }
  return { missingGroup, text, flags: missingGroup ? [] : helpFlags(result.stdout) };
}

/** The fields a gh's `--json` offers, from the flag error it gives without a value. */
async function jsonFieldsOf(
  gh: string,
  command: string,
  env?: Record<string, string>,
): Promise<Set<string>> {
  // With no value, --json is a flag error that lists the fields, before any auth or network.
  const result = await run(gh, [...command.split(" "), "--json"], env);
  const text = result.stdout + result.stderr;
  assert.match(text, /^Specify one or more comma-separated fields for `--json`:$/m);
  return new Set(
    text.split("\n").filter((line) => /^ {2}\w+$/.test(line)).map((line) => line.trim()),
  );
}

function assertListed(flags: readonly string[], listed: HelpFlag[], where: string): void {
  const longs = new Set(listed.map((flag) => flag.long));
  const missing = flags.filter((flag) => !longs.has(flag));
  assert.deepEqual(missing, [], `${where} lacks ${missing.map((flag) => `"${flag}"`).join(", ")}`);
}

const realGh = await findRealGh();
const realVersion = realGh === undefined
  ? undefined
  : (await run(realGh, ["--version"])).stdout.split("\n")[0].trim();
if (realGh === undefined) {
  console.log("gh contract: no real gh on PATH; the tests against the real gh are ignored");
}

Deno.test("every call in GH_CALLS uses each of its flags, and nothing else", () => {
  for (const call of GH_CALLS) {
    const used = call.args.filter((arg) => arg.startsWith("--"));
    assert.deepEqual([...new Set(used)].sort(), [...call.flags].sort(), `gh ${call.command}`);
  }
});

Deno.test({
  name: "the real gh's help lists every flag finishline passes",
  ignore: realGh === undefined,
  async fn(t) {
    for (const call of GH_CALLS) {
      const name = `gh ${call.command} ${call.flags.join(" ")}`.trim();
      const real = await help(realGh!, call.command);
      if (real.missingGroup) {
        console.log(`gh contract: ${realVersion} lacks "gh ${call.command}"; step ignored`);
        await t.step({ name, ignore: true, fn: () => {} });
        continue;
      }
      await t.step(
        name,
        () => assertListed(call.flags, real.flags, `${realVersion}: gh ${call.command}`),
      );
    }
  },
});

Deno.test({
  name: "the real gh exports every JSON field finishline requests",
  ignore: realGh === undefined,
  async fn(t) {
    for (const call of GH_CALLS) {
      const at = call.args.indexOf("--json");
      if (at < 0) continue;
      const requested = call.args[at + 1].split(",");
      await t.step(`gh ${call.command} --json ${requested.join(",")}`, async () => {
        const available = await jsonFieldsOf(realGh!, call.command);
        const missing = requested.filter((field) => !available.has(field));
        assert.deepEqual(
          missing,
          [],
          `${realVersion}: gh ${call.command} --json lacks ${missing.join(", ")}`,
        );
      });
    }
  },
});

Deno.test("the fake accepts every call finishline makes", async (t) => {
  await using fake = await FakeGitHub.create(CONTRACT_STATE);
  for (const call of GH_CALLS) {
    await t.step(`gh ${call.command}`, async () => {
      const { flags } = await help(`${FAKE_BIN}/gh`, call.command, fake.env());
      assertListed(call.flags, flags, `the fake's "gh ${call.command} --help"`);
      const result = await run(
        `${FAKE_BIN}/gh`,
        [...call.command.split(" "), ...call.args],
        fake.env(),
      );
      assert.equal(result.code, 0, `gh ${call.command} ${call.args.join(" ")}: ${result.stderr}`);
    });
  }
  const state = await fake.state();
  assert.equal(state.issues[0].state, "CLOSED");
  assert.deepEqual(state.issues[0].labels, ["finishline:done"]);
  assert.equal(state.projects[0].items[0].status, "Done");
});

Deno.test({
  name: "the fake accepts no flag the real gh lacks",
  ignore: realGh === undefined,
  async fn(t) {
    await using fake = await FakeGitHub.create(CONTRACT_STATE);
    for (const command of [...GH_CALLS.map((call) => call.command), ...FAKE_ONLY_COMMANDS]) {
      const real = await help(realGh!, command);
      if (real.missingGroup) {
        console.log(`gh contract: ${realVersion} lacks "gh ${command}"; step ignored`);
        await t.step({ name: `gh ${command}`, ignore: true, fn: () => {} });
        continue;
      }
      await t.step(`gh ${command}`, async () => {
        const faked = (await help(`${FAKE_BIN}/gh`, command, fake.env())).flags;
        const realFlags = new Map(real.flags.map((flag) => [flag.long, flag.short]));
        for (const flag of faked) {
          assert.ok(
            realFlags.has(flag.long),
            `${realVersion}: gh ${command} has no "${flag.long}"`,
          );
          assert.equal(flag.short, realFlags.get(flag.long), `the short form of "${flag.long}"`);
        }
      });
    }
  },
});

Deno.test({
  name: "the fake exports no JSON field the real gh lacks",
  ignore: realGh === undefined,
  async fn(t) {
    await using fake = await FakeGitHub.create(CONTRACT_STATE);
    const commands = [...new Set([...GH_CALLS.map((call) => call.command), ...FAKE_ONLY_COMMANDS])];
    for (const command of commands) {
      const faked = await help(`${FAKE_BIN}/gh`, command, fake.env());
      if (!faked.flags.some((flag) => flag.long === "--json")) continue;
      await t.step(`gh ${command} --json`, async () => {
        const real = await jsonFieldsOf(realGh!, command);
        const extra = [...await jsonFieldsOf(`${FAKE_BIN}/gh`, command, fake.env())]
          .filter((field) => !real.has(field));
        assert.deepEqual(
          extra,
          [],
          `${realVersion}: gh ${command} --json lacks ${extra.join(", ")}`,
        );
      });
    }
  },
});
