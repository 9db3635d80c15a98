/**
 * What the CI commands of build systems beyond the package managers mean:
 * each step of CMake's, Meson's and autotools' configure, build and test,
 * rake (also through `bundle exec`), Gradle and Maven is the one check
 * detection made of that build system, which runs all of its steps in a
 * temp folder. CI only confirms it (`same`); when detection made none, the
 * step says why.
 *
 * @module
 */

import type { Meaning } from "./_ci_meaning.ts";
import type { Scan } from "./_detect_scan.ts";

/** A step of a build system whose check has these keys. */
function same(keys: string[], system: string): Meaning {
  return {
    type: "same",
    keys,
    why: `finishline found no ${system} project at the root to run it as`,
  };
}

/** Gradle tasks and Maven phases that run the tests. */
const GRADLE_TESTS = new Set(["test", "check", "build"]);
const MAVEN_TESTS = new Set(["test", "verify", "package", "install"]);

/**
 * The meaning of a build system's command, or undefined when `tool` is not
 * one of theirs (or, for make, when the repository is not an autotools one).
 *
 * @param scan The detection.
 * @param tool The command's program, without its folder.
 * @param args Its arguments.
 * @returns Its meaning, or undefined.
 */
export function buildToolMeaning(scan: Scan, tool: string, args: string[]): Meaning | undefined {
  switch (tool) {
    case "cmake":
    case "ctest":
    case "cpack":
      if (tool === "cpack") return { type: "skip", why: "cpack packages a release" };
      if (args.includes("--install")) return { type: "skip", why: "cmake --install installs" };
      return same(["cmake:.:test", "cmake:.:build"], "CMake");
    case "meson":
    case "ninja":
    case "muon":
      if (args[0] === "install" || args.includes("install")) {
        return { type: "skip", why: `${tool} install installs` };
      }
      if (tool === "ninja" && !scan.keys.has("meson:.")) return undefined;
      return same(["meson:.:test"], "Meson");
    case "configure":
    case "autoreconf":
    case "autogen.sh":
    case "bootstrap":
      if (!scan.keys.has("autotools:.")) return undefined;
      return same(["autotools:.:check"], "autotools");
    case "make":
    case "gmake": {
      // A repository configured by autotools has no Makefile until configure writes one.
      if (!scan.keys.has("autotools:.") || scan.files.has("Makefile")) return undefined;
      const targets = args.filter((word) => !word.startsWith("-") && !word.includes("="));
      if (targets.some((target) => target === "install" || target === "dist")) {
        return { type: "skip", why: `make ${targets.join(" ")} packages or installs` };
      }
      return same(["autotools:.:check"], "autotools");
    }
    case "rake": {
      const tasks = args.filter((word) => !word.startsWith("-") && !word.includes("="));
      if (tasks.length === 0 || tasks.includes("test") || tasks.includes("default")) {
        return same(["ruby:.:test"], "Rakefile test task");
      }
      return undefined;
    }
    case "gradlew":
    case "gradle": {
      const tasks = args.filter((word) => !word.startsWith("-"));
      if (tasks.some((task) => GRADLE_TESTS.has(task.replace(/^:/, "")))) {
        return same(["gradle:.:test"], "Gradle (with its wrapper and an offline cache)");
      }
      return undefined;
    }
    case "mvn":
    case "mvnw": {
      const phases = args.filter((word) => !word.startsWith("-"));
      if (phases.some((phase) => phase === "deploy" || phase.includes("release"))) {
        return { type: "skip", why: "publishes packages" };
      }
      if (phases.some((phase) => MAVEN_TESTS.has(phase))) {
        return same(["maven:.:test"], "Maven (with an offline cache)");
      }
      return undefined;
    }
  }
  return undefined;
}
