/**
 * The boundary itself: a command started in a session's sandbox reaches its
 * checkout, its private home and /tmp, and nothing else of the machine
 * (bubblewrap, real git), as root and as an ordinary user.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { AgentSandbox } from "../../agents/sandbox/agent_sandbox.ts";
import { bubblewrapArgs, bubblewrapAvailability } from "../../agents/sandbox/bubblewrap.ts";
import { sandboxEnv, seedPrivateHome } from "../../agents/sandbox/private_home.ts";
import { sessionWorld } from "../../agents/sandbox/session_world.ts";
import { tempDir } from "../_helpers.ts";
import { answers, escapes, honest, makeMachine, probeScript, SECRET } from "./_world_fixture.ts";

const available = bubblewrapAvailability().available;

async function run(command: string, args: string[], env: Record<string, string>, cwd: string) {
  const output = await new Deno.Command(command, {
    args,
    env,
    clearEnv: true,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

function assertBoundary(output: string, machine: Parameters<typeof escapes>[0]) {
  const said = answers(output);
  for (const [name] of escapes(machine)) assert.equal(said[name], "refused", name);
  for (const [name] of honest(machine)) assert.equal(said[name], "ok", name);
}

Deno.test({
  name: "a sandboxed command reaches its checkout, private home and /tmp, nothing else (root)",
  ignore: !available,
  fn: async () => {
    await using machine = await makeMachine();
    await using sandbox = new AgentSandbox();
    const script = probeScript([...escapes(machine), ...honest(machine)]);
    const env = { HOME: machine.home, PATH: "/usr/bin:/bin" };
    const wrapped = sandbox.wrap("/bin/sh", ["-c", script], { cwd: machine.repo, env });
    assert.ok(wrapped);
    const result = await run(wrapped.command, wrapped.args, wrapped.env, machine.repo);
    assert.equal(result.code, 0, result.stderr);
    assertBoundary(result.stdout, machine);
    // The honest commit is in the repository's own store.
    const log = await run(
      "git",
      ["log", "--oneline", "-1"],
      { PATH: "/usr/bin:/bin" },
      machine.repo,
    );
    assert.match(log.stdout, /fix/);
    // The user's files are as they were.
    assert.match(await Deno.readTextFile(join(machine.home, ".gitconfig")), /filter/);
    assert.doesNotMatch(await Deno.readTextFile(join(machine.home, ".gitconfig")), /\[x\]/);
  },
});

/** Let others pass through TMPDIR's folders for the test's length (execute bit only), as /tmp itself lets them. */
async function traversableTmp(): Promise<AsyncDisposable> {
  const restore: Array<[string, number]> = [];
  let path = Deno.realPathSync(Deno.env.get("TMPDIR") || "/tmp");
  while (path !== "/") {
    const mode = (await Deno.stat(path)).mode! & 0o7777;
    if ((mode & 0o001) === 0) {
      restore.push([path, mode]);
      await Deno.chmod(path, mode | 0o001);
    }
    path = dirname(path);
  }
  return {
    async [Symbol.asyncDispose]() {
      for (const [at, mode] of restore) await Deno.chmod(at, mode);
    },
  };
}

Deno.test({
  name: "a sandboxed command reaches its checkout, private home and /tmp, nothing else (nobody)",
  ignore: !available || Deno.uid() !== 0,
  fn: async () => {
    // The test's TMPDIR may be a root-only folder (CI's mktemp -d); nobody must be able to pass through it.
    await using _traversable = await traversableTmp();
    await using machine = await makeMachine();
    await using root = await tempDir("finishline-sbx-private-");
    const dirs = { home: join(root.path, "home"), tmp: join(root.path, "tmp") };
    await Deno.mkdir(dirs.home);
    await Deno.mkdir(dirs.tmp);
    const nobody = 65534;
    for (const path of [machine.home, machine.repo, machine.other, root.path]) {
      const chown = await run("chown", ["-R", `${nobody}:${nobody}`, path], {
        PATH: "/usr/bin:/bin",
      }, "/");
      assert.equal(chown.code, 0, chown.stderr);
    }
    const env = { HOME: machine.home, PATH: "/usr/bin:/bin" };
    const world = sessionWorld(machine.repo, { env, dirs, userHome: machine.home });
    seedPrivateHome(world, env);
    await run("chown", ["-R", `${nobody}:${nobody}`, root.path], { PATH: "/usr/bin:/bin" }, "/");
    const script = probeScript([...escapes(machine), ...honest(machine)]);
    const result = await run(
      "setpriv",
      [
        `--reuid=${nobody}`,
        `--regid=${nobody}`,
        "--clear-groups",
        "bwrap",
        ...bubblewrapArgs(world),
        "--",
        "/bin/sh",
        "-c",
        script,
      ],
      sandboxEnv(env, world),
      "/",
    );
    assert.equal(result.code, 0, result.stderr);
    assertBoundary(result.stdout, machine);
  },
});

Deno.test({
  name: "the private homes of a finishline killed with SIGKILL are removed by the next one",
  ignore: !available,
  fn: async () => {
    const stale = await Deno.makeTempDir({ prefix: "finishline-sandbox-" });
    await Deno.mkdir(join(stale, "1", "home"), { recursive: true });
    // A process id no live process has, with a start time nobody has.
    await Deno.writeTextFile(join(stale, "finishline-owner"), "4194303 1");
    await using repo = await tempDir("finishline-sbx-stale-");
    await using sandbox = new AgentSandbox();
    assert.ok(sandbox.wrap("/bin/true", [], { cwd: repo.path, env: { HOME: repo.path } }));
    assert.equal(await Deno.stat(stale).then(() => true, () => false), false);
    // Its own root stays while it lives (test files run side by side in one process: only its own is looked at).
    assert.ok(sandbox.folder);
    assert.equal(await Deno.stat(sandbox.folder).then(() => true, () => false), true);
  },
});

Deno.test({
  name: "a sandbox closed while a session lives keeps its /tmp until that session exits",
  ignore: !available,
  fn: async () => {
    await using repo = await tempDir("finishline-sbx-live-");
    const sandbox = new AgentSandbox();
    const env = { HOME: repo.path, PATH: "/usr/bin:/bin" };
    // The finish model's process, say: it writes to /tmp after the backend was released.
    const wrapped = sandbox.wrap("/bin/sh", ["-c", "read go; mkdir /tmp/later && echo made"], {
      cwd: repo.path,
      env,
    });
    assert.ok(wrapped);
    const child = new Deno.Command(wrapped.command, {
      args: wrapped.args,
      env: wrapped.env,
      clearEnv: true,
      cwd: repo.path,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    sandbox.track(child.status);
    const folder = sandbox.folder!;
    await sandbox.close();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
    const output = await child.output();
    assert.equal(
      new TextDecoder().decode(output.stdout).trim(),
      "made",
      new TextDecoder().decode(output.stderr),
    );
    // Once it exited, the folders are gone.
    for (let i = 0; i < 250; i++) {
      if (!await Deno.stat(folder).then(() => true, () => false)) return;
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    assert.fail("the sandbox's folders stayed after its last session exited");
  },
});

Deno.test({
  name: "a tool in ~/.cache is read-only on its own: the rest of the private ~/.cache is writable",
  ignore: !available,
  fn: async () => {
    await using machine = await makeMachine();
    await using root = await tempDir("finishline-sbx-cache-");
    const dirs = { home: join(root.path, "home"), tmp: join(root.path, "tmp") };
    await Deno.mkdir(dirs.home);
    await Deno.mkdir(dirs.tmp);
    const cache = join(machine.home, ".cache");
    const tool = join(cache, "some-tool", "bin", "tool");
    await Deno.mkdir(dirname(tool), { recursive: true });
    await Deno.writeTextFile(tool, "#!/bin/sh\necho tool ran\n", { mode: 0o755 });
    await Deno.mkdir(join(cache, "other-tool"));
    await Deno.writeTextFile(join(cache, "other-tool", "token"), `${SECRET}\n`);
    const env = { HOME: machine.home, PATH: `${dirname(tool)}:/usr/bin:/bin` };
    const world = sessionWorld(machine.repo, {
      env,
      executable: tool,
      dirs,
      userHome: machine.home,
    });
    const script = probeScript([
      ["run the tool", "tool | grep -q 'tool ran'"],
      [
        "make a cache of its own",
        `mkdir -p "$HOME/.cache/go-build" && touch "$HOME/.cache/go-build/x"`,
      ],
      ["read another tool's cache", `grep -rqs ${SECRET} "$HOME/.cache/other-tool"`],
      ["write the tool", `touch "$HOME/.cache/some-tool/x"`],
    ]);
    const result = await run(
      "bwrap",
      [...bubblewrapArgs(world), "--", "/bin/sh", "-c", script],
      sandboxEnv(env, world),
      "/",
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(answers(result.stdout), {
      "run the tool": "ok",
      "make a cache of its own": "ok",
      "read another tool's cache": "refused",
      "write the tool": "refused",
    });
  },
});

Deno.test({
  name: "an XDG folder the world has writable stays in the environment; the user's own go",
  ignore: !available,
  fn: async () => {
    await using repo = await tempDir("finishline-sbx-xdg-");
    await using state = await tempDir("finishline-sbx-agent-state-");
    await using sandbox = new AgentSandbox();
    const env = {
      HOME: repo.path,
      PATH: "/usr/bin:/bin",
      // The agent's own, named in its env (agent.json) and so writable: opencode's config, say.
      XDG_CONFIG_HOME: join(state.path, ".config"),
      XDG_DATA_HOME: join(state.path, ".local/share"),
      // The user's: not in the world.
      XDG_CACHE_HOME: "/root/.cache",
      XDG_RUNTIME_DIR: "/run/user/0",
    };
    const wrapped = sandbox.wrap(
      "/bin/sh",
      [
        "-c",
        'mkdir -p "$XDG_DATA_HOME" && echo "$XDG_CONFIG_HOME|$XDG_DATA_HOME|$XDG_CACHE_HOME|$XDG_RUNTIME_DIR"',
      ],
      { cwd: repo.path, env, writable: [state.path] },
    );
    assert.ok(wrapped);
    const result = await run(wrapped.command, wrapped.args, wrapped.env, repo.path);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), `${env.XDG_CONFIG_HOME}|${env.XDG_DATA_HOME}||`);
    // Made where the agent was told, on the host.
    assert.ok((await Deno.stat(env.XDG_DATA_HOME)).isDirectory);
  },
});

Deno.test({
  name: "an ACP agent's login and config files appear read-only, only for that agent",
  ignore: !available,
  fn: async () => {
    await using home = await tempDir();
    await using repo = await tempDir();
    await Deno.mkdir(join(home.path, ".codex"));
    await Deno.writeTextFile(join(home.path, ".codex", "auth.json"), '{"OPENAI_API_KEY":"sk-x"}');
    await Deno.mkdir(join(home.path, ".config", "opencode"), { recursive: true });
    await Deno.writeTextFile(join(home.path, ".config", "opencode", "opencode.json"), "{}");
    const env = { HOME: home.path, PATH: "/usr/bin:/bin" };
    const script = [
      'cat "$HOME/.codex/auth.json" 2>/dev/null || echo no-codex-login',
      'echo changed > "$HOME/.codex/auth.json" 2>/dev/null && echo wrote || echo read-only',
      'test -f "$HOME/.config/opencode/opencode.json" && echo opencode-config || echo no-opencode-config',
    ].join("; ");
    for (
      const [agent, expected] of [
        ["codex", /sk-x[\s\S]*read-only[\s\S]*no-opencode-config/],
        ["opencode", /no-codex-login[\s\S]*opencode-config/],
        [undefined, /no-codex-login[\s\S]*no-opencode-config/],
      ] as const
    ) {
      await using sandbox = new AgentSandbox();
      const wrapped = sandbox.wrap("/bin/sh", ["-c", script], { cwd: repo.path, env, agent });
      assert.ok(wrapped);
      const result = await run(wrapped.command, wrapped.args, wrapped.env, repo.path);
      assert.match(result.stdout, expected, `${agent}: ${result.stdout} ${result.stderr}`);
    }
    assert.equal(
      await Deno.readTextFile(join(home.path, ".codex", "auth.json")),
      '{"OPENAI_API_KEY":"sk-x"}',
    );
  },
});

Deno.test({
  name: "a released sandbox's folders are gone when close returns, before any await",
  ignore: !available,
  fn: async () => {
    await using repo = await tempDir();
    const sandbox = new AgentSandbox();
    sandbox.wrap("/bin/true", [], {
      cwd: repo.path,
      env: { HOME: repo.path, PATH: "/usr/bin:/bin" },
    });
    const folder = sandbox.folder!;
    assert.ok(Deno.statSync(folder).isDirectory);
    // Not awaited: a CLI that exits right after must not leave half a removal behind.
    void sandbox.close();
    assert.throws(() => Deno.statSync(folder), Deno.errors.NotFound);
  },
});
