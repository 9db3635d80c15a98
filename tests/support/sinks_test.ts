// Every place in agents/ that writes or sends text is a known sink that redacts,
// or says why what it writes holds nothing from outside. A new write that is
// in neither list fails this test: add it to a redacting sink instead.
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// The raw primitives that put text outside the process.
const PRIMITIVES: Array<[string, RegExp]> = [
  ["file write", /Deno\.(?:writeTextFile|writeFile|writeTextFileSync|writeFileSync)\(/],
  ["file open", /Deno\.(?:open|openSync)\(/],
  ["raw write", /\.writeSync\(|Deno\.(?:stdout|stderr)\.write/],
  ["console", /console\.(?:log|error|warn|info|debug)\(/],
  ["network", /\bfetch\(|\bpostSync\(/],
  ["process", /new Deno\.Command\(|\brunTool\(/],
  ["database", /\.prepare\(/],
];

// Files that write redacted text: each must use the redactor.
const REDACTING_SINKS: Record<string, string> = {
  "agents/support/log.ts": "the run log: every record through Redactor.redactValue",
  "agents/support/sinks.ts": "stdout, stderr and whole files: through Redactor.redact",
  "agents/github/_calls.ts": "gh's arguments: each one redacted before gh runs",
  "agents/embeddings/http.ts": "the embeddings requests: their texts redacted",
  "agents/store/sqlite_store.ts": "the run history: opened with the redactor every table uses",
  "agents/iterator/main.ts": "stdout and stderr of the CLI: through redactingWriter",
};

// Files whose writes carry nothing from outside, or are not outputs at all.
const NOT_OUTPUTS: Record<string, string> = {
  "agents/support/process.ts":
    "starts processes; what they print is read, and written only by sinks",
  "agents/git/run_git.ts": "runs git with argument lists; reading the repository",
  "agents/support/process_tags.ts":
    "starts the run's watchdog (a shell that stops the run's processes), which prints nothing",
  "agents/git/settings.ts":
    "puts the repository's own git settings back, byte for byte as they were",
  "agents/evidence/copy/worktree_run.ts": "runs git to set up worktrees",
  "agents/evidence/copy/build_seed.ts":
    "runs touch and cp on finishline's own worktrees: file times and a copy of a build, no text",
  "agents/evidence/_claim_run.ts":
    "fetches the starting commit into the clean copy's private repository (a method named fetch, no network)",
  "agents/evidence/_clean_copy.ts":
    "fetches the starting commit into the clean copy's private repository (a method named fetch, no network)",
  "agents/evidence/_held_out.ts":
    "puts the verifier's test files back, as it wrote them, into the gate's own worktrees",
  "agents/evidence/detect/detect.ts": "asks the machine which tools it has (`tox --version`)",
  "agents/evidence/held_out/held_out_store.ts":
    "keeps the verifier's test files, as it wrote them, in finishline's own folder",
  "agents/sandbox/private_home.ts":
    "seeds a session's private home: mount points, Claude Code's account fields and git's name and email, copied as they are for the sandboxed agent alone",
  "agents/support/owned_temp.ts": "a temp folder's owner file holds a pid and a start time",
  "agents/backends/acp.ts": "starts the ACP agent; its prompts are redacted by redactingBackend",
  "agents/backends/model_access.ts":
    "asks the macOS keychain whether Claude Code's login item exists: no secret is read, nothing written",
  "agents/backends/complete_task_mcp.ts":
    "the MCP bridge of complete_task: relays the runner's answer, already redacted by redactingBackend",
  "agents/embeddings/_sync_fetch.ts": "the transport of http.ts, which redacts",
  "agents/support/resource.ts": "reads packaged prompts and agents (GET)",
  "agents/support/file_lock.ts": "the lock file holds a pid and a start time",
  "agents/iterator/run/workspace.ts":
    "reads the log's head; writes finishline's own .gitignore lines",
  "agents/iterator/commands/init.ts": "writes the scaffold's fixed templates",
  "agents/iterator/fleet/child.ts": "starts the fleet's runs, each a CLI with its own sinks",
  "agents/git/hardened.ts":
    "runs git with its settings off; writes the fixed config, attributes and .git link of finishline's own repository",
  "agents/evidence/copy/object_copy.ts":
    "git fetch between the user's repository and finishline's private one (a method named fetch, no network)",
  "agents/evidence/copy/dependency_copy.ts":
    "copies dependency folders with cp into finishline's copies and puts back their files' own bytes",
  "agents/evidence/run/canary.ts":
    "writes finishline's own canary tests (fixed text, random names) into its clean copy",
  "agents/evidence/proof/coverage_probe.ts":
    "the coverage probe's own folder (fixed sitecustomize and rc file) and the runtimes' coverage reports, read back; nothing printed",
  "agents/evidence/proof/change_proof.ts":
    "writes a mutant of a changed line into finishline's clean copy, and its own bytes back",
  "agents/evidence/judge/red_tests.ts":
    "writes a test file with the original body of a red test spliced back, into finishline's copy",
  "agents/schemas/generate.ts": "development tool: writes the generated JSON schema",
  // Store tables: each write goes through the store's redactor (_database.ts).
  "agents/store/finish_records.ts": "a store table: values redacted with the store's redactor",
  "agents/store/learnings.ts": "a store table: values redacted with the store's redactor",
  "agents/store/migrations.ts": "the store's schema: fixed SQL",
  "agents/store/_database.ts":
    "the store's reserve: 1 MiB of zeros beside it, room for the history when the disk fills",
  "agents/store/runs.ts": "a store table: values redacted with the store's redactor",
  "agents/store/segments.ts": "a store table: values redacted with the store's redactor",
  "agents/store/skills.ts": "a store table: values redacted with the store's redactor",
  "agents/store/vectors.ts": "a store table of vectors: redacted text is embedded",
};

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** The code lines of a file: doc comments and line comments left out. */
function codeLines(text: string): Array<[number, string]> {
  return text.split("\n").map((line, index): [number, string] => [index + 1, line])
    .filter(([, line]) => !/^\s*(?:\*|\/\/|\/\*\*)/.test(line));
}

Deno.test("every output of agents/ goes through a redacting sink", async (t) => {
  const found = new Map<string, string[]>();
  for await (const path of sources(`${ROOT}agents`)) {
    const file = relative(ROOT, path);
    // The testing kit runs inside the user's tests, never in a run.
    if (file.startsWith("agents/testing/")) continue;
    const text = await Deno.readTextFile(path);
    for (const [line, code] of codeLines(text)) {
      for (const [kind, pattern] of PRIMITIVES) {
        if (pattern.test(code)) {
          found.set(file, [...found.get(file) ?? [], `${kind} (line ${line})`]);
        }
      }
    }
  }

  await t.step("no write outside the known sinks", () => {
    const unknown = [...found.keys()].filter((file) =>
      !(file in REDACTING_SINKS) && !(file in NOT_OUTPUTS)
    );
    assert.deepEqual(
      unknown.map((file) => `${file}: ${found.get(file)!.join(", ")}`),
      [],
      "write through a sink of agents/support/sinks.ts (or the log, the store, the gh port), or list the file here with a reason",
    );
  });

  await t.step("each redacting sink uses the redactor", async () => {
    for (const file of Object.keys(REDACTING_SINKS)) {
      const text = await Deno.readTextFile(`${ROOT}${file}`);
      assert.match(
        text,
        /redact(?:or|ingWriter|Value|ingBackend)?\b|writeRedactedFile/,
        `${file} writes without the redactor`,
      );
    }
  });

  await t.step("the store's tables write through the store's redactor", async () => {
    for (
      const file of Object.keys(NOT_OUTPUTS).filter((name) =>
        /store\/(?!migrations|vectors|_database)/.test(name)
      )
    ) {
      const text = await Deno.readTextFile(`${ROOT}${file}`);
      assert.match(text, /redactor\.redact/, `${file} stores text unredacted`);
    }
  });

  await t.step("the lists name no file that is gone", () => {
    for (const file of [...Object.keys(REDACTING_SINKS), ...Object.keys(NOT_OUTPUTS)]) {
      assert.ok(
        found.has(file) || file === "agents/store/sqlite_store.ts",
        `${file} writes nothing any more`,
      );
    }
  });
});

Deno.test("files written whole go through writeRedactedFile, never Deno.writeTextFile", async () => {
  const writers: string[] = [];
  for await (const path of sources(`${ROOT}agents/iterator`)) {
    const text = await Deno.readTextFile(path);
    if (/writeRedactedFile\(/.test(text)) writers.push(relative(ROOT, path));
  }
  // The run report, the fleet's report and the fleet's record.
  assert.deepEqual(writers.sort(), [
    "agents/iterator/fleet/command.ts",
    "agents/iterator/fleet/record.ts",
    "agents/iterator/run/end.ts",
  ]);
});

Deno.test("gh receives its arguments redacted, a pull request body included", async () => {
  const { GhCalls } = await import("../../agents/github/_calls.ts");
  const { FakeGitHub } = await import("../fixtures/fake_gh/mod.ts");
  await using gh = await FakeGitHub.create({ repo: "octo/demo" });
  const token = "ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8";
  const calls = new GhCalls({ cwd: Deno.cwd(), env: gh.env() });
  await calls.once(["issue", "comment", "1", "--body", `pushed with ${token}`]);
  const [call] = await gh.calls();
  assert.deepEqual(call.argv.slice(0, 4), ["issue", "comment", "1", "--body"]);
  assert.equal(call.argv[4], "pushed with ghp_…2eU8 [redacted]");
});
