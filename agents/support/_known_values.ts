/**
 * The exact secrets finishline knows (its own keys and tokens, the secret
 * values of its environment), found in any of the shapes a program can put
 * them in: as they are, base64 (standard and URL-safe alphabets, at each of
 * the three byte alignments, so a secret inside a longer encoded text is
 * found too), hex (lower or upper case), percent-encoded, JSON-escaped
 * (`\u0073`, `\x73`), and cut by whitespace or line breaks anywhere, or by
 * any mix of these (`%73\u006b-a…` split over two lines).
 *
 * One pass over the text, whatever the number of secrets: the text is read
 * as a stream of decoded characters (whitespace and `\n`-style escapes
 * skipped, `%XX`, `\uXXXX`, `\xXX` and `\"`-style escapes decoded), a rolling
 * hash of the last eight is looked up in a bit table of the forms' first
 * eight characters, and only a hit is compared in full. Private to
 * `agents/support`.
 *
 * @module
 */

/** How many decoded characters the rolling hash covers: no form is shorter. */
const WINDOW = 8;
/**
 * A piece of a token-like secret's form this long is found on its own (a
 * text cut inside the secret, one character changed); a piece that ends
 * where the form ends needs only {@linkcode WINDOW} characters.
 */
const MIN_PIECE = 12;
const BASE = 31;
const MIN_TABLE_BITS = 16;
const MAX_TABLE_BITS = 24;
// BASE ** (WINDOW - 1) modulo 2 ** 32: the weight of the character leaving the window.
const OLDEST_WEIGHT = Array.from({ length: WINDOW - 1 }).reduce<number>(
  (weight) => Math.imul(weight, BASE),
  1,
);

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * The forms one secret is looked for in, each without whitespace (the
 * matcher skips it in the text): the secret itself, its base64 at each
 * alignment in both alphabets, its hex in both cases. Percent and JSON
 * escapes need no form of their own: the matcher decodes them as it reads.
 *
 * @param secret The secret.
 * @returns Its forms, longest first, each at least eight characters long.
 */
export function encodedForms(secret: string): string[] {
  const bytes = new TextEncoder().encode(secret);
  const forms = new Set<string>([secret.replace(/\s+/g, "")]);
  for (let align = 0; align < 3; align++) {
    const std = base64Slice(bytes, align);
    forms.add(std);
    forms.add(std.replaceAll("+", "-").replaceAll("/", "_"));
  }
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  forms.add(hex);
  forms.add(hex.toUpperCase());
  return [...forms].filter((form) => form.length >= WINDOW).sort((a, b) => b.length - a.length);
}

/**
 * The characters of the base64 of a longer text that depend on the secret's
 * bytes alone, when the secret starts `align` bytes after a 3-byte boundary.
 */
function base64Slice(bytes: Uint8Array, align: number): string {
  const padded = new Uint8Array(align + bytes.length);
  padded.set(bytes, align);
  let out = "";
  for (let i = 0; i < padded.length; i += 3) {
    const triple = (padded[i] << 16) | ((padded[i + 1] ?? 0) << 8) | (padded[i + 2] ?? 0);
    out += B64[(triple >> 18) & 63] + B64[(triple >> 12) & 63] + B64[(triple >> 6) & 63] +
      B64[triple & 63];
  }
  const bits = padded.length * 8;
  return out.slice(Math.ceil((align * 8) / 6), Math.floor(bits / 6));
}

/** A span of a text that holds a known secret in one of its forms. */
export interface KnownSpan {
  /** Where it starts in the text. */
  start: number;
  /** Where it ends (exclusive). */
  end: number;
}

// The window's characters and where each starts in the text, shared by every call.
const WINDOW_CODES = new Int32Array(WINDOW);
const WINDOW_STARTS = new Int32Array(WINDOW);

// The decoder's result, kept in module variables so that the hot loop allocates nothing.
let decodedCode = 0;
let decodedNext = 0;

/**
 * Decode the character at `at` when it starts an escape: sets `decodedCode`
 * (-1 for an escaped whitespace, which is skipped) and `decodedNext`, and
 * returns true; false when it is a plain character.
 */
function decodeEscape(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c === 37) { // %XX
    const value = hexValue(text, at + 1, 2);
    if (value < 0) return false;
    decodedCode = value <= 32 ? -1 : value;
    decodedNext = at + 3;
    return true;
  }
  // A backslash escape, escaped any number of times more (`\\\\u0073` in JSON of JSON).
  let letter = at + 1;
  while (text.charCodeAt(letter) === 92) letter++;
  const kind = text.charCodeAt(letter);
  if (kind === 117 || kind === 85) { // \uXXXX
    const value = hexValue(text, letter + 1, 4);
    if (value < 0) return backslash(text, at);
    decodedCode = value <= 32 ? -1 : value;
    decodedNext = letter + 5;
    return true;
  }
  if (kind === 120) { // \xXX
    const value = hexValue(text, letter + 1, 2);
    if (value < 0) return backslash(text, at);
    decodedCode = value <= 32 ? -1 : value;
    decodedNext = letter + 3;
    return true;
  }
  if (kind === 110 || kind === 114 || kind === 116) { // \n \r \t
    decodedCode = -1;
    decodedNext = letter + 1;
    return true;
  }
  if (kind === 34 || kind === 39 || kind === 47) { // \" \' \/
    decodedCode = kind;
    decodedNext = letter + 1;
    return true;
  }
  return backslash(text, at);
}

/** `\\` is one backslash; a lone backslash is itself. */
function backslash(text: string, at: number): boolean {
  if (text.charCodeAt(at + 1) !== 92) return false;
  decodedCode = 92;
  decodedNext = at + 2;
  return true;
}

function hexValue(text: string, at: number, digits: number): number {
  let value = 0;
  for (let i = at; i < at + digits; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= 48 && c <= 57
      ? c - 48
      : c >= 97 && c <= 102
      ? c - 87
      : c >= 65 && c <= 70
      ? c - 55
      : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The next decoded character at or after `at`, whitespace and escaped
 * whitespace skipped: sets `decodedCode` (-1 at the text's end) and `decodedNext`.
 */
function nextDecoded(text: string, at: number): void {
  let i = at;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c <= 32) {
      i++;
      continue;
    }
    if ((c === 37 || c === 92) && decodeEscape(text, i)) {
      if (decodedCode < 0) {
        i = decodedNext;
        continue;
      }
      return;
    }
    decodedCode = c;
    decodedNext = i + 1;
    return;
  }
  decodedCode = -1;
  decodedNext = text.length;
}

/** Spreads a hash's high bits into the low ones the table uses. */
function mix(hash: number): number {
  return hash ^ (hash >>> 15);
}

function hashOf(form: string, at = 0): number {
  let hash = 0;
  for (let i = at; i < at + WINDOW; i++) hash = (Math.imul(hash, BASE) + form.charCodeAt(i)) | 0;
  return hash;
}

/**
 * Whether pieces of a secret count: a token, not a path, a sentence or a
 * container whose other parts (a host name, an account name) are not secret.
 */
function piecesCount(secret: string): boolean {
  return !/\s|:\/\/|[;&]|^[\/~.{\[]/.test(secret);
}

/** Where a form can start matching: at its start, or anywhere when its pieces count. */
interface Entry {
  form: string;
  offset: number;
  pieces: boolean;
}

/**
 * Finds known secrets in every form of {@linkcode encodedForms}, in one pass.
 */
export class KnownValueMatcher {
  // A bit per hash value, at least 32 bits per window so that few positions
  // of ordinary text hit; small enough to stay in the CPU's cache.
  #bits = new Uint32Array(1 << (MIN_TABLE_BITS - 5));
  #mask = (1 << MIN_TABLE_BITS) - 1;
  #byHash = new Map<number, Entry[]>();
  #secrets = new Set<string>();

  /** How many secrets it knows. */
  get size(): number {
    return this.#secrets.size;
  }

  /**
   * Look for one more secret, in all its forms.
   *
   * @param secret The secret; ignored when shorter than eight characters.
   */
  add(secret: string): void {
    if (secret.length < WINDOW || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    const pieces = piecesCount(secret);
    for (const form of encodedForms(secret)) {
      const last = pieces ? form.length - WINDOW : 0;
      for (let offset = 0; offset <= last; offset++) {
        const hash = hashOf(form, offset);
        const list = this.#byHash.get(hash) ?? [];
        list.push({ form, offset, pieces });
        this.#byHash.set(hash, list);
      }
    }
    this.#fill();
  }

  #fill(): void {
    let bits = MIN_TABLE_BITS;
    while (bits < MAX_TABLE_BITS && (1 << bits) < this.#byHash.size * 32) bits++;
    if (this.#bits.length !== 1 << (bits - 5)) this.#bits = new Uint32Array(1 << (bits - 5));
    this.#mask = (1 << bits) - 1;
    for (const hash of this.#byHash.keys()) {
      const slot = mix(hash) & this.#mask;
      this.#bits[slot >>> 5] |= 1 << (slot & 31);
    }
  }

  /**
   * The spans of a text that hold a known secret in any form, in order, not overlapping.
   *
   * @param text Any text.
   * @returns The spans.
   */
  find(text: string): KnownSpan[] {
    const spans: KnownSpan[] = [];
    if (this.#secrets.size === 0 || text.length < WINDOW) return spans;
    const bits = this.#bits;
    const mask = this.#mask;
    const codes = WINDOW_CODES;
    const starts = WINDOW_STARTS;
    // A character not yet in the window weighs 0: no branch in the hot loop.
    codes.fill(0);
    let hash = 0;
    let count = 0;
    let i = 0;
    const length = text.length;
    while (i < length) {
      let c = text.charCodeAt(i);
      let next = i + 1;
      if (c <= 32) {
        i = next;
        continue;
      }
      if ((c === 37 || c === 92) && decodeEscape(text, i)) {
        next = decodedNext;
        if (decodedCode < 0) {
          i = next;
          continue;
        }
        c = decodedCode;
      }
      const slot = count & (WINDOW - 1);
      hash = (Math.imul((hash - Math.imul(codes[slot], OLDEST_WEIGHT)) | 0, BASE) + c) | 0;
      codes[slot] = c;
      starts[slot] = i;
      count++;
      const bit = mix(hash) & mask;
      if ((bits[bit >>> 5] & (1 << (bit & 31))) !== 0 && count >= WINDOW) {
        const start = starts[count & (WINDOW - 1)];
        const end = this.#matchAt(text, start, hash);
        if (end > 0) {
          const last = endOfPadding(text, end);
          spans.push({ start, end: last });
          codes.fill(0);
          hash = 0;
          count = 0;
          i = last;
          continue;
        }
      }
      i = next;
    }
    return spans;
  }

  /**
   * The end of the longest form, or piece of one, that starts at `start`, or
   * -1: a whole form; a piece of {@linkcode MIN_PIECE} characters; or a
   * piece that runs to the form's end (what is left when a text was cut
   * inside the secret).
   */
  #matchAt(text: string, start: number, hash: number): number {
    const entries = this.#byHash.get(hash);
    if (!entries) return -1;
    let best = -1;
    let bestLength = 0;
    for (const { form, offset, pieces } of entries) {
      let at = start;
      let k = offset;
      for (; k < form.length; k++) {
        nextDecoded(text, at);
        if (decodedCode !== form.charCodeAt(k)) break;
        at = decodedNext;
      }
      const length = k - offset;
      const counts = k === form.length ? pieces || offset === 0 : pieces && length >= MIN_PIECE;
      if (counts && length > bestLength) {
        best = at;
        bestLength = length;
      }
    }
    return best;
  }
}

/**
 * Where a span ends once the base64 characters and padding right after it
 * (`Q==`) are taken in: they hold the secret's last few bits.
 */
function endOfPadding(text: string, end: number): number {
  const padding = /^[A-Za-z0-9+\/_\-]{0,3}={1,2}/.exec(text.slice(end, end + 5));
  return padding ? end + padding[0].length : end;
}
