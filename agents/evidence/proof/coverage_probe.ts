/**
 * Changed-line coverage from the ecosystems' own tools, with the
 * maintainers' check commands run unchanged: the probe adds variables that
 * make each runtime record what ran, in a folder only finishline made, and
 * reads the records after the run.
 *
 * - Node: `NODE_V8_COVERAGE` (V8's block coverage, every node process);
 * - Deno: `DENO_COVERAGE_DIR`, read with `deno coverage --lcov`;
 * - Python: coverage.py (Debian's `python3-coverage`), started in every
 *   Python process through a `sitecustomize` on `PYTHONPATH` and
 *   `COVERAGE_PROCESS_START`;
 * - Go: `GOFLAGS=-coverprofile=… -coverpkg=./...` (`go test` reads it; other
 *   go commands ignore it).
 *
 * A runtime the checks do not start records nothing, and its files are
 * "not measured". The figures come from processes that run the claim's
 * code: code that wants to can write a record of its own, so they are
 * evidence of what the tests exercise, not a boundary (the mutants, which
 * need the tests to fail, are the harder figure to forge).
 *
 * @module
 */

import * as path from "node:path";
import { runTool } from "../../support/process.ts";
import {
  addCoverage,
  type CoverageMap,
  readCoveragePy,
  readGoProfile,
  readLcov,
  readV8,
} from "./_coverage_formats.ts";

/** The probe of one check run. */
export interface CoverageProbe {
  /** Variables to add to the check's environment. */
  env: Record<string, string>;
  /**
   * Read what the run recorded for some sources.
   *
   * @param sources Absolute paths under the root, with their content.
   * @returns Coverage by absolute path, the runtime that recorded each file, and the runtimes that recorded anything.
   */
  collect(sources: Map<string, string>): Promise<{
    coverage: CoverageMap;
    runtimeOf: Map<string, string>;
    recorded: string[];
  }>;
  /** Remove its folder. */
  dispose(): Promise<void>;
}

const SITECUSTOMIZE =
  `# finishline's coverage probe: coverage.py in every Python process of the check.
try:
    import coverage
    coverage.process_startup()
except Exception:
    pass
`;

let pythonCoverage: Promise<{ python: string; packageDir: string } | undefined> | undefined;

/** A Python with coverage.py, and where its package is (found once). */
function findPythonCoverage(): Promise<{ python: string; packageDir: string } | undefined> {
  pythonCoverage ??= (async () => {
    for (const python of ["python3", "/usr/bin/python3"]) {
      const result = await runTool(python, [
        "-c",
        "import coverage, os; print(os.path.dirname(coverage.__file__))",
      ], { cwd: "/", timeoutMs: 30_000 }).catch(() => undefined);
      if (result?.code === 0 && result.stdout.trim()) {
        return { python, packageDir: result.stdout.trim() };
      }
    }
    return undefined;
  })();
  return pythonCoverage;
}

async function filesIn(dir: string, suffix = ""): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(suffix)) out.push(path.join(dir, entry.name));
    }
  } catch {
    // nothing recorded
  }
  return out;
}

/** The Go modules under a root: module path and folder. */
async function goModules(root: string): Promise<Array<{ module: string; dir: string }>> {
  const found: Array<{ module: string; dir: string }> = [];
  const walk = async (dir: string, depth: number) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isFile && entry.name === "go.mod") {
        const text = await Deno.readTextFile(path.join(dir, entry.name)).catch(() => "");
        const module = /^module\s+(\S+)/m.exec(text)?.[1];
        if (module) found.push({ module: module.replace(/^"|"$/g, ""), dir });
      } else if (
        entry.isDirectory && depth < 6 &&
        !["node_modules", "vendor", ".git", "testdata"].includes(entry.name) &&
        !entry.name.startsWith(".")
      ) {
        await walk(path.join(dir, entry.name), depth + 1);
      }
    }
  };
  await walk(root, 0);
  // The longest module path first: a nested module wins over its parent.
  return found.sort((a, b) => b.module.length - a.module.length);
}

/**
 * Open a probe for one run of checks in `root`.
 *
 * @param root The clean copy the checks run in.
 * @param baseEnv The environment the checks get otherwise (its `PYTHONPATH` and `GOFLAGS` are kept).
 * @returns The probe.
 */
export async function openCoverageProbe(
  root: string,
  baseEnv: Record<string, string | undefined> = Deno.env.toObject(),
): Promise<CoverageProbe> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-coverage-" });
  const v8 = path.join(dir, "v8");
  const deno = path.join(dir, "deno");
  const py = path.join(dir, "py");
  const go = path.join(dir, "go");
  for (const folder of [v8, deno, py, go]) await Deno.mkdir(folder);
  const env: Record<string, string> = {
    NODE_V8_COVERAGE: v8,
    DENO_COVERAGE_DIR: deno,
    GOFLAGS: [baseEnv.GOFLAGS, `-coverprofile=${path.join(go, "cover.out")}`, "-coverpkg=./..."]
      .filter(Boolean).join(" "),
  };
  const python = await findPythonCoverage();
  if (python) {
    const shim = path.join(py, "shim");
    await Deno.mkdir(shim);
    await Deno.writeTextFile(path.join(shim, "sitecustomize.py"), SITECUSTOMIZE);
    // A virtual environment's Python finds coverage.py here too.
    await Deno.symlink(python.packageDir, path.join(shim, "coverage"));
    await Deno.writeTextFile(
      path.join(py, "coveragerc"),
      [
        "[run]",
        `data_file = ${path.join(py, "data", ".coverage")}`,
        "parallel = True",
        `source = ${root}`,
        "omit = */node_modules/*, */.venv/*, */venv/*, */site-packages/*",
        "",
      ].join("\n"),
    );
    await Deno.mkdir(path.join(py, "data"));
    env.COVERAGE_PROCESS_START = path.join(py, "coveragerc");
    env.PYTHONPATH = [shim, baseEnv.PYTHONPATH].filter(Boolean).join(path.delimiter);
  }
  return {
    env,
    async collect(sources) {
      const coverage: CoverageMap = new Map();
      const recorded: string[] = [];
      const runtimeOf = new Map<string, string>();
      const merge = (map: CoverageMap, runtime: string) => {
        if (map.size > 0 && !recorded.includes(runtime)) recorded.push(runtime);
        for (const [file, lines] of map) {
          if (!sources.has(file)) continue;
          addCoverage(coverage, file, lines);
          if (!runtimeOf.has(file)) runtimeOf.set(file, runtime);
        }
      };
      // Node.
      const v8Files = await filesIn(v8, ".json");
      const texts = await Promise.all(
        v8Files.map((file) => Deno.readTextFile(file).catch(() => "")),
      );
      merge(readV8(texts, sources), "node");
      // Deno.
      if ((await filesIn(deno)).length > 0) {
        const lcov = path.join(dir, "deno.lcov");
        await runTool("deno", ["coverage", deno, "--lcov", `--output=${lcov}`], {
          cwd: root,
          timeoutMs: 120_000,
        }).catch(() => undefined);
        merge(readLcov(await Deno.readTextFile(lcov).catch(() => "")), "deno");
      }
      // Python.
      if (python && (await filesIn(path.join(py, "data"))).length > 0) {
        const rc = `--rcfile=${path.join(py, "coveragerc")}`;
        const json = path.join(dir, "python.json");
        await runTool(python.python, ["-m", "coverage", "combine", rc], {
          cwd: root,
          timeoutMs: 120_000,
        }).catch(() => undefined);
        await runTool(python.python, ["-m", "coverage", "json", rc, "-o", json], {
          cwd: root,
          timeoutMs: 120_000,
        }).catch(() => undefined);
        merge(readCoveragePy(await Deno.readTextFile(json).catch(() => ""), root), "python");
      }
      // Go: import paths to files.
      const profile = await Deno.readTextFile(path.join(go, "cover.out")).catch(() => "");
      if (profile) {
        const modules = await goModules(root);
        const byFile: CoverageMap = new Map();
        for (const [name, lines] of readGoProfile(profile)) {
          const owner = modules.find(({ module }) => name.startsWith(`${module}/`));
          if (owner) {
            addCoverage(byFile, path.join(owner.dir, name.slice(owner.module.length + 1)), lines);
          }
        }
        merge(byFile, "go");
      }
      return { coverage, runtimeOf, recorded };
    },
    dispose: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}
