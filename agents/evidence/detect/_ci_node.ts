/**
 * What a CI command of a JavaScript package manager means locally: `npm`,
 * `pnpm`, `yarn` and `bun` (the script they run, in which packages, or
 * setup, or publishing), and `npx` or `bunx` (a check when the tool is a
 * dependency, else a download).
 *
 * @module
 */

import { expandScript, isPlaceholder, kindOf, scriptTrouble } from "./_detect_node.ts";
import { loadPackage, type PackageJson, workspacePackage, workspacesOf } from "./_node_package.ts";
import {
  commandTrouble,
  inFolder,
  inRepository,
  type Kind,
  quote,
  runnerOf,
  type Scan,
  within,
} from "./_detect_scan.ts";
import { check, excerpt, type Meaning, SETUP_WHY, takeOption } from "./_ci_meaning.ts";

/** npx tools and the package that provides each, when its name differs. */
const BIN_PACKAGES: Record<string, string> = {
  tsc: "typescript",
  biome: "@biomejs/biome",
  attw: "@arethetypeswrong/cli",
  playwright: "@playwright/test",
};

const BIN_KINDS: ReadonlyArray<readonly [RegExp, Kind]> = [
  [/^(?:tsc|vue-tsc|tsd|attw)$/, "typecheck"],
  [
    /^(?:eslint|prettier|biome|xo|standard|stylelint|markdownlint(?:-cli2?)?|knip|publint|oxlint)$/,
    "lint",
  ],
  [/^(?:jest|vitest|mocha|ava|tap|c8|nyc|uvu)$/, "test"],
];

const PM_SETUP = new Set([
  "ci",
  "install",
  "i",
  "in",
  "add",
  "link",
  "rebuild",
  "prune",
  "dedupe",
  "update",
  "up",
  "cache",
  "config",
  "set",
  "fetch",
  "setup",
  "store",
  "env",
  "audit",
  "outdated",
  "ls",
  "list",
  "why",
  "--version",
  "-v",
  "version",
  "approve-builds",
  "import",
  "init",
]);

/** A package manager command: the script it runs, in which package(s), or what else it is. */
export async function packageManagerCommand(
  scan: Scan,
  manager: "npm" | "pnpm" | "yarn" | "bun",
  args: string[],
  dir: string,
  text: string,
): Promise<Meaning> {
  let selector: string | undefined;
  let all = false;
  let ifPresent = false;
  let folder = dir;
  const rest: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === "--") {
      rest.push(...args.slice(index));
      break;
    }
    const workspace = takeOption(args, index, ["-w", "--workspace", "--filter", "-F"]);
    const at = takeOption(args, index, ["--prefix", "-C", "--dir", "--cwd"]);
    if (manager !== "pnpm" && workspace !== undefined) {
      selector = workspace;
      if (!word.includes("=")) index++;
    } else if (manager === "pnpm" && workspace !== undefined && word !== "-w") {
      selector = workspace;
      if (!word.includes("=")) index++;
    } else if (at !== undefined) {
      const next = inRepository(folder, at);
      if (next === undefined) return { type: "skip", why: `${quote(at)} leaves the repository` };
      folder = next;
      if (!word.includes("=")) index++;
    } else if (["--workspaces", "-ws", "-r", "--recursive"].includes(word)) {
      all = true;
    } else if (word === "--if-present") {
      ifPresent = true;
    } else if (word.startsWith("-") && rest.length === 0) {
      // Output and behaviour flags (--silent, --parallel, --frozen-lockfile) do not change what runs.
      if (manager === "yarn" && word === "--frozen-lockfile") {
        return { type: "setup", why: SETUP_WHY };
      }
    } else {
      rest.push(word);
    }
  }
  const [sub, ...more] = rest;
  if (sub === undefined) {
    return manager === "yarn"
      ? { type: "setup", why: SETUP_WHY }
      : { type: "unknown", why: `${manager} with no command` };
  }
  if (sub === "publish" || (sub === "npm" && more[0] === "publish")) {
    return { type: "skip", why: "publishes packages" };
  }
  if (sub === "dlx") return { type: "skip", why: `${manager} dlx downloads the package it runs` };
  if (sub === "x" || (manager === "npm" && sub === "exec")) {
    return await npxCommand(scan, manager, more, folder, text);
  }
  if (manager === "pnpm" && sub === "exec") {
    return await npxCommand(scan, manager, more, folder, text);
  }
  // yarn has no `ci` command: `yarn ci` runs the script.
  if (PM_SETUP.has(sub) && !(manager === "yarn" && sub === "ci")) {
    return { type: "setup", why: SETUP_WHY };
  }
  if (
    manager === "npm" && ["pack", "deprecate", "dist-tag", "owner", "login", "whoami"].includes(sub)
  ) {
    return { type: "skip", why: `npm ${sub} is not a check` };
  }
  if (manager === "bun" && sub === "test") {
    return check(
      {
        command: inFolder(folder, text),
        executable: "bun",
        kind: "test",
        facts: "bun test is bun's own test runner",
        keys: [`bun:${folder}:test`],
        configFiles: [],
        task: "test",
      },
      undefined,
    );
  }
  let script: string;
  if (["test", "t", "tst"].includes(sub)) script = "test";
  else if (["run", "run-script", "rum", "urn"].includes(sub)) {
    if (more[0] === undefined) return { type: "unknown", why: `${manager} run with no script` };
    script = more[0];
  } else if (manager === "yarn" && sub === "workspace") {
    selector = more[0];
    const [inner, ...tail] = more.slice(1);
    script = inner === "run" ? tail[0] ?? "" : inner ?? "";
  } else if (manager === "yarn" && sub === "workspaces") {
    // yarn 1 `workspaces run x`; yarn 2+ `workspaces foreach [options] run x`.
    const runAt = more.indexOf("run");
    if (runAt === -1) return { type: "unknown", why: "yarn workspaces without run" };
    all = true;
    script = more[runAt + 1] ?? "";
  } else if (manager === "npm") {
    return { type: "unknown", why: `npm ${sub} is not a script run` };
  } else {
    // pnpm, yarn and bun run a script by its bare name; failing that, a dependency's binary.
    script = sub;
  }
  return await scriptMeaning(scan, {
    manager,
    script,
    selector,
    all,
    ifPresent,
    folder,
    dir,
    text,
  });
}

/** A coverage tool around one script: `nyc --reporter=lcov npm test` names `test`. */
const COVERAGE_WRAPPER =
  /^\s*(?:cross-env\s+(?:\S+=\S*\s+)*)?(?:nyc|c8)\b[^&|;]*?\s(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?([\w:.-]+)\s*$/;

async function scriptMeaning(
  scan: Scan,
  options: {
    manager: "npm" | "pnpm" | "yarn" | "bun";
    script: string;
    selector?: string;
    all: boolean;
    ifPresent: boolean;
    /** The package's folder (`--prefix`, `-C`). */
    folder: string;
    /** The folder the command runs in. */
    dir: string;
    text: string;
  },
): Promise<Meaning> {
  const { manager, script, selector, all, ifPresent, folder, dir, text } = options;
  const packages: PackageJson[] = [];
  let where: string;
  if (all) {
    const workspaces = await workspacesOf(scan);
    if (workspaces === undefined) return { type: "skip", why: "there are no workspaces" };
    packages.push(...workspaces.packages.filter((pkg) => script in pkg.scripts));
    where = `the workspace packages`;
  } else if (selector !== undefined) {
    const pkg = await workspacePackage(scan, selector);
    if (pkg === undefined) {
      return { type: "skip", why: `no workspace package is named or found at ${quote(selector)}` };
    }
    packages.push(pkg);
    where = pkg.path;
  } else {
    const pkg = await loadPackage(scan, folder);
    if (pkg === undefined) {
      return { type: "skip", why: `there is no usable ${within(folder, "package.json")}` };
    }
    packages.push(pkg);
    where = pkg.path;
  }
  const withScript = packages.filter((pkg) => typeof pkg.scripts[script] === "string");
  if (withScript.length === 0) {
    if (!all && selector === undefined && manager !== "npm") {
      const binary = await npxCommand(scan, manager, [script], folder, text);
      if (binary.type === "check") return binary;
    }
    return {
      type: "skip",
      why: `${where} ${all ? "have" : "has"} no scripts.${script}${
        ifPresent ? " (--if-present)" : ""
      }`,
    };
  }
  const expanded = withScript.map((pkg) => expandScript(pkg, script)).join("\n");
  if (withScript.every((pkg) => isPlaceholder(String(pkg.scripts[script])))) {
    return { type: "skip", why: "npm's placeholder test script" };
  }
  const trouble = scriptTrouble(script, expanded);
  if (trouble !== undefined) return { type: "skip", why: `scripts.${script} ${trouble}` };
  const kind = kindOf(script, expanded);
  const dirKey = all ? "workspaces" : withScript[0].dir;
  // `nyc npm test`, `c8 npm run test:unit`: coverage around a script is that script's gate.
  const own = String(withScript[0].scripts[script]);
  const wrapped = COVERAGE_WRAPPER.exec(own)?.[1];
  const wraps = wrapped === undefined || all ? [] : [`pkg:${dirKey}:${wrapped}`];
  return check(
    {
      command: inFolder(dir, text),
      executable: manager,
      kind,
      facts: all
        ? `${withScript.length} workspace packages have scripts.${script}`
        : `${where} has scripts.${script} (${excerpt(String(withScript[0].scripts[script]))})`,
      keys: [`pkg:${dirKey}:${script}`, ...wraps, `sh:${dir}:${text}`],
      configFiles: withScript.map((pkg) => pkg.path),
      task: script,
    },
    kind === "test" || kind === "gate" ? runnerOf(expanded) : undefined,
  );
}

/** `npx tool`: a check when the tool is a dependency (npx would otherwise download it). */
export async function npxCommand(
  scan: Scan,
  runner: string,
  args: string[],
  folder: string,
  text: string,
): Promise<Meaning> {
  const words = args.filter((word) =>
    !["--no-install", "--yes", "-y", "--no", "-q"].includes(word)
  );
  const [bin] = words;
  if (bin === undefined || bin.startsWith("-")) {
    return { type: "unknown", why: `${runner} options` };
  }
  const name = bin.replace(/@[^/]*$/, "");
  const wanted = BIN_PACKAGES[name] ?? name;
  const local = await loadPackage(scan, folder);
  const root = folder === "." ? local : await loadPackage(scan, ".");
  const owner = [local, root].find((pkg) => pkg?.dependencies.has(wanted));
  if (owner === undefined) {
    return {
      type: "skip",
      why: `${quote(wanted)} is not a dependency of ${
        within(folder, "package.json")
      }, so ${runner} would download it`,
    };
  }
  const trouble = commandTrouble(text);
  if (trouble !== undefined) return { type: "skip", why: trouble };
  if (name === "prettier" && !/\s(?:--check|-c|--list-different|-l)\b/.test(text)) {
    return { type: "skip", why: "prettier without --check rewrites files" };
  }
  const kind = BIN_KINDS.find(([pattern]) => pattern.test(name))?.[1] ?? "gate";
  return check(
    {
      command: inFolder(folder, text),
      executable: runner === "pnpm" || runner === "yarn" || runner === "bun" ? runner : "npx",
      kind,
      facts: `${owner.path} depends on ${wanted}`,
      keys: [`bin:${folder}:${name}`, `sh:${folder}:${text}`],
      configFiles: [],
      task: name,
    },
    kind === "test" ? runnerOf(text) : undefined,
  );
}
