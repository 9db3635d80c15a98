import assert from "node:assert/strict";
import { isSecretName, REDACTED, Redactor } from "../../agents/support/redact.ts";
import {
  API_KEY,
  assertNoSecrets,
  catalogueEnv as catalogueCredentials,
  DB_PASSWORD,
  ENV,
  FINE_GRAINED,
  GH_TOKEN,
  leakedKinds,
  SECRET_KINDS,
} from "./_secrets.ts";

/** The environment of a runner holding the catalogue's own credentials. */
function catalogueEnv(): Record<string, string> {
  return { HOME: "/home/runner", PATH: "/usr/bin:/bin", ...catalogueCredentials() };
}

Deno.test("Redactor masks every kind of the secrets catalogue", async (t) => {
  const redactor = new Redactor(catalogueEnv());
  for (const kind of SECRET_KINDS) {
    await t.step(kind.name, () => {
      const text = `before ${kind.text} after`;
      const out = redactor.redact(text);
      assert.deepEqual(leakedKinds(out), [], out);
      assert.ok(out.includes(REDACTED), out);
      assert.match(out, /^before /);
      assert.match(out, / after$/);
    });
  }

  await t.step("all of them at once, in one text", () => {
    const text = SECRET_KINDS.map((kind) => `${kind.name}: ${kind.text}`).join("\n");
    const out = redactor.redact(text);
    assert.deepEqual(leakedKinds(out), []);
    for (const kind of SECRET_KINDS) assert.ok(out.includes(`${kind.name}: `), kind.name);
  });

  await t.step("the provider shapes without knowing any value", () => {
    const bare = new Redactor({});
    const shaped = SECRET_KINDS.filter((kind) => !kind.env && !kind.encodes);
    assert.ok(shaped.length >= 27);
    for (const kind of shaped) {
      assert.deepEqual(leakedKinds(bare.redact(kind.text)), [], kind.name);
    }
  });
});

Deno.test("a mask keeps enough to debug and breaks no JSON or Markdown", async (t) => {
  const redactor = new Redactor({});

  await t.step("vendor prefix and last four characters", () => {
    assert.equal(
      redactor.redact(`key sk-ant-api03-${"Zq7".repeat(31)}AA0000`),
      "key sk-ant-…0000 [redacted]",
    );
    assert.equal(
      redactor.redact("xoxb-2384729384712-1982374982374-Qm8ZxR4vT7nL2kW9pJ6cH3bY"),
      "xoxb-…H3bY [redacted]",
    );
  });

  await t.step("a URL keeps all but its password", () => {
    assert.equal(
      redactor.redact("psql postgres://billing:Vt7qLx92mWz4@db.internal.example:5432/ledger"),
      "psql postgres://billing:[redacted]@db.internal.example:5432/ledger",
    );
  });

  await t.step("JSON text stays JSON", () => {
    const redactor = new Redactor(catalogueEnv());
    const value = Object.fromEntries(SECRET_KINDS.map((kind) => [kind.name, kind.text]));
    const text = redactor.redact(JSON.stringify(value));
    const parsed = JSON.parse(text);
    assert.deepEqual(Object.keys(parsed), Object.keys(value));
    assert.deepEqual(leakedKinds(text), []);
  });

  await t.step("a mask holds no quote, backslash, backtick, pipe or line break", () => {
    for (const kind of SECRET_KINDS) {
      const out = new Redactor(catalogueEnv()).redact(kind.text);
      // A mask and what sits right before it, short of a quote of the text.
      const masks = out.match(/[^\s"']*…[^\s"']* \[redacted\]|\[redacted\]/g) ?? [];
      assert.ok(masks.length > 0, kind.name);
      for (const mask of masks) assert.doesNotMatch(mask, /["'\\`|\n]/, kind.name);
    }
  });

  await t.step("redacting twice changes nothing more", () => {
    const once = redactor.redact(SECRET_KINDS.map((kind) => kind.text).join(" "));
    assert.equal(redactor.redact(once), once);
  });
});

Deno.test("Redactor redacts values of secret-looking environment variables", async (t) => {
  const redactor = new Redactor(ENV);

  for (const name of ["ANTHROPIC_API_KEY", "GH_TOKEN", "DB_PASSWORD"]) {
    await t.step(name, () => {
      const out = redactor.redact(`value=${ENV[name]};`);
      assertNoSecrets(out);
      assert.match(out, /^value=(?:\S*…\S* )?\[redacted\];$/);
    });
  }

  await t.step("every occurrence", () => {
    const out = redactor.redact(`${DB_PASSWORD} and ${DB_PASSWORD}`);
    assert.equal(out, "…aple [redacted] and …aple [redacted]");
  });

  await t.step("other names that end like secrets", () => {
    const values = {
      AWS_SECRET: "wJalrXUtnFEMI/K7MDENG",
      SMTP_PASSWD: "hunter2hunter2",
      GOOGLE_APPLICATION_CREDENTIALS: "/secrets/gcp.json",
      PROXY_AUTH: "user:pa55word",
      slack_token: "xoxb-1234567890",
      apiKey: "camel-case-key-1",
      "db.password": "dotted-name-pw",
    };
    const more = new Redactor(values);
    const out = more.redact(Object.values(values).join(" "));
    for (const value of Object.values(values)) assert.ok(!out.includes(value), value);
  });

  await t.step("values that look secret under any name", () => {
    const more = new Redactor({
      DATABASE_URL: "postgres://app:Zx81qPl0vn@db/app",
      SOME_SETTING: "ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
    });
    const out = more.redact(
      "url postgres://app:Zx81qPl0vn@db/app and ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
    );
    assert.ok(!out.includes("Zx81qPl0vn"));
    assert.ok(!out.includes("ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8"));
    assert.match(out, /postgres:\/\/app:\[redacted\]@db\/app/);
  });

  await t.step("a value protected later", () => {
    const more = new Redactor({});
    more.protect("late-secret-value-77");
    assert.equal(more.redact("x late-secret-value-77 y"), "x [redacted] y");
  });

  await t.step("not values of names like completionKeyword or input_tokens", () => {
    assert.equal(
      redactor.redact("Say ALL_DONE_NOW after 123456789 tokens"),
      "Say ALL_DONE_NOW after 123456789 tokens",
    );
    assert.equal(
      redactor.redact("/home/runner/work:/usr/local/bin:/usr/bin:/bin"),
      "/home/runner/work:/usr/local/bin:/usr/bin:/bin",
    );
  });

  await t.step("not values shorter than eight characters", () => {
    assert.equal(redactor.redact("abc abcdef"), "abc abcdef");
  });

  await t.step("a longer secret that contains a shorter one", () => {
    const nested = new Redactor({ A_TOKEN: "supersecret", B_TOKEN: "supersecret-and-more" });
    const out = nested.redact("x supersecret-and-more y supersecret");
    assert.equal(out, `x …more ${REDACTED} y ${REDACTED}`);
  });

  await t.step("by default, from the process environment", () => {
    const name = "FINISHLINE_TEST_REDACTOR_TOKEN";
    const value = "process-env-secret-value-123";
    Deno.env.set(name, value);
    try {
      assert.equal(new Redactor().redact(`t=${value}`), `t=${REDACTED}`);
    } finally {
      Deno.env.delete(name);
    }
  });
});

Deno.test("isSecretName reads the last word of a name", () => {
  for (
    const name of ["GH_TOKEN", "apiKey", "x-api-key", "DB_PASSWORD", "aws_secret", "Authorization"]
  ) {
    assert.equal(isSecretName(name), true, name);
  }
  for (
    const name of [
      "keyword",
      "completionKeyword",
      "input_tokens",
      "monkey",
      "apiKeySource",
      "max_tokens",
      "PWD",
      "OLDPWD",
    ]
  ) {
    assert.equal(isSecretName(name), false, name);
  }
});

Deno.test("Redactor redacts token shapes without knowing the values", async (t) => {
  const redactor = new Redactor({});
  const cases: Array<[string, string, RegExp]> = [
    [
      "an Anthropic API key",
      `export ANTHROPIC_API_KEY=${API_KEY}`,
      /^export ANTHROPIC_API_KEY=\[redacted\]$|^export ANTHROPIC_API_KEY=sk-ant-…\S* \[redacted\]$/,
    ],
    [
      "a GitHub classic token",
      `git clone https://${GH_TOKEN}@github.com/o/r`,
      /^git clone https:\/\/ghp_…\S* \[redacted\]@github\.com\/o\/r$/,
    ],
    [
      "a GitHub OAuth token",
      "token gho_16C7e42F292c6912E7710c838347Ae178B4a end",
      /^token gho_…B4a? ?\S* ?\[redacted\] end$|^token gho_…\S+ \[redacted\] end$/,
    ],
    [
      "a GitHub fine-grained token",
      `GH_TOKEN=${FINE_GRAINED}`,
      /^GH_TOKEN=github_pat_…\S+ \[redacted\]$/,
    ],
    [
      "an Authorization: Bearer header",
      "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' https://api",
      /^curl -H 'Authorization: Bearer …\S* \[redacted\]' https:\/\/api$/,
    ],
    ["a bare Bearer token", "using Bearer abcdefghijklmnop", /^using Bearer \[redacted\]$/],
    [
      "a Basic credential",
      "Authorization: Basic dXNlcjpwYXNzd29yZA==",
      /^Authorization: Basic \S*\[redacted\]$/,
    ],
    ["an x-api-key header", "x-api-key: abcdef0123456789", /^x-api-key: \[redacted\]$/],
    [
      "an authorization field in JSON text",
      '{"authorization":"abcdef0123456789"}',
      /^\{"authorization":"\[redacted\]"\}$/,
    ],
    ["a password assignment", "DB_PASSWORD=Tr0ub4dor3x;", /^DB_PASSWORD=\[redacted\];$/],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => assert.match(redactor.redact(input), expected));
  }

  await t.step("text that only looks similar is left alone", () => {
    for (
      const text of [
        "sk-ant-",
        "ghp_short",
        "the Bearer of bad news",
        "authorization: pending",
        "github_pat_",
        "Use the GH_TOKEN variable",
        "const token = process.env.GH_TOKEN;",
        "max_tokens: 32000, input_tokens=123456789",
        "https://example.com:8080/path?user=a@b",
        "git@github.com:octo/demo.git",
        "a secretlint-disable comment changes nothing",
      ]
    ) {
      assert.equal(redactor.redact(text), text);
    }
  });

  await t.step("a secretlint-disable comment does not turn redaction off", () => {
    const out = redactor.redact(
      "// secretlint-disable\nghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8\n// secretlint-enable",
    );
    assert.ok(!out.includes("ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8"));
  });
});

Deno.test("Redactor.redactValue redacts inside nested structures", async (t) => {
  const redactor = new Redactor(ENV);

  await t.step("strings in nested objects and arrays", () => {
    const message = {
      type: "assistant",
      message: {
        content: [
          { type: "text", text: `I found ${API_KEY} in .env` },
          {
            type: "tool_use",
            name: "Bash",
            input: { command: `psql "postgres://app:${DB_PASSWORD}@db/app"` },
          },
        ],
      },
      nested: [[`${GH_TOKEN}`], { deeper: { list: [FINE_GRAINED, 3] } }],
    };
    const redacted = redactor.redactValue(message);
    assertNoSecrets(JSON.stringify(redacted));
    assert.equal(redacted.type, "assistant");
    assert.equal(
      redacted.nested[1] && (redacted.nested[1] as { deeper: { list: unknown[] } }).deeper.list[1],
      3,
    );
    assert.match(
      (redacted.message.content[1] as { input: { command: string } }).input.command,
      /^psql "postgres:\/\/app:.*\[redacted\]@db\/app"$/,
    );
  });

  await t.step("the input is not changed", () => {
    const input = { text: API_KEY, list: [GH_TOKEN] };
    redactor.redactValue(input);
    assert.deepEqual(input, { text: API_KEY, list: [GH_TOKEN] });
  });

  await t.step("string fields with secret-looking names", () => {
    const empty = new Redactor({});
    assert.deepEqual(
      empty.redactValue({
        apiKey: "not-a-known-shape-1",
        password: "not-a-known-shape-2",
        access_token: "not-a-known-shape-3",
        Authorization: "token abcdef0123",
        token: "short",
      }),
      {
        apiKey: REDACTED,
        password: REDACTED,
        access_token: REDACTED,
        Authorization: REDACTED,
        token: "short",
      },
    );
  });

  await t.step("not counts and keywords whose names look similar", () => {
    const usage = {
      input_tokens: 123456789,
      output_tokens: 2100,
      cache_read_input_tokens: 48000,
      completionKeyword: "ALL_DONE_NOW",
      keywords: ["ALL_DONE_NOW"],
      max_tokens: 32000,
      apiKeySource: "ANTHROPIC_API_KEY",
    };
    assert.deepEqual(redactor.redactValue(usage), usage);
  });

  await t.step("numbers, booleans and null pass through", () => {
    assert.deepEqual(
      redactor.redactValue({ a: 1, b: true, c: null, d: [0, false] }),
      { a: 1, b: true, c: null, d: [0, false] },
    );
    assert.equal(redactor.redactValue(42), 42);
    assertNoSecrets(redactor.redactValue(API_KEY));
  });

  await t.step("a circular reference becomes a marker", () => {
    const loop: Record<string, unknown> = { name: "loop" };
    loop.self = loop;
    assert.deepEqual(redactor.redactValue(loop), { name: "loop", self: "[circular]" });
  });

  await t.step("an object referenced twice is copied twice", () => {
    const task = { status: "success", summary: `Used ${GH_TOKEN}` };
    const redacted = redactor.redactValue({
      completeTask: task,
      summary: { completeTask: task },
      list: [task, task],
    });
    const expected = redactor.redactValue(task);
    assertNoSecrets(JSON.stringify(redacted));
    assert.deepEqual(redacted, {
      completeTask: expected,
      summary: { completeTask: expected },
      list: [expected, expected],
    });
  });
});
