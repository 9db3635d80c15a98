/**
 * Gradle and Maven, run only offline: `./gradlew test --offline` where the
 * wrapper and Gradle's cache exist, `mvn -o test` (or `./mvnw -o test`)
 * where Maven's local repository exists. Without a cache they would
 * download the build's dependencies, which a check must not need: they are
 * listed as not run, with why. Maven's local repository is found where
 * Maven finds it: `-Dmaven.repo.local` in the project's `.mvn/maven.config`
 * or in `MAVEN_OPTS`, `<localRepository>` in the user's settings.xml, then
 * in the installation's, else `~/.m2/repository` (Debian's packaged
 * repository, /usr/share/maven-repo, is used through the first four).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { addCheck, addConfigFile, onPath, readPath, type Scan, skip } from "./_detect_scan.ts";

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

/** `-Dmaven.repo.local=PATH` in a command line's words (quotes around the value dropped). */
function repoLocalOption(text: string): string | undefined {
  const match = /(?:^|\s)-Dmaven\.repo\.local=(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(text);
  return match === null ? undefined : match[1] ?? match[2] ?? match[3];
}

/** `${user.home}` and `${env.NAME}` in a settings.xml value, as Maven interpolates them. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{(user\.home|env\.(\w+))\}/g,
    (_, _name: string, variable?: string) =>
      variable === undefined ? home() : Deno.env.get(variable) ?? "",
  );
}

/** `<localRepository>` of a settings.xml file, when the file sets one. */
async function settingsRepository(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch {
    return undefined;
  }
  const match = /<localRepository>\s*([^<]*?)\s*<\/localRepository>/.exec(
    text.replace(/<!--[\s\S]*?-->/g, ""),
  );
  return match === null || match[1] === "" ? undefined : interpolate(match[1]);
}

/** The installation's conf/settings.xml: `MAVEN_HOME`'s, else that of the `mvn` found on PATH. */
async function globalSettings(scan: Scan): Promise<string | undefined> {
  const mavenHome = Deno.env.get("MAVEN_HOME") ?? Deno.env.get("M2_HOME");
  if (mavenHome) return join(mavenHome, "conf", "settings.xml");
  for (const dir of scan.path.split(":")) {
    if (dir === "") continue;
    try {
      // Debian's /usr/bin/mvn links to /usr/share/maven/bin/mvn.
      const real = await Deno.realPath(join(dir, "mvn"));
      return join(dirname(dirname(real)), "conf", "settings.xml");
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** Maven's local repository as Maven resolves it, and where that comes from. */
async function mavenRepository(scan: Scan): Promise<{ path: string; from: string }> {
  const config = await readPath(scan, ".mvn/maven.config");
  const fromConfig = config === undefined ? undefined : repoLocalOption(config);
  if (fromConfig !== undefined) {
    return { path: fromConfig, from: "-Dmaven.repo.local in .mvn/maven.config" };
  }
  const fromOpts = repoLocalOption(Deno.env.get("MAVEN_OPTS") ?? "");
  if (fromOpts !== undefined) return { path: fromOpts, from: "-Dmaven.repo.local in MAVEN_OPTS" };
  const user = join(home(), ".m2", "settings.xml");
  const fromUser = await settingsRepository(user);
  if (fromUser !== undefined) return { path: fromUser, from: `<localRepository> in ${user}` };
  const global = await globalSettings(scan);
  const fromGlobal = global === undefined ? undefined : await settingsRepository(global);
  if (fromGlobal !== undefined) {
    return { path: fromGlobal, from: `<localRepository> in ${global}` };
  }
  return { path: join(home(), ".m2", "repository"), from: "Maven's default" };
}

/** pom.xml, with mvnw or mvn, and Maven's local repository. */
export async function detectMaven(scan: Scan): Promise<void> {
  if (!scan.files.has("pom.xml")) return;
  const wrapper = scan.files.has("mvnw");
  if (!wrapper && !(await onPath(scan, "mvn"))) {
    skip(scan, "pom.xml", "not run: neither mvnw nor mvn is here");
    return;
  }
  const repository = await mavenRepository(scan);
  if (!(await hasEntries(repository.path))) {
    skip(scan, "pom.xml", `not run: no offline cache (${repository.path}, ${repository.from})`);
    return;
  }
  const command = wrapper ? "./mvnw -o test" : "mvn -o test";
  const at = repository.from === "Maven's default"
    ? "Maven's local repository is here"
    : `Maven's local repository (${repository.path}, ${repository.from}) is here`;
  if (
    addCheck(
      scan,
      {
        name: command,
        command,
        source: "pom.xml",
        why: `pom.xml is at the root and ${at}; -o runs offline`,
        executable: wrapper ? "sh" : "mvn",
        runner: "maven",
        kind: "test",
      },
      ["maven:.:test"],
    )
  ) {
    await addConfigFile(scan, "pom.xml");
    await addConfigFile(scan, ".mvn/maven.config");
  }
}
