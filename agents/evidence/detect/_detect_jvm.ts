/**
 * Gradle and Maven, run only offline: `./gradlew test --offline` where the
 * wrapper and Gradle's cache exist, `mvn -o test` (or `./mvnw -o test`)
 * where Maven's local repository exists. Without a cache they would
 * download the build's dependencies, which a check must not need: they are
 * listed as not run, with why.
 *
 * @module
 */

import { join } from "node:path";
import { addCheck, addConfigFile, onPath, type Scan, skip } from "./_detect_scan.ts";

async function hasEntries(path: string): Promise<boolean> {
  try {
    for await (const _ of Deno.readDir(path)) return true;
  } catch {
    // Absent or unreadable: no cache.
  }
  return false;
}

/** The user's home, where Gradle and Maven keep their caches. */
function home(): string {
  return Deno.env.get("HOME") ?? "";
}

/** build.gradle(.kts) with its wrapper, and Gradle's module cache. */
export async function detectGradle(scan: Scan): Promise<void> {
  const build = ["build.gradle", "build.gradle.kts"].find((name) => scan.files.has(name));
  if (build === undefined) return;
  if (!scan.files.has("gradlew")) {
    skip(scan, build, "not run: no Gradle wrapper (gradlew)");
    return;
  }
  const gradleHome = Deno.env.get("GRADLE_USER_HOME") ?? join(home(), ".gradle");
  const cached = await hasEntries(join(gradleHome, "caches", "modules-2")) &&
    await hasEntries(join(gradleHome, "wrapper", "dists"));
  if (!cached) {
    skip(scan, build, `not run: no offline cache (${gradleHome}/caches and wrapper/dists)`);
    return;
  }
  const command = "./gradlew test --offline";
  if (
    addCheck(
      scan,
      {
        name: command,
        command,
        source: `${build}, gradlew`,
        why:
          `${build} and its wrapper are at the root, and Gradle's cache holds what it needs offline`,
        executable: "sh",
        runner: "gradle",
        kind: "test",
      },
      ["gradle:.:test"],
    )
  ) await addConfigFile(scan, build);
}

/** pom.xml, with mvnw or mvn, and Maven's local repository. */
export async function detectMaven(scan: Scan): Promise<void> {
  if (!scan.files.has("pom.xml")) return;
  const wrapper = scan.files.has("mvnw");
  if (!wrapper && !(await onPath(scan, "mvn"))) {
    skip(scan, "pom.xml", "not run: neither mvnw nor mvn is here");
    return;
  }
  const repository = join(home(), ".m2", "repository");
  if (!(await hasEntries(repository))) {
    skip(scan, "pom.xml", `not run: no offline cache (${repository})`);
    return;
  }
  const command = wrapper ? "./mvnw -o test" : "mvn -o test";
  if (
    addCheck(
      scan,
      {
        name: command,
        command,
        source: "pom.xml",
        why: `pom.xml is at the root and Maven's local repository is here; -o runs offline`,
        executable: wrapper ? "sh" : "mvn",
        runner: "maven",
        kind: "test",
      },
      ["maven:.:test"],
    )
  ) await addConfigFile(scan, "pom.xml");
}
