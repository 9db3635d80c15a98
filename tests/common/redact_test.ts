import assert from "node:assert/strict";
import { REDACTED, Redactor } from "../../agents/common/redact.ts";
import { API_KEY, assertNoSecrets, DB_PASSWORD, ENV, FINE_GRAINED, GH_TOKEN } from "./_secrets.ts";

Deno.test("Redactor redacts values of secret-looking environment variables", async (t) => {
  const redactor = new Redactor(ENV);

  for (const name of ["ANTHROPIC_API_KEY", "GH_TOKEN", "DB_PASSWORD"]) {
    await t.step(name, () => {
      assert.equal(
        redactor.redact(`value=${ENV[name]};`),
        `value=${REDACTED};`,
      );
    });
  }

  await t.step("every occurrence", () => {
    assert.equal(
      redactor.redact(`${DB_PASSWORD} and ${DB_PASSWORD}`),
      `${REDACTED} and ${REDACTED}`,
    );
  });

  await t.step("other names that end like secrets", () => {
    const more = new Redactor({
      AWS_SECRET: "wJalrXUtnFEMI/K7MDENG",
      SMTP_PASSWD: "hunter2hunter2",
      GOOGLE_APPLICATION_CREDENTIALS: "/secrets/gcp.json",
      PROXY_AUTH: "user:pa55word",
      slack_token: "xoxb-1234567890",
    });
    assert.equal(
      more.redact(
        "wJalrXUtnFEMI/K7MDENG hunter2hunter2 /secrets/gcp.json user:pa55word xoxb-1234567890",
      ),
      Array(5).fill(REDACTED).join(" "),
    );
  });

  await t.step(
    "not values of names like completionKeyword or input_tokens",
    () => {
      assert.equal(
        redactor.redact("Say ALL_DONE_NOW after 123456789 tokens"),
        "Say ALL_DONE_NOW after 123456789 tokens",
      );
      assert.equal(
        redactor.redact("/home/runner/work:/usr/local/bin:/usr/bin:/bin"),
        "/home/runner/work:/usr/local/bin:/usr/bin:/bin",
      );
    },
  );

  await t.step("not values shorter than eight characters", () => {
    assert.equal(redactor.redact("abc abcdef"), "abc abcdef");
  });

  await t.step("a longer secret that contains a shorter one", () => {
    const nested = new Redactor({
      A_TOKEN: "supersecret",
      B_TOKEN: "supersecret-and-more",
    });
    assert.equal(
      nested.redact("x supersecret-and-more y supersecret"),
      `x ${REDACTED} y ${REDACTED}`,
    );
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

Deno.test("Redactor redacts token shapes without knowing the values", async (t) => {
  const redactor = new Redactor({});
  const cases: Array<[string, string, string]> = [
    [
      "an Anthropic API key",
      `export ANTHROPIC_API_KEY=${API_KEY}`,
      `export ANTHROPIC_API_KEY=${REDACTED}`,
    ],
    [
      "a GitHub classic token",
      `git clone https://${GH_TOKEN}@github.com/o/r`,
      `git clone https://${REDACTED}@github.com/o/r`,
    ],
    [
      "a GitHub OAuth token",
      "token gho_16C7e42F292c6912E7710c838347Ae178B4a end",
      `token ${REDACTED} end`,
    ],
    [
      "a GitHub fine-grained token",
      `GH_TOKEN=${FINE_GRAINED}`,
      `GH_TOKEN=${REDACTED}`,
    ],
    [
      "an Authorization: Bearer header",
      "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' https://api",
      `curl -H 'Authorization: Bearer ${REDACTED}' https://api`,
    ],
    [
      "a bare Bearer token",
      "using Bearer abcdefghijklmnop",
      `using Bearer ${REDACTED}`,
    ],
    [
      "a Basic credential",
      "Authorization: Basic dXNlcjpwYXNzd29yZA==",
      `Authorization: Basic ${REDACTED}`,
    ],
    [
      "an x-api-key header",
      "x-api-key: abcdef0123456789",
      `x-api-key: ${REDACTED}`,
    ],
    [
      "an authorization field in JSON text",
      '{"authorization":"abcdef0123456789"}',
      `{"authorization":"${REDACTED}"}`,
    ],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => assert.equal(redactor.redact(input), expected));
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
      ]
    ) {
      assert.equal(redactor.redact(text), text);
    }
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
    assert.deepEqual(redacted, {
      type: "assistant",
      message: {
        content: [
          { type: "text", text: `I found ${REDACTED} in .env` },
          {
            type: "tool_use",
            name: "Bash",
            input: { command: `psql "postgres://app:${REDACTED}@db/app"` },
          },
        ],
      },
      nested: [[REDACTED], { deeper: { list: [REDACTED, 3] } }],
    });
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
    assert.equal(redactor.redactValue(API_KEY), REDACTED);
  });

  await t.step("a circular reference becomes a marker", () => {
    const loop: Record<string, unknown> = { name: "loop" };
    loop.self = loop;
    assert.deepEqual(redactor.redactValue(loop), {
      name: "loop",
      self: "[circular]",
    });
  });

  await t.step("an object referenced twice is copied twice", () => {
    const task = { status: "success", summary: `Used ${GH_TOKEN}` };
    const redacted = redactor.redactValue({
      completeTask: task,
      summary: { completeTask: task },
      list: [task, task],
    });
    const expected = { status: "success", summary: `Used ${REDACTED}` };
    assert.deepEqual(redacted, {
      completeTask: expected,
      summary: { completeTask: expected },
      list: [expected, expected],
    });
  });
});
