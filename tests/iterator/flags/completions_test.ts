/**
 * `completions bash|zsh|fish`: each script parses in its shell, and, run in
 * it, completes the commands, each command's flags exactly as the table has
 * them, the values of flags with a fixed set, folders, files and agents.
 * zsh and fish are tested where they are installed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../../../agents/iterator/main.ts";
import { completionScript } from "../../../agents/iterator/flags/completions.ts";
import { COMMAND_WORDS, COMMANDS, flagNamed } from "../../../agents/iterator/flags/table.ts";
import { kindValues } from "../../../agents/iterator/flags/values.ts";
import { BACKEND_NAMES } from "../../../agents/backends/presets.ts";
import { tempDir } from "../../_helpers.ts";

async function has(shell: string): Promise<boolean> {
  try {
    return (await new Deno.Command(shell, { args: ["-c", "true"] }).output()).success;
  } catch {
    return false;
  }
}

const HAS_ZSH = await has("zsh");
const HAS_FISH = await has("fish");

/** Run a shell script in a folder; its stdout. */
async function shell(
  name: string,
  args: string[],
  cwd: string,
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const output = await new Deno.Command(name, {
    args,
    cwd,
    env: { HOME: cwd, XDG_CONFIG_HOME: cwd, XDG_DATA_HOME: cwd },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    ok: output.success,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** A folder with two agents and a sub-folder, where completions run. */
async function workspace() {
  const dir = await tempDir();
  for (const agent of ["docs", "fixer"]) {
    await Deno.mkdir(join(dir.path, ".agent", agent), { recursive: true });
    await Deno.writeTextFile(join(dir.path, ".agent", agent, "agent.json"), "{}");
  }
  await Deno.mkdir(join(dir.path, "sub dir"));
  await Deno.writeTextFile(join(dir.path, "state.db"), "");
  return dir;
}

/** The flags the table gives a command, as the completions offer them. */
function tableFlags(name: string): string[] {
  const command = COMMANDS.find((spec) => spec.name === name);
  const own = command ? command.flags.map((flag) => `--${flag}`) : [];
  // A command that is a flag of this one ("--resume", "fleet --resume").
  const asFlags = COMMANDS.filter((spec) =>
    spec.name.startsWith(name === "" ? "--" : `${name} --`) &&
    !spec.name.slice(name.length).trim().includes(" ")
  ).map((spec) => spec.name.slice(name.length).trim());
  return [...own, ...asFlags].sort();
}

/** Cases: the words on the line (the last one being completed) and what must be offered. */
function cases(): Array<[string[], string[]]> {
  const places = [
    "",
    "fleet",
    "runs",
    "runs show",
    "runs stats",
    "learnings search",
    "finish",
    "checks",
  ];
  return [
    [[""], [...COMMAND_WORDS].sort()],
    [["r"], ["runs"]],
    [["runs", ""], ["show", "stats"]],
    [["learnings", ""], ["search"]],
    [["completions", ""], ["bash", "fish", "zsh"]],
    [["--back"], ["--backend"]],
    [["--backend", ""], [...BACKEND_NAMES].sort()],
    [["--backend", "co"], ["codex"]],
    [["fleet", "--permission-mode", ""], [...kindValues("permissionMode")!].sort()],
    [["-a", ""], ["docs", "fixer", "iterator"]],
    [["runs", "--agent", "f"], ["fixer"]],
    [["--cwd", "su"], ["sub dir"]],
    [["--store", "sta"], ["state.db"]],
    [["--issue", ""], []],
    [["--task", "x", "--iterate-max", "3", "--dry"], ["--dry-run"]],
    ...places.map((place): [string[], string[]] => [
      [...(place === "" ? [] : place.split(" ")), "--"],
      tableFlags(place),
    ]),
  ];
}

Deno.test("the completion scripts parse in their shells", async (t) => {
  await using dir = await workspace();
  const checks: Array<[string, string[], boolean]> = [
    ["bash", ["-n"], true],
    ["zsh", ["-n"], HAS_ZSH],
    ["fish", ["--no-execute"], HAS_FISH],
  ];
  for (const [name, flags, available] of checks) {
    await t.step({
      name,
      ignore: !available,
      fn: async () => {
        const file = join(dir.path, `completion.${name}`);
        await Deno.writeTextFile(file, completionScript(name, "finishline"));
        const result = await shell(name, [...flags, file], dir.path);
        assert.ok(result.ok, result.stderr);
      },
    });
  }
});

Deno.test("finishline completions SHELL prints the script, for the name it runs as", async () => {
  for (const name of ["bash", "zsh", "fish"]) {
    let stdout = "";
    const code = await main(["completions", name], { stdout: (text) => stdout += text });
    assert.equal(code, 0);
    // In a test, finishline runs as "deno run -A ...": the script completes "finishline".
    assert.equal(stdout, completionScript(name, "finishline"));
  }
  assert.match(completionScript("bash", "fl"), /\ncomplete -F _finishline fl\n$/);
  assert.match(completionScript("zsh", "fl"), /^#compdef fl\n[\s\S]*compdef _finishline fl\n/);
  assert.match(
    completionScript("fish", "fl"),
    /\ncomplete -c fl -n '__finishline_at \\'\\'' -l issue/,
  );
});

Deno.test("bash: completing commands, each command's flags (the table's), values, folders, files, agents", async () => {
  await using dir = await workspace();
  const file = join(dir.path, "completion.bash");
  await Deno.writeTextFile(file, completionScript("bash", "finishline"));
  const all = cases();
  const lines = [
    `source ${JSON.stringify(file)}`,
    ...all.map(([words]) => {
      const quoted = ["finishline", ...words].map((word) => `'${word}'`).join(" ");
      return `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length}; COMPREPLY=(); _finishline; ` +
        `printf '%s\\n' "$(printf '%s\\n' "\${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd '|')"`;
    }),
    // "--backend=co" as bash splits it when "=" is a word break
    `COMP_WORDS=(finishline --backend = co); COMP_CWORD=3; _finishline; printf '%s\\n' "\${COMPREPLY[*]}"`,
    `COMP_WORDS=(finishline --backend =); COMP_CWORD=2; _finishline; printf '%s\\n' "\${COMPREPLY[*]}"`,
    // the words after a flag's value are not taken for a command
    `COMP_WORDS=(finishline --label runs ""); COMP_CWORD=3; _finishline; printf '%s\\n' "\${#COMPREPLY[@]}"`,
  ];
  const result = await shell("bash", ["-c", lines.join("\n")], dir.path);
  assert.ok(result.ok, result.stderr);
  const out = result.stdout.split("\n");
  all.forEach(([words, expected], i) => {
    const got = out[i] === "" ? [] : out[i].split("|");
    assert.deepEqual(got, [...expected].sort(), `finishline ${words.join(" ")}<TAB>`);
  });
  assert.equal(out[all.length], "codex");
  assert.equal(out[all.length + 1], BACKEND_NAMES.join(" "));
  assert.ok(Number(out[all.length + 2]) > 1, "flags offered, not the commands of runs");
});

Deno.test({
  name: "zsh: the same completions, through stand-ins for compadd, _describe, _files",
  ignore: !HAS_ZSH,
  fn: async () => {
    await using dir = await workspace();
    const file = join(dir.path, "completion.zsh");
    await Deno.writeTextFile(file, completionScript("zsh", "finishline"));
    const all = cases();
    const lines = [
      "compdef() { :; }",
      `source ${JSON.stringify(file)}`,
      // Each stand-in prints what it was given to offer, one a line.
      `compadd() { local -a out; while (($#)); do case $1 in (-a) shift; out+=(\${(P)1});; (--) ;; (*) out+=($1);; esac; shift; done; print -rl -- $out; }`,
      `_describe() { local -a described; described=(\${(P)\${@[-1]}}); print -rl -- \${described%%:*}; }`,
      `_files() { local -a found; if [[ $1 == -/ ]]; then found=(\${PREFIX}*(N/)); else found=(\${PREFIX}*(N)); fi; print -rl -- $found; }`,
      `_message() { :; }`,
      `compset() { :; }`,
      ...all.map(([words]) => {
        const quoted = ["finishline", ...words].map((word) => `'${word}'`).join(" ");
        const last = words.at(-1);
        return `words=(${quoted}); CURRENT=${words.length + 1}; PREFIX='${last}'; ` +
          `print -r -- "\${(j:|:)\${(@o)\${(@M)\${(f)"$(_finishline)"}:#${last}*}}}"`;
      }),
    ];
    const result = await shell("zsh", ["-f", "-c", lines.join("\n")], dir.path);
    assert.ok(result.ok, result.stderr);
    const out = result.stdout.split("\n");
    all.forEach(([words, expected], i) => {
      const got = out[i] === "" ? [] : out[i].split("|");
      assert.deepEqual(got, [...expected].sort(), `finishline ${words.join(" ")}<TAB>`);
    });
  },
});

Deno.test({
  name: "fish: the same completions, through complete -C",
  ignore: !HAS_FISH,
  fn: async () => {
    await using dir = await workspace();
    const file = join(dir.path, "completion.fish");
    await Deno.writeTextFile(file, completionScript("fish", "finishline"));
    const all = cases();
    const lines = [
      `source ${JSON.stringify(file)}`,
      ...all.map(([words]) => {
        const line = ["finishline", ...words].map((word) => word.includes(" ") ? `'${word}'` : word)
          .join(" ");
        return `echo (string join '|' -- (complete -C ${
          JSON.stringify(line)
        } | string replace -r '\\t.*' '' | sort))`;
      }),
    ];
    const result = await shell("fish", ["--no-config", "-c", lines.join("\n")], dir.path);
    assert.ok(result.ok, result.stderr);
    const out = result.stdout.split("\n");
    all.forEach(([words, expected], i) => {
      // fish offers the folder with its slash, and its own short flags for "-".
      const got = out[i] === "" ? [] : out[i].split("|").map((item) => item.replace(/\/$/, ""));
      assert.deepEqual(
        got.filter((item) => !/^-[a-zA-Z]$/.test(item)).sort(),
        [...expected].sort(),
        `finishline ${words.join(" ")}<TAB>`,
      );
    });
  },
});

Deno.test("every flag of the table that takes a fixed set of values completes to that set", () => {
  const script = completionScript("bash", "finishline");
  for (const name of new Set(COMMANDS.flatMap((command) => command.flags))) {
    const values = kindValues(flagNamed(name).kind);
    if (!values) continue;
    assert.ok(script.includes(`_finishline_reply -W '${values.join(" ")}'`), name);
  }
});
