/**
 * docs/cli.md's commands, flags and exit codes are those of the CLI's table
 * (agents/iterator/flags/table.ts): the page is what tools/cli_docs.ts makes
 * of it, and it says how to fix it when it is not.
 */

import assert from "node:assert/strict";
import {
  CLI_DOCS_FIX,
  CLI_DOCS_PATH,
  cliDocParts,
  expectedCliDocs,
  withGeneratedParts,
} from "../../../tools/cli_docs.ts";
import { COMMANDS, EXIT_CODE_TABLE, FLAGS } from "../../../agents/iterator/flags/table.ts";

Deno.test("docs/cli.md is generated from the table of flags and commands", async () => {
  const page = await Deno.readTextFile(CLI_DOCS_PATH);
  const expected = await expectedCliDocs(page);
  assert.ok(
    page === expected,
    `docs/cli.md differs from agents/iterator/flags/table.ts: run ${CLI_DOCS_FIX}`,
  );
});

Deno.test("the generated parts name every command, flag and exit code", () => {
  const parts = cliDocParts();
  for (const command of COMMANDS) {
    assert.ok(parts.commands.includes(`\`finishline ${command.name}`.trimEnd()), command.name);
  }
  for (const flag of FLAGS) assert.ok(parts.flags.includes(`--${flag.name}`), flag.name);
  for (const exit of EXIT_CODE_TABLE) {
    assert.ok(parts["exit codes"].includes(`| ${exit.status} | ${exit.code} |`), exit.status);
  }
});

Deno.test("a page with a row left out is out of date, and the tool's --check agrees with the page", async () => {
  const page = await Deno.readTextFile(CLI_DOCS_PATH);
  const stale = page.replace(/\| `--limit N` *\|[^\n]*\n/, "");
  assert.notEqual(stale, page);
  assert.notEqual(stale, await expectedCliDocs(stale), "a flag's row left out is found");
  assert.throws(
    () => withGeneratedParts(page.replace("<!-- begin generated: flags -->", "")),
    /docs\/cli\.md has no "<!-- begin generated: flags -->"/,
  );
  const check = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../../tools/cli_docs.ts", import.meta.url).pathname, "--check"],
    stderr: "piped",
  }).output();
  assert.equal(check.code, 0, new TextDecoder().decode(check.stderr));
});
