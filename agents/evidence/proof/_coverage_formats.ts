/**
 * The coverage formats of the ecosystems' own tools, read into lines:
 * V8's block coverage (Node's `NODE_V8_COVERAGE`), LCOV (`deno coverage
 * --lcov`), coverage.py's JSON report and Go's cover profile.
 *
 * @module
 */

/** Which lines of one file are executable, and which of those ran. */
export interface LineCoverage {
  /** Lines holding code the tool counts. */
  executable: Set<number>;
  /** Executable lines that ran at least once. */
  run: Set<number>;
}

/** Coverage by absolute path (or a tool's own name for a file, such as Go's import path). */
export type CoverageMap = Map<string, LineCoverage>;

/** Add one file's lines into a map (runs of several tools or checks add up). */
export function addCoverage(map: CoverageMap, file: string, lines: LineCoverage): void {
  const known = map.get(file);
  if (!known) {
    map.set(file, { executable: new Set(lines.executable), run: new Set(lines.run) });
    return;
  }
  for (const line of lines.executable) known.executable.add(line);
  for (const line of lines.run) known.run.add(line);
}

interface V8Range {
  startOffset: number;
  endOffset: number;
  count: number;
}

interface V8Script {
  url: string;
  functions: Array<{ ranges: V8Range[] }>;
}

/**
 * A line that holds nothing executable: blank, a comment, or brackets alone.
 *
 * @param text The line.
 * @returns True for such a line.
 */
export function inertLine(text: string): boolean {
  const line = text.trim();
  return line === "" || /^(\/\/|\/\*|\*|\*\/)/.test(line) || /^[\s{}()[\];,]*$/.test(line) ||
    /^(import|export)\s.*\bfrom\s/.test(line) || /^(["'])use strict\1;?$/.test(line);
}

/**
 * The lines of a source V8 reported block coverage for: a line is executable
 * when it holds code, and run when the innermost range at its first
 * character ran.
 *
 * @param source The file's content, as V8 compiled it.
 * @param functions Its functions' ranges.
 * @returns Its lines.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { v8Lines } from "./_coverage_formats.ts";
 *
 * const source = "function f(a) {\n  if (a) {\n    return 1;\n  }\n  return 2;\n}\nf(0);\n";
 * const functions = [
 *   { ranges: [{ startOffset: 0, endOffset: source.length, count: 1 }] },
 *   { ranges: [{ startOffset: 0, endOffset: 58, count: 1 }, { startOffset: 23, endOffset: 44, count: 0 }] },
 * ];
 * const lines = v8Lines(source, functions);
 * assert.deepEqual([...lines.executable], [1, 2, 3, 5, 7]);
 * assert.deepEqual([...lines.run], [1, 2, 5, 7]);
 * ```
 */
export function v8Lines(source: string, functions: Array<{ ranges: V8Range[] }>): LineCoverage {
  const ranges = functions.flatMap((fn) => fn.ranges)
    .sort((a, b) => (a.endOffset - a.startOffset) - (b.endOffset - b.startOffset));
  const countAt = (offset: number) =>
    ranges.find((range) => range.startOffset <= offset && offset < range.endOffset)?.count;
  const executable = new Set<number>();
  const run = new Set<number>();
  let offset = 0;
  const lines = source.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index];
    if (!inertLine(text)) {
      const first = offset + text.search(/\S/);
      const count = countAt(first);
      if (count !== undefined) {
        executable.add(index + 1);
        if (count > 0) run.add(index + 1);
      }
    }
    offset += text.length + 1;
  }
  return { executable, run };
}

/**
 * Read the files a `NODE_V8_COVERAGE` folder holds for some sources.
 *
 * @param files The JSON files' contents.
 * @param wanted Absolute paths of the sources to read, with their content.
 * @returns Coverage by absolute path.
 */
export function readV8(files: string[], wanted: Map<string, string>): CoverageMap {
  const map: CoverageMap = new Map();
  for (const text of files) {
    let scripts: V8Script[];
    try {
      scripts = (JSON.parse(text) as { result?: V8Script[] }).result ?? [];
    } catch {
      continue;
    }
    for (const script of scripts) {
      if (!script.url.startsWith("file://")) continue;
      let file: string;
      try {
        file = decodeURIComponent(new URL(script.url).pathname);
      } catch {
        continue;
      }
      const source = wanted.get(file);
      if (source !== undefined) addCoverage(map, file, v8Lines(source, script.functions));
    }
  }
  return map;
}

/**
 * Read an LCOV report (`SF:` then `DA:line,count` records).
 *
 * @param text The report.
 * @returns Coverage by the `SF` path.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLcov } from "./_coverage_formats.ts";
 *
 * const map = readLcov("SF:/r/calc.ts\nDA:1,1\nDA:2,0\nend_of_record\n");
 * assert.deepEqual([...map.get("/r/calc.ts")!.run], [1]);
 * assert.deepEqual([...map.get("/r/calc.ts")!.executable], [1, 2]);
 * ```
 */
export function readLcov(text: string): CoverageMap {
  const map: CoverageMap = new Map();
  let file: string | undefined;
  let lines: LineCoverage = { executable: new Set(), run: new Set() };
  for (const line of text.split("\n")) {
    if (line.startsWith("SF:")) {
      file = line.slice(3).trim();
      if (file.startsWith("file://")) file = decodeURIComponent(new URL(file).pathname);
      lines = { executable: new Set(), run: new Set() };
    } else if (line.startsWith("DA:") && file) {
      const [at, count] = line.slice(3).split(",").map(Number);
      lines.executable.add(at);
      if (count > 0) lines.run.add(at);
    } else if (line.startsWith("end_of_record") && file) {
      addCoverage(map, file, lines);
      file = undefined;
    }
  }
  return map;
}

/**
 * Read coverage.py's JSON report.
 *
 * @param text The report.
 * @param root The folder its relative paths are under.
 * @returns Coverage by absolute path.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readCoveragePy } from "./_coverage_formats.ts";
 *
 * const report = { files: { "calc.py": { executed_lines: [1, 2], missing_lines: [4] } } };
 * const map = readCoveragePy(JSON.stringify(report), "/r");
 * assert.deepEqual([...map.get("/r/calc.py")!.executable], [1, 2, 4]);
 * ```
 */
export function readCoveragePy(text: string, root: string): CoverageMap {
  const map: CoverageMap = new Map();
  let report: { files?: Record<string, { executed_lines?: number[]; missing_lines?: number[] }> };
  try {
    report = JSON.parse(text);
  } catch {
    return map;
  }
  for (const [name, data] of Object.entries(report.files ?? {})) {
    const file = name.startsWith("/") ? name : `${root}/${name}`;
    const run = new Set(data.executed_lines ?? []);
    addCoverage(map, file, {
      run,
      executable: new Set([...run, ...(data.missing_lines ?? [])]),
    });
  }
  return map;
}

/**
 * Read a Go cover profile (`file:l.c,l.c statements count`).
 *
 * @param text The profile.
 * @returns Coverage by Go's name for each file (import path and file name).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readGoProfile } from "./_coverage_formats.ts";
 *
 * const map = readGoProfile("mode: set\nex.com/m/calc.go:3.24,4.13 1 1\nex.com/m/calc.go:4.13,6.3 1 0\n");
 * assert.deepEqual([...map.get("ex.com/m/calc.go")!.run], [3, 4]);
 * assert.deepEqual([...map.get("ex.com/m/calc.go")!.executable], [3, 4, 5, 6]);
 * ```
 */
export function readGoProfile(text: string): CoverageMap {
  const map: CoverageMap = new Map();
  for (const line of text.split("\n")) {
    const match = /^(.+):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$/.exec(line.trim());
    if (!match) continue;
    const [, file, from, to, count] = match;
    const lines: LineCoverage = { executable: new Set(), run: new Set() };
    // A block's boundary lines (a closing brace) are dropped by `inertLine` where the source is known.
    for (let at = Number(from); at <= Number(to); at++) {
      lines.executable.add(at);
      if (Number(count) > 0) lines.run.add(at);
    }
    addCoverage(map, file, lines);
  }
  return map;
}
