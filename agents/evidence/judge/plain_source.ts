/**
 * Protection by allowlist: a file the agent adds or changes may pass
 * unprotected only when it is plain source of a language the repository
 * already has, or documentation, and text by content. Everything else is
 * protected whatever its name: bytecode a runner loads before the source
 * beside it (`.pyc`), package metadata and plugin registrations
 * (`*.dist-info/entry_points.txt`), interpreter start-up hooks (`.pth`),
 * binaries, anything under a dependency folder, files of a kind finishline
 * does not know. A list of names only holds the tricks someone thought of;
 * this holds what is known to be harmless.
 *
 * @module
 */

import path from "node:path";

/** Source extensions, by language. */
const LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  python: ["py", "pyi"],
  javascript: ["js", "mjs", "cjs", "jsx"],
  typescript: ["ts", "mts", "cts", "tsx"],
  rust: ["rs"],
  go: ["go"],
  ruby: ["rb", "rake", "gemspec"],
  c: ["c", "h"],
  "c++": ["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "tpp"],
  java: ["java"],
  kotlin: ["kt", "kts"],
  scala: ["scala", "sc"],
  swift: ["swift"],
  csharp: ["cs"],
  fsharp: ["fs", "fsi", "fsx"],
  php: ["php"],
  perl: ["pl", "pm", "t"],
  lua: ["lua"],
  elixir: ["ex", "exs"],
  erlang: ["erl", "hrl"],
  haskell: ["hs", "lhs"],
  ocaml: ["ml", "mli"],
  clojure: ["clj", "cljs", "cljc", "edn"],
  dart: ["dart"],
  r: ["r", "R"],
  julia: ["jl"],
  zig: ["zig"],
  nim: ["nim"],
  shell: ["sh", "bash", "zsh"],
  vue: ["vue"],
  svelte: ["svelte"],
  css: ["css", "scss", "sass", "less"],
  html: ["html", "htm"],
};

/** Extension -> language. */
const LANGUAGE_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(LANGUAGES).flatMap(([language, extensions]) =>
    extensions.map((extension) => [extension, language] as const)
  ),
);

/** Documentation, whatever the repository's languages. */
const DOC_EXTENSIONS: ReadonlySet<string> = new Set([
  "md",
  "markdown",
  "mdx",
  "rst",
  "txt",
  "adoc",
  "asciidoc",
  "org",
  "rdoc",
]);

/** Documentation files without an extension. */
const DOC_NAMES =
  /^(README|LICEN[CS]E|COPYING|CHANGELOG|CHANGES|HISTORY|AUTHORS|CONTRIBUTORS|NOTICE|CONTRIBUTING|CODE_OF_CONDUCT|SECURITY)$/i;

/**
 * Folders whose files are installed or generated, not written: a runner
 * loads what is in them (a package, its metadata, its plugin entry points,
 * compiled bytecode) as if it were the package itself.
 */
const DEPENDENCY_SEGMENT =
  /^(node_modules|bower_components|jspm_packages|\.venv|venv|\.tox|\.nox|site-packages|dist-packages|__pycache__|\.pnpm-store|\.yarn|vendor)$|\.(dist-info|egg-info|egg)$/;

/** Compiled code a runner or interpreter loads in place of, or beside, the source. */
const BYTECODE = new Set([
  "pyc",
  "pyo",
  "class",
  "jar",
  "o",
  "a",
  "so",
  "dylib",
  "dll",
  "exe",
  "wasm",
  "beam",
  "elc",
  "node",
  "rlib",
  "rmeta",
]);

/**
 * The languages a repository has, from its tracked files: a language counts
 * once one of its source files is tracked.
 *
 * @param files The tracked paths (`git ls-tree -r --name-only`).
 * @returns The language names.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { repositoryLanguages } from "./plain_source.ts";
 *
 * assert.deepEqual(
 *   [...repositoryLanguages(["src/lib.rs", "README.md", "build.sh"])].sort(),
 *   ["rust", "shell"],
 * );
 * ```
 */
export function repositoryLanguages(files: Iterable<string>): Set<string> {
  const found = new Set<string>();
  for (const file of files) {
    const language = LANGUAGE_OF.get(extensionOf(file));
    if (language && !underDependencyFolder(file)) found.add(language);
  }
  return found;
}

/**
 * Why a changed file is not plain source or documentation of the
 * repository's languages, by its path, or undefined when its path is that
 * (its content must still be text: {@linkcode isText}).
 *
 * @param file The path, relative to the repository root.
 * @param languages The repository's languages ({@linkcode repositoryLanguages}).
 * @returns The kind that protects it (`bytecode`, `Python path hook`, ...), or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notPlainSource } from "./plain_source.ts";
 *
 * const python = new Set(["python"]);
 * assert.equal(notPlainSource("src/calc.py", python), undefined);
 * assert.equal(notPlainSource("docs/usage.md", python), undefined);
 * assert.equal(notPlainSource("src/__pycache__/calc.cpython-311.pyc", python), "dependency folder or package metadata");
 * assert.equal(notPlainSource("src/calc.pyc", python), "bytecode");
 * assert.equal(notPlainSource("cheat.dist-info/entry_points.txt", python), "dependency folder or package metadata");
 * assert.equal(notPlainSource("zz.pth", python), "Python path hook");
 * assert.equal(notPlainSource("lib/helper.rb", python), "ruby source, a language the repository does not have");
 * assert.equal(notPlainSource("setup.cfg", python), ".cfg file");
 * ```
 */
export function notPlainSource(file: string, languages: ReadonlySet<string>): string | undefined {
  if (underDependencyFolder(file)) return "dependency folder or package metadata";
  const extension = extensionOf(file);
  if (extension === "pth") return "Python path hook";
  if (BYTECODE.has(extension.toLowerCase())) return "bytecode";
  if (DOC_EXTENSIONS.has(extension.toLowerCase())) return undefined;
  if (extension === "" && DOC_NAMES.test(path.posix.basename(file))) return undefined;
  const language = LANGUAGE_OF.get(extension);
  if (language && languages.has(language)) return undefined;
  if (language) return `${language} source, a language the repository does not have`;
  return extension === "" ? "no extension" : `.${extension} file`;
}

/**
 * Whether a file's content is text: no NUL byte and valid UTF-8 (as git's
 * output decodes it, an invalid byte becomes U+FFFD).
 *
 * @param content The content, decoded as UTF-8.
 * @returns True for text.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isText } from "./plain_source.ts";
 *
 * assert.equal(isText("def add(a, b):\n    return a + b\n"), true);
 * assert.equal(isText("\u0000\u0001binary"), false);
 * ```
 */
export function isText(content: string): boolean {
  return !content.includes("\0") && !content.includes("\uFFFD");
}

/** Languages that style or mark up rather than compute. */
const NOT_PROGRAMS: ReadonlySet<string> = new Set(["css", "html"]);

/**
 * The programming language of a file by its extension, outside dependency
 * folders; undefined for documentation, data, style sheets and markup.
 *
 * @param file A repository-relative path.
 * @returns The language, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { programLanguage } from "./plain_source.ts";
 *
 * assert.equal(programLanguage("lib/builder.rb"), "ruby");
 * assert.equal(programLanguage("README.md"), undefined);
 * assert.equal(programLanguage("node_modules/x/index.js"), undefined);
 * ```
 */
export function programLanguage(file: string): string | undefined {
  if (underDependencyFolder(file)) return undefined;
  const language = LANGUAGE_OF.get(extensionOf(file));
  return language && !NOT_PROGRAMS.has(language) ? language : undefined;
}

/** Whether a path lies under a dependency, build or metadata folder. */
function underDependencyFolder(file: string): boolean {
  return file.split("/").slice(0, -1).some((segment) => DEPENDENCY_SEGMENT.test(segment));
}

/** The extension after the last dot of the base name (not a leading dot), or "". */
function extensionOf(file: string): string {
  const base = path.posix.basename(file);
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? "" : base.slice(dot + 1);
}
