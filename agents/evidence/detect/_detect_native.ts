/**
 * C and C++ build systems: CMake (configure, build, `ctest`), Meson (`meson
 * setup`, `meson test`) and autotools (`make check` in a configured tree).
 * Each builds in a folder outside the repository (see `_build_folder.ts`):
 * the one finishline keeps in its copies, where the baseline's build starts
 * each claim's, else a temp folder; CMake's and Meson's checks are one
 * command each, named after the test driver.
 *
 * @module
 */

import { join } from "node:path";
import { inBuildFolder } from "./_build_folder.ts";
import { addCheck, addConfigFile, onPath, type Scan, skip } from "./_detect_scan.ts";

/** Folders never searched for build files. */
const NOT_SOURCE = new Set([".git", "node_modules", "build", "_build", "out", "target", "vendor"]);

/** The repository-relative paths of files named `name` up to `depth` folders down. */
async function findFiles(root: string, name: RegExp, depth: number): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, level: number) => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(join(root, dir))) entries.push(entry);
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
      if (entry.isFile && name.test(entry.name)) found.push(path);
      else if (entry.isDirectory && level < depth && !NOT_SOURCE.has(entry.name)) {
        await walk(path, level + 1);
      }
    }
  };
  await walk(".", 0);
  return found;
}

async function readAll(scan: Scan, paths: string[]): Promise<Array<[string, string]>> {
  const texts: Array<[string, string]> = [];
  for (const path of paths) {
    try {
      texts.push([path, await Deno.readTextFile(join(scan.root, path))]);
    } catch {
      // Unreadable: not a build file this detection can use.
    }
  }
  return texts;
}

const CMAKE_TESTS =
  /^\s*(?:enable_testing\s*\(|include\s*\(\s*CTest\b|add_test\s*\(|(?:gtest|catch|doctest)_discover_tests\s*\()/im;
/** `option(FOO_BUILD_TESTS "..." OFF)`: a switch that leaves the tests out unless turned on. */
const CMAKE_TEST_OPTION = /^\s*option\s*\(\s*(\w*TEST\w*)\s+"[^"]*"\s+OFF\s*\)/gim;

/** CMakeLists.txt at the root: configure, build, and ctest when tests are declared. */
export async function detectCmake(scan: Scan): Promise<void> {
  if (!scan.files.has("CMakeLists.txt")) return;
  const files = await readAll(
    scan,
    await findFiles(scan.root, /^(?:CMakeLists\.txt|.*\.cmake)$/, 3),
  );
  const declaring = files.find(([, text]) => CMAKE_TESTS.test(text));
  if (!(await onPath(scan, "cmake"))) {
    skip(scan, "CMakeLists.txt", "cmake is not installed here");
    return;
  }
  // The tests' own switches, turned on as the maintainers' CI turns them on.
  const options = [
    ...new Set(files.flatMap(([, text]) => [...text.matchAll(CMAKE_TEST_OPTION)].map((m) => m[1]))),
  ];
  const defines = options.map((name) => ` -D${name}=ON`).join("");
  const configure = `cmake -S . -B "$b"${defines} && cmake --build "$b"`;
  const tests = declaring !== undefined;
  // Configured again each time: cheap with its cache, and file(GLOB) sees files added since.
  const command = inBuildFolder(
    tests
      ? `${configure} && ctest --test-dir "$b" --output-on-failure --no-tests=error`
      : configure,
    { kept: true },
  );
  const why = tests
    ? `CMakeLists.txt is at the root and ${
      declaring[0]
    } declares tests; configured and built in a folder outside the repository (kept between claims in finishline's copies), then ctest${
      options.length > 0 ? ` (${options.join(", ")} turned on)` : ""
    }`
    : "CMakeLists.txt is at the root and declares no tests: the build is the check";
  if (
    addCheck(
      scan,
      {
        name: tests ? "cmake + ctest" : "cmake build",
        command,
        source: "CMakeLists.txt",
        why,
        executable: "cmake",
        ...(tests ? { runner: "ctest" as const } : {}),
        buildFolder: "cmake",
        buildOnly: inBuildFolder(configure, { kept: true }),
        kind: tests ? "test" : "build",
      },
      ["cmake:.", "cmake:.:build", ...(tests ? ["cmake:.:test"] : [])],
    )
  ) await addConfigFile(scan, "CMakeLists.txt");
}

/** meson.build at the root: `meson setup` in a temp folder, then `meson test` (which builds). */
export async function detectMeson(scan: Scan): Promise<void> {
  if (!scan.files.has("meson.build")) return;
  for (const tool of ["meson", "ninja"]) {
    if (!(await onPath(scan, tool))) {
      skip(scan, "meson.build", `${tool} is not installed here`);
      return;
    }
  }
  // Set up once per folder: a kept one set up before regenerates itself when meson.build changes.
  const setup = `{ test -e "$b/meson-private/coredata.dat" || meson setup "$b"; }`;
  const command = inBuildFolder(`${setup} && meson test -C "$b" --print-errorlogs`, {
    kept: true,
  });
  if (
    addCheck(
      scan,
      {
        name: "meson test",
        command,
        source: "meson.build",
        why:
          "meson.build is at the root; set up in a folder outside the repository (kept between claims in finishline's copies), then meson test (which builds)",
        executable: "meson",
        runner: "meson",
        buildFolder: "meson",
        buildOnly: inBuildFolder(`${setup} && ninja -C "$b"`, { kept: true }),
        kind: "test",
      },
      ["meson:.", "meson:.:test"],
    )
  ) {
    await addConfigFile(scan, "meson.build");
    if (scan.files.has("meson_options.txt")) await addConfigFile(scan, "meson_options.txt");
    if (scan.files.has("meson.options")) await addConfigFile(scan, "meson.options");
  }
}

/**
 * configure.ac (or configure.in) with Makefile.am: `make check` in a tree
 * configured out of the source folder. What must run first: `autoreconf
 * -fi` when the repository does not ship its `configure` (a checkout from
 * git rarely does; a release tarball does), then `configure`.
 */
export async function detectAutotools(scan: Scan): Promise<void> {
  const ac = ["configure.ac", "configure.in"].find((name) => scan.files.has(name));
  if (ac === undefined || !scan.files.has("Makefile.am")) return;
  const shipped = scan.files.has("configure");
  const needed = shipped ? ["make"] : ["autoreconf", "automake", "make"];
  for (const tool of needed) {
    if (!(await onPath(scan, tool))) {
      skip(
        scan,
        ac,
        `${tool} is not installed here${shipped ? "" : " (configure is generated by autoreconf)"}`,
      );
      return;
    }
  }
  // configure runs in the build folder; the source is where the shell started. A shipped
  // configure is used as it is: a checkout gives files the time it wrote them, in no set
  // order, so aclocal.m4, configure or a Makefile.in may look older than the configure.ac or
  // Makefile.am it was made from, and make would run the automake its release was made with
  // (`aclocal-1.14`), rarely the one here, to make them again (GNU Hello 2.10 failed so in
  // every clean copy). A release tarball keeps the times in order; these four say the same.
  const regenerate = shipped ? "ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true " : "";
  // A shipped configure runs once per folder: a kept tree configured before is used as it is
  // (finishline keeps one only while configure and what feeds it are unchanged). autoreconf
  // writes configure again at each run, so that tree is never kept.
  const configure =
    `s=$(pwd) && { test -f "$b/config.status" || (cd "$b" && ${regenerate}"$s/configure"); }`;
  const steps = shipped
    ? `${configure} && make -C "$b" check`
    : `autoreconf -fi && s=$(pwd) && (cd "$b" && "$s/configure") && make -C "$b" check`;
  if (
    addCheck(
      scan,
      {
        name: "make check",
        command: inBuildFolder(steps, { kept: shipped }),
        source: `${ac}, Makefile.am`,
        why: `${ac} and Makefile.am are at the root; ${
          shipped
            ? "configure ships with it (used as it is: make does not run automake again)"
            : "autoreconf -fi makes configure"
        }, run in a folder outside the repository${
          shipped ? " (kept between claims in finishline's copies)" : ""
        }, then make check`,
        executable: shipped ? "make" : "autoreconf",
        runner: "automake",
        ...(shipped
          ? {
            buildFolder: "autotools" as const,
            buildOnly: inBuildFolder(`${configure} && make -C "$b"`, { kept: true }),
          }
          : {}),
        kind: "test",
      },
      ["autotools:.", "autotools:.:check", "make:.:check"],
    )
  ) {
    await addConfigFile(scan, ac);
    await addConfigFile(scan, "Makefile.am");
  }
}
