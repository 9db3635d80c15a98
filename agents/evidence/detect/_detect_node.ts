/**
 * package.json: the package manager, the root scripts, and the packages of
 * npm, yarn, bun and pnpm workspaces (read by `_node_package.ts`). A root
 * script is the repository's command ("the root `npm test` runs the
 * workspaces"); without one, each workspace package that has the script is
 * a check of its own.
 *
 * @module
 */

import {
  addCheck,
  addConfigFile,
  commandTrouble,
  type Kind,
  quote,
  runnerOf,
  type Scan,
  skip,
  withRunner,
} from "./_detect_scan.ts";
import { loadPackage, type PackageJson, type Workspaces, workspacesOf } from "./_node_package.ts";

/** A JavaScript package manager. */
export type PackageManager = "npm" | "pnpm" | "yarn" | "bun";

const LOCK_FILES: ReadonlyArray<readonly [string, PackageManager]> = [
  ["package-lock.json", "npm"],
  ["npm-shrinkwrap.json", "npm"],
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lock", "bun"],
  ["bun.lockb", "bun"],
];

/** The package manager and the reason, from the lock files, else `packageManager`, else npm. */
export function packageManagerOf(
  scan: Scan,
  field: unknown,
): { manager: PackageManager; reason: string } {
  const declared = typeof field === "string"
    ? /^(npm|pnpm|yarn|bun)(?:@|$)/.exec(field)?.[1] as PackageManager | undefined
    : undefined;
  const locks = LOCK_FILES.filter(([file]) => scan.files.has(file));
  if (locks.length > 0) {
    // With several lock files, the one `packageManager` agrees with wins.
    const [file, manager] = locks.find(([, candidate]) => candidate === declared) ?? locks[0];
    const others = locks.filter(([other]) => other !== file).map(([other]) => other);
    const ignored = others.length > 0 ? ` (${others.join(", ")} ignored)` : "";
    return { manager, reason: `${file} names ${manager}${ignored}` };
  }
  if (declared !== undefined) {
    return {
      manager: declared,
      reason: `packageManager ${quote(field as string)} names ${declared}`,
    };
  }
  if (typeof field === "string") {
    return {
      manager: "npm",
      reason: `packageManager ${quote(field)} is not npm, pnpm, yarn or bun; npm by default`,
    };
  }
  return { manager: "npm", reason: "no lock file; npm by default" };
}

/** How a package manager runs a root script. */
export function scriptCommand(manager: PackageManager, script: string): string {
  // `bun test` is bun's own test runner, not the script.
  if (script === "test" && manager !== "bun") return `${manager} test`;
  return `${manager} run ${script}`;
}

/** How a package manager runs a workspace package's script from the root, or why it cannot. */
export function workspaceCommand(
  manager: PackageManager,
  pkg: PackageJson,
  script: string,
): { command: string } | { error: string } {
  const run = script === "test" && manager !== "bun" ? "test" : `run ${script}`;
  switch (manager) {
    case "npm":
      return { command: `npm ${run} -w ${pkg.dir}` };
    case "pnpm":
      return { command: `pnpm --filter ./${pkg.dir} ${run}` };
    case "yarn":
      return pkg.name === undefined
        ? { error: `${pkg.path} has no "name"; yarn addresses workspaces by name` }
        : { command: `yarn workspace ${pkg.name} ${run}` };
    case "bun":
      return { command: `cd ${pkg.dir} && bun run ${script}` };
  }
}

/** Whether a script is npm's placeholder (`echo "Error: no test specified" && exit 1`). */
export function isPlaceholder(text: string): boolean {
  return /no test specified/i.test(text) && /\bexit 1\b/.test(text);
}

/**
 * The script's text followed by the texts of the scripts it runs (`npm run
 * x`, `run-s x y`), so that what a `check` script does can be told.
 */
export function expandScript(pkg: PackageJson, script: string, seen = new Set<string>()): string {
  const text = pkg.scripts[script];
  if (typeof text !== "string" || seen.has(script)) return "";
  seen.add(script);
  const called = new Set<string>();
  for (
    const match of text.matchAll(/\b(?:npm|pnpm|yarn|bun)\s+(?:run(?:-script)?\s+)?([\w:.-]+)/g)
  ) {
    called.add(match[1]);
  }
  for (const match of text.matchAll(/\b(?:run-s|run-p|npm-run-all)((?:\s+[\w:.*-]+)+)/g)) {
    for (const name of match[1].trim().split(/\s+/)) {
      if (name.startsWith("-")) continue;
      // `run-s lint:*` runs every script with that prefix.
      const names = name.endsWith("*")
        ? Object.keys(pkg.scripts).filter((other) => other.startsWith(name.slice(0, -1)))
        : [name];
      for (const other of names) called.add(other);
    }
  }
  const parts = [text];
  for (const name of called) {
    if (name in pkg.scripts) parts.push(expandScript(pkg, name, seen));
  }
  return parts.filter((part) => part !== "").join("\n");
}

/** Script names that start something rather than check it. */
const NOT_A_CHECK: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(?:start|dev|serve|preview|watch|storybook)(?:[:-]|$)/, "starts a server or watcher"],
  [/^(?:deploy|release|publish|prepublish|version)(?:[:-]|$)/, "publishes or deploys"],
  [/^(?:format|fmt)$/, "rewrites files (a format:check would check them)"],
];

/** Why a script must not run as a check, or undefined when it may. */
export function scriptTrouble(name: string, expanded: string): string | undefined {
  for (const [pattern, why] of NOT_A_CHECK) if (pattern.test(name)) return why;
  return commandTrouble(expanded);
}

const NAME_KINDS: ReadonlyArray<readonly [RegExp, Kind]> = [
  // Names of scripts that run several checks: a gate, even when one of them is a test runner.
  [/^(?:check|checks|verify|validate|ci|all|ok|qa|pre-?commit|pre-?push)(?:[:-]|$)/, "gate"],
  [/^(?:type-?check|types|tsc|check-?types|typings)(?:[:-]|$)/, "typecheck"],
  [/^(?:test|tests|spec|unit|e2e|integration|coverage|cover)(?:[:-]|$)/, "test"],
  [/^(?:lint|eslint|format|fmt|prettier|style|clippy|vet)(?:[:-]|$)/, "lint"],
  [/^(?:build|compile|bundle|dist)(?:[:-]|$)/, "build"],
];

/** The kind of a script or target from its name, else `test` when it runs a test runner, else `gate`. */
export function kindOf(name: string, text: string): Kind {
  for (const [pattern, kind] of NAME_KINDS) if (pattern.test(name)) return kind;
  return runnerOf(text) !== undefined ? "test" : "gate";
}

const PACKAGE_SCRIPTS: ReadonlyArray<readonly [string, Kind]> = [
  ["test", "test"],
  ["typecheck", "typecheck"],
  ["lint", "lint"],
];

/** A script that runs a script in every workspace package. */
const RUNS_WORKSPACES =
  /\s(?:--workspaces|-ws|-r|--recursive)\b|\bworkspaces\s+(?:foreach|run)\b|\b(?:turbo|nx|lerna)\s+run\b|\bnx\s+run-many\b/;

const JS_RUNNER_CONFIG = /^(?:jest\.config\.(?:[cm]?[jt]s|json)|vitest\.config\.[cm]?[jt]s)$/;

/** Why a script of a package cannot be a check, or its text. */
function usableScript(
  scan: Scan,
  pkg: PackageJson,
  script: string,
): { text: string } | { skipped: true } | undefined {
  const value = pkg.scripts[script];
  if (value === undefined) return undefined;
  const source = `${pkg.path} scripts.${script}`;
  if (typeof value !== "string") {
    skip(scan, source, "the script is not a string");
    return { skipped: true };
  }
  if (value.trim() === "") {
    skip(scan, source, "the script is empty");
    return { skipped: true };
  }
  if (isPlaceholder(value)) {
    skip(scan, source, `npm's placeholder test script: ${quote(value)}`);
    return { skipped: true };
  }
  return { text: value };
}

/** Root scripts test, typecheck and lint; for each one the root lacks, every workspace package's. */
export async function detectPackageJson(scan: Scan): Promise<void> {
  const root = await loadPackage(scan, ".");
  if (root === undefined) return;
  const { manager, reason } = packageManagerOf(scan, root.packageManager);
  const workspaces = await workspacesOf(scan);
  let found = false;
  let tests = false;
  const missing: Array<readonly [string, Kind]> = [];
  for (const [script, kind] of PACKAGE_SCRIPTS) {
    const usable = usableScript(scan, root, script);
    if (usable === undefined) {
      missing.push([script, kind]);
      continue;
    }
    if (!("text" in usable)) continue;
    const command = scriptCommand(manager, script);
    const keys = [`pkg:.:${script}`, `sh:.:${usable.text.trim()}`];
    // The root script is the repository's command: it stands for the workspaces' ones, and
    // for each package's when it visibly runs them all (so CI's `npm test -w a` adds nothing).
    const aliases = workspaces === undefined ? [] : [
      `pkg:workspaces:${script}`,
      ...(RUNS_WORKSPACES.test(expandScript(root, script))
        ? workspaces.packages.map((pkg) => `pkg:${pkg.dir}:${script}`)
        : []),
    ];
    const added = addCheck(
      scan,
      withRunner(
        {
          name: command,
          command,
          source: `package.json scripts.${script}`,
          why: `package.json has scripts.${script}; ${reason}${
            workspaces !== undefined ? "; the root script stands for the workspaces" : ""
          }`,
          executable: manager,
          kind,
        },
        kind === "test" ? runnerOf(usable.text) : undefined,
      ),
      keys,
      aliases,
    );
    found ||= added;
    tests ||= added && kind === "test";
  }
  if (workspaces !== undefined) {
    const perPackage = await detectWorkspaceScripts(scan, workspaces, missing, manager, reason);
    found ||= perPackage.found;
    tests ||= perPackage.tests;
  }
  if (!found) {
    if (!scan.detection.skipped.some((entry) => entry.source.startsWith("package.json"))) {
      skip(
        scan,
        "package.json",
        workspaces === undefined
          ? 'no "test", "typecheck" or "lint" script'
          : `no "test", "typecheck" or "lint" script at the root or in the ${workspaces.packages.length} workspace packages`,
      );
    }
    return;
  }
  await addConfigFile(scan, "package.json");
  if (tests) {
    for (const file of [...scan.files].filter((name) => JS_RUNNER_CONFIG.test(name)).sort()) {
      await addConfigFile(scan, file);
    }
  }
}

async function detectWorkspaceScripts(
  scan: Scan,
  workspaces: Workspaces,
  missing: Array<readonly [string, Kind]>,
  manager: PackageManager,
  reason: string,
): Promise<{ found: boolean; tests: boolean }> {
  let found = false;
  let tests = false;
  const declared = `${manager} workspaces (${workspaces.source}: ${
    workspaces.patterns.map(quote).join(", ")
  })`;
  for (const [script, kind] of missing) {
    for (const pkg of workspaces.packages) {
      const usable = usableScript(scan, pkg, script);
      if (usable === undefined || !("text" in usable)) continue;
      const source = `${pkg.path} scripts.${script}`;
      const command = workspaceCommand(manager, pkg, script);
      if ("error" in command) {
        skip(scan, source, command.error);
        continue;
      }
      const added = addCheck(
        scan,
        withRunner(
          {
            name: command.command,
            command: command.command,
            source,
            why:
              `${pkg.path} has scripts.${script} and the root package.json has none; ${declared}; ${reason}`,
            executable: manager,
            kind,
          },
          kind === "test" ? runnerOf(usable.text) : undefined,
        ),
        [`pkg:${pkg.dir}:${script}`, `sh:${pkg.dir}:${usable.text}`],
        [`pkg:workspaces:${script}`],
      );
      if (added) {
        await addConfigFile(scan, "package.json");
        await addConfigFile(scan, pkg.path);
      }
      found ||= added;
      tests ||= added && kind === "test";
    }
  }
  if (found) await addConfigFile(scan, workspaces.file);
  return { found, tests };
}
