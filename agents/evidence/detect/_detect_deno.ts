/**
 * deno.json and deno.jsonc: the `test`, `check` and `lint` tasks. Other
 * tasks (`deno task ok`) become checks when CI or the contributing guide
 * runs them.
 *
 * @module
 */

import {
  addCheck,
  addConfigFile,
  isObject,
  type Kind,
  oncePerScan,
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
  return { path, tasks: found };
}

/** The deno.json (else deno.jsonc) of a folder, read once per detection. */
export const loadDenoConfig: (scan: Scan, dir: string) => Promise<DenoConfig | undefined> =
  oncePerScan(loadUncached);

const DENO_TASKS: ReadonlyArray<readonly [string, Kind]> = [
  ["test", "test"],
  ["check", "typecheck"],
  ["lint", "lint"],
];

/** The root deno.json's `test`, `check` and `lint` tasks. */
export async function detectDeno(scan: Scan): Promise<void> {
  const config = await loadDenoConfig(scan, ".");
  if (config === undefined) return;
  const name = config.path;
  let found = false;
  for (const [task, kind] of DENO_TASKS) {
    const script = config.tasks.get(task);
    if (script === undefined) continue;
    const command = `deno task ${task}`;
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
  if (found) {
    await addConfigFile(scan, name);
  } else if (!scan.detection.skipped.some((entry) => entry.source.startsWith(name))) {
    skip(scan, name, 'no "test", "check" or "lint" task');
  }
}
