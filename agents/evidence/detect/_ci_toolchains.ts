/**
 * What a CI command of the other toolchains finishline reads means locally:
 * `make` (its targets in the Makefile), `cargo`, `go` and `deno` (their
 * subcommands and tasks), and the Python test runners (pytest, tox, nox, as
 * the Python rules run them).
 *
 * @module
 */

import { dirname } from "node:path";
import { loadDenoConfig } from "./_detect_deno.ts";
import { jsrUnreachable } from "./_deno_reach.ts";
import { expandTarget, loadMakefile, targetTrouble } from "./_detect_make.ts";
import { kindOf, scriptTrouble } from "./_detect_node.ts";
import {
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
import { check, excerpt, type Meaning, SETUP_WHY, takeOption } from "./_ci_meaning.ts";

/** `make` with its targets: a check when the Makefile has them and nothing in them rules it out. */
export async function makeCommand(
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

/** A cargo subcommand: a check for the ones finishline knows, when the toolchain and the component are installed. */
export async function cargoCommand(
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

/** A go subcommand: test, vet and build are checks; downloading modules and installing are setup. */
export function goCommand(args: string[], dir: string, text: string): Meaning {
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

/** A deno subcommand or task: a check when the project's jsr: imports can be reached; publishing is not. */
export async function denoCommand(
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

/** pytest, tox and nox: the Python rules decide how they run; CI only confirms them. */
export function pythonCommand(tool: string, dir: string, args: string[] = []): Meaning {
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
