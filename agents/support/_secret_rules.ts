/**
 * The secret shapes the redactor looks for: secretlint's recommended rule
 * preset (a maintained rule set of 25 providers' credential formats), driven
 * synchronously over any text, plus finishline's own shapes for what the
 * preset leaves out (`_secret_shapes.ts`).
 * Private to `agents/support`.
 *
 * @module
 */

import { rules as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { looksLikeCode, SHAPES, vendorRule } from "./_secret_shapes.ts";

/** A secret found in a text, and what replaces it. */
export interface SecretFinding {
  /** The text to replace wherever it appears: the secret, or the secret in its context (a URL up to its password's end). */
  text: string;
  /** What replaces it: the text with the secret masked. */
  replacement: string;
  /** Who recognised it: `secretlint/<message id>`, or `finishline/<shape>`. */
  rule: string;
}

/** What a masked secret ends with. */
export const REDACTED = "[redacted]";

/**
 * A secret's mask: its public vendor prefix and last four characters when it
 * is long enough to keep them secret (`sk-ant-…0000 [redacted]`), else only
 * the marker. No quote, backslash, backtick or line break: a mask never
 * breaks the JSON string or the Markdown it lands in.
 *
 * @param secret The secret.
 * @param prefix The part of it that is a public prefix (`sk-ant-`).
 * @returns The mask.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskSecret } from "./_secret_rules.ts";
 *
 * assert.equal(maskSecret("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0000", "sk-ant-"), "sk-ant-…0000 [redacted]");
 * assert.equal(maskSecret("hunter22", ""), "[redacted]");
 * ```
 */
export function maskSecret(secret: string, prefix: string): string {
  if (secret.length < 20) return REDACTED;
  const tail = secret.slice(-4);
  const shown = /^[A-Za-z0-9]{4}$/.test(tail) ? tail : "";
  const head = prefix.length <= secret.length / 3 ? prefix.replaceAll(/[\s\r\n]+/g, " ") : "";
  return head || shown ? `${head}…${shown} ${REDACTED}` : REDACTED;
}

/** The parts of a secretlint rule this module uses (`@secretlint/types`' rule creator). */
interface RuleCreator {
  meta: { id: string };
  create(context: RuleContext, options: unknown): { file?: (source: RuleSource) => unknown };
}

interface RuleContext {
  sharedOptions: Record<string, unknown>;
  createTranslator: () => (messageId: string, data?: Record<string, unknown>) => unknown;
  report: (descriptor: { message: unknown; range: readonly [number, number] }) => void;
  ignore: () => void;
}

interface RuleSource {
  content: string;
  filePath?: string;
  ext: string;
  contentType: "text";
}

// `filter-comments` lets a text switch rules off with `secretlint-disable`
// comments: text that comes from an agent must not be able to do that.
const SKIPPED_RULES = new Set(["@secretlint/secretlint-rule-filter-comments"]);
const RULE_OPTIONS: Record<string, unknown> = {
  // AWS access key ids are off by default in the preset (they are not secret
  // alone), but one next to its secret is half the credential.
  "@secretlint/secretlint-rule-aws": { enableIDScanRule: true },
};
// Report fields that name the secret itself (the others name a file or a kind).
const SECRET_FIELDS = ["KEY", "TOKEN", "ID", "URI", "URL", "CREDENTIAL"];

const handlers = loadRules();
let found: SecretFinding[] = [];
let scanning = "";

function loadRules(): Array<(source: RuleSource) => unknown> {
  const context: RuleContext = {
    sharedOptions: {},
    createTranslator: () => (messageId, data) => ({ messageId, data }),
    report: ({ message, range }) => collect(message, range),
    ignore: () => {},
  };
  const out: Array<(source: RuleSource) => unknown> = [];
  for (const rule of recommended as unknown as RuleCreator[]) {
    if (SKIPPED_RULES.has(rule.meta.id)) continue;
    const file = rule.create(context, RULE_OPTIONS[rule.meta.id] ?? {}).file;
    if (file) out.push(file);
  }
  return out;
}

function collect(message: unknown, range: readonly [number, number]): void {
  const { messageId, data } = message as { messageId: string; data?: Record<string, unknown> };
  const values = SECRET_FIELDS.map((field) => data?.[field])
    .filter((value): value is string => typeof value === "string" && value.length >= 8)
    .filter((value) => scanning.includes(value));
  // A report that names no secret (a whole service-account file) covers its range.
  const secrets = values.length > 0 ? values : [scanning.slice(range[0], range[1])];
  for (const secret of secrets) found.push(finding(secret, `secretlint/${messageId}`));
}

/**
 * Every secret in a text, as secretlint's recommended preset and the extra
 * shapes find them; the same secret may be reported more than once.
 *
 * @param text Any text.
 * @returns The secrets found.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findSecrets } from "./_secret_rules.ts";
 *
 * const [finding] = findSecrets("key: AIzaSyD-1234567890abcdefghijklmnopqrstu");
 * assert.equal(finding.text, "AIzaSyD-1234567890abcdefghijklmnopqrstu");
 * assert.equal(finding.replacement, "AIza…rstu [redacted]");
 * assert.deepEqual(findSecrets("nothing here"), []);
 * ```
 */
export function findSecrets(text: string): SecretFinding[] {
  const out: SecretFinding[] = [];
  if (text.length < 8) return out;
  found = out;
  scanning = text;
  try {
    const source: RuleSource = { content: text, ext: "", contentType: "text" };
    for (const file of handlers) {
      const pending = file(source);
      // Only the PKCS#12 rule is asynchronous, and it reads binary files only.
      if (pending instanceof Promise) pending.catch(() => {});
    }
  } finally {
    found = [];
    scanning = "";
  }
  for (const shape of SHAPES) {
    if (shape.hint !== undefined && !hinted(text, shape.hint)) continue;
    for (const match of text.matchAll(shape.pattern)) {
      const groups = shape.group ?? 0;
      let secret = typeof groups === "number"
        ? match[groups]
        : groups.map((group) => match[group]).find((value) => value !== undefined);
      if (!secret) continue;
      if (shape.standalone && /[A-Za-z0-9]/.test(text[match.index - 1] ?? "")) continue;
      if (shape.plain && looksLikeCode(secret)) continue;
      if (/^(["']).*\1$/s.test(secret)) secret = secret.slice(1, -1);
      const vendor = shape.rule === "vendor-token" ? vendorRule(secret) : undefined;
      const rule = `finishline/${vendor?.rule ?? shape.rule}`;
      if (secret.length >= 8) {
        out.push(finding(secret, rule, vendor?.prefix ?? shape.prefix));
        continue;
      }
      // A short secret is replaced in its context only, never wherever its
      // characters happen to appear.
      const whole = match[0];
      const at = whole.lastIndexOf(secret);
      out.push({
        text: whole,
        replacement: `${whole.slice(0, at)}${REDACTED}${whole.slice(at + secret.length)}`,
        rule,
      });
    }
  }
  return out;
}

function hinted(text: string, hint: string | RegExp): boolean {
  return typeof hint === "string" ? text.includes(hint) : hint.test(text);
}

/**
 * A secret's finding; a URL with a password in it keeps everything but the
 * password, which is what a reader needs to tell which database it was.
 */
function finding(secret: string, rule: string, prefixPattern?: RegExp): SecretFinding {
  const url = secret.match(
    /^([a-z][a-z0-9+.\-]{1,20}:\/\/[^\s:\/@]{1,256}:)([^\s@\/]{1,256})(@.*)$/is,
  );
  if (url) {
    return { text: secret, replacement: `${url[1]}${maskSecret(url[2], "")}${url[3]}`, rule };
  }
  const prefix = prefixPattern ? secret.match(prefixPattern)?.[0] ?? "" : vendorPrefix(secret);
  return { text: secret, replacement: maskSecret(secret, prefix), rule };
}

// Public prefixes of the vendors' formats, shown in a mask so that a reader
// can tell which credential it was.
const VENDOR_PREFIX =
  /^(?:sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk_live_|sk_test_|rk_live_|pk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|npm_|hf_|AKIA|ASIA|AIza|SG\.|shpat_|lin_api_|secret_|dop_v1_|dckr_pat_|hvs\.|pypi-|-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)/;

function vendorPrefix(secret: string): string {
  return secret.match(VENDOR_PREFIX)?.[0] ?? "";
}
