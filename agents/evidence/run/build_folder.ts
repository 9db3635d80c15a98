/**
 * A check's build folder that finishline keeps: Meson's, CMake's and a
 * configured autotools tree, built by detected checks. Run anywhere else,
 * such a check builds in a temp folder of its own; in finishline's copies
 * it builds in the folder `FINISHLINE_BUILD_DIR` names, beside the copy and
 * out of the commit's reach, so that the baseline's build can start each
 * claim's (the build seed, `copy/build_seed.ts`).
 *
 * A build folder keeps what its configure step decided: Meson keeps the
 * option values of its first set-up when a changed `meson.build` changes
 * their defaults, CMake keeps its cache, and a configured autotools tree
 * runs the `configure` it was made from. So a kept folder serves only a
 * tree whose build definitions are, byte for byte, those it was configured
 * from ({@linkcode isBuildDefinition}); any other builds on a folder
 * configured from its own (`copy/claim_seed.ts`), or from nothing.
 *
 * @module
 */

import path from "node:path";

/** A build system whose build folder a check keeps in {@linkcode BUILD_FOLDER_VARIABLE}. */
export type BuildSystem = "meson" | "cmake" | "autotools";

/** The variable that names the kept build folder; empty, the check builds in a temp folder. */
export const BUILD_FOLDER_VARIABLE = "FINISHLINE_BUILD_DIR";

const MESON_NAMES = new Set(["meson.build", "meson_options.txt", "meson.options"]);
const CMAKE_NAMES = new Set(["CMakeLists.txt", "CMakePresets.json", "CMakeUserPresets.json"]);
const AUTOTOOLS_NAMES = new Set([
  "configure",
  "configure.ac",
  "configure.in",
  "aclocal.m4",
  "acinclude.m4",
  "Makefile",
  "GNUmakefile",
  "makefile",
]);

/**
 * Whether a file is one the build system's configure step reads, so that a
 * build folder configured from another version of it may differ from a
 * fresh one: Meson's `meson.build` and options files and its subprojects;
 * CMake's lists, modules and presets; autotools' `configure` and what makes
 * or feeds it (`configure.ac`, `*.am`, `*.m4`, every `*.in` template, the
 * `m4/` and `build-aux/` folders, makefiles and their fragments).
 *
 * @param system The build system.
 * @param file A path in the repository.
 * @returns True when the file is one of its build definitions.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isBuildDefinition } from "./build_folder.ts";
 *
 * assert.equal(isBuildDefinition("meson", "tests/meson.build"), true);
 * assert.equal(isBuildDefinition("meson", "src/ini.c"), false);
 * assert.equal(isBuildDefinition("cmake", "cmake/Options.cmake"), true);
 * assert.equal(isBuildDefinition("autotools", "src/config.h.in"), true);
 * assert.equal(isBuildDefinition("autotools", "src/hello.c"), false);
 * ```
 */
export function isBuildDefinition(system: BuildSystem, file: string): boolean {
  const name = file.slice(file.lastIndexOf("/") + 1);
  const top = file.includes("/") ? file.slice(0, file.indexOf("/")) : "";
  switch (system) {
    case "meson":
      return MESON_NAMES.has(name) || top === "subprojects" || name.endsWith(".wrap");
    case "cmake":
      return CMAKE_NAMES.has(name) || /\.cmake(?:\.in)?$/i.test(name);
    case "autotools":
      return AUTOTOOLS_NAMES.has(name) || /\.(?:am|ac|in|m4|mk)$/.test(name) ||
        top === "m4" || top === "build-aux";
  }
}

/** The files a configure step writes last, by build system: all there, it completed. */
const CONFIGURED: Record<BuildSystem, string[][]> = {
  meson: [["meson-private/coredata.dat", "build.ninja"]],
  // Written at generation, after the configure step: a failed configure leaves its cache only.
  cmake: [["CMakeCache.txt", "Makefile"], ["CMakeCache.txt", "build.ninja"]],
  autotools: [["config.status", "Makefile"]],
};

/**
 * Whether a build folder holds a completed configure step: Meson's core
 * data and `build.ninja`, CMake's cache and its generated build files, a
 * configured autotools tree's `config.status` and `Makefile`. A folder whose
 * configure failed half-way is not worth keeping (Meson refuses to set up in
 * it again).
 *
 * @param system The build system.
 * @param dir The build folder.
 * @returns True when its configure step completed.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isConfigured } from "./build_folder.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   assert.equal(await isConfigured("autotools", dir), false);
 *   await Deno.writeTextFile(`${dir}/config.status`, "");
 *   await Deno.writeTextFile(`${dir}/Makefile`, "");
 *   assert.equal(await isConfigured("autotools", dir), true);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function isConfigured(system: BuildSystem, dir: string): Promise<boolean> {
  for (const files of CONFIGURED[system]) {
    const found = await Promise.all(
      files.map((file) =>
        Deno.lstat(path.join(dir, file)).then((info) => info.isFile, () => false)
      ),
    );
    if (found.every(Boolean)) return true;
  }
  return false;
}
