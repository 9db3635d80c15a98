/**
 * What one command of a CI step or a contributing guide means locally: a
 * check (a package script, a make target, a cargo, go or deno command, pytest),
 * the same gate as a check the Python rules chose (tox, nox), setup
 * (installing), nothing at all (printing, moving files, CI's bookkeeping),
 * something that must not run here (publishing, deploying, docker,
 * downloads), or a command finishline does not know (shown as a hint, never
 * run).
 *
 * @module
 */

import { basename, dirname } from "node:path";
import { buildToolMeaning } from "./_ci_build_tools.ts";
import { loadDenoConfig } from "./_detect_deno.ts";
import { jsrUnreachable } from "./_deno_reach.ts";
import { expandTarget, loadMakefile, targetTrouble } from "./_detect_make.ts";
import {
  expandScript,
  isPlaceholder,
  kindOf,
  loadPackage,
  type PackageJson,
  scriptTrouble,
  workspacePackage,
  workspacesOf,
} from "./_detect_node.ts";
import {
  commandTrouble,
  inFolder,
  inRepository,
  type Kind,
  probeOnce,
  quote,
  readPath,
  runnerOf,
  type Scan,
  sectionOf,
  within,
} from "./_detect_scan.ts";
import type { ShellUnit } from "../_shell_words.ts";
import type { TestRunner } from "../run/test_report.ts";

export type { GateCheck, Meaning } from "./_ci_meaning.ts";
import type { GateCheck, Meaning } from "./_ci_meaning.ts";

const SETUP_WHY = "is setup (it installs or prepares), not a check";

/**
 * Commands that print, move files or keep CI's books: not candidates at all,
 * so they are left out of the report rather than listed as skipped.
 */
const QUIET = new Set([
  "echo",
  "printf",
  "export",
  "set",
  "unset",
  "mkdir",
  "cp",
  "mv",
  "rm",
  "ls",
  "cat",
  "chmod",
  "chown",
  "touch",
  "ln",
  "pwd",
  "which",
  "env",
  "true",
  ":",
  "sleep",
  "date",
  "uname",
  "nproc",
  "df",
  "free",
  "ulimit",
]);

/** Commands that install or prepare the machine: never checks. */
const SETUP = new Set([
  "pip",
  "pip3",
  "pipx",
  "apt",
  "apt-get",
  "sudo",
  "brew",
  "choco",
  "corepack",
  "nvm",
  "rustup",
  "sdkmanager",
  "gem",
  "bundle",
  "conda",
  "mamba",
  "source",
  ".",
  "tar",
  "unzip",
  "node",
  "python",
  "python3",
  "git",
]);

/** Tools that reach the network or a service: never checks here. */
const AWAY: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(?:docker|docker-compose|podman|kind|minikube)$/, "needs docker"],
  [
    /^(?:kubectl|helm|terraform|pulumi|aws|gcloud|az|flyctl|heroku)$/,
    "deploys or uses a cloud service",
  ],
  [/^(?:vercel|netlify|firebase|wrangler|surge)$/, "deploys"],
  [/^(?:curl|wget|scp|rsync|ssh|gh)$/, "uses the network"],
  [/^(?:codecov|coveralls)$/, "uploads coverage"],
  [/^(?:twine|semantic-release|changeset|lerna)$/, "publishes packages"],
];

/** Python tools CI installs with pip: shown, not run (they are not the repository's own commands). */
const PYTHON_TOOLS = new Set([
  "ruff",
  "mypy",
  "flake8",
  "black",
  "isort",
  "pylint",
  "pyright",
  "pre-commit",
  "coverage",
  "bandit",
  "codespell",
]);

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

function check(fields: Omit<GateCheck, "runner">, runner: TestRunner | undefined): Meaning {
  return { type: "check", check: runner === undefined ? fields : { ...fields, runner } };
}

/** A value as one shell word. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A short quotation of a script for the why. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return quote(line.length > 60 ? `${line.slice(0, 57)}...` : line);
}

/** Split `--name=value`, `--name value` and `-n value` options a package manager takes. */
function takeOption(args: string[], index: number, names: string[]): string | undefined {
  const word = args[index];
  for (const name of names) {
    if (word === name) return args[index + 1];
    if (name.startsWith("--") && word.startsWith(`${name}=`)) return word.slice(name.length + 1);
  }
  return undefined;
}

/** A package manager command: the script it runs, in which package(s), or what else it is. */
async function packageManagerCommand(
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
async function npxCommand(
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

async function makeCommand(
  scan: Scan,
  args: string[],
  dir: string,
  text: string,
): Promise<Meaning> {
  let folder = dir;
  const targets: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    const at = takeOption(args, index, ["-C", "--directory"]);
    if (at !== undefined) {
      const next = inRepository(folder, at);
      if (next === undefined) return { type: "skip", why: `${quote(at)} leaves the repository` };
      folder = next;
      if (!word.includes("=")) index++;
    } else if (word === "-f" || word.startsWith("--file") || word.startsWith("--makefile")) {
      return { type: "unknown", why: "make with another makefile (-f)" };
    } else if (word === "-j" || word === "-l") {
      if (/^\d+$/.test(args[index + 1] ?? "")) index++;
    } else if (!word.startsWith("-") && !word.includes("=")) {
      targets.push(word);
    }
  }
  const makefile = await loadMakefile(scan, folder);
  if (makefile === undefined) {
    // Autotools and CMake projects generate their Makefile in an earlier CI step.
    const generated = await Promise.all(
      ["configure", "configure.ac", "Makefile.am", "CMakeLists.txt"].map((name) =>
        Deno.stat(`${scan.root}/${within(folder, name)}`).then(() => name, () => undefined)
      ),
    );
    const by = generated.find((name) => name !== undefined);
    return {
      type: "skip",
      why: by === undefined
        ? `there is no Makefile in ${folder}`
        : `there is no Makefile in ${folder}: CI generates it (${by} is there), which finishline does not`,
    };
  }
  if (targets.length === 0) {
    if (makefile.defaultGoal === undefined) {
      return { type: "skip", why: `${makefile.path} has no target` };
    }
    targets.push(makefile.defaultGoal);
  }
  for (const target of targets) {
    if (!makefile.rules.has(target)) {
      return {
        type: "skip",
        why: `${makefile.path} has no ${quote(target)} target${
          makefile.includes ? " (it includes makefiles finishline does not read)" : ""
        }`,
      };
    }
    const trouble = targetTrouble(makefile, target);
    if (trouble !== undefined) return { type: "skip", why: `target ${quote(target)} ${trouble}` };
  }
  const expanded = targets.map((target) => expandTarget(makefile, target)).join("\n");
  const kind = targets.length === 1 ? kindOf(targets[0], expanded) : "gate";
  // The first word of each recipe line, when it is a plain program name (not $(VAR), ./x or a builtin).
  const requires = [
    ...new Set(
      expanded.split("\n").map((line) => line.trim().replace(/^[@+-]+/, "").split(/\s+/)[0])
        .filter((word) => /^[A-Za-z][\w.+-]*$/.test(word) && !SHELL_BUILTINS.has(word)),
    ),
  ];
  const bare = args.every((word) => word.startsWith("-") || word.includes("="));
  return check(
    {
      command: inFolder(dir, text),
      executable: "make",
      kind,
      facts: `${makefile.path} has ${targets.length === 1 ? "the target" : "the targets"} ${
        targets.map(quote).join(", ")
      }${bare ? " (its default goal)" : ""}`,
      keys: [
        `make:${folder}:${targets.join("+")}`,
        `sh:${dir}:${text}`,
      ],
      configFiles: [makefile.path],
      task: targets.join(" "),
      requires,
    },
    kind === "test" || kind === "gate" ? runnerOf(expanded) : undefined,
  );
}

/** Words a recipe line may start with that are the shell's, not programs. */
const SHELL_BUILTINS = new Set([
  "cd",
  "echo",
  "printf",
  "test",
  "true",
  "false",
  "exit",
  "export",
  "set",
  "unset",
  "if",
  "then",
  "else",
  "fi",
  "for",
  "do",
  "done",
  "while",
  "case",
  "esac",
  "command",
  "exec",
  "eval",
  "read",
  "shift",
  "source",
  "trap",
  "wait",
  "umask",
  "ulimit",
  "return",
  "local",
]);

const CARGO_KINDS: Record<string, Kind> = {
  test: "test",
  nextest: "test",
  check: "typecheck",
  clippy: "lint",
  fmt: "lint",
  build: "build",
  doc: "build",
};

async function cargoCommand(
  scan: Scan,
  args: string[],
  dir: string,
  text: string,
): Promise<Meaning> {
  const toolchain = args[0]?.startsWith("+") ? args[0] : undefined;
  const [sub] = args.filter((word) => !word.startsWith("-") && !word.startsWith("+"));
  if (sub === undefined) return { type: "unknown", why: "cargo with no command" };
  if (["install", "fetch", "update", "generate-lockfile", "binstall"].includes(sub)) {
    return { type: "setup", why: SETUP_WHY };
  }
  if (["publish", "login", "yank", "owner"].includes(sub)) {
    return { type: "skip", why: `cargo ${sub} publishes` };
  }
  const kind = CARGO_KINDS[sub];
  if (kind === undefined) {
    return { type: "unknown", why: `cargo ${sub} is not a check finishline knows` };
  }
  if (sub === "fmt" && !/\s--check\b/.test(text)) {
    return { type: "skip", why: "cargo fmt without --check rewrites files" };
  }
  if (toolchain !== undefined && toolchain !== "+stable") {
    const probe = await probeOnce(scan, "cargo", [toolchain, "--version"]);
    if (probe.code !== 0) {
      return { type: "skip", why: `the ${toolchain.slice(1)} toolchain is not installed` };
    }
  }
  // clippy, rustfmt and nextest are separate components: without them the check is red for nothing.
  if (["clippy", "fmt", "nextest"].includes(sub)) {
    const probe = await probeOnce(scan, "cargo", [
      ...(toolchain !== undefined ? [toolchain] : []),
      sub,
      "--version",
    ]);
    if (probe.code !== 0) {
      return { type: "skip", why: `cargo ${sub} is not installed here` };
    }
  }
  const manifest = /--manifest-path[= ](\S+)/.exec(text)?.[1];
  let folder = manifest !== undefined ? inRepository(dir, dirname(manifest)) ?? dir : dir;
  // A member's tests are part of the workspace's: `cargo test --workspace` already runs them.
  if (
    sub === "test" && folder !== "." &&
    sectionOf(await readPath(scan, "Cargo.toml"), /^\[workspace\]$/)
  ) {
    folder = ".";
  }
  return check(
    {
      command: inFolder(dir, text),
      executable: "cargo",
      kind,
      facts: `cargo ${sub}`,
      keys: [`cargo:${folder}:${sub}${featureSet(sub, text)}`, `sh:${dir}:${text}`],
      configFiles: [within(folder, "Cargo.toml")],
      task: sub,
    },
    sub === "test" ? "cargo" : undefined,
  );
}

/**
 * The feature flags of a cargo command other than `cargo test`, sorted: CI
 * that checks several feature sets (`cargo check --no-default-features`,
 * `cargo check --features serde`) checks different code each time. Test
 * runs stay one check whatever their flags, not the suite twice.
 */
function featureSet(sub: string, text: string): string {
  if (sub === "test") return "";
  const flags = (text.match(/--(?:no-default-features|all-features|features[= ]\S+)/g) ?? [])
    .map((flag) => flag.replace("=", " "));
  return flags.length === 0 ? "" : `:${[...new Set(flags)].sort().join(" ")}`;
}

/**
 * `:race` or `:cover` for a go command that runs the race detector or
 * measures coverage, and `:tags a,b` for one built with build tags: CI that
 * tests `-tags purego` besides the default build tests other files (the
 * pure-Go code an assembly file stands in for), as cargo's feature sets do.
 */
function goVariant(args: string[]): string {
  let variant = "";
  if (args.some((arg) => /^--?race(?:=true)?$/.test(arg))) variant = ":race";
  else if (args.some((arg) => /^--?cover/.test(arg))) variant = ":cover";
  const at = args.findIndex((arg) => /^--?tags(?:=|$)/.test(arg));
  const value = at < 0 ? undefined : args[at].includes("=") ? args[at].split("=")[1] : args[at + 1];
  const tags = (value ?? "").replace(/^["']|["']$/g, "").split(/[,\s]+/).filter(Boolean).sort();
  return tags.length > 0 ? `${variant}:tags ${tags.join(",")}` : variant;
}

function goCommand(args: string[], dir: string, text: string): Meaning {
  const [sub] = args;
  const kinds: Record<string, Kind> = { test: "test", vet: "lint", build: "build" };
  if (sub === "mod" && ["download", "verify"].includes(args[1] ?? "")) {
    return { type: "setup", why: SETUP_WHY };
  }
  if (["install", "get", "env", "version"].includes(sub ?? "")) {
    return { type: "setup", why: SETUP_WHY };
  }
  const kind = kinds[sub ?? ""];
  if (kind === undefined) {
    return { type: "unknown", why: `go ${sub ?? ""} is not a check finishline knows` };
  }
  return check(
    {
      command: inFolder(dir, text),
      executable: "go",
      kind,
      facts: `go ${sub}`,
      // -race and coverage make another check, slower: ranked to run once, not at every claim.
      keys: [`go:${dir}:${sub}${goVariant(args)}`, `sh:${dir}:${text}`],
      configFiles: [within(dir, "go.mod")],
      task: sub,
    },
    sub === "test" ? "go" : undefined,
  );
}

async function denoCommand(
  scan: Scan,
  args: string[],
  dir: string,
  text: string,
): Promise<Meaning> {
  const [sub, ...more] = args;
  if (["install", "cache", "upgrade", "--version", "-V", "info"].includes(sub ?? "")) {
    return { type: "setup", why: SETUP_WHY };
  }
  if (sub === "publish") return { type: "skip", why: "deno publish contacts the registry" };
  // Tests and type checks need the project's jsr: imports: without them they could not run.
  if (["task", "test", "check", "run", "bench"].includes(sub ?? "")) {
    const config = await loadDenoConfig(scan, dir);
    const unreachable = await jsrUnreachable(scan, config?.text);
    const task = sub === "task"
      ? config?.tasks.get(more.find((w) => !w.startsWith("-")) ?? "")
      : "";
    if (
      unreachable !== undefined && !(sub === "task" && /^\s*deno\s+(?:lint|fmt)\b/.test(task ?? ""))
    ) {
      return { type: "skip", why: unreachable };
    }
  }
  if (sub === "task") {
    const task = more.find((word) => !word.startsWith("-"));
    const config = await loadDenoConfig(scan, dir);
    if (task === undefined) return { type: "unknown", why: "deno task with no task" };
    const script = config?.tasks.get(task);
    if (config === undefined || script === undefined) {
      return {
        type: "skip",
        why: `${config?.path ?? within(dir, "deno.json")} has no tasks.${task}`,
      };
    }
    const trouble = scriptTrouble(task, script);
    if (trouble !== undefined) return { type: "skip", why: `tasks.${task} ${trouble}` };
    const kind = task === "check" ? "typecheck" : kindOf(task, script);
    return check(
      {
        command: inFolder(dir, text),
        executable: "deno",
        kind,
        facts: `${config.path} has tasks.${task} (${excerpt(script)})`,
        keys: [`deno:${dir}:task:${task}`, `sh:${dir}:${text}`],
        configFiles: [config.path],
        task,
      },
      kind === "test" || kind === "gate" ? runnerOf(script) : undefined,
    );
  }
  const kinds: Record<string, Kind> = {
    test: "test",
    lint: "lint",
    check: "typecheck",
    fmt: "lint",
  };
  const kind = kinds[sub ?? ""];
  if (kind === undefined) {
    return { type: "unknown", why: `deno ${sub ?? ""} is not a check finishline knows` };
  }
  if (sub === "fmt" && !more.includes("--check")) {
    return { type: "skip", why: "deno fmt without --check rewrites files" };
  }
  return check(
    {
      command: inFolder(dir, text),
      executable: "deno",
      kind,
      facts: `deno ${sub}`,
      keys: [`deno:${dir}:${sub}`, `sh:${dir}:${text}`],
      configFiles: [],
      task: sub,
    },
    sub === "test" ? "deno" : undefined,
  );
}

/** Options of `uv run`, `poetry run` and the like that take a value. */
const RUN_VALUE_OPTIONS = new Set([
  "--group",
  "--extra",
  "--with",
  "--with-requirements",
  "--python",
  "-p",
  "--package",
  "--directory",
  "--project",
  "--env-file",
  "--index",
  "-e",
  "--env",
]);

/** pytest, tox and nox: the Python rules decide how they run; CI only confirms them. */
function pythonCommand(tool: string, dir: string, args: string[] = []): Meaning {
  const command = inFolder(dir, "python3 -m pytest");
  if (tool === "pytest") {
    return check(
      {
        command,
        executable: "python3",
        kind: "test",
        facts:
          "pytest, as python3 -m pytest without CI's arguments (they may need plugins CI installs)",
        keys: [`py:${dir}:pytest`],
        configFiles: [],
        task: "test",
      },
      "pytest",
    );
  }
  // tox and nox run here as the Python rules chose (the interpreter's environment); a CI
  // step that names other environments (`tox -e lint`) runs something else.
  const named = tool === "tox"
    ? args.flatMap((arg, index) => args[index - 1] === "-e" ? arg.split(",") : [])
      .concat(
        args.filter((arg) => arg.startsWith("-e") && arg.length > 2).map((arg) => arg.slice(2)),
      )
    : [];
  const others = named.filter((env) => !/^py(?:\d|\b|$)/.test(env));
  if (others.length > 0) {
    return {
      type: "skip",
      why: `runs the tox environment ${
        others.join(", ")
      }; the tox rule runs the interpreter's environment only`,
    };
  }
  return {
    type: "same",
    keys: [`py:${dir}:${tool}`],
    why: `there is no ${tool} configuration at the root for it to run`,
  };
}

/**
 * What one command means, run in folder `dir`.
 *
 * @param scan The detection.
 * @param unit The command.
 * @param dir The folder it runs in, repository-relative.
 * @param env Variables CI sets to plain values; a command that uses one gets it set.
 * @returns Its meaning.
 */
export async function meaningOf(
  scan: Scan,
  unit: ShellUnit,
  dir: string,
  env: Record<string, string>,
): Promise<Meaning> {
  const words = [...unit.words];
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
  while (["time", "command", "nice"].includes(words[0] ?? "")) words.shift();
  if (words.length === 0) return { type: "quiet" };
  // Writing to $GITHUB_ENV, $GITHUB_OUTPUT or $GITHUB_PATH is CI's bookkeeping.
  if (/\$\{?GITHUB_(?:ENV|OUTPUT|PATH|STEP_SUMMARY)\b/.test(unit.text)) return { type: "quiet" };
  if (unit.text.includes("${{")) {
    const expression = /\$\{\{\s*([^}]*?)\s*\}\}/.exec(unit.text)?.[1] ?? "";
    return { type: "skip", why: `uses \${{ ${expression} }}, which has no value outside CI` };
  }
  const [first, ...args] = words;
  const tool = basename(first);
  if (tool === "cd") {
    if (args.length !== 1) return { type: "unknown", why: "cd with other than one folder" };
    const folder = inRepository(dir, args[0]);
    if (folder === undefined) {
      return { type: "skip", why: `${quote(args[0])} leaves the repository` };
    }
    return { type: "cd", dir: folder };
  }
  if (unit.pipe) return { type: "unknown", why: "pipes its output into another command" };
  if (unit.orElse !== undefined && !/^exit\b/.test(unit.orElse)) {
    return { type: "skip", why: `its failure is tolerated (|| ${unit.orElse})` };
  }
  const used = [
    ...new Set(
      [...unit.text.replace(/\$\([^)]*\)/g, "").matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)]
        .map((match) => match[1]),
    ),
  ].filter((name) => !["HOME", "PWD", "PATH"].includes(name));
  const unset = used.find((name) => !(name in env));
  if (unset !== undefined) return { type: "skip", why: `uses $${unset}, which CI sets` };
  const assignments = used.map((name) => `${name}=${shellWord(env[name])} `).join("");
  const text = assignments + unit.text.replace(/\s+/g, " ");
  for (const [pattern, why] of AWAY) if (pattern.test(tool)) return { type: "skip", why };
  // `bundle exec rake test` is rake's; bundle alone (install, config) is setup.
  if (tool === "bundle" && args[0] === "exec" && args.length > 1) {
    return await meaningOf(scan, { ...unit, words: args.slice(1) }, dir, env);
  }
  const built = buildToolMeaning(scan, tool, args);
  if (built !== undefined) return built;
  switch (tool) {
    case "npm":
    case "pnpm":
    case "yarn":
    case "bun":
      return await packageManagerCommand(scan, tool, args, dir, text);
    case "npx":
    case "bunx":
      return await npxCommand(scan, tool, args, dir, text);
    case "make":
    case "gmake":
      return await makeCommand(scan, args, dir, text);
    case "cargo":
      return await cargoCommand(scan, args, dir, text);
    case "go":
      return goCommand(args, dir, text);
    case "gofmt":
      return { type: "skip", why: "gofmt lists or rewrites files and exits 0 either way" };
    case "deno":
      return await denoCommand(scan, args, dir, text);
    case "pytest":
    case "tox":
    case "nox":
      return pythonCommand(tool, dir, args);
  }
  if (["python", "python3"].includes(tool) && args[0] === "-m") {
    const module = args[1] ?? "";
    if (["pytest", "tox", "nox"].includes(module)) {
      return pythonCommand(module, dir, args.slice(2));
    }
    if (["pip", "venv", "ensurepip", "virtualenv"].includes(module)) {
      return { type: "setup", why: SETUP_WHY };
    }
    if (PYTHON_TOOLS.has(module)) {
      return { type: "unknown", why: `${module} is a Python tool CI installs with pip` };
    }
  }
  if (["poetry", "uv", "hatch", "pdm", "pipenv"].includes(tool)) {
    if (["install", "sync", "lock", "venv", "pip", "self"].includes(args[0] ?? "")) {
      return { type: "setup", why: SETUP_WHY };
    }
    if (args[0] === "run") {
      // `uv run --group dev tox run`: what matters is the command inside the environment.
      const inner = args.slice(1);
      while (inner[0]?.startsWith("-")) {
        const option = inner.shift()!;
        if (RUN_VALUE_OPTIONS.has(option)) inner.shift();
      }
      const [command, ...rest] = inner;
      if (command === "pytest" || command === "tox" || command === "nox") {
        return pythonCommand(command, dir, rest);
      }
      if (["python", "python3"].includes(command ?? "") && rest[0] === "-m") {
        const module = rest[1] ?? "";
        if (["pytest", "tox", "nox"].includes(module)) {
          return pythonCommand(module, dir, rest.slice(2));
        }
      }
    }
  }
  // `git diff --exit-code` after a generator: the clean copy the checks run in is a work
  // tree without .git (its repository is finishline's, out of the checks' reach).
  if (tool === "git" && ["diff", "status", "ls-files"].includes(args[0] ?? "")) {
    return {
      type: "unknown",
      why: `git ${
        args[0]
      } compares the files with the commit, and the clean copy the checks run in has no .git`,
    };
  }
  if (
    tool === "git" &&
    !["config", "fetch", "clone", "submodule", "checkout", "lfs"].includes(args[0] ?? "")
  ) {
    return { type: "unknown", why: `git ${args[0] ?? ""} is not a check finishline knows` };
  }
  // `node --version` prints; `node --test` and `python -c` run code finishline cannot judge.
  const printsOnly = ["--version", "-v", "-V", "--help"].includes(args[0] ?? "");
  if (QUIET.has(tool) || (["node", "python", "python3"].includes(tool) && printsOnly)) {
    return { type: "quiet" };
  }
  if (SETUP.has(tool) && !["node", "python", "python3"].includes(tool)) {
    return { type: "setup", why: SETUP_WHY };
  }
  if (PYTHON_TOOLS.has(tool)) {
    return { type: "unknown", why: `${tool} is a Python tool CI installs with pip` };
  }
  return {
    type: "unknown",
    why: `${tool} is not a package manager, make, cargo, go, deno or a Python test runner`,
  };
}
