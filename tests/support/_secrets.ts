// Fake secrets in the shapes real ones have, shared by the redaction and log tests.
import assert from "node:assert/strict";

export const API_KEY = "sk-ant-api03-Xq9vT2mLk8Rz4Wb7Np3Hc6Jd1Fg5Ys0Ue-AbCdEfGh_ij";
export const GH_TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
export const FINE_GRAINED =
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF0123456789";
export const DB_PASSWORD = "correct-horse-battery-staple";

export const ENV: Record<string, string> = {
  ANTHROPIC_API_KEY: API_KEY,
  GH_TOKEN,
  DB_PASSWORD,
  completionKeyword: "ALL_DONE_NOW",
  input_tokens: "123456789",
  HOME: "/home/runner/work",
  PATH: "/usr/local/bin:/usr/bin:/bin",
  SHORT_TOKEN: "abc",
};

export function assertNoSecrets(text: string): void {
  for (const secret of [API_KEY, GH_TOKEN, FINE_GRAINED, DB_PASSWORD]) {
    assert.ok(!text.includes(secret), `leaked ${secret.slice(0, 12)}...`);
    // Nor a recognisable piece of it.
    assert.ok(!text.includes(secret.slice(-12)), `leaked the end of a secret`);
  }
}

/** One kind of secret: how it appears in text, and the part that must never leak. */
export interface SecretKind {
  /** The kind's name in tables. */
  name: string;
  /** The text that carries it (a bare token, an assignment, a header, a URL). */
  text: string;
  /** The secret itself: no sink may hold it, nor its middle part. */
  secret: string;
  /** When set, the secret is (in) the value of this environment variable of the runner. */
  env?: string;
  /** The variable's value when it is not `text` (a connection string whose key is the secret). */
  value?: string;
  /**
   * When set, the text is this variable's value in another form (encoded,
   * escaped, cut): only knowing the value finds it.
   */
  encodes?: string;
}

// Bodies made of ordinary characters in each vendor's real format and length;
// none is a real credential.
const B64 = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0";
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  B64,
  "T7AH1Wyt2yKgF9sJcA8SAnInTkv6Nh5wZ1Jk7Vjce8P0sWzQyRSG4jBIcwrCcYfrTAWFR2qnA9X5lXqW",
  "dEEOA1k9x4CU1pHHvZ9mH6wPxFZpDKeB3QFS7UqWoIgp2sGzCzJXlmGG5yPgDZ2u9KTLfqdlA4XLUKVP",
  "-----END RSA PRIVATE KEY-----",
].join("\n");

const OPENAI = `sk-proj-${"aB3dE6".repeat(12)}xYT3BlbkFJ${"Qw9".repeat(24)}Qw`;

/** The kinds of secret the catalogue places in every source and looks for in every sink. */
export const SECRET_KINDS: SecretKind[] = [
  {
    name: "Anthropic API key",
    text: `sk-ant-api03-${"Zq7".repeat(31)}AA`,
    secret: `sk-ant-api03-${"Zq7".repeat(31)}AA`,
  },
  { name: "OpenAI project key", text: OPENAI, secret: OPENAI },
  { name: "AWS access key id", text: "AKIAQ3EGRZLV7TXKD4WP", secret: "AKIAQ3EGRZLV7TXKD4WP" },
  {
    name: "AWS secret access key",
    text: "aws_secret_access_key = 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",
    secret: "Kx8mT2vQ9pL4wR7nZ1cY6bH3jF5gD0sA2eU8iO4k",
  },
  {
    name: "GitHub classic token",
    text: "ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
    secret: "ghp_R7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
  },
  {
    name: "GitHub fine-grained token",
    text: `github_pat_11AQ3EGRZ0${"Lm4Nq7".repeat(13)}Xy`,
    secret: `github_pat_11AQ3EGRZ0${"Lm4Nq7".repeat(13)}Xy`,
  },
  {
    name: "Slack bot token",
    text: "xoxb-2384729384712-1982374982374-Qm8ZxR4vT7nL2kW9pJ6cH3bY",
    secret: "xoxb-2384729384712-1982374982374-Qm8ZxR4vT7nL2kW9pJ6cH3bY",
  },
  {
    name: "Google API key",
    text: "AIzaSyB7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2e",
    secret: "AIzaSyB7xK2mQ9vL4tW8nZ3cY6bH1jF5gD0sA2e",
  },
  { name: "PEM private key", text: PEM, secret: B64 },
  {
    name: "Stripe live key",
    text: `sk_live_51Hx${"Tq8Wm3".repeat(15)}`,
    secret: `sk_live_51Hx${"Tq8Wm3".repeat(15)}`,
  },
  {
    name: "PostgreSQL URL password",
    text: "postgres://billing:Vt7qLx92mWz4@db.internal.example:5432/ledger",
    secret: "Vt7qLx92mWz4",
  },
  {
    name: "Bearer token",
    text: "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxN3oifQ.Wq8zLm3vT9",
    secret: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxN3oifQ.Wq8zLm3vT9",
  },
  {
    name: "npm token",
    text: "npm_Zq7Wm3Tq8Lm4Nq7Xy2Rv9Ks5Jd1Fg6Hb0Pc4",
    secret: "npm_Zq7Wm3Tq8Lm4Nq7Xy2Rv9Ks5Jd1Fg6Hb0Pc4",
  },
  {
    name: "the runner's ANTHROPIC_API_KEY",
    text: "runner-anthropic-key-7f3a9c2e1b5d",
    secret: "runner-anthropic-key-7f3a9c2e1b5d",
    env: "ANTHROPIC_API_KEY",
  },
  {
    name: "the runner's GH_TOKEN",
    text: "runner-gh-token-4c8e2a6f0b9d",
    secret: "runner-gh-token-4c8e2a6f0b9d",
    env: "GH_TOKEN",
  },
  {
    name: "DATABASE_URL's value",
    text: "mysql://reporting:Hq3xT8zP1wLm@10.1.2.3/analytics",
    secret: "Hq3xT8zP1wLm",
    env: "DATABASE_URL",
  },
];

// The runner's own credentials, whose encoded forms the catalogue tries.
const RUNNER_KEY = "runner-anthropic-key-7f3a9c2e1b5d";
// Bytes that base64 turns into `+` and `/`, so that the URL-safe alphabet differs.
const RUNNER_OPENAI_KEY = "runner-openai-key~>?7d2f9a4c1e8b>>??";
const AZURE_KEY = `${"Kd8mQ2vX7pLw3Rn9".repeat(5)}Tz4Yb1==`;
const AZURE_ENV_KEY = `${"Wp3nT8xQ6rLz1Vk5".repeat(5)}Hm7Cd2==`;
const DOCKER_PASSWORD = "Rk4wQz8pLm2vXn7T";
const DSN_PASSWORD = "Hq3xT8zP1wLm";

function base64At(value: string, align: number, urlSafe = false): string {
  const encoded = btoa("xy".slice(0, align) + value);
  return urlSafe ? encoded.replaceAll("+", "-").replaceAll("/", "_") : encoded;
}

/** The characters of {@linkcode base64At} that depend on the value alone: what must never leak. */
function base64Core(value: string, align: number, urlSafe = false): string {
  const encoded = base64At(value, align, urlSafe).replace(/=+$/, "");
  return encoded.slice(Math.ceil((align * 8) / 6), Math.floor(((align + value.length) * 8) / 6));
}

function hexOf(value: string): string {
  return Array.from(new TextEncoder().encode(value), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** One encoded form of a runner credential. */
function encoded(
  name: string,
  env: string,
  value: string,
  text: string,
  secret = text,
): SecretKind {
  return { name, text, secret, encodes: env, env: undefined, value };
}

const KEY_HEX = hexOf(RUNNER_KEY);
const KEY_PERCENT = Array.from(RUNNER_KEY, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  .join("");
const KEY_UNICODE = Array.from(
  RUNNER_KEY,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
)
  .join("");

/** Kinds beyond the first catalogue: vendors secretlint's preset misses, connection strings, encodings. */
export const MORE_SECRET_KINDS: SecretKind[] = [
  {
    name: "Azure storage connection string",
    text:
      `DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net`,
    secret: AZURE_KEY,
  },
  {
    name: "AZURE_STORAGE_CONNECTION_STRING's key, alone",
    text: AZURE_ENV_KEY,
    secret: AZURE_ENV_KEY,
    env: "AZURE_STORAGE_CONNECTION_STRING",
    value:
      `DefaultEndpointsProtocol=https;AccountName=acmebackup;AccountKey=${AZURE_ENV_KEY};EndpointSuffix=core.windows.net`,
  },
  {
    name: "DOCKER_AUTH_CONFIG's password, alone",
    text: DOCKER_PASSWORD,
    secret: DOCKER_PASSWORD,
    env: "DOCKER_AUTH_CONFIG",
    value: JSON.stringify({
      auths: { "registry.example.com": { auth: btoa(`deploybot:${DOCKER_PASSWORD}`) } },
    }),
  },
  {
    name: "a random value under a plain name",
    text: "Zx8pQ2mL7vK4nR9tW3cY6bH1jF5gD0sAq",
    secret: "Zx8pQ2mL7vK4nR9tW3cY6bH1jF5gD0sAq",
    env: "RELEASE_HOOK",
  },
  {
    name: "Hugging Face token (`hf_`)",
    text: `HF_HUB=hf_${"QwErTy7UiOp3AsDf".repeat(2)}Gh`,
    secret: `hf_${"QwErTy7UiOp3AsDf".repeat(2)}Gh`,
  },
  {
    name: "Twilio API key (`SK`)",
    text: `SK${"3f9a2c7e1b5d8f04".repeat(2)}`,
    secret: `SK${"3f9a2c7e1b5d8f04".repeat(2)}`,
  },
  {
    name: "Discord bot token",
    text: `MTE2NTQ4OTg3NjU0MzIxMDk4.GxYz12.${"aB3dE6fG9h".repeat(3)}Jk8Lm`,
    secret: `MTE2NTQ4OTg3NjU0MzIxMDk4.GxYz12.${"aB3dE6fG9h".repeat(3)}Jk8Lm`,
  },
  {
    name: "JWT, bare",
    text:
      `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXBsb3ktYm90IiwiaWF0IjoxNzAwMDAwMDAwfQ.${
        "Xk9mPq2vLw7tRn4s".repeat(2)
      }Ab3`,
    secret: `${"Xk9mPq2vLw7tRn4s".repeat(2)}Ab3`,
  },
  {
    name: "Mailgun key (`key-`)",
    text: `key-${"7c3e9a1f5b2d8e40".repeat(2)}`,
    secret: `key-${"7c3e9a1f5b2d8e40".repeat(2)}`,
  },
  {
    name: "Docker access token (`dckr_pat_`)",
    text: `dckr_pat_${"Xm4Qz8Rk2Lv7Tn9W".repeat(2)}`,
    secret: `dckr_pat_${"Xm4Qz8Rk2Lv7Tn9W".repeat(2)}`,
  },
  {
    name: "Vault token (`hvs.`)",
    text: `VAULT=hvs.CAESI${"Jq7Wm3Tq8Lm4Nq7X".repeat(5)}`,
    secret: `hvs.CAESI${"Jq7Wm3Tq8Lm4Nq7X".repeat(5)}`,
  },
  {
    name: "PyPI token",
    text: `pypi-AgEIcHlwaS5vcmcCJDk${"zYTRlMjM0LTU2NzgtOTBhYi1jZGVm".repeat(3)}`,
    secret: `pypi-AgEIcHlwaS5vcmcCJDk${"zYTRlMjM0LTU2NzgtOTBhYi1jZGVm".repeat(3)}`,
  },
  {
    name: "DigitalOcean token (`dop_v1_`)",
    text: `dop_v1_${"a1b2c3d4e5f60718".repeat(4)}`,
    secret: `dop_v1_${"a1b2c3d4e5f60718".repeat(4)}`,
  },
  {
    name: "Telegram bot token",
    text: "7123456789:AAHk3mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
    secret: "7123456789:AAHk3mQ9vL4tW8nZ3cY6bH1jF5gD0sA2eU8",
  },
  {
    name: "Redis URL password, no user (`redis://:…@`)",
    text: "redis://:Wq8nLr3xVt6z@cache.internal:6379/0",
    secret: "Wq8nLr3xVt6z",
  },
  {
    name: "a password without a digit",
    text: "SMTP_PASSWORD=purple-monkey-dishwasher-lantern",
    secret: "purple-monkey-dishwasher-lantern",
  },
  {
    name: "a service account's private_key_id",
    text: `"private_key_id": "${"4f1e2d3c4b5a6978".repeat(2)}0a1b2c3d"`,
    secret: `${"4f1e2d3c4b5a6978".repeat(2)}0a1b2c3d`,
  },
  {
    name: "a token in a file name",
    text: `uploads/backup_hf_${"ZxCvBn5MaSdF7GhJ".repeat(2)}Kl.json`,
    secret: `hf_${"ZxCvBn5MaSdF7GhJ".repeat(2)}Kl`,
  },
  {
    name: "the runner's OPENAI_API_KEY",
    text: RUNNER_OPENAI_KEY,
    secret: RUNNER_OPENAI_KEY,
    env: "OPENAI_API_KEY",
  },
  encoded("the runner's key, base64", "ANTHROPIC_API_KEY", RUNNER_KEY, base64At(RUNNER_KEY, 0)),
  encoded(
    "the runner's key, base64 after 1 byte",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    base64At(RUNNER_KEY, 1),
    base64Core(RUNNER_KEY, 1),
  ),
  encoded(
    "the runner's key, base64 after 2 bytes",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    base64At(RUNNER_KEY, 2),
    base64Core(RUNNER_KEY, 2),
  ),
  ...[0, 1, 2].map((align) =>
    encoded(
      `the runner's OpenAI key, URL-safe base64 at alignment ${align}`,
      "OPENAI_API_KEY",
      RUNNER_OPENAI_KEY,
      base64At(RUNNER_OPENAI_KEY, align, true),
      base64Core(RUNNER_OPENAI_KEY, align, true),
    )
  ),
  encoded("the runner's key, hex", "ANTHROPIC_API_KEY", RUNNER_KEY, KEY_HEX),
  encoded(
    "the runner's key, upper-case hex",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    KEY_HEX.toUpperCase(),
  ),
  encoded(
    "the runner's key, hex bytes apart",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    KEY_HEX.replace(/(..)/g, "$1 ").trim(),
    KEY_HEX.slice(20, 44).replace(/(..)/g, "$1 "),
  ),
  encoded("the runner's key, percent-encoded", "ANTHROPIC_API_KEY", RUNNER_KEY, KEY_PERCENT),
  encoded("the runner's key, JSON \\u-escaped", "ANTHROPIC_API_KEY", RUNNER_KEY, KEY_UNICODE),
  encoded(
    "the runner's key, split over lines",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    RUNNER_KEY.replace(/(.{7})/g, "$1\n"),
  ),
  encoded(
    "the runner's key, base64 split over lines",
    "ANTHROPIC_API_KEY",
    RUNNER_KEY,
    base64At(RUNNER_KEY, 1).replace(/(.{9})/g, "$1\n"),
    // A whole line: its characters all depend on the key alone.
    base64At(RUNNER_KEY, 1).slice(9, 18),
  ),
  encoded(
    "DATABASE_URL's password, base64",
    "DATABASE_URL",
    DSN_PASSWORD,
    base64At(DSN_PASSWORD, 0),
  ),
];

SECRET_KINDS.push(...MORE_SECRET_KINDS);

/**
 * The runner's environment that holds the catalogue's own credentials.
 *
 * @returns The variables.
 */
export function catalogueEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kind of SECRET_KINDS) if (kind.env) env[kind.env] = kind.value ?? kind.text;
  return env;
}

/**
 * The kinds whose secret a text holds, whole or as a telling part (its middle
 * eight characters, for a secret of 16 or more).
 *
 * @param text A sink's text.
 * @returns The names of the kinds that leaked.
 */
export function leakedKinds(text: string): string[] {
  // A sink that is JSON holds `\\u0072` for `\u0072` and `\n` for a line break: read both.
  const texts = [text, text.replaceAll("\\\\", "\\").replaceAll("\\n", "\n")];
  return SECRET_KINDS.filter(({ secret }) =>
    texts.some((text) => {
      if (text.includes(secret)) return true;
      if (secret.length < 16) return false;
      const middle = Math.floor(secret.length / 2) - 4;
      return text.includes(secret.slice(middle, middle + 8));
    })
  ).map((kind) => kind.name);
}
