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

import { basename } from "node:path";
import { buildToolMeaning } from "./_ci_build_tools.ts";
import { inRepository, quote, type Scan } from "./_detect_scan.ts";
import type { ShellUnit } from "../_shell_words.ts";

export type { GateCheck, Meaning } from "./_ci_meaning.ts";
import { type Meaning, SETUP_WHY } from "./_ci_meaning.ts";
import { npxCommand, packageManagerCommand } from "./_ci_node.ts";
import {
  cargoCommand,
  denoCommand,
  goCommand,
  makeCommand,
  pythonCommand,
} from "./_ci_toolchains.ts";

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

/** A value as one shell word. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
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
