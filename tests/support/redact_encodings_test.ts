import assert from "node:assert/strict";
import { Redactor } from "../../agents/support/redact.ts";
import { git, tempRepo } from "../_helpers.ts";

const KEY = "sk-ant-api03-Kq8vT2mLx4Rz9Wb7Np3Hc6Jd1Fg5Ys0Ue-ZyXwVuTs_qr";
const TOKEN = "runner-gh-token-4c8e2a6f0b9d";
// Bytes that base64 turns into `+` and `/`: the URL-safe alphabet differs.
const ODD = "odd~>?secret>>??value~~";
const PHRASE = "correct horse battery staple";
const ENV = { ANTHROPIC_API_KEY: KEY, GH_TOKEN: TOKEN, ODD_TOKEN: ODD, DB_PASSWORD: PHRASE };

/** What a real program prints for a text on its standard input. */
async function run(command: string, args: string[], input: string): Promise<string> {
  const child = new Deno.Command(command, { args, stdin: "piped", stdout: "piped" }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { stdout, success } = await child.output();
  assert.ok(success, `${command} failed`);
  return new TextDecoder().decode(stdout);
}

function hex(text: string): string {
  return Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** The base64 characters that depend on the secret alone, at one alignment. */
function base64Core(secret: string, align: number): string {
  const encoded = btoa(`${"ab".slice(0, align)}${secret}`).replace(/=+$/, "");
  return encoded.slice(Math.ceil((align * 8) / 6), Math.floor(((align + secret.length) * 8) / 6));
}

/** The secret's telling parts: none may be left in a redacted text, nor cut by line breaks. */
function assertGone(out: string, secret: string, form: string): void {
  const cores = [0, 1, 2].map((align) => base64Core(secret, align));
  const parts = [secret, hex(secret), ...cores, ...cores.map((core) => core.replaceAll("+", "-"))]
    .map((part) => part.slice(2, 14));
  const joined = out.replace(/\s+/g, "");
  for (const part of parts) assert.ok(!joined.includes(part), `${form}: ${out}`);
  const middle = Math.floor(secret.length / 2) - 4;
  assert.ok(!out.includes(secret.slice(middle, middle + 8)), `${form}: ${out}`);
}

Deno.test("Redactor finds the runner's known secrets in every encoding", async (t) => {
  const redactor = new Redactor(ENV);
  for (const secret of [KEY, TOKEN, ODD, PHRASE]) {
    await t.step(secret.slice(0, 10), async (t) => {
      const forms: Record<string, string> = {
        "base64, 3 alignments": [0, 1, 2].map((n) => btoa(`${"ab".slice(0, n)}${secret}!`))
          .join(" "),
        "URL-safe base64, 3 alignments": [0, 1, 2].map((n) =>
          btoa(`${"ab".slice(0, n)}${secret}`).replaceAll("+", "-").replaceAll("/", "_")
            .replace(/=+$/, "")
        ).join(" "),
        "base64 -w 12 (real)": await run("base64", ["-w", "12"], `prefix ${secret} suffix`),
        "base64 of a longer text, wrapped at 76 (real)": await run(
          "base64",
          [],
          `${"x".repeat(70)}${secret}${"y".repeat(70)}`,
        ),
        "hex": hex(secret),
        "upper-case hex": hex(secret).toUpperCase(),
        "xxd -p (real)": await run("xxd", ["-p", "-c", "8"], secret),
        "hex bytes apart": hex(secret).replace(/(..)/g, "$1 "),
        "percent-encoded": Array.from(secret, (c) => `%${c.charCodeAt(0).toString(16)}`).join(""),
        "encodeURIComponent": encodeURIComponent(secret),
        "\\u-escaped": Array.from(
          secret,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
        ).join(""),
        "\\u-escaped, in JSON of JSON": JSON.stringify(JSON.stringify(
          Array.from(secret, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
        )),
        "\\x-escaped": Array.from(secret, (c) => `\\x${c.charCodeAt(0).toString(16)}`).join(""),
        "split over lines (fold -w 5, real)": await run("fold", ["-w", "5"], secret),
        "split by spaces and tabs": secret.replace(/(.{3})/g, "$1 \t"),
        "split with escaped line breaks": secret.replace(/(.{4})/g, "$1\\n"),
        "a mix: percent, \\u, plain, line breaks": Array.from(
          secret,
          (c, i) =>
            i % 3 === 0
              ? `%${c.charCodeAt(0).toString(16)}`
              : i % 3 === 1
              ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}\n`
              : c,
        ).join(""),
      };
      for (const [form, text] of Object.entries(forms)) {
        await t.step(form, () => {
          const out = redactor.redact(`before ${text} after`);
          assertGone(out, secret, form);
          assert.match(out, /^before /);
          assert.match(out, / after$/);
          assert.match(out, /\[redacted\]/);
        });
      }
    });
  }

  await t.step("a text cut inside an encoded secret: what is left of it", () => {
    // An excerpt that starts or ends mid-secret ("the last lines of a check's output").
    for (const encoded of [btoa(`x${KEY}`), hex(TOKEN), btoa(ODD).replaceAll("+", "-")]) {
      for (const cut of [encoded.slice(7), encoded.slice(0, -7), encoded.slice(5, -5)]) {
        const out = redactor.redact(
          `Last lines of its output:\n${cut.replace(/(.{9})/g, "$1\n")}\nok`,
        );
        assert.ok(!out.replace(/\s+/g, "").includes(cut.slice(4, 16)), out);
        assert.match(out, /^Last lines of its output:\n.*\[redacted\].*\nok$/s);
      }
    }
  });

  await t.step("a secret with one character changed: each half", () => {
    const changed = `${KEY.slice(0, 25)}#${KEY.slice(26)}`;
    const out = redactor.redact(`k=${changed}`);
    assert.ok(!out.includes(KEY.slice(3, 15)) && !out.includes(KEY.slice(30, 42)), out);
  });

  await t.step("a connection string's host and user are not pieces of its password", () => {
    const dsn = new Redactor({
      DATABASE_URL: "postgres://reporting:Vt7qLx92mWz4@db.internal.example/ledger",
    });
    const text = "connect to db.internal.example as reporting, database ledger";
    assert.equal(dsn.redact(text), text);
  });

  await t.step("lines of a private key in the environment, printed alone", () => {
    const body = Array.from({ length: 6 }, (_, i) => `${"Tq8Wm3Lk".repeat(8)}${i}`);
    const pem = [
      "-----BEGIN OPENSSH PRIVATE KEY-----",
      ...body,
      "-----END OPENSSH PRIVATE KEY-----",
    ]
      .join("\n");
    const out = new Redactor({ DEPLOY_KEY_FILE_CONTENT: pem }).redact(
      `tail -3:\n${body.slice(3).join("\n")}\n`,
    );
    assert.ok(!out.includes("Tq8Wm3Lk"), out);
    assert.match(out, /^tail -3:\n/);
  });

  await t.step("a value protected later, base64-encoded", () => {
    const more = new Redactor({});
    more.protect("embeddings-key-4242");
    assert.equal(more.redact(`k=${btoa("embeddings-key-4242")}`), "k=[redacted]");
  });

  await t.step("in a JSON-like structure's strings", () => {
    const out = redactor.redactValue({ output: [btoa(KEY), hex(TOKEN)] });
    assert.deepEqual(out, { output: ["[redacted]", "[redacted]"] });
  });
});

Deno.test("Redactor reads secrets out of values whatever their names", async (t) => {
  const azureKey = `${"Kd8mQ2vX7pLw3Rn9".repeat(5)}Tz4Yb1==`;
  const dockerPassword = "Rk4wQz8pLm2vXn7T";
  const cases: Array<[string, string, string[]]> = [
    [
      "AZURE_STORAGE_CONNECTION_STRING",
      `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${azureKey};EndpointSuffix=core.windows.net`,
      [azureKey],
    ],
    [
      "SERVICEBUS_CONNECTION",
      "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=Qm8ZxR4vT7nL2kW9pJ6cH3bYq1=",
      ["Qm8ZxR4vT7nL2kW9pJ6cH3bYq1="],
    ],
    [
      "SQL_CONNECTION",
      "Server=tcp:db.example.com,1433;Database=app;User ID=app;Password=purple monkey dishwasher;",
      ["purple monkey dishwasher"],
    ],
    [
      "DOCKER_AUTH_CONFIG",
      JSON.stringify({ auths: { "r.example.com": { auth: btoa(`bot:${dockerPassword}`) } } }),
      [dockerPassword, btoa(`bot:${dockerPassword}`)],
    ],
    ["CACHE_URL", "redis://:Wq8nLr3xVt6z@cache:6379/0", ["Wq8nLr3xVt6z"]],
    ["MONGO", "mongodb+srv://app:p%40ss-w0rd-long@cluster0.example.net/db", ["p@ss-w0rd-long"]],
    ["BLOB_SAS", "https://acme.blob.core.windows.net/c?sv=2022&sig=Zk8%2BmQ2vX7pLw3Rn9Tz4Yb1%3D", [
      "Zk8%2BmQ2vX7pLw3Rn9Tz4Yb1%3D",
    ]],
    ["RELEASE_HOOK", "Zx8pQ2mL7vK4nR9tW3cY6bH1jF5gD0sAq", ["Zx8pQ2mL7vK4nR9tW3cY6bH1jF5gD0sAq"]],
  ];
  for (const [name, value, secrets] of cases) {
    await t.step(name, () => {
      const redactor = new Redactor({ [name]: value });
      for (const secret of secrets) {
        for (const text of [secret, btoa(secret), hex(secret)]) {
          const out = redactor.redact(`x ${text} y`);
          assert.ok(!out.includes(text), `${name}: ${out}`);
          assert.match(out, /^x .*\[redacted\].* y$/);
        }
      }
    });
  }

  await t.step("not ordinary values: hashes, UUIDs, paths, names, versions", () => {
    const env: Record<string, string> = {
      GITHUB_SHA: "3f9a2c7e1b5d8f04a1b2c3d4e5f60718293a4b5c",
      INVOCATION_ID: "0b7a2d8c4e6f41a3b5c7d9e1f3a5b7c9",
      TERM_SESSION_ID: "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b",
      RUNNER_TRACKING_ID: "github_6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b",
      GITHUB_REPOSITORY: "MyCompany/BackendService2",
      GITHUB_REF: "refs/heads/Feature/Add-Login2024",
      JAVA_HOME_17_X64: "/usr/lib/jvm/temurin-17-jdk-amd64",
      ImageVersion: "20240101.1.0",
      GITHUB_RUN_ID: "12345678901",
      LANG: "en_US.UTF-8",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus",
      LS_COLORS: "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33",
      npm_config_user_agent: "npm/10.2.3 node/v20.10.0 linux x64 workspaces/false",
    };
    const redactor = new Redactor(env);
    const text = Object.values(env).join("\n");
    assert.equal(redactor.redact(text), text);
  });
});

Deno.test("Redactor leaves ordinary output alone", async (t) => {
  const redactor = new Redactor({
    ...ENV,
    HOME: "/home/runner",
    GITHUB_SHA: "3f9a2c7e1b5d8f04a1b2c3d4e5f60718293a4b5c",
  });

  await t.step("a real git log, with hashes, stats and a patch", async () => {
    await using repo = await tempRepo();
    for (let i = 0; i < 5; i++) {
      await Deno.writeTextFile(
        `${repo.path}/file${i}.ts`,
        `export const value${i} = "${crypto.randomUUID()}";\nexport const token = process.env.GH_TOKEN;\n`,
      );
      await git(repo.path, "add", ".");
      await git(repo.path, "commit", "-qm", `feat: add value ${i} (${crypto.randomUUID()})`);
    }
    const log = await git(repo.path, "log", "--stat", "-p", "--format=fuller", "--no-color");
    assert.ok(log.length > 1000);
    assert.equal(redactor.redact(log), log);
  });

  await t.step("test output with digests, UUIDs, base64 of ordinary text and code", () => {
    const lines = [
      "ok | 12 passed (34 steps) | 0 failed (1s)",
      "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
      "request 6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b took 12ms",
      `payload ${btoa("hello world, this is ordinary text from a test fixture")}`,
      "commit 3f9a2c7e1b5d8f04a1b2c3d4e5f60718293a4b5c (HEAD -> main)",
      "const token = process.env.GH_TOKEN;",
      "export GH_TOKEN=$(gh auth token)",
      "PASSWORD=${DB_PASSWORD}",
      "  password: string;",
      "  apiKey: opts.apiKey,",
      "  token: TokenType",
      '  "password": "<your password>",',
      "  password: ${{ secrets.DB_PASSWORD }}",
      "const secret = getSecret();",
      'apiKeyEnv: "ANTHROPIC_API_KEY"',
      "AssertionError: expected 'abc' to equal 'abd' at tests/parse_test.ts:42:7",
      "The Bearer of bad news; keyword: ALL_DONE_NOW; max_tokens: 32000",
      "%PDF-1.4 50% done, 100%% sure, \\u00e9t\\u00e9 caf\\xe9",
    ];
    const text = lines.join("\n");
    assert.equal(redactor.redact(text), text);
  });

  await t.step("two hundred known secrets: every one found, nothing else touched", () => {
    const values = Array.from({ length: 200 }, (_, i) => `value-${i}-Zq7Wm3Tq`);
    const many = new Redactor(Object.fromEntries(values.map((v, i) => [`K${i}_TOKEN`, v])));
    const text = "ordinary words and numbers 1234 ".repeat(4096);
    assert.equal(many.redact(text), text);
    const encoded = values.map((value, i) => (i % 2 ? btoa(value) : hex(value))).join(" | ");
    const out = many.redact(encoded);
    assert.equal(out, values.map(() => "[redacted]").join(" | "));
  });
});
