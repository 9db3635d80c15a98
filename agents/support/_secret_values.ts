/**
 * Which values of an environment are secrets, and which parts of them: a
 * value is secret by its name (`*_TOKEN`, `*_PASSWORD`, …), by its shape (a
 * vendor token, a URL or connection string with a password, a JSON config
 * with an `auth` field), or by looking random (long, mixed case and digits,
 * high entropy, not a hash or UUID). A connection string's or DSN's password,
 * a SAS signature, a Docker config's credentials are secrets of their own,
 * so that they are found when printed alone or encoded. Private to
 * `agents/support`.
 *
 * @module
 */

import { findSecrets } from "./_secret_rules.ts";

/** Values shorter than this are never taken as a secret alone. */
export const MIN_SECRET_LENGTH = 8;

// The last word of a name (`GH_TOKEN`, `apiKey`, `db-password`) that makes it a secret's name.
const SECRET_WORDS = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "auth",
  "authorization",
  "cookie",
]);
const SECRET_KEY_FIELD = /(?:^|[_\-.])(?:x[_\-])?api[_\-]?key$/i;

/**
 * Whether a variable or field name says its value is a secret: its last word
 * is key, token, secret, password, credentials, auth, … (`GH_TOKEN`,
 * `apiKey`, `DB_PASSWORD`), not `keyword` or `input_tokens`.
 *
 * @param name A variable or field name.
 * @returns True when it names a secret.
 */
export function isSecretName(name: string): boolean {
  if (SECRET_KEY_FIELD.test(name)) return true;
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").split(/[_\-.\s]+/);
  return SECRET_WORDS.has((words.at(-1) ?? "").toLowerCase());
}

// A URL with a password, the user name possibly empty (`redis://:pw@host`).
const URL_PASSWORD = /\b[a-z][a-z0-9+.\-]{1,20}:\/\/[^\s:\/@"'<>]{0,256}:([^\s@\/"'<>]{1,256})@/gi;
// `Key=Value` pairs of connection strings and query strings (`Password=…;`, `AccountKey=…`, `&sig=…`).
// A value runs to the next `;` or `&`: a connection string's password may hold spaces.
const PAIR = /(?:^|[;&?\s,])([A-Za-z][A-Za-z0-9_ .\-]{0,40}?)\s*=\s*("[^"]*"|'[^']*'|[^;&"'\n]+)/g;
const SECRET_PAIR_KEY =
  /(?:passw(?:or)?d|pwd|passphrase|secret|key|token|sig|signature|credentials?|auth)$/i;
const SECRET_JSON_KEY = /(?:passw(?:or)?d|pwd|passphrase|secret|key|token|auth|credentials?)$/i;

/**
 * The secrets one environment variable holds: nothing when it looks
 * ordinary; otherwise the whole value and every secret part of it.
 *
 * @param name The variable's name.
 * @param value Its value.
 * @param named Whether it was named a secret whatever its name (an `apiKeyEnv`).
 * @returns The secrets, the whole value first.
 */
export function secretsOfVariable(name: string, value: string, named = false): string[] {
  if (value.length < MIN_SECRET_LENGTH) return [];
  // finishline's own consent list (`VAR=host,...`): variable names and hosts, which its
  // messages must be able to name.
  if (name === "FINISHLINE_KEY_HOSTS") return [];
  const parts = secretParts(value);
  if (named || isSecretName(name) || parts.length > 0 || looksRandom(value)) {
    return unique([value, ...parts]);
  }
  return unique(findSecrets(value).map((found) => found.text));
}

/**
 * The secret parts of a value that is a credential container: URL passwords,
 * connection-string keys and passwords, a private key's body, a JSON
 * config's secret fields (and a Docker `auth`'s decoded `user:password`, and
 * the password alone).
 *
 * @param value Any value.
 * @returns Its secret parts of at least eight characters.
 */
export function secretParts(value: string): string[] {
  const out: string[] = [];
  for (const match of value.matchAll(URL_PASSWORD)) addDecoded(out, match[1]);
  for (const match of value.matchAll(PAIR)) {
    if (SECRET_PAIR_KEY.test(match[1].replace(/[\s_.\-]+/g, ""))) {
      addDecoded(out, match[2].trim().replace(/^(["'])(.*)\1$/s, "$2"));
    }
  }
  // A private key's body, so that some of its lines printed alone are found.
  for (const match of value.matchAll(/-----BEGIN[ A-Z0-9]*PRIVATE KEY-----([\s\S]+?)-----END/g)) {
    out.push(match[1].replace(/\s+/g, ""));
  }
  const trimmed = value.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      jsonSecrets(JSON.parse(trimmed), out);
    } catch {
      // not JSON after all
    }
  }
  return unique(out.filter((part) => part.length >= MIN_SECRET_LENGTH));
}

function jsonSecrets(value: unknown, out: string[], key = ""): void {
  if (typeof value === "string") {
    if (!SECRET_JSON_KEY.test(key) && !isSecretName(key)) return;
    out.push(value);
    const decoded = decodeBase64(value);
    if (decoded && /^[\x20-\x7e]+:[\x20-\x7e]+$/.test(decoded)) {
      out.push(decoded, decoded.slice(decoded.indexOf(":") + 1));
    }
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const [name, item] of Object.entries(value)) jsonSecrets(item, out, name);
}

function addDecoded(out: string[], part: string): void {
  out.push(part);
  try {
    const decoded = decodeURIComponent(part);
    if (decoded !== part) out.push(decoded);
  } catch {
    // not percent-encoded
  }
}

function decodeBase64(text: string): string | undefined {
  if (!/^[A-Za-z0-9+\/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  try {
    return atob(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether a value looks like a random key whatever its name: 20 characters
 * or more of a token alphabet, upper and lower case and digits, little of it
 * in words, high entropy; never a hex string (a commit, a digest), a UUID
 * or a path.
 *
 * @param value Any value.
 * @returns True when it reads as a key.
 */
export function looksRandom(value: string): boolean {
  if (value.length < 20 || value.length > 4096) return false;
  if (!/^[A-Za-z0-9+\/=_\-.~]+$/.test(value) || /^[\/.~]/.test(value)) return false;
  if (/^[0-9a-fA-F\-]+$/.test(value)) return false;
  if (/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.test(value)) return false;
  if (!/[a-z]/.test(value) || !/[A-Z]/.test(value) || !/[0-9]/.test(value)) return false;
  const inWords = (value.match(/[A-Z]?[a-z]{4,}|[A-Z]{5,}/g) ?? [])
    .reduce((sum, word) => sum + word.length, 0);
  if (inWords / value.length > 0.3) return false;
  return entropy(value) >= 3.5;
}

/** Shannon entropy in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
