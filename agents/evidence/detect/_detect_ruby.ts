/**
 * Ruby: the Rakefile's test task, run as `bundle exec rake test` where a
 * Gemfile's gems are installed (`bundle check --dry-run` says so), else as
 * `rake test`; minitest or test-unit, as the Gemfile, gemspec or tests name.
 * The task may be defined in the Rakefile or in a `rakelib/*.rake` file,
 * which rake loads with it (Builder's test task lives there).
 *
 * @module
 */

import { join } from "node:path";
import {
  addCheck,
  addConfigFile,
  onPath,
  probeOnce,
  read,
  readPath,
  type Scan,
  skip,
} from "./_detect_scan.ts";
import type { TestRunner } from "../run/test_report.ts";

const RAKEFILES = ["Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"];

/** Ways a Rakefile defines `test`: a TestTask (named :test unless told), or `task :test`. */
const TEST_TASK =
  /Rake::TestTask\.new(?:\s*\(?\s*[:"'](\w+))?|Minitest::TestTask\.create(?:\s*\(?\s*[:"'](\w+))?|^\s*task\s*\(?\s*(?::test\b|["']test["']|test:)/gm;

/** Whether the Rakefile has a `test` task. */
function hasTestTask(text: string): boolean {
  for (const match of text.matchAll(TEST_TASK)) {
    const named = match[1] ?? match[2];
    if (named === undefined || named === "test") return true;
  }
  return false;
}

/** test-unit where the gem files or the test helper name it, else minitest (rake's default). */
async function rubyRunner(scan: Scan, texts: string[]): Promise<TestRunner> {
  const helpers: string[] = [];
  const paths: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(scan.root, "test"))) {
      if (entry.isFile && entry.name.endsWith(".rb")) paths.push(`test/${entry.name}`);
    }
  } catch {
    // No test folder at the root.
  }
  // The helper first, then a few test files: enough to see which framework they require.
  paths.sort((a, b) => Number(!/helper/.test(a)) - Number(!/helper/.test(b)) || a.localeCompare(b));
  for (const path of paths.slice(0, 20)) {
    try {
      helpers.push(await Deno.readTextFile(join(scan.root, path)));
    } catch {
      // Unreadable: not evidence either way.
    }
  }
  const all = [...texts, ...helpers].join("\n");
  return /["']test-unit["']|require\s*\(?\s*["']test\/unit["']/.test(all)
    ? "test-unit"
    : "minitest";
}

/** The `rakelib/*.rake` files rake loads beside the Rakefile, by path, sorted. */
async function rakelibFiles(scan: Scan): Promise<Array<{ path: string; text: string }>> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(scan.root, "rakelib"))) {
      if (entry.isFile && entry.name.endsWith(".rake")) names.push(entry.name);
    }
  } catch {
    // No rakelib folder.
  }
  const files: Array<{ path: string; text: string }> = [];
  for (const name of names.sort()) {
    const text = await readPath(scan, `rakelib/${name}`);
    if (text !== undefined) files.push({ path: `rakelib/${name}`, text });
  }
  return files;
}

/** A Rakefile at the root with a `test` task, in it or in a file of `rakelib/`. */
export async function detectRuby(scan: Scan): Promise<void> {
  const rakefile = RAKEFILES.find((name) => scan.files.has(name));
  if (rakefile === undefined) return;
  const text = await read(scan, rakefile);
  if (text === undefined) return;
  const rakelib = await rakelibFiles(scan);
  const definer = hasTestTask(text)
    ? rakefile
    : rakelib.find((file) => hasTestTask(file.text))?.path;
  if (definer === undefined) {
    skip(
      scan,
      rakefile,
      `no "test" task (Rake::TestTask, Minitest::TestTask or task :test)${
        rakelib.length > 0 ? " in it or in rakelib/*.rake" : ""
      }`,
    );
    return;
  }
  const gemfile = scan.files.has("Gemfile") ? await read(scan, "Gemfile") : undefined;
  const gemspecs: string[] = [];
  for (const name of [...scan.files].sort()) {
    if (name.endsWith(".gemspec")) gemspecs.push((await read(scan, name)) ?? "");
  }
  const runner = await rubyRunner(scan, [
    text,
    ...rakelib.map((file) => file.text),
    gemfile ?? "",
    ...gemspecs,
  ]);
  let command = "rake test";
  let why = definer === rakefile
    ? `${rakefile} has a test task`
    : `${definer} has a test task (rake loads rakelib/*.rake with ${rakefile})`;
  if (gemfile !== undefined && (await onPath(scan, "bundle"))) {
    // --dry-run: bundle check would otherwise write a Gemfile.lock into the repository.
    const check = await probeOnce(scan, "bundle", ["check", "--dry-run"]);
    if (check.code === 0) {
      command = "bundle exec rake test";
      why += "; the Gemfile's gems are installed (bundle check)";
    } else {
      why +=
        "; the Gemfile's gems are not all installed (bundle check), so rake runs without bundler";
    }
  }
  if (!(await onPath(scan, "rake"))) {
    skip(scan, rakefile, "rake is not installed here");
    return;
  }
  if (
    addCheck(
      scan,
      {
        name: command,
        command,
        source: `${definer} task test`,
        why: `${why}; ${runner} names the failing tests`,
        executable: command.startsWith("bundle") ? "bundle" : "rake",
        runner,
        kind: "test",
      },
      ["ruby:.:test", "rake:.:test"],
    )
  ) {
    await addConfigFile(scan, rakefile);
    for (const file of rakelib) await addConfigFile(scan, file.path);
    if (gemfile !== undefined) await addConfigFile(scan, "Gemfile");
  }
}
