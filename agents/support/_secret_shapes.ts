/**
 * finishline's own secret shapes: what secretlint's recommended preset does
 * not recognise. Written for this project; the vendors' published formats
 * (and gitleaks' and trufflehog's rule lists, read as references) say what
 * each token looks like. Private to `agents/support`.
 *
 * @module
 */

/** One shape: a pattern, the group that is the secret, and its public prefix. */
export interface SecretShape {
  /** Its name in findings: `finishline/<rule>`. */
  rule: string;
  /** A global pattern. */
  pattern: RegExp;
  /** The group that holds the secret (the first that matched, of several); the whole match when absent. */
  group?: number | number[];
  /** The public prefix of the secret, shown in its mask. */
  prefix?: RegExp;
  /** The value may hold no digit: skip one that reads as code ({@linkcode looksLikeCode}). */
  plain?: boolean;
  /**
   * What a text must hold for the shape to be tried at all: a cheap test that
   * spares a costly pattern's scan of most texts.
   */
  hint?: string | RegExp;
  /** A token must not follow a letter or digit (the pattern cannot say so cheaply). */
  standalone?: boolean;
}

/**
 * Whether a value found after a secret's name reads as code or a placeholder
 * rather than a secret: a variable (`GH_TOKEN`, `$TOKEN`, `${token}`), a
 * member access or call (`opts.password`, `getToken()`), a type
 * (`SecretString`), a mask already there.
 *
 * @param value The value.
 * @returns True when it is not a secret.
 */
export function looksLikeCode(value: string): boolean {
  return /^[A-Z][A-Z0-9_]*$/.test(value) || value.includes("${") || value.startsWith("$") ||
    value.includes("[redacted]") || value.includes("…") ||
    /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(.*\))?$/.test(value) || /\(.*\)$/.test(value) ||
    /^(?:[A-Z][a-z]+)+$/.test(value) ||
    /^(?:undefined|null|string|boolean|changeme|password)$/i.test(value) ||
    /^[*x.<>\-]+$/i.test(value) || /^<.*>$/.test(value);
}

/**
 * Vendor tokens whose literal prefix says what they are. One regular
 * expression holds them all (one pass over a text, however many vendors); a
 * token must not be glued to a letter or digit on either side, but may sit in
 * a file name (`backup_hf_….txt`) or after `_`. Lengths are bounded: a
 * crafted text cannot make a pattern backtrack over megabytes.
 */
const VENDOR_TOKENS: Array<{ rule: string; body: string; prefix: string }> = [
  { rule: "google-api-key", body: "AIza[0-9A-Za-z_\\-]{35}", prefix: "AIza" },
  {
    // OAuth and admin keys, and lengths the preset's exact rule rejects.
    rule: "anthropic-token",
    body: "sk-ant-[a-z]{2,8}\\d{0,3}-[A-Za-z0-9_\\-]{12,1024}",
    prefix: "sk-ant-",
  },
  {
    rule: "openai-key",
    body: "sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\\-]{20,1024}",
    prefix: "sk-[a-z]+-",
  },
  {
    rule: "github-token",
    body: "(?:gh[pousr]_[A-Za-z0-9]{20,1024}|github_pat_[A-Za-z0-9_]{20,1024})",
    prefix: "(?:gh[pousr]_|github_pat_)",
  },
  {
    rule: "huggingface-token",
    body: "(?:hf|api_org)_[A-Za-z0-9]{30,40}",
    prefix: "(?:hf|api_org)_",
  },
  { rule: "twilio-api-key", body: "SK[0-9a-fA-F]{32}", prefix: "SK" },
  { rule: "mailgun-key", body: "key-[0-9a-f]{32}", prefix: "key-" },
  {
    rule: "docker-token",
    body: "dckr_(?:pat|oat)_[A-Za-z0-9_\\-]{20,1024}",
    prefix: "dckr_[a-z]{3}_",
  },
  { rule: "vault-token", body: "hv[sbr]\\.[A-Za-z0-9_\\-]{20,1024}", prefix: "hv[sbr]\\." },
  { rule: "pypi-token", body: "pypi-AgE[A-Za-z0-9_\\-]{40,1024}", prefix: "pypi-" },
  { rule: "digitalocean-token", body: "do[opr]_v1_[a-f0-9]{64}", prefix: "do[opr]_v1_" },
  {
    // header.payload.signature, each base64url; the header and payload are JSON objects.
    rule: "jwt",
    body: "eyJ[A-Za-z0-9_\\-]{8,1024}\\.eyJ[A-Za-z0-9_\\-]{8,1024}\\.[A-Za-z0-9_\\-]{8,1024}",
    prefix: "eyJ",
  },
  { rule: "square-token", body: "sq0(?:atp|csp)-[A-Za-z0-9_\\-]{22,43}", prefix: "sq0[a-z]{3}-" },
  { rule: "atlassian-token", body: "ATATT3[A-Za-z0-9_\\-=]{40,1024}", prefix: "ATATT" },
  { rule: "postman-key", body: "PMAK-[a-f0-9]{24}-[a-f0-9]{34}", prefix: "PMAK-" },
  { rule: "newrelic-key", body: "NRAK-[A-Z0-9]{27}", prefix: "NRAK-" },
  {
    rule: "age-secret-key",
    body: "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    prefix: "AGE-SECRET-KEY-",
  },
  { rule: "flyio-token", body: "fm[12]_[A-Za-z0-9+\\/=_\\-]{40,1024}", prefix: "fm[12]_" },
  {
    rule: "doppler-token",
    body: "dp\\.(?:pt|st|sa|ct)\\.[A-Za-z0-9]{40,1024}",
    prefix: "dp\\.[a-z]{2}\\.",
  },
  { rule: "pulumi-token", body: "pul-[a-f0-9]{40}", prefix: "pul-" },
  { rule: "supabase-token", body: "sbp_[a-f0-9]{40}", prefix: "sbp_" },
  { rule: "replicate-token", body: "r8_[A-Za-z0-9]{37}", prefix: "r8_" },
  {
    rule: "discord-webhook",
    body:
      "https:\\/\\/(?:ptb\\.|canary\\.)?discord(?:app)?\\.com\\/api\\/webhooks\\/\\d+\\/[A-Za-z0-9_\\-]{60,1024}",
    prefix: "https:\\/\\/[^/]+\\/api\\/webhooks\\/",
  },
  {
    rule: "slack-webhook",
    body: "https:\\/\\/hooks\\.slack\\.com\\/(?:services|workflows)\\/[A-Za-z0-9_\\/\\-]{20,1024}",
    prefix: "https:\\/\\/hooks\\.slack\\.com\\/",
  },
];

// No lookbehind at the head: it would cost a check at every position; the
// character before a match is checked in code (`standalone`).
const VENDOR_PATTERN = new RegExp(
  `(?:${VENDOR_TOKENS.map(({ body }) => body).join("|")})(?![A-Za-z0-9])`,
  "g",
);
const VENDOR_RULES = VENDOR_TOKENS.map(({ rule, body, prefix }) => ({
  rule,
  whole: new RegExp(`^(?:${body})$`),
  prefix: new RegExp(`^${prefix}`),
}));

/**
 * The vendor rule a token of {@linkcode VENDOR_PATTERN} belongs to.
 *
 * @param token A match of the combined pattern.
 * @returns Its rule and public prefix.
 */
export function vendorRule(token: string): { rule: string; prefix: RegExp } {
  return VENDOR_RULES.find(({ whole }) => whole.test(token)) ??
    { rule: "vendor-token", prefix: /^/ };
}

const PLAIN_VALUE = String.raw`(?!\$)`;
// The name's last word only: the rest of the name changes nothing, and
// matching it would cost a scan of every word.
const PASSWORD_NAME = String
  .raw`(?:passw(?:or)?d|pwd|passphrase|secret|token|api[_\-]?key|private[_\-]?key|credentials?|auth[_\-]?key|access[_\-]?key)`;

/**
 * Shapes whose secret has no prefix of its own: the context says it is one.
 * - Authorization header values (`Bearer …`, `Basic …`, `token …`) and `x-api-key`.
 * - A private key cut short: the preset wants 100 characters of key body.
 * - Passwords in URLs of any scheme, with or without a user (`redis://:pw@`).
 * - Connection strings' keys and passwords (`AccountKey=…;`, `Password=…;`, a SAS `sig=`).
 * - A service account's `private_key_id`, a Docker config's `"auth"`.
 * - Assignments whose name says secret: with a digit in the value
 *   (`password=…`, `"api_key": "…"`), or without one when quoted, in a shell
 *   or dotenv assignment, or alone on a YAML line.
 */
export const CONTEXT_SHAPES: SecretShape[] = [
  {
    rule: "authorization-header",
    pattern: /\b(?:Bearer|Basic)\s+([A-Za-z0-9._~+\/=\-]{8,})/gi,
    group: 1,
  },
  { rule: "authorization-header", pattern: /\btoken\s+([0-9a-f]{40})\b/gi, group: 1 },
  {
    rule: "authorization-header",
    pattern: /["']?(?:authorization|x-api-key)["']?\s*[:=]\s*["']?([^"'\s,}]{8,})/gi,
    group: 1,
  },
  {
    rule: "private-key",
    pattern:
      /-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+\/=\s\\:,\-]{16,}?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=[^A-Za-z0-9+\/=\s\\:,\-])|$)/g,
    prefix: /^-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----/,
  },
  {
    rule: "url-password",
    // From the `://`, the scheme behind it: a pattern that starts with a letter is tried everywhere.
    pattern: /(?<=\b[a-z][a-z0-9+.\-]{1,20}):\/\/[^\s:\/@"'<>]{0,256}:([^\s@\/"'<>]{3,256})@/gi,
    group: 1,
  },
  {
    rule: "connection-string-key",
    pattern: /Key\s*=\s*([A-Za-z0-9+\/]{20,}={0,2})(?=[;"'\s]|$)/gi,
    group: 1,
  },
  {
    rule: "connection-string-key",
    pattern: /[?&;]sig=([A-Za-z0-9%+\/=]{20,})/gi,
    group: 1,
  },
  {
    rule: "connection-string-password",
    pattern: /(?:^|[;"'\s])(?:Password|Pwd)\s*=\s*("[^"]{3,}"|'[^']{3,}'|[^;"'\s]{3,})/gim,
    group: 1,
    plain: true,
  },
  {
    rule: "service-account-key-id",
    pattern: /private_key_id\\?["']?\s*[:=]\s*\\?["']?([0-9a-f]{40})\b/gi,
    group: 1,
  },
  {
    rule: "docker-auth",
    pattern:
      /["'](?:auth|identitytoken|registrytoken)\\?["']\s*:\s*\\?["']([A-Za-z0-9+\/=._\-]{8,})\\?["']/gi,
    group: 1,
  },
  {
    // The value must hold a digit: `token = process.env.GH_TOKEN` is code, not a secret.
    rule: "secret-assignment",
    pattern:
      /(?:api[_\-]?key|secret|token|passw(?:or)?d|credential|private[_\-]?key)\\?["']?\s*[:=]\s*\\?["']?((?=[^\s"',;}{)(\]\[]*\d)[^\s"',;}{)(\]\[$]{8,})/gi,
    group: 1,
  },
  {
    // Quoted (`password: "…"`), or a shell or dotenv assignment or a flag
    // (`PASSWORD=…`, `--password=…`): one pattern, one pass.
    rule: "secret-assignment",
    pattern: new RegExp(
      String
        .raw`${PASSWORD_NAME}(?:\\?["']?\s*[:=]\s*(\\?["'])${PLAIN_VALUE}((?:(?!\1)[^\n$\`\\])` +
        String.raw`{8,200})\1|=${PLAIN_VALUE}([^\s"'\`$;&|<>(){}\[\]]{8,}))`,
      "gi",
    ),
    group: [2, 3],
    plain: true,
  },
  {
    // A YAML line: `password: hunter-horse`, not `password: string;` nor `token: opts.token`.
    rule: "secret-assignment",
    pattern: new RegExp(
      String
        .raw`(?<=^[ \t-]*[A-Za-z0-9_.\-]*)(?:passw(?:or)?d|pwd|passphrase|secret)[ \t]*:[ \t]+${PLAIN_VALUE}([^\s"'\`$;,.(){}\[\]<>|&]{8,})[ \t]*$`,
      "gim",
    ),
    group: 1,
    plain: true,
  },
];

/**
 * Tokens without a literal prefix, each tried only in a text that holds its
 * hint: a pattern that starts with a character class would be tried at
 * every position of every text.
 */
const HINTED_TOKENS: SecretShape[] = [
  {
    rule: "discord-bot-token",
    pattern: /[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9])/g,
    standalone: true,
  },
  {
    rule: "telegram-bot-token",
    pattern: /\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9])/g,
    hint: ":AA",
    standalone: true,
  },
  {
    rule: "terraform-token",
    pattern: /[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,1024}/g,
    hint: ".atlasv1.",
    standalone: true,
  },
];

/** The vendor tokens, then the context shapes. */
export const SHAPES: SecretShape[] = [
  { rule: "vendor-token", pattern: VENDOR_PATTERN, standalone: true },
  ...HINTED_TOKENS,
  ...CONTEXT_SHAPES,
];
