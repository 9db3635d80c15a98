/**
 * finishline's own mutator: small wrong versions of a changed line (an
 * operator, a comparison, a condition, a constant, a returned value, a
 * negation), each of which a test of that line should notice. Written for
 * the languages the changed-line figures cover (JavaScript and TypeScript,
 * Python, Go) and usable for the C family; it mutates only code, never
 * strings or comments, from a lexer that knows each family's literals.
 *
 * Before them, one mutant per hunk of the change in every source file, in
 * any language: the hunk undone (the starting commit's lines back in its
 * place). Tests that pass with the change undone do not pin it at all; for
 * a bug fix it is the bug itself.
 *
 * No maintained mutation tool is used: Stryker (JavaScript) installs into
 * the user's project with a runner plugin per test framework, and mutmut
 * and go-mutesting are not in the registries CI reaches. One mutator with
 * the same operators everywhere keeps the figures comparable across
 * ecosystems.
 *
 * @module
 */

/** The language family of a source file, by its extension. */
export type MutantLanguage = "js" | "python" | "go" | "c";

/** One mutant: one edit of one line. */
export interface Mutant {
  /** Repository-relative path. */
  path: string;
  /** Line number, from 1. */
  line: number;
  /** Column of the edit, from 0. */
  column: number;
  /** The text replaced. */
  from: string;
  /** What replaces it. */
  to: string;
  /** What the edit does, for feedback ("replacing `+` by `-`"). */
  description: string;
}

const LANGUAGES: Record<string, MutantLanguage> = {
  js: "js",
  mjs: "js",
  cjs: "js",
  jsx: "js",
  ts: "js",
  mts: "js",
  cts: "js",
  tsx: "js",
  py: "python",
  go: "go",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  cxx: "c",
  hpp: "c",
  rs: "c",
  java: "c",
  kt: "c",
};

/**
 * The mutator's language for a path.
 *
 * @param path A file path.
 * @returns Its family, or undefined when the mutator does not know it.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mutantLanguage } from "./mutants.ts";
 *
 * assert.equal(mutantLanguage("src/calc.ts"), "js");
 * assert.equal(mutantLanguage("calc.py"), "python");
 * assert.equal(mutantLanguage("README.md"), undefined);
 * ```
 */
export function mutantLanguage(path: string): MutantLanguage | undefined {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? undefined : LANGUAGES[path.slice(dot + 1).toLowerCase()];
}

/**
 * Which characters of a source are code (not a string, a comment or a
 * template's text), one flag per UTF-16 unit.
 *
 * @param source The whole file.
 * @param language Its family.
 * @returns The mask.
 */
export function codeMask(source: string, language: MutantLanguage): Uint8Array {
  const mask = new Uint8Array(source.length);
  let i = 0;
  const skipQuoted = (quote: string, multiline: boolean) => {
    // `i` is at the opening quote.
    i += quote.length;
    while (i < source.length) {
      if (source[i] === "\\" && !(quote === "`" && language === "go")) {
        i += 2;
        continue;
      }
      if (source.startsWith(quote, i)) {
        i += quote.length;
        return;
      }
      if (!multiline && source[i] === "\n") return;
      i++;
    }
  };
  while (i < source.length) {
    const char = source[i];
    const next = source[i + 1];
    if (language === "python") {
      if (char === "#") {
        while (i < source.length && source[i] !== "\n") i++;
        continue;
      }
      const prefix = /^[rRbBuUfF]{0,2}('''|"""|'|")/.exec(source.slice(i, i + 5));
      if (prefix && (i === 0 || !/\w/.test(source[i - 1]))) {
        const quote = prefix[1];
        i += prefix[0].length - quote.length;
        skipQuoted(quote, quote.length === 3);
        continue;
      }
    } else {
      if (char === "/" && next === "/") {
        while (i < source.length && source[i] !== "\n") i++;
        continue;
      }
      if (char === "/" && next === "*") {
        const end = source.indexOf("*/", i + 2);
        i = end < 0 ? source.length : end + 2;
        continue;
      }
      if (char === '"' || (char === "'" && language !== "c") || char === "`") {
        // Go's raw strings and JavaScript's templates span lines.
        skipQuoted(char, char === "`");
        continue;
      }
      if (char === "'" && language === "c") {
        // A character literal, or Rust's lifetime: at most a few characters.
        const end = source.indexOf("'", i + 1);
        i = end > 0 && end - i <= 4 ? end + 1 : i + 1;
        continue;
      }
    }
    mask[i] = 1;
    i++;
  }
  return mask;
}

interface Rule {
  pattern: RegExp;
  to: (match: string) => string | undefined;
  languages?: MutantLanguage[];
  /** The match is a whole statement, strings and all: removed, it leaves an empty statement. */
  statement?: boolean;
}

const flip = (pairs: Record<string, string>) => (match: string) => pairs[match.trim()];

/** The rules, in the order their mutants are tried on a line. */
const RULES: Rule[] = [
  // A compound condition's other connective first: the part of a condition tests most often
  // leave unchecked (a special case `a === 2 && b === 2` passes its one test as `||`).
  {
    pattern: / (?:&&|\|\|) /g,
    to: flip({ "&&": " || ", "||": " && " }),
    languages: ["js", "go", "c"],
  },
  { pattern: /\b(?:and|or)\b/g, to: flip({ and: "or", or: "and" }), languages: ["python"] },
  // Comparisons, spaced so that generics (`Array<T>`), arrows and shifts are left alone.
  {
    pattern: / (?:===|!==|==|!=|<=|>=|<|>) /g,
    to: (match) => {
      const op = match.trim();
      const to: Record<string, string> = {
        "===": "!==",
        "!==": "===",
        "==": "!=",
        "!=": "==",
        "<=": "<",
        ">=": ">",
        "<": "<=",
        ">": ">=",
      };
      return ` ${to[op]} `;
    },
  },
  // Arithmetic, between operands (not a sign, an increment or `**`).
  {
    pattern: /(?<=[\w)\]] ?)[+\-*/%](?![+\-*/=>])(?= ?[\w(\[.])/g,
    to: flip({ "+": "-", "-": "+", "*": "/", "/": "*", "%": "*" }),
  },
  {
    pattern: /\b(?:true|false)\b/g,
    to: flip({ true: "false", false: "true" }),
    languages: ["js", "go", "c"],
  },
  {
    pattern: /\b(?:True|False)\b/g,
    to: flip({ True: "False", False: "True" }),
    languages: ["python"],
  },
  // A negation removed.
  { pattern: /!(?=[\w(])/g, to: () => "", languages: ["js", "go", "c"] },
  { pattern: /\bnot /g, to: () => "", languages: ["python"] },
  // A hexadecimal constant moved by one.
  {
    pattern: /(?<![\w.])0[xX][0-9a-fA-F]+(?![\w.])/g,
    to: (match) => `0x${(BigInt(match) + 1n).toString(16)}`,
  },
  // A constant moved by one.
  {
    pattern: /(?<![\w.])\d+(?![\w.])/g,
    to: (match) => String(match === "0" ? 1 : Number(match) + (Number(match) === 1 ? -1 : 1)),
  },
  // A returned value dropped.
  {
    pattern: /\breturn (?!undefined\b)[^;\s][^;]*?(?=\s*(?:;|$))/g,
    to: () => "return undefined",
    languages: ["js"],
  },
  { pattern: /\breturn (?!None\b)[^#]*[^#\s]/g, to: () => "return None", languages: ["python"] },
  // A statement removed: an assignment to what exists already, or a call, alone on its line.
  {
    pattern:
      /^\s*(?!(?:const|let|var|return|throw|yield|await|if|for|while|else|case|import|export|def|class|func|go|defer|package|type)\b)[\w$.[\]"'()]+\s*(?:[-+*/%|&]?=(?!=)|\()[^{}:]*?;?\s*$/g,
    to: () => "",
    statement: true,
  },
];

const DESCRIBE = (from: string, to: string) =>
  to === "" ? `removing \`${from.trim()}\`` : `replacing \`${from.trim()}\` by \`${to.trim()}\``;

/**
 * The mutants of some lines of a source file, at most `perLine` per line,
 * in rule order (a condition's connective, comparisons, arithmetic,
 * booleans, negations, constants, returned values, statements).
 *
 * @param path The file's path (for the mutants, and its language).
 * @param source Its content.
 * @param lines The line numbers to mutate.
 * @param perLine Most mutants per line. @default 3
 * @returns The mutants, line by line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineMutants } from "./mutants.ts";
 *
 * const source = 'function add(a, b) {\n  return a + b; // a + b\n}\nconst s = "a + b";\n';
 * const mutants = lineMutants("calc.js", source, [2, 4]);
 * assert.deepEqual(mutants.map((m) => m.description), [
 *   "replacing `+` by `-`",
 *   "replacing `return a + b` by `return undefined`",
 * ]);
 * ```
 */
export function lineMutants(path: string, source: string, lines: number[], perLine = 3): Mutant[] {
  const language = mutantLanguage(path);
  if (!language) return [];
  const mask = codeMask(source, language);
  const starts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === "\n") starts.push(i + 1);
  const mutants: Mutant[] = [];
  for (const line of lines) {
    const start = starts[line - 1];
    if (start === undefined) continue;
    const end = line < starts.length ? starts[line] - 1 : source.length;
    const text = source.slice(start, end);
    const found: Mutant[] = [];
    for (const rule of RULES) {
      if (rule.languages && !rule.languages.includes(language)) continue;
      for (const match of text.matchAll(rule.pattern)) {
        const column = match.index!;
        const first = match[0].search(/\S/);
        if (mask[start + column + first] !== 1) continue;
        if (rule.statement) {
          // Its indentation kept, an empty statement in its place (`pass` in Python).
          const from = match[0].slice(first).trimEnd();
          const to = language === "python" ? "pass" : ";";
          found.push({
            path,
            line,
            column: column + first,
            from,
            to,
            description: `removing \`${from}\``,
          });
          break;
        }
        // Every character of the match must be code.
        const inCode = [...match[0]].every((_, k) =>
          mask[start + column + k] === 1 || match[0][k] === " "
        );
        if (!inCode) continue;
        const to = rule.to(match[0]);
        if (to === undefined || to === match[0]) continue;
        found.push({ path, line, column, from: match[0], to, description: DESCRIBE(match[0], to) });
        break;
      }
      if (found.length >= perLine) break;
    }
    mutants.push(...found);
  }
  return mutants;
}

/**
 * Apply a mutant to the source it came from.
 *
 * @param source The file's content.
 * @param mutant The mutant.
 * @returns The mutated content.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyMutant, lineMutants } from "./mutants.ts";
 *
 * const source = "x = 1\nif a > b:\n    y = 2\n";
 * const [mutant] = lineMutants("m.py", source, [2]);
 * assert.equal(applyMutant(source, mutant), "x = 1\nif a >= b:\n    y = 2\n");
 * const js = 'const h = [0xc1059ed8];\nresult._ = result._.concat(argv.slice(i));\nlog("a + b");\n';
 * const lines = lineMutants("h.js", js, [1, 2, 3])
 *   .map((mutant) => applyMutant(js, mutant).split("\n")[mutant.line - 1]);
 * assert.deepEqual(lines, ["const h = [0xc1059ed9];", ";", ";"]);
 * ```
 */
export function applyMutant(source: string, mutant: Mutant): string {
  let start = 0;
  for (let line = 1; line < mutant.line; line++) start = source.indexOf("\n", start) + 1;
  const at = start + mutant.column;
  return source.slice(0, at) + mutant.to + source.slice(at + mutant.from.length);
}

/**
 * Order mutants so that every line gets its first mutant before any line
 * gets its second (a time box then spreads over the change).
 *
 * @param mutants The mutants, line by line.
 * @returns The same mutants, round-robin by line.
 */
export function spreadByLine(mutants: Mutant[]): Mutant[] {
  const byLine = new Map<string, Mutant[]>();
  for (const mutant of mutants) {
    const key = `${mutant.path}:${mutant.line}`;
    byLine.set(key, [...(byLine.get(key) ?? []), mutant]);
  }
  const queues = [...byLine.values()];
  const out: Mutant[] = [];
  for (let round = 0; out.length < mutants.length; round++) {
    for (const queue of queues) if (queue[round]) out.push(queue[round]);
  }
  return out;
}

/**
 * The mutants that undo a change hunk by hunk: each puts the starting
 * commit's lines back in place of the claim's, in any language.
 *
 * @param path Repository-relative path.
 * @param source The claim's content of the file.
 * @param hunks The change's hunks in it.
 * @returns One mutant per hunk whose undoing can be placed.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyMutant, revertMutants } from "./mutants.ts";
 *
 * const source = "def area(w, h):\n    return w * h\n";
 * const [undo] = revertMutants("shapes.rb", source, [
 *   { start: 2, before: ["    return w + h"], after: ["    return w * h"] },
 * ]);
 * assert.equal(applyMutant(source, undo), "def area(w, h):\n    return w + h\n");
 * assert.equal(undo.description, "undoing the change of line 2");
 * ```
 */
export function revertMutants(
  path: string,
  source: string,
  hunks: ReadonlyArray<{ start: number; before: string[]; after: string[] }>,
): Mutant[] {
  const lines = source.split("\n");
  const mutants: Mutant[] = [];
  for (const hunk of hunks) {
    const at = hunk.start - 1;
    // The claim's lines must be where the diff says (the file read is the claim's).
    if (hunk.after.some((line, k) => lines[at + k] !== line)) continue;
    if (at > lines.length) continue;
    const end = hunk.start + hunk.after.length - 1;
    const span = hunk.after.length === 0
      ? `the lines removed before line ${hunk.start}`
      : hunk.after.length === 1
      ? `line ${hunk.start}`
      : `lines ${hunk.start}–${end}`;
    // Whole lines with their line ends, so that an added hunk goes and a removed one comes back.
    let from = hunk.after.map((line) => `${line}\n`).join("");
    let to = hunk.before.map((line) => `${line}\n`).join("");
    const offset = lines.slice(0, at).reduce((sum, line) => sum + line.length + 1, 0);
    if (source.slice(offset, offset + from.length) !== from) {
      // The file's last line, without a line end.
      if (!from.endsWith("\n") || source.slice(offset) !== from.slice(0, -1)) continue;
      from = from.slice(0, -1);
      to = to.replace(/\n$/, "");
    }
    mutants.push({
      path,
      line: hunk.start,
      column: 0,
      from,
      to,
      description: `undoing the change of ${span}`,
    });
  }
  return mutants;
}
