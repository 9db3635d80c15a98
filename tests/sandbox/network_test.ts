/**
 * The session's network (`verify.network`): with an allowlist, a sandboxed
 * command reaches the allowed loopback ports and, through finishline's
 * proxy, the allowed hosts; nothing else, not even a name lookup. Real
 * bubblewrap and socat, real servers on this machine.
 */

import assert from "node:assert/strict";
import { AgentSandbox } from "../../agents/sandbox/agent_sandbox.ts";
import { bubblewrapAvailability } from "../../agents/sandbox/bubblewrap.ts";
import {
  allowedBy,
  hostRule,
  modelHosts,
  networkAccess,
  socatPath,
} from "../../agents/sandbox/network.ts";
import { tempDir } from "../_helpers.ts";

const available = bubblewrapAvailability().available && socatPath() !== undefined;

/** A server on every address of this machine that answers its own name. */
function server(name: string) {
  const served = Deno.serve(
    { hostname: "0.0.0.0", port: 0, onListen: () => {} },
    () => new Response(name),
  );
  return {
    port: (served.addr as Deno.NetAddr).port,
    [Symbol.asyncDispose]: () => served.shutdown(),
  };
}

/** A non-loopback IPv4 address of this machine, to stand for a host elsewhere. */
function outsideAddress(): string | undefined {
  return Deno.networkInterfaces().find((nic) =>
    nic.family === "IPv4" && !nic.address.startsWith("127.")
  )?.address;
}

/** Fetch each URL from inside the sandbox with Deno, and print `url -> status body` or `url -> error`. */
const FETCHER = `
for (const url of Deno.args) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(15000) });
    console.log(url + " -> " + response.status + " " + (await response.text()).trim());
  } catch (error) {
    console.log(url + " -> error " + (error?.cause?.code ?? error?.name ?? "unknown"));
  }
}`;

async function fetchInside(
  sandbox: AgentSandbox,
  cwd: string,
  urls: string[],
  options: Parameters<AgentSandbox["wrap"]>[2]["network"],
): Promise<Map<string, string>> {
  const env = { HOME: cwd, PATH: "/usr/bin:/bin", DENO_DIR: `${cwd}/.deno` };
  const wrapped = sandbox.wrap(Deno.execPath(), ["eval", "--quiet", FETCHER, ...urls], {
    cwd,
    env,
    readOnly: [Deno.execPath()],
    network: options,
  });
  assert.ok(wrapped);
  const output = await new Deno.Command(wrapped.command, {
    args: wrapped.args,
    env: wrapped.env,
    clearEnv: true,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return new Map(
    text.trim().split("\n").map((line) => {
      const [url, said] = line.split(" -> ");
      return [url, said];
    }),
  );
}

Deno.test({
  name: "network allowlist: allowed loopback ports and proxied hosts only; the rest refused",
  ignore: !available,
  fn: async () => {
    await using folder = await tempDir();
    await using allowed = server("allowed");
    await using other = server("other");
    await using sandbox = new AgentSandbox();
    const outside = outsideAddress();
    const allow = [
      { host: "127.0.0.1", port: allowed.port },
      ...(outside ? [{ host: outside, port: allowed.port }] : []),
    ];
    const urls = [
      `http://127.0.0.1:${allowed.port}/`,
      `http://127.0.0.1:${other.port}/`,
      "http://example.com/",
      ...(outside
        ? [`http://${outside}:${allowed.port}/`, `http://${outside}:${other.port}/`]
        : []),
    ];
    const said = await fetchInside(sandbox, folder.path, urls, { open: false, allow });
    assert.equal(said.get(urls[0]), "200 allowed");
    // Not forwarded: nothing listens there inside.
    assert.match(said.get(urls[1])!, /^error/);
    // Through the proxy: refused by name, never looked up.
    assert.match(said.get(urls[2])!, /^403 finishline: example\.com:80 is not in/);
    if (outside) {
      assert.equal(said.get(urls[3]), "200 allowed");
      assert.match(said.get(urls[4])!, /^403 /);
    }
    assert.ok(sandbox.refusedHosts.includes("example.com:80"), sandbox.refusedHosts.join());
  },
});

/** Open a CONNECT tunnel through the proxy inside and send a plain request over it. */
const TUNNEL = `
const [target] = Deno.args;
const conn = await Deno.connect({ hostname: "127.0.0.1", port: 3128 });
const send = (text) => conn.write(new TextEncoder().encode(text));
const read = async () => {
  const buffer = new Uint8Array(4096);
  const count = await conn.read(buffer);
  return new TextDecoder().decode(buffer.subarray(0, count ?? 0));
};
await send("CONNECT " + target + " HTTP/1.1\\r\\nHost: " + target + "\\r\\n\\r\\n");
const answer = await read();
if (!answer.includes(" 200 ")) { console.log("refused " + answer.split("\\r\\n")[0]); Deno.exit(0); }
await send("GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n");
let text = "";
for (let part = await read(); part; part = await read()) text += part;
console.log("tunnel " + text.split("\\r\\n\\r\\n").at(-1));
`;

Deno.test({
  name:
    "network allowlist: a CONNECT tunnel to an allowed host carries the session's bytes; another is refused",
  ignore: !available || outsideAddress() === undefined,
  fn: async () => {
    await using folder = await tempDir();
    await using allowed = server("allowed");
    await using other = server("other");
    await using sandbox = new AgentSandbox();
    const outside = outsideAddress()!;
    const env = { HOME: folder.path, PATH: "/usr/bin:/bin", DENO_DIR: `${folder.path}/.deno` };
    const results: string[] = [];
    for (const port of [allowed.port, other.port]) {
      const wrapped = sandbox.wrap(
        Deno.execPath(),
        ["eval", "--quiet", TUNNEL, `${outside}:${port}`],
        {
          cwd: folder.path,
          env,
          readOnly: [Deno.execPath()],
          network: { open: false, allow: [{ host: outside, port: allowed.port }] },
        },
      );
      assert.ok(wrapped);
      const output = await new Deno.Command(wrapped.command, {
        args: wrapped.args,
        env: wrapped.env,
        clearEnv: true,
        cwd: folder.path,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      results.push(new TextDecoder().decode(output.stdout).trim());
    }
    assert.equal(results[0], "tunnel allowed");
    assert.match(results[1], /^refused HTTP\/1\.1 403 Forbidden/);
  },
});

Deno.test({
  name: "network open: the host's network, as without the setting",
  ignore: !available,
  fn: async () => {
    await using folder = await tempDir();
    await using other = server("other");
    await using sandbox = new AgentSandbox();
    const url = `http://127.0.0.1:${other.port}/`;
    const said = await fetchInside(sandbox, folder.path, [url], { open: true });
    assert.equal(said.get(url), "200 other");
  },
});

Deno.test("network rules: host rules, the model's hosts by backend, and the access", async (t) => {
  await t.step("rules", () => {
    assert.deepEqual(hostRule("*.pythonhosted.org"), { host: "*.pythonhosted.org" });
    assert.deepEqual(hostRule("[::1]:9000"), { host: "::1", port: 9000 });
    assert.equal(hostRule("a b"), undefined);
    assert.equal(hostRule("x.test:70000"), undefined);
    const rules = [hostRule("*.npmjs.org")!, hostRule("127.0.0.1:8080")!];
    assert.ok(allowedBy(rules, "registry.npmjs.org", 443));
    assert.ok(!allowedBy(rules, "npmjs.org.evil.test", 443));
    assert.ok(allowedBy(rules, "127.0.0.1", 8080));
    assert.ok(!allowedBy(rules, "127.0.0.1", 8081));
  });
  await t.step("the model's hosts", async () => {
    assert.deepEqual(modelHosts("claude", {}, "/")[0], { host: "api.anthropic.com", port: 443 });
    assert.deepEqual(modelHosts("codex", { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, "/")[0], {
      host: "127.0.0.1",
      port: 9,
    });
    assert.deepEqual(modelHosts("acp", {}, "/"), []);
    await using home = await tempDir();
    await Deno.mkdir(`${home.path}/.config/opencode`, { recursive: true });
    await Deno.writeTextFile(
      `${home.path}/.config/opencode/opencode.json`,
      // opencode reads JSON with comments.
      '{ // mine\n "provider": { "p": { "options": { "baseURL": "http://127.0.0.1:4567/v1" } } } }',
    );
    assert.deepEqual(modelHosts("opencode", { HOME: home.path }, "/")[0], {
      host: "127.0.0.1",
      port: 4567,
    });
  });
  await t.step("the access", () => {
    const model = modelHosts("claude", {}, "/");
    assert.deepEqual(networkAccess("open", model), { open: true });
    assert.deepEqual(networkAccess("model", model), { open: false, allow: model });
    const more = networkAccess({ allow: ["registry.npmjs.org"] }, model);
    assert.ok(!more.open && more.allow.some((rule) => rule.host === "registry.npmjs.org"));
    // Nothing known and nothing listed: open, and the run says so at its start.
    assert.deepEqual(networkAccess("model", []), { open: true });
  });
});
