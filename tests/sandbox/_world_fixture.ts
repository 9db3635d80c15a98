/**
 * A machine with things a session must not reach: a user home with dotfiles
 * (a git filter driver, `.npmrc`, a Python user site, Claude Code's login and
 * another project's transcript), finishline's state in the checkout, a clean
 * copy and a build seed in the host's temp folder, another session's
 * checkout. Each holds a marker a probe can look for.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { git, type TempDir, tempDir, tempRepo } from "../_helpers.ts";

/** The marker in every file a session must not read. */
export const SECRET = "finishline-sandbox-secret-7f3a";

/** The places of the fixture. */
export interface Machine extends AsyncDisposable {
  /** The user's home (what `HOME` says). */
  home: string;
  /** The session's checkout. */
  repo: string;
  /** Another session's checkout (the verifier's, say). */
  other: string;
  /** A clean copy in the host's temp folder. */
  copy: string;
  /** A build seed in the host's temp folder. */
  seed: string;
  /** finishline's state inside the checkout. */
  state: string;
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/**
 * Make the machine.
 *
 * @returns Its places, removed on dispose.
 */
export async function makeMachine(): Promise<Machine> {
  const dirs: TempDir[] = [];
  const home = await tempDir("finishline-sbx-home-");
  const repo = await tempRepo();
  const other = await tempRepo();
  const copy = await tempDir("finishline-copy-");
  const seed = await tempDir("finishline-seed-");
  dirs.push(home, repo, other, copy, seed);
  await write(
    join(home.path, ".gitconfig"),
    `[user]\n\tname = Sandbox User\n\temail = user@example.invalid\n[filter "${SECRET}"]\n\tclean = cat\n`,
  );
  await write(join(home.path, ".npmrc"), `node-options=--require /tmp/${SECRET}.js\n`);
  await write(join(home.path, ".local/lib/python3/site-packages/evil.pth"), `# ${SECRET}\n`);
  await write(join(home.path, ".claude/.credentials.json"), `{"token":"${SECRET}"}\n`);
  await write(join(home.path, ".claude/projects/other/session.jsonl"), `${SECRET}\n`);
  await write(join(other.path, "held_out_test.py"), `# ${SECRET}\n`);
  await write(join(copy.path, "README.md"), `${SECRET}\n`);
  await write(join(seed.path, "target/debug/build.log"), `${SECRET}\n`);
  const state = join(repo.path, ".agent/.finishline");
  await write(join(state, "state.db"), `${SECRET}\n`);
  await write(join(repo.path, ".git/hooks/post-commit"), "#!/bin/sh\n");
  await git(repo.path, "status");
  return {
    home: home.path,
    repo: repo.path,
    other: other.path,
    copy: copy.path,
    seed: seed.path,
    state,
    async [Symbol.asyncDispose]() {
      for (const dir of dirs.reverse()) await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * A shell probe that tries each attempt and prints `name: ok` or `name: refused`.
 *
 * @param attempts Name and shell command; success means the boundary failed.
 * @returns The script.
 */
export function probeScript(attempts: Array<[string, string]>): string {
  return attempts.map(([name, command]) =>
    `if ( ${command} ) >/dev/null 2>&1; then echo "${name}: ok"; else echo "${name}: refused"; fi`
  ).join("\n");
}

/**
 * The probe's answers by name.
 *
 * @param output The probe's stdout.
 * @returns Each attempt's answer.
 */
export function answers(output: string): Record<string, string> {
  return Object.fromEntries(
    output.split("\n").filter((line) => line.includes(": ")).map((line) => {
      const at = line.lastIndexOf(": ");
      return [line.slice(0, at), line.slice(at + 2)];
    }),
  );
}

/** The name under /tmp by which a path there shows (its first folder: the test's own TMPDIR, say). */
const underTmp = (path: string) => {
  const real = Deno.realPathSync(path);
  return real.startsWith("/tmp/") ? real.slice("/tmp/".length).split("/")[0] : "";
};

/** What the boundary must refuse, as shell commands that succeed only when it failed. */
export function escapes(m: Machine): Array<[string, string]> {
  const found = (path: string) => `grep -rqs ${SECRET} '${path}'`;
  return [
    ["read the user's ~/.gitconfig", found(`${m.home}/.gitconfig`)],
    [
      "write the user's ~/.gitconfig",
      `echo '[x]' >> '${m.home}/.gitconfig' && ${found(`${m.home}/.gitconfig`)}`,
    ],
    ["read the user's ~/.npmrc", `test -e '${m.home}/.npmrc'`],
    ["read the Python user site", `test -e '${m.home}/.local/lib'`],
    ["read another project's Claude transcript", `test -e '${m.home}/.claude/projects/other'`],
    ["write the Claude Code login", `echo x >> '${m.home}/.claude/.credentials.json'`],
    ["read finishline's state", found(m.state)],
    ["write finishline's state", `echo x > '${m.state}/state.db' && ${found(m.state)}`],
    ["read another session's checkout", found(m.other)],
    ["write another session's checkout", `echo x >> '${m.other}/held_out_test.py'`],
    ["read a clean copy", found(m.copy)],
    ["read the build seed", found(m.seed)],
    // Its own checkout and home appear in /tmp when they are there on the host; nothing else does.
    [
      "list the host's /tmp",
      `ls -A /tmp | grep -v -x -e '${underTmp(m.repo)}' -e '${
        underTmp(m.home)
      }' -e scratch | grep -q .`,
    ],
    // The clean copy and build seed sit beside the checkout on the host; only the mounted ones show.
    [
      "list the checkout's parent folder",
      `ls -A '${dirname(m.repo)}' | grep -v -x -e '${basename(m.repo)}' -e '${
        basename(m.home)
      }' | grep -q .`,
    ],
    ["write the repository's .git/config", `echo '[core]' >> '${m.repo}/.git/config'`],
    ["add a git hook", `echo 'echo hi' > '${m.repo}/.git/hooks/pre-commit'`],
    ["read the real home /root", `ls -A /root | grep -qv '^.cache$'`],
    ["see host processes", `test "$(ls /proc | grep -c '^[0-9]')" -gt 20`],
  ];
}

/** What an honest session must still do, as shell commands that succeed. */
export function honest(m: Machine): Array<[string, string]> {
  return [
    ["edit the checkout", `echo fix >> '${m.repo}/README.md'`],
    ["commit", `cd '${m.repo}' && git add README.md && git commit -qm fix`],
    ["write its home", `echo x > "$HOME/.npmrc" && test -s "$HOME/.npmrc"`],
    ["write /tmp", `echo x > /tmp/scratch && test -s /tmp/scratch`],
    ["read the Claude Code login", `grep -q token '${m.home}/.claude/.credentials.json'`],
  ];
}
