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
  /** When set, the secret is the value of this environment variable of the runner. */
  env?: string;
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

/**
 * The kinds whose secret a text holds, whole or as a telling part (its middle
 * eight characters, for a secret of 16 or more).
 *
 * @param text A sink's text.
 * @returns The names of the kinds that leaked.
 */
export function leakedKinds(text: string): string[] {
  return SECRET_KINDS.filter(({ secret }) => {
    if (text.includes(secret)) return true;
    if (secret.length < 16) return false;
    const middle = Math.floor(secret.length / 2) - 4;
    return text.includes(secret.slice(middle, middle + 8));
  }).map((kind) => kind.name);
}
