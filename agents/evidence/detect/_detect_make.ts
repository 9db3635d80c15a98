/**
 * Makefiles: the rules they define, and the `test` target as a check. Other
 * targets (`make all`, `make check`, bare `make`) become checks when CI or
 * the contributing guide runs them.
 *
 * @module
 */

import {
  addCheck,
  addConfigFile,
  commandTrouble,
  oncePerScan,
  read,
  readPath,
  runnerOf,
  type Scan,
  skip,
  within,
  withRunner,
} from "./_detect_scan.ts";

/** One rule of a Makefile. */
export interface MakeRule {
  /** Targets it depends on. */
  prerequisites: string[];
  /** Its recipe lines, joined with newlines. */
  recipe: string;
}

/** The rules of a Makefile by target, and its default goal. */
export interface Makefile {
  /** The file's name (GNUmakefile, makefile or Makefile), repository-relative. */
  path: string;
  /** Rules by target; a target of several rules keeps the first recipe and every prerequisite. */
  rules: Map<string, MakeRule>;
  /** The target bare `make` builds: the first one that does not start with a dot. */
  defaultGoal?: string;
  /** Whether it includes other makefiles, whose targets are not read. */
  includes: boolean;
}

/** Read the rules of a Makefile (explicit rules only: no pattern rules, no includes). */
export function parseMakefile(path: string, text: string): Makefile {
  const lines = text.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  const rules = new Map<string, MakeRule>();
  let defaultGoal: string | undefined;
  let includes = false;
  let current: MakeRule | undefined;
  let inDefine = false;
  for (const line of lines) {
    if (inDefine) {
      if (/^\s*endef\b/.test(line)) inDefine = false;
      continue;
    }
    if (line.startsWith("\t")) {
      if (current !== undefined) {
        current.recipe += (current.recipe === "" ? "" : "\n") + line.slice(1);
      }
      continue;
    }
    const content = line.replace(/(?<!\\)#.*$/, "");
    if (content.trim() === "") continue;
    if (/^\s*define\b/.test(content)) {
      inDefine = true;
      current = undefined;
      continue;
    }
    if (/^\s*-?s?include\s/.test(content)) includes = true;
    // A rule: targets, one or two colons (not `:=` or `::=`), prerequisites, maybe `; recipe`.
    const rule = /^([^\s:#=][^:#=]*?)\s*::?(?!=)(.*)$/.exec(content);
    // `$(warning "...: ...")` at the top level is a function call whose text has a colon.
    if (rule === null || /^[^;]*=/.test(rule[2]) || /^\s*\$\(|"/.test(rule[1])) {
      current = undefined;
      continue;
    }
    const [before, ...inline] = rule[2].split(";");
    const targets = rule[1].trim().split(/\s+/).filter((target) => !target.includes("%"));
    const prerequisites = before.replace("|", " ").trim().split(/\s+/).filter((word) =>
      word !== ""
    );
    const recipe = inline.join(";").trim();
    current = { prerequisites, recipe };
    for (const target of targets) {
      const existing = rules.get(target);
      if (existing === undefined) {
        rules.set(target, current);
      } else {
        existing.prerequisites.push(...prerequisites);
        if (existing.recipe === "") existing.recipe = recipe;
        current = existing;
      }
      if (defaultGoal === undefined && !target.startsWith(".")) defaultGoal = target;
    }
  }
  return { path, rules, ...(defaultGoal !== undefined ? { defaultGoal } : {}), includes };
}

/** The recipe of a target and of every target it depends on, for telling what it does. */
export function expandTarget(makefile: Makefile, target: string, seen = new Set<string>()): string {
  const rule = makefile.rules.get(target);
  if (rule === undefined || seen.has(target)) return "";
  seen.add(target);
  return [
    rule.recipe,
    ...rule.prerequisites.map((other) => expandTarget(makefile, other, seen)),
  ].filter((part) => part !== "").join("\n");
}

/** Targets that change the machine or never end, by name. */
const NOT_A_CHECK: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(?:install|uninstall)$/, "installs into the system"],
  [/^(?:deploy|release|publish|upload|push)$/, "publishes or deploys"],
  [/^docker[\w-]*$/, "needs docker"],
  [/^(?:clean|distclean|mrproper)$/, "deletes build output"],
  [/^(?:run|serve|watch|dev|start)$/, "starts a program that does not exit"],
];

/** Why a target must not run as a check, or undefined when it may. */
export function targetTrouble(makefile: Makefile, target: string): string | undefined {
  for (const [pattern, why] of NOT_A_CHECK) if (pattern.test(target)) return why;
  return commandTrouble(expandTarget(makefile, target));
}

/** The Makefile of a folder (GNU make's own order of names), read once per detection. */
export const loadMakefile: (scan: Scan, dir: string) => Promise<Makefile | undefined> = oncePerScan(
  async (scan, dir) => {
    for (const name of ["GNUmakefile", "makefile", "Makefile"]) {
      const path = within(dir, name);
      if (dir === "." && !scan.files.has(name)) continue;
      const text = dir === "." ? await read(scan, path) : await readPath(scan, path);
      if (text !== undefined) return parseMakefile(path, text);
    }
    return undefined;
  },
);

/** A root Makefile's `test` target. */
export async function detectMakefile(scan: Scan): Promise<void> {
  const makefile = await loadMakefile(scan, ".");
  if (makefile === undefined) return;
  const name = makefile.path;
  const rule = makefile.rules.get("test");
  if (rule === undefined) {
    skip(scan, name, 'no "test" target');
    return;
  }
  const added = addCheck(
    scan,
    withRunner(
      {
        name: "make test",
        command: "make test",
        source: `${name} target "test"`,
        why: `${name} has a "test" target`,
        executable: "make",
        kind: "test",
      },
      runnerOf(rule.recipe),
    ),
    ["make:.:test"],
  );
  if (added) await addConfigFile(scan, name);
}
