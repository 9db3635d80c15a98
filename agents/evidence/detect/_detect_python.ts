/**
 * Python: pytest when it is configured, and tox the way maintainers' CI runs
 * it: one environment, the one of the interpreter at hand (`tox -e py311`),
 * never the whole envlist, where every interpreter the machine lacks is a
 * failure (InterpreterNotFound). When tox cannot run here (not installed, a
 * tox 4 configuration under tox 3, a plugin it would download, no
 * environment for this interpreter) the pytest that tox would run is run
 * directly.
 *
 * @module
 */

import {
  addCheck,
  addConfigFile,
  probeOnce,
  quote,
  read,
  type Scan,
  sectionOf,
  skip,
} from "./_detect_scan.ts";

/** An INI file: sections by name, keys by name, values with continuation lines joined by newlines. */
type Ini = Map<string, Map<string, string>>;

/** Parse INI text the way tox and setuptools read it (`key = value`, indented continuation lines). */
export function parseIni(text: string): Ini {
  const sections: Ini = new Map();
  let section: Map<string, string> | undefined;
  let key: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(line) || line.trim() === "") continue;
    const header = /^\[([^\]]+)\]\s*(?:[#;].*)?$/.exec(line);
    if (header !== null) {
      section = sections.get(header[1].trim()) ?? new Map();
      sections.set(header[1].trim(), section);
      key = undefined;
    } else if (/^\s/.test(line) && section !== undefined && key !== undefined) {
      section.set(key, `${section.get(key)}\n${line.trim()}`);
    } else if (section !== undefined) {
      const entry = /^([^=:]+?)\s*[=:]\s*(.*)$/.exec(line);
      if (entry === null) continue;
      key = entry[1].trim();
      section.set(key, entry[2].replace(/\s+[#;].*$/, "").trim());
    }
  }
  return sections;
}

/** Expand tox's generative names: `py{38,39}-django{32,40}`, `py3{10-12}`. */
export function expandEnvNames(item: string): string[] {
  const brace = /\{([^{}]*)\}/.exec(item);
  if (brace === null) return [item];
  const options = brace[1].split(",").flatMap((option) => {
    const range = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(option);
    if (range === null) return [option.trim()];
    const [from, to] = [Number(range[1]), Number(range[2])];
    return Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => String(from + index));
  });
  const head = item.slice(0, brace.index);
  const tail = item.slice(brace.index + brace[0].length);
  return options.flatMap((option) => expandEnvNames(`${head}${option}${tail}`));
}

/** The names of an envlist value (comma- or newline-separated, generative names expanded). */
export function envListOf(value: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of value) {
    if (char === "{") depth++;
    if (char === "}") depth--;
    if ((char === "," || char === "\n") && depth === 0) {
      items.push(current);
      current = "";
    } else current += char;
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item !== "" && !item.includes("{env:"))
    .flatMap(expandEnvNames);
}

/** What finishline reads from a tox configuration. */
interface ToxConfig {
  /** The file that holds it. */
  file: string;
  /** Where in the file, e.g. `tox.ini` or `pyproject.toml [tool.tox]`. */
  source: string;
  /** The environments, from the envlist, else from `[testenv:NAME]` sections. */
  envs: string[];
  /** Whether the envs come from an envlist. */
  hasEnvList: boolean;
  /** The oldest tox the configuration accepts, and why. */
  needs?: { version: number[]; why: string };
  /** Plugins it requires (`requires = tox-gh-actions`). */
  plugins: string[];
  /** Whether its test environment runs pytest. */
  runsPytest: boolean;
}

function versionOf(text: string): number[] {
  return text.split(".").map((part) => Number.parseInt(part, 10)).filter((n) => !Number.isNaN(n));
}

function atLeast(have: number[], need: number[]): boolean {
  for (let index = 0; index < need.length; index++) {
    const a = have[index] ?? 0;
    if (a !== need[index]) return a > need[index];
  }
  return true;
}

/** The requirements' minimum tox version and plugins. */
function readRequires(
  requires: string[],
  minVersion: string | undefined,
  where: string,
): Pick<ToxConfig, "needs" | "plugins"> {
  let needs: ToxConfig["needs"];
  const plugins: string[] = [];
  for (const requirement of requires) {
    const tox = /^tox\s*(?:>=|~=|==|>)\s*([\d.]+)/.exec(requirement);
    if (tox !== null) {
      needs = { version: versionOf(tox[1]), why: `${where} requires ${quote(requirement)}` };
    } else if (/^tox[-_]/i.test(requirement)) {
      plugins.push(requirement.split(/[\s<>=!~;[]/)[0]);
    }
  }
  if (minVersion !== undefined && minVersion !== "") {
    const version = versionOf(minVersion);
    if (needs === undefined || atLeast(version, needs.version)) {
      needs = { version, why: `${where} sets min_version = ${minVersion}` };
    }
  }
  return { needs, plugins };
}

/** A tox configuration in INI form (tox.ini, setup.cfg, pyproject's legacy_tox_ini). */
function fromIni(ini: Ini, names: { tox: string; file: string; source: string }): ToxConfig {
  const tox = ini.get(names.tox) ?? new Map<string, string>();
  const listed = tox.get("env_list") ?? tox.get("envlist");
  const sectionEnvs = [...ini.keys()].filter((name) => name.startsWith("testenv:")).map((name) =>
    name.slice("testenv:".length).trim()
  );
  const requires = (tox.get("requires") ?? "").split(/\n|,/).map((line) => line.trim()).filter(
    (line) => line !== "",
  );
  const { needs, plugins } = readRequires(
    requires,
    tox.get("min_version") ?? tox.get("minversion"),
    names.source,
  );
  const testenv = [...ini.entries()].filter(([name]) =>
    name === "testenv" || name.startsWith("testenv:py")
  ).map(([, keys]) => keys.get("commands") ?? "").join("\n");
  const config: ToxConfig = {
    file: names.file,
    source: names.source,
    envs: listed !== undefined ? envListOf(listed) : sectionEnvs.flatMap(expandEnvNames),
    hasEnvList: listed !== undefined,
    plugins,
    runsPytest: /\bpytest\b/.test(testenv),
  };
  // tox 3 reads only `envlist`: the tox 4 spelling alone means a tox 4 configuration.
  const tox4Spelling = tox.has("env_list") && !tox.has("envlist");
  if (needs !== undefined && needs.version[0] >= 4) config.needs = needs;
  else if (tox4Spelling) config.needs = { version: [4], why: `${names.source} spells env_list` };
  else if (needs !== undefined) config.needs = needs;
  return config;
}

/** The lines of a TOML text from a `[tool.tox` (or any) header to the next unrelated header. */
function tomlRegion(text: string, prefix: RegExp): string | undefined {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => prefix.test(line.trim()));
  if (start === -1) return undefined;
  const region: string[] = [];
  // Inside a multi-line string (legacy_tox_ini) a line opening with "[" is INI, not TOML.
  let inString = false;
  for (const line of lines.slice(start)) {
    if (!inString && /^\s*\[/.test(line) && !prefix.test(line.trim())) break;
    region.push(line);
    if ((line.match(/'{3}|"{3}/g) ?? []).length % 2 === 1) inString = !inString;
  }
  return region.join("\n");
}

function tomlStrings(region: string, key: string): string[] | undefined {
  const match = new RegExp(`^\\s*${key}\\s*=\\s*\\[([\\s\\S]*?)\\]`, "m").exec(region);
  if (match === null) return undefined;
  return [...match[1].matchAll(/"([^"]*)"|'([^']*)'/g)].map((found) => found[1] ?? found[2]);
}

/** A native TOML tox configuration (tox.toml, or pyproject's [tool.tox] without legacy_tox_ini). */
function fromToml(region: string, names: { file: string; source: string }): ToxConfig {
  const listed = tomlStrings(region, "env_list");
  const min = /^\s*min_version\s*=\s*["']([^"']+)["']/m.exec(region)?.[1];
  const { needs, plugins } = readRequires(tomlStrings(region, "requires") ?? [], min, names.source);
  // TOML configuration arrived in tox 4.21.
  const toml = { version: [4, 21], why: `${names.source} is a TOML configuration` };
  return {
    ...names,
    envs: listed ?? [],
    hasEnvList: listed !== undefined,
    needs: needs !== undefined && atLeast(needs.version, toml.version) ? needs : toml,
    plugins,
    runsPytest: /\bpytest\b/.test(region),
  };
}

/** The tox configuration, in tox's own order of files, or undefined when there is none. */
function toxConfigOf(
  toxIni: string | undefined,
  setupCfg: string | undefined,
  pyproject: string | undefined,
  toxToml: string | undefined,
): ToxConfig | undefined {
  if (toxIni !== undefined && sectionOf(toxIni, /^\[(?:tox|testenv(?::[^\]]*)?)\]$/)) {
    return fromIni(parseIni(toxIni), { tox: "tox", file: "tox.ini", source: "tox.ini" });
  }
  if (setupCfg !== undefined && sectionOf(setupCfg, /^\[tox:tox\]$/)) {
    return fromIni(parseIni(setupCfg), {
      tox: "tox:tox",
      file: "setup.cfg",
      source: "setup.cfg [tox:tox]",
    });
  }
  const region = pyproject === undefined ? undefined : tomlRegion(pyproject, /^\[tool\.tox[\].]/);
  if (region !== undefined) {
    const legacy = /legacy_tox_ini\s*=\s*(?:"""([\s\S]*?)"""|'''([\s\S]*?)''')/.exec(region);
    const names = { file: "pyproject.toml", source: "pyproject.toml [tool.tox]" };
    return legacy !== null
      ? fromIni(parseIni(legacy[1] ?? legacy[2]), { tox: "tox", ...names })
      : fromToml(region, names);
  }
  if (toxToml !== undefined) return fromToml(toxToml, { file: "tox.toml", source: "tox.toml" });
  return undefined;
}

/** The environments to run for Python `major.minor`, or why there are none. */
function chooseEnvs(config: ToxConfig, python: string): { envs: string[] } | { error: string } {
  const [major, minor] = python.split(".");
  const exact = [`py${major}${minor}`, `py${major}.${minor}`];
  const factors = (env: string) => env.split("-");
  const matching = config.envs.filter((env) => factors(env).some((f) => exact.includes(f)));
  if (matching.length > 0) return { envs: matching };
  const generic = config.envs.filter((env) =>
    factors(env).some((f) => f === `py${major}` || f === "py")
  );
  if (generic.length > 0) return { envs: generic };
  if (config.envs.length === 0) return { envs: ["py"] };
  return {
    error: `its environments (${config.envs.join(", ")}) have none for Python ${python} (${
      exact[0]
    })`,
  };
}

/** Whether and how tox runs here: the command, or why not. */
async function planTox(
  scan: Scan,
  config: ToxConfig,
): Promise<{ command: string; why: string } | { error: string }> {
  const tox = await probeOnce(scan, "tox", ["--version"]);
  if (tox.code !== 0) {
    return { error: tox.code === 127 ? "tox is not installed" : "tox --version failed" };
  }
  const installed = /^\s*(\d+(?:\.\d+)*)/.exec(tox.stdout)?.[1];
  if (installed === undefined) {
    return { error: `tox --version printed ${quote(tox.stdout.trim().split("\n")[0])}` };
  }
  if (config.needs !== undefined && !atLeast(versionOf(installed), config.needs.version)) {
    return {
      error:
        `${config.needs.why}, and tox ${installed} is installed (it would try to install a newer tox)`,
    };
  }
  // tox installs missing plugins named in `requires` before anything runs.
  const missing = config.plugins.filter((plugin) =>
    !tox.stdout.toLowerCase().replaceAll("_", "-").includes(
      plugin.toLowerCase().replaceAll("_", "-"),
    )
  );
  if (missing.length > 0) {
    return {
      error: `${config.source} requires ${
        missing.join(", ")
      }, which tox ${installed} does not have (it would install ${
        missing.length === 1 ? "it" : "them"
      })`,
    };
  }
  const python = await probeOnce(scan, "python3", ["--version"]);
  const version = /Python\s+(\d+)\.(\d+)/.exec(`${python.stdout}${python.stderr}`);
  if (python.code !== 0 || version === null) return { error: "python3 --version failed" };
  const chosen = chooseEnvs(config, `${version[1]}.${version[2]}`);
  if ("error" in chosen) return chosen;
  const envs = chosen.envs.join(",");
  const about = config.envs.length === 0
    ? `${config.source} lists no environments; py runs [testenv] on the interpreter at hand`
    : `${config.source} lists ${envs}${
      config.envs.length > chosen.envs.length ? ` among ${config.envs.length} environments` : ""
    }; python3 is ${version[1]}.${version[2]}`;
  return {
    command: `tox -e ${envs}`,
    why: `${about}; tox ${installed}; the other environments need interpreters CI provides`,
  };
}

/** pytest (pytest.ini, pyproject, setup.cfg, tox.ini [pytest], conftest.py), tox, nox. */
export async function detectPython(scan: Scan): Promise<void> {
  const pyproject = await read(scan, "pyproject.toml");
  const setupCfg = await read(scan, "setup.cfg");
  const toxIni = await read(scan, "tox.ini");
  const toxToml = await read(scan, "tox.toml");

  // Each pytest configuration, as [source, file].
  const pytest: Array<readonly [string, string]> = [];
  if (scan.files.has("pytest.ini")) pytest.push(["pytest.ini", "pytest.ini"]);
  const pytestTable = sectionOf(pyproject, /^\[tool\.pytest(?:\.ini_options)?\]$/);
  if (pytestTable !== undefined) pytest.push([`pyproject.toml ${pytestTable}`, "pyproject.toml"]);
  if (sectionOf(toxIni, /^\[pytest\]$/) !== undefined) pytest.push(["tox.ini [pytest]", "tox.ini"]);
  if (sectionOf(setupCfg, /^\[tool:pytest\]$/) !== undefined) {
    pytest.push(["setup.cfg [tool:pytest]", "setup.cfg"]);
  }
  if (scan.files.has("conftest.py")) pytest.push(["conftest.py", "conftest.py"]);

  const tox = toxConfigOf(toxIni, setupCfg, pyproject, toxToml);
  if (tox === undefined && toxIni !== undefined) {
    skip(scan, "tox.ini", "no [tox] or [testenv] section");
  }
  let pytestSource = pytest.length > 0 ? pytest[0][0] : undefined;
  let pytestWhy = pytestSource === "conftest.py"
    ? "conftest.py is at the root"
    : `${pytestSource} configures pytest`;
  const runners: string[] = [];
  if (tox !== undefined) {
    const plan = await planTox(scan, tox);
    if ("command" in plan) {
      if (
        addCheck(
          scan,
          {
            name: plan.command,
            command: plan.command,
            source: tox.source,
            why: plan.why,
            executable: "tox",
            ...(tox.runsPytest ? { runner: "pytest" as const } : {}),
            kind: "test",
          },
          ["py:.:tox", "py:.:pytest"],
        )
      ) await addConfigFile(scan, tox.file);
      runners.push("tox");
    } else if (pytestSource !== undefined || tox.runsPytest) {
      skip(scan, tox.source, `${plan.error}; python3 -m pytest runs instead`);
      if (pytestSource === undefined) {
        pytestSource = `${tox.source} [testenv] commands`;
        pytestWhy = `${tox.source} runs pytest in [testenv]`;
      }
      pytestWhy += `; tox is not used: ${plan.error}`;
    } else {
      skip(scan, tox.source, `${plan.error}; its [testenv] does not run pytest to fall back on`);
    }
  }
  if (scan.files.has("noxfile.py")) {
    if (
      addCheck(
        scan,
        {
          name: "nox",
          command: "nox",
          source: "noxfile.py",
          why: `noxfile.py configures nox${
            pytestSource === undefined ? "" : "; nox runs pytest in its environments"
          }`,
          executable: "nox",
          kind: "test",
        },
        ["py:.:nox", ...(runners.length === 0 ? ["py:.:pytest"] : [])],
      )
    ) await addConfigFile(scan, "noxfile.py");
    runners.push("nox");
  }
  if (pytestSource !== undefined) {
    if (runners.length > 0) {
      skip(
        scan,
        pytest[0]?.[0] ?? pytestSource,
        `${runners.join(" and ")} ${
          runners.length > 1 ? "run" : "runs"
        } pytest, so pytest is not run directly`,
      );
    } else {
      addCheck(
        scan,
        {
          name: "pytest",
          command: "python3 -m pytest",
          source: pytestSource,
          why: pytestWhy,
          executable: "python3",
          runner: "pytest",
          kind: "test",
        },
        ["py:.:pytest", "py:.:tox"],
      );
    }
  }
  const pytestRuns = scan.detection.checks.some((found) =>
    found.command === "python3 -m pytest" && found.source === pytestSource
  );
  if (pytestRuns || runners.length > 0) {
    for (const [, file] of pytest) await addConfigFile(scan, file);
    if (tox !== undefined) await addConfigFile(scan, tox.file);
  }
}
