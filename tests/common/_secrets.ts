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
