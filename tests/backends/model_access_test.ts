/**
 * The model check before a run: which credentials each backend's agent would
 * use (environment, login files, settings), which API host it talks to, and
 * whether that host answers: a refused port, an unresolvable name and a
 * certificate nobody vouches for, against real sockets on this machine.
 */

import assert from "node:assert/strict";
import {
  checkModelAccess,
  connectionCause,
  modelAccess,
} from "../../agents/backends/model_access.ts";
import { UsageError } from "../../agents/support/errors.ts";
import { tempDir } from "../_helpers.ts";

/** A port nothing listens on (it was free a moment ago). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("claude: the credentials Claude Code would use, and its API host", async (t) => {
  await using home = await tempDir("finishline-home-");
  await using project = await tempDir("finishline-project-");
  // A CLAUDE_CONFIG_DIR of its own: on macOS, no keychain login of the machine's user is found.
  const base = { HOME: home.path, CLAUDE_CONFIG_DIR: `${home.path}/.claude` };
  const access = (env: Record<string, string>, settingSources?: string[]) =>
    modelAccess("claude", { env: { ...base, ...env }, cwd: project.path, settingSources });

  await t.step("none: what was looked for, and the default host", async () => {
    const none = await access({});
    assert.equal(none.credentials, undefined);
    assert.equal(none.unchecked, undefined);
    assert.deepEqual(none.lookedFor, [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "a Claude Code login (~/.claude/.credentials.json)",
      'an "apiKeyHelper" setting',
    ]);
    assert.deepEqual(none.endpoint, {
      host: "api.anthropic.com",
      port: 443,
      tls: true,
      variable: "ANTHROPIC_BASE_URL",
      configured: false,
    });
  });

  await t.step("a key or token in the environment; an empty one is none", async () => {
    assert.equal((await access({ ANTHROPIC_API_KEY: "sk-x" })).credentials, "ANTHROPIC_API_KEY");
    assert.equal(
      (await access({ CLAUDE_CODE_OAUTH_TOKEN: "t" })).credentials,
      "CLAUDE_CODE_OAUTH_TOKEN",
    );
    assert.equal((await access({ ANTHROPIC_API_KEY: " " })).credentials, undefined);
  });

  await t.step("ANTHROPIC_BASE_URL names the host: http is plain TCP", async () => {
    const local = await access({
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:8080/x",
    });
    assert.deepEqual(local.endpoint, {
      host: "127.0.0.1",
      port: 8080,
      tls: false,
      variable: "ANTHROPIC_BASE_URL",
      configured: true,
    });
  });

  await t.step("the login file in CLAUDE_CONFIG_DIR, and a key saved by Claude Code", async () => {
    await write(`${home.path}/config/.credentials.json`, '{"claudeAiOauth":{}}');
    const login = await access({ CLAUDE_CONFIG_DIR: `${home.path}/config` });
    assert.equal(login.credentials, "~/config/.credentials.json");
    await write(`${home.path}/.claude.json`, '{"primaryApiKey":"sk-saved"}');
    assert.equal((await access({})).credentials, '"primaryApiKey" in ~/.claude.json');
    await Deno.remove(`${home.path}/.claude.json`);
  });

  await t.step(
    "settings: an apiKeyHelper, and env, from the sources the session reads",
    async () => {
      await write(
        `${project.path}/.claude/settings.json`,
        JSON.stringify({ apiKeyHelper: "./key.sh" }),
      );
      const helper = await access({}, ["project"]);
      assert.match(
        helper.credentials ?? "",
        /^the "apiKeyHelper" setting in .*\.claude\/settings\.json$/,
      );
      assert.equal((await access({}, [])).credentials, undefined, "project settings not read");
      await write(
        `${project.path}/.claude/settings.json`,
        JSON.stringify({
          env: { ANTHROPIC_AUTH_TOKEN: "t", ANTHROPIC_BASE_URL: "https://llm.corp:8443" },
        }),
      );
      const fromEnv = await access({}, ["project"]);
      assert.equal(fromEnv.credentials, "ANTHROPIC_AUTH_TOKEN");
      assert.equal(fromEnv.endpoint?.host, "llm.corp");
      assert.equal(fromEnv.endpoint?.port, 8443);
    },
  );

  await t.step("a cloud provider's credentials are not checked", async () => {
    const bedrock = await access({ CLAUDE_CODE_USE_BEDROCK: "1" }, []);
    assert.match(bedrock.unchecked ?? "", /Amazon Bedrock \(CLAUDE_CODE_USE_BEDROCK\)/);
    assert.equal(bedrock.endpoint, undefined);
  });

  await t.step(
    "a proxy is what the agent connects to, unless NO_PROXY names the host",
    async () => {
      const proxied = await access({
        ANTHROPIC_API_KEY: "k",
        HTTPS_PROXY: "http://proxy.corp:3128",
      }, []);
      assert.deepEqual(proxied.endpoint?.proxy, {
        host: "proxy.corp",
        port: 3128,
        tls: false,
        variable: "HTTPS_PROXY",
      });
      const bypassed = await access({
        ANTHROPIC_API_KEY: "k",
        HTTPS_PROXY: "http://proxy.corp:3128",
        NO_PROXY: "localhost,.anthropic.com",
      }, []);
      assert.equal(bypassed.endpoint?.proxy, undefined);
    },
  );
});

Deno.test("codex, gemini, opencode and ACP commands: what each checks", async (t) => {
  await using home = await tempDir("finishline-home-");
  await using project = await tempDir("finishline-project-");
  const access = (setting: string | { acp: { command: string[] } }, env: Record<string, string>) =>
    modelAccess(setting, { env: { HOME: home.path, ...env }, cwd: project.path });

  await t.step("codex: a key, a ChatGPT login, a custom provider", async () => {
    const none = await access("codex", {});
    assert.equal(none.credentials, undefined);
    assert.deepEqual(none.lookedFor, [
      "OPENAI_API_KEY",
      "CODEX_API_KEY",
      "a Codex login (~/.codex/auth.json)",
    ]);
    const keyed = await access("codex", { OPENAI_API_KEY: "sk" });
    assert.equal(keyed.credentials, "OPENAI_API_KEY");
    assert.equal(keyed.endpoint?.host, "api.openai.com");
    await write(
      `${home.path}/.codex/auth.json`,
      '{"OPENAI_API_KEY":null,"tokens":{"id_token":"x"}}',
    );
    const login = await access("codex", {});
    assert.equal(login.credentials, "a ChatGPT login (~/.codex/auth.json)");
    assert.equal(login.endpoint?.host, "chatgpt.com");
    await write(
      `${home.path}/.codex/config.toml`,
      'model_provider = "scripted"\n[model_providers.scripted]\n',
    );
    assert.match((await access("codex", {})).unchecked ?? "", /model provider "scripted"/);
  });

  await t.step("gemini: a key from the .env file it reads, a Google login, Vertex", async () => {
    assert.equal((await access("gemini", {})).credentials, undefined);
    await write(`${project.path}/.env`, "GEMINI_API_KEY='k'\n");
    const keyed = await access("gemini", {});
    assert.equal(keyed.credentials, "GEMINI_API_KEY");
    assert.equal(keyed.endpoint?.host, "generativelanguage.googleapis.com");
    await Deno.remove(`${project.path}/.env`);
    await write(`${home.path}/.gemini/oauth_creds.json`, "{}");
    const login = await access("gemini", {});
    assert.equal(login.credentials, "a Google login (~/.gemini/oauth_creds.json)");
    assert.equal(login.endpoint?.host, "cloudcode-pa.googleapis.com");
    assert.ok((await access("gemini", { GOOGLE_GENAI_USE_VERTEXAI: "true" })).unchecked);
  });

  await t.step("opencode and an explicit ACP command are not checked", async () => {
    for (const setting of ["opencode", { acp: { command: ["my-agent"] } }]) {
      const found = await access(setting, {});
      assert.ok(found.unchecked, JSON.stringify(setting));
      assert.equal(found.endpoint, undefined);
      // Nothing to refuse, and nothing probed.
      await checkModelAccess(setting, { env: { HOME: home.path }, cwd: project.path });
    }
  });
});

/** The one-line usage error checkModelAccess throws. */
async function refusal(env: Record<string, string>, home: string): Promise<UsageError> {
  const error = await checkModelAccess("claude", {
    env: { HOME: home, CLAUDE_CONFIG_DIR: `${home}/.claude`, ...env },
    settingSources: [],
  })
    .then(() => undefined, (error) => error);
  assert.ok(error instanceof UsageError, `refused: ${error}`);
  assert.equal(error.exitCode, 2);
  assert.doesNotMatch(error.message, /\n/);
  return error;
}

Deno.test("checkModelAccess: no key, a refused port, a name that does not resolve, a bad certificate", async (t) => {
  await using home = await tempDir("finishline-home-");

  await t.step("no key names what it looked for, and how to log in or set a key", async () => {
    const error = await refusal({}, home.path);
    assert.match(
      error.message,
      /^No credentials for the claude backend: looked for ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, a Claude Code login \(~\/\.claude\/\.credentials\.json\) and an "apiKeyHelper" setting; run `claude login` \(Claude Code's own login\), or set ANTHROPIC_API_KEY/,
    );
  });

  await t.step("a port nobody listens on", async () => {
    const port = closedPort();
    const error = await refusal(
      { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
      home.path,
    );
    assert.equal(
      error.message,
      `Cannot reach the model API at 127.0.0.1:${port} (ANTHROPIC_BASE_URL): connection refused (ECONNREFUSED); check that it is running, or ANTHROPIC_BASE_URL`,
    );
  });

  await t.step("a name that does not resolve", async () => {
    const error = await refusal(
      { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "https://nohost.invalid" },
      home.path,
    );
    assert.match(
      error.message,
      /^Cannot reach the model API at nohost\.invalid:443 \(ANTHROPIC_BASE_URL\): DNS lookup (failed \(E[A-Z_]+\)|timed out after 4 s); check the network, or ANTHROPIC_BASE_URL$/,
    );
  });

  await t.step("a listening server answers", async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
      await checkModelAccess("claude", {
        env: { HOME: home.path, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url },
        settingSources: [],
      });
      const access = await modelAccess("claude", {
        env: { HOME: home.path, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url },
      });
      assert.equal(await connectionCause(access), undefined);
      // localhost may resolve to ::1 first: the address that answers counts.
      await checkModelAccess("claude", {
        env: {
          HOME: home.path,
          ANTHROPIC_API_KEY: "k",
          ANTHROPIC_BASE_URL: url.replace("127.0.0.1", "localhost"),
        },
        settingSources: [],
      });
    } finally {
      listener.close();
    }
  });

  await t.step("a host that takes the connection but never shakes hands times out", async () => {
    const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of silent) held.push(conn);
    })();
    try {
      const port = (silent.addr as Deno.NetAddr).port;
      const error = await checkModelAccess("claude", {
        env: {
          HOME: home.path,
          ANTHROPIC_API_KEY: "k",
          ANTHROPIC_BASE_URL: `https://127.0.0.1:${port}`,
        },
        settingSources: [],
        stageTimeoutMs: 300,
      }).then(() => undefined, (error) => error);
      assert.ok(error instanceof UsageError);
      assert.match(
        error.message,
        /^Cannot reach the model API at 127\.0\.0\.1:\d+ \(ANTHROPIC_BASE_URL\): no TLS handshake within 0\.3 s; /,
      );
    } finally {
      silent.close();
      await accepting.catch(() => {});
      for (const conn of held) conn.close();
    }
  });

  const pem = await selfSignedCertificate(home.path);
  await t.step({
    name: "a certificate nobody vouches for fails the TLS handshake; NODE_EXTRA_CA_CERTS vouches",
    ignore: pem === undefined,
    fn: async () => {
      await using server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, cert: pem!.cert, key: pem!.key, onListen: () => {} },
        () => new Response("not an API"),
      );
      const url = `https://localhost:${server.addr.port}`;
      const error = await refusal({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url }, home.path);
      assert.equal(
        error.message,
        `Cannot reach the model API at localhost:${server.addr.port} (ANTHROPIC_BASE_URL): TLS handshake failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT); check ANTHROPIC_BASE_URL, or the certificates (NODE_EXTRA_CA_CERTS for a proxy's own authority)`,
      );
      await checkModelAccess("claude", {
        env: {
          HOME: home.path,
          ANTHROPIC_API_KEY: "k",
          ANTHROPIC_BASE_URL: url,
          NODE_EXTRA_CA_CERTS: pem!.certFile,
        },
        settingSources: [],
      });
    },
  });
});

Deno.test("connectionCause names why the host of a running agent cannot be reached", async () => {
  await using home = await tempDir("finishline-home-");
  const port = closedPort();
  const env = {
    HOME: home.path,
    ANTHROPIC_API_KEY: "k",
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
  };
  const access = await modelAccess("claude", { env, settingSources: [] });
  assert.equal(
    await connectionCause(access, { env }),
    `cannot reach 127.0.0.1:${port}: connection refused (ECONNREFUSED)`,
  );
});

/** A self-signed certificate for localhost, made with openssl; undefined without it. */
async function selfSignedCertificate(
  dir: string,
): Promise<{ cert: string; key: string; certFile: string } | undefined> {
  const certFile = `${dir}/cert.pem`;
  const keyFile = `${dir}/key.pem`;
  const made = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!made?.success) {
    console.warn("openssl is not available: the certificate case is skipped");
    return undefined;
  }
  return {
    cert: await Deno.readTextFile(certFile),
    key: await Deno.readTextFile(keyFile),
    certFile,
  };
}
