/**
 * Just enough of the POSIX shell grammar to read a CI step's `run:` text or a
 * guide's code block as a list of simple commands, each as words. Anything
 * richer (control flow, here-documents, subshells, background jobs) is
 * reported as unsupported rather than guessed at: detection turns commands
 * into checks, so a misread command must not become one.
 *
 * @module
 */

/** One simple command of a script. */
export interface ShellUnit {
  /** The command's text as written, trimmed. */
  text: string;
  /** Its words with quotes removed; redirections left out. */
  words: string[];
  /** Set when the command pipes its output into another (`a | b`). */
  pipe?: true;
  /** The text after `||`, when the command's failure has a fallback. */
  orElse?: string;
}

/** A script split into commands, or why it cannot be. */
export type ShellSplit = { units: ShellUnit[] } | { unsupported: string };

const CONTROL = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "for",
  "while",
  "until",
  "do",
  "done",
  "case",
  "esac",
  "function",
  "{",
  "}",
  "[[",
  "((",
  "select",
]);

/** The index just past the quote or bracket that closes the one at `start`, or -1. */
function closing(text: string, start: number): number {
  const open = text[start];
  if (open === "'") {
    const end = text.indexOf("'", start + 1);
    return end === -1 ? -1 : end + 1;
  }
  if (open === '"' || open === "`") {
    for (let index = start + 1; index < text.length; index++) {
      if (text[index] === "\\") index++;
      else if (text[index] === open) return index + 1;
    }
    return -1;
  }
  // `$(...)`, `${...}` and GitHub's `${{ ... }}`: brackets nest, quotes inside count.
  const pairs: Record<string, string> = { "(": ")", "{": "}" };
  const stack: string[] = [pairs[open]];
  for (let index = start + 1; index < text.length; index++) {
    const char = text[index];
    if (char === "'" || char === '"' || char === "`") {
      const end = closing(text, index);
      if (end === -1) return -1;
      index = end - 1;
    } else if (char in pairs) {
      stack.push(pairs[char]);
    } else if (char === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * The words of one simple command: whitespace-separated, quotes removed,
 * redirections (`> file`, `2>&1`) left out.
 */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  const flush = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (/\s/.test(char)) {
      flush();
    } else if (char === "'" || char === '"') {
      const end = closing(text, index);
      const inner = text.slice(index + 1, end === -1 ? text.length : end - 1);
      word += char === '"' ? inner.replace(/\\(["\\$`])/g, "$1") : inner;
      inWord = true;
      index = (end === -1 ? text.length : end) - 1;
    } else if (char === "\\") {
      word += text[index + 1] ?? "";
      inWord = true;
      index++;
    } else if (char === "$" && (text[index + 1] === "(" || text[index + 1] === "{")) {
      const end = closing(text, index + 1);
      word += text.slice(index, end === -1 ? text.length : end);
      inWord = true;
      index = (end === -1 ? text.length : end) - 1;
    } else {
      word += char;
      inWord = true;
    }
  }
  flush();
  // A redirection is an operator word, or one that starts with one; its target may follow.
  const kept: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const redirect = /^(?:\d*|&)(?:>>?|<)(?:&\d+|&-)?(.*)$/.exec(words[index]);
    if (redirect === null) {
      kept.push(words[index]);
    } else if (redirect[1] === "" && !/&\d*-?$/.test(words[index])) {
      index++;
    }
  }
  return kept;
}

/**
 * Split a script into its simple commands at newlines, `;` and `&&`, with
 * comments and line continuations removed.
 *
 * @param script The script, e.g. a workflow step's `run:` text.
 * @returns The commands, or why the script is beyond this reader.
 */
export function splitShell(script: string): ShellSplit {
  const units: ShellUnit[] = [];
  let current = "";
  let pipe = false;
  let orElse: string | undefined;
  const push = () => {
    const text = current.trim();
    if (orElse !== undefined) {
      const fallback = orElse.trim();
      const main = text;
      if (main !== "") {
        units.push({
          text: main,
          words: wordsOf(main),
          ...(pipe ? { pipe: true as const } : {}),
          orElse: fallback,
        });
      }
    } else if (text !== "") {
      units.push({ text, words: wordsOf(text), ...(pipe ? { pipe: true as const } : {}) });
    }
    current = "";
    pipe = false;
    orElse = undefined;
  };
  // After `||` the text goes to the fallback until the command ends.
  const append = (text: string) => {
    if (orElse !== undefined) orElse += text;
    else current += text;
  };
  for (let index = 0; index < script.length; index++) {
    const char = script[index];
    const next = script[index + 1];
    const before = orElse ?? current;
    if (char === "\\") {
      // A backslash before a newline joins the lines; before anything else it escapes it.
      if (next === "\n") append(" ");
      else if (next === "\r" && script[index + 2] === "\n") {
        append(" ");
        index++;
      } else append(char + (next ?? ""));
      index++;
    } else if (char === "'" || char === '"' || char === "`") {
      const end = closing(script, index);
      if (end === -1) return { unsupported: "an unclosed quote" };
      append(script.slice(index, end));
      index = end - 1;
    } else if (char === "$" && (next === "(" || next === "{")) {
      const end = closing(script, index + 1);
      if (end === -1) return { unsupported: `an unclosed "$${next}"` };
      append(script.slice(index, end));
      index = end - 1;
    } else if (char === "#" && (before === "" || /\s$/.test(before))) {
      const end = script.indexOf("\n", index);
      index = (end === -1 ? script.length : end) - 1;
    } else if (char === "\n" || char === ";") {
      if (char === ";" && next === ";") return { unsupported: "a case statement" };
      push();
    } else if (char === "&" && next === "&") {
      push();
      index++;
    } else if (char === "&") {
      // `2>&1` and `&>` are redirections; a lone `&` starts a background job.
      if (/>$/.test(before) || next === ">") append(char);
      else return { unsupported: "a background job (&)" };
    } else if (char === "|" && next === "|") {
      if (orElse !== undefined) orElse += "||";
      else orElse = "";
      index++;
    } else if (char === "|") {
      pipe = true;
      append(char);
    } else if (char === "<" && next === "<") {
      return { unsupported: "a here-document (<<)" };
    } else if (char === "(" && before.trim() === "") {
      return { unsupported: "a subshell or function" };
    } else {
      append(char);
    }
  }
  push();
  const control = units.find((unit) => CONTROL.has(unit.words[0] ?? ""));
  if (control !== undefined) return { unsupported: `shell control flow (${control.words[0]})` };
  return { units };
}
