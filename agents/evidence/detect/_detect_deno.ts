/**
 * deno.json and deno.jsonc: the `test`, `check` and `lint` tasks; without a
 * test task, `deno test -A` where test files exist; `deno lint` and `deno
 * fmt --check` where deno.json configures them and no task does. Other tasks
 * (`deno task ok`) become checks when CI or the contributing guide runs
 * them. A project whose `jsr:` imports cannot be had here (not cached, JSR
 * unreachable) gets no test or type check: they could not run, and are
 * listed so.
 *
 * @module
 */

import { jsrUnreachable } from "./_deno_reach.ts";
import {
  addCheck,
  addConfigFile,
  isObject,
  type Kind,
  oncePerScan,
  onPath,
  parseObject,
  read,
  readPath,
  runnerOf,
  type Scan,
  skip,
  within,
  withRunner,
} from "./_detect_scan.ts";

/** The tasks of a deno.json, by name, as their command text. */
export interface DenoConfig {
  /** The file, repository-relative. */
  path: string;
  /** Each task's command ("" for a task that only runs its dependencies). */
  tasks: Map<string, string>;
  /** The top-level keys of the file (`lint`, `fmt`, `imports`, ...). */
  keys: Set<string>;
  /** The file's text. */
  text: string;
}

async function loadUncached(scan: Scan, dir: string): Promise<DenoConfig | undefined> {
  const names = ["deno.json", "deno.jsonc"];
  const present: string[] = [];
  for (const name of names) {
    const path = within(dir, name);
    if (
      dir === "." ? scan.files.has(name) : await Deno.stat(`${scan.root}/${path}`).then(
        (info) => info.isFile,
        () => false,
      )
    ) present.push(path);
  }
  if (present.length === 0) return undefined;
  const [path] = present;
  if (present.length > 1) skip(scan, present[1], `${path} takes precedence`);
  const text = dir === "." ? await read(scan, path) : await readPath(scan, path);
  if (text === undefined) return undefined;
  const parsed = parseObject(text, true);
  if ("error" in parsed) {
    skip(scan, path, parsed.error);
    return undefined;
  }
  const tasks = parsed.value.tasks;
  if (tasks !== undefined && !isObject(tasks)) {
    skip(scan, path, '"tasks" is not an object');
    return undefined;
  }
  const found = new Map<string, string>();
  for (const [task, value] of Object.entries(tasks ?? {})) {
    // A task is a string, or an object whose `command` is optional (it may only run dependencies).
    if (typeof value === "string") found.set(task, value);
    else if (isObject(value)) {
      found.set(task, typeof value.command === "string" ? value.command : "");
    } else skip(scan, `${path} tasks.${task}`, "the task is neither a string nor an object");
  }
  return { path, tasks: found, keys: new Set(Object.keys(parsed.value)), text };
}

/** The deno.json (else deno.jsonc) of a folder, read once per detection. */
export const loadDenoConfig: (scan: Scan, dir: string) => Promise<DenoConfig | undefined> =
  oncePerScan(loadUncached);

const DENO_TASKS: ReadonlyArray<readonly [string, Kind]> = [
  ["test", "test"],
  ["check", "typecheck"],
  ["lint", "lint"],
];

/** Whether test files exist (`*_test.ts`, `*.test.ts`, `test.ts`, ...) within three folders of the root. */
async function hasTestFiles(root: string): Promise<boolean> {
  const walk = async (dir: string, depth: number): Promise<boolean> => {
    try {
      for await (const entry of Deno.readDir(`${root}/${dir}`)) {
        if (entry.isFile && /(?:^|[._])test\.[mc]?[jt]sx?$/.test(entry.name)) return true;
        if (
          entry.isDirectory && depth < 3 &&
          !["node_modules", ".git", "vendor"].includes(entry.name) &&
          await walk(`${dir}/${entry.name}`, depth + 1)
        ) return true;
      }
    } catch {
      // Unreadable: no tests found there.
    }
    return false;
  };
  return await walk(".", 0);
}

/** The root deno.json's `test`, `check` and `lint` tasks, and deno's own commands where no task stands in. */
export async function detectDeno(scan: Scan): Promise<void> {
  const config = await loadDenoConfig(scan, ".");
  if (config === undefined) return;
  const name = config.path;
  const unreachable = await jsrUnreachable(scan, config.text);
  let found = false;
  for (const [task, kind] of DENO_TASKS) {
    const script = config.tasks.get(task);
    if (script === undefined) continue;
    const command = `deno task ${task}`;
    if (unreachable !== undefined && kind !== "lint") {
      skip(scan, `${name} tasks.${task}`, unreachable);
      continue;
    }
    found = addCheck(
      scan,
      withRunner(
        {
          name: command,
          command,
          source: `${name} tasks.${task}`,
          why: `${name} has tasks.${task}`,
          executable: "deno",
          kind,
        },
        kind === "test" ? runnerOf(script) : undefined,
      ),
      [`deno:.:task:${task}`, ...(script.trim() === "" ? [] : [`sh:.:${script.trim()}`])],
    ) || found;
  }
  const own: Array<{ command: string; kind: Kind; key: string; why: string; when: boolean }> = [
    {
      command: "deno test -A",
      kind: "test",
      key: "deno:.:test",
      why: `${name} has no test task and test files exist; deno test finds them`,
      when: !config.tasks.has("test") && await hasTestFiles(scan.root),
    },
    {
      command: "deno lint",
      kind: "lint",
      key: "deno:.:lint",
      why: `${name} configures "lint" and has no lint task`,
      when: !config.tasks.has("lint") && config.keys.has("lint"),
    },
    {
      command: "deno fmt --check",
      kind: "lint",
      key: "deno:.:fmt",
      why: `${name} configures "fmt"`,
      when: config.keys.has("fmt"),
    },
  ];
  for (const entry of own) {
    if (!entry.when) continue;
    if (unreachable !== undefined && entry.kind === "test") {
      skip(scan, `${name}: ${entry.command}`, unreachable);
      continue;
    }
    if (!(await onPath(scan, "deno"))) {
      skip(scan, `${name}: ${entry.command}`, "deno is not installed here");
      continue;
    }
    found = addCheck(
      scan,
      withRunner(
        {
          name: entry.command,
          command: entry.command,
          source: name,
          why: entry.why,
          executable: "deno",
          kind: entry.kind,
        },
        entry.kind === "test" ? "deno" : undefined,
      ),
      [entry.key],
    ) || found;
  }
  if (found) {
    await addConfigFile(scan, name);
  } else if (!scan.detection.skipped.some((entry) => entry.source.startsWith(name))) {
    skip(scan, name, 'no "test", "check" or "lint" task');
  }
}
