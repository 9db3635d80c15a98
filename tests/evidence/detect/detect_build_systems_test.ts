// CMake, Meson, autotools, Rakefiles, Gradle and Maven, detected and then run
// for real with the machine's own cmake, meson, ninja, rake and C compiler:
// a check that is found but cannot say which test failed would not be evidence.

import assert from "node:assert/strict";
import { join } from "node:path";
import { detectChecks, formatDetection } from "../../../agents/evidence/detect/detect.ts";
import { runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { filteredCommand } from "../../../agents/evidence/run/test_filter.ts";
import { tempDir } from "../../_helpers.ts";
import { repo } from "./_detect_helpers.ts";

const C_TESTS = {
  "src/math.c":
    "int add(int a, int b) { return a + b; }\nint sub(int a, int b) { return a - b; }\n",
  "tests/t_add.c":
    '#include <stdio.h>\nint add(int, int);\nint main(void) { if (add(1, 2) != 3) { puts("add(1, 2) != 3"); return 1; } return 0; }\n',
  "tests/t_sub.c":
    '#include <stdio.h>\nint sub(int, int);\nint main(void) { if (sub(5, 3) != 2) { puts("sub(5, 3) != 2"); return 1; } return 0; }\n',
};

const CMAKE = {
  ...C_TESTS,
  "CMakeLists.txt": [
    "cmake_minimum_required(VERSION 3.13)",
    "project(demo C)",
    'option(DEMO_BUILD_TESTS "Build the tests" OFF)',
    "enable_testing()",
    "add_library(math src/math.c)",
    "if(DEMO_BUILD_TESTS)",
    "  add_subdirectory(tests)",
    "endif()",
    "",
  ].join("\n"),
  "tests/CMakeLists.txt": [
    "add_executable(t_add t_add.c)",
    "target_link_libraries(t_add math)",
    "add_executable(t_sub t_sub.c)",
    "target_link_libraries(t_sub math)",
    "add_test(NAME adds COMMAND t_add)",
    "add_test(NAME subtracts COMMAND t_sub)",
    "",
  ].join("\n"),
};

const MESON = {
  ...C_TESTS,
  "meson.build": [
    "project('demo', 'c')",
    "math = static_library('math', 'src/math.c')",
    "test('adds', executable('t_add', 'tests/t_add.c', link_with: math))",
    "test('subtracts', executable('t_sub', 'tests/t_sub.c', link_with: math), suite: 'math')",
    "",
  ].join("\n"),
};

/** The temp folders whose names mktemp gives, so that a test can tell none was left. */
async function mktempFolders(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("tmp.")) names.push(entry.name);
  }
  return names.sort();
}

/** Run a repository's only check with its own TMPDIR, breaking `sub` first when asked. */
async function runOnly(files: Record<string, string>, broken: boolean) {
  await using dir = await repo(
    broken ? { ...files, "src/math.c": files["src/math.c"].replace("a - b", "a + b") } : files,
  );
  await using tmp = await tempDir("finishline-build-tmp-");
  const detection = await detectChecks(dir.path);
  assert.equal(detection.checks.length, 1, formatDetection(detection));
  const [check] = detection.checks;
  // The check's own TMPDIR, never this process's: test files run side by side in one process.
  const env = { TMPDIR: tmp.path };
  const run = await runRepoCheck(check, { cwd: dir.path, timeoutMs: 300_000, env });
  const narrowed = run.failing.length > 0
    ? await filteredCommand(check, run.failing, { read: () => Promise.resolve(undefined) })
    : undefined;
  const rerun = narrowed !== undefined && "command" in narrowed
    ? await runRepoCheck({ ...check, command: narrowed.command }, {
      cwd: dir.path,
      timeoutMs: 300_000,
      env,
    })
    : undefined;
  const status = await new Deno.Command("git", {
    args: ["status", "--porcelain", "--ignored"],
    cwd: dir.path,
  }).output().catch(() => undefined);
  return {
    check,
    run,
    rerun,
    left: await mktempFolders(tmp.path),
    inRepo: [...Deno.readDirSync(dir.path)].map((entry) => entry.name).sort(),
    status,
  };
}

Deno.test("a CMake project is configured, built and tested with ctest in a temp folder", async (t) => {
  await t.step("the tests' OFF switch is turned on and ctest ends the command", async () => {
    await using dir = await repo(CMAKE);
    const { checks } = await detectChecks(dir.path);
    assert.equal(checks.length, 1);
    assert.equal(checks[0].name, "cmake + ctest");
    assert.equal(checks[0].runner, "ctest");
    assert.match(
      checks[0].command,
      /cmake -S \. -B "\$b" -DDEMO_BUILD_TESTS=ON && cmake --build "\$b" && ctest --test-dir "\$b" --output-on-failure --no-tests=error$/,
    );
    assert.match(checks[0].why, /CMakeLists\.txt declares tests/);
  });
  await t.step(
    "green, then red naming the broken test; narrowed to it; nothing left behind",
    async () => {
      const green = await runOnly(CMAKE, false);
      assert.equal(green.run.green, true, green.run.tail);
      assert.deepEqual(green.run.counts, { run: 2, passed: 2, failed: 0, skipped: 0 });
      const red = await runOnly(CMAKE, true);
      assert.equal(red.run.green, false);
      assert.deepEqual(red.run.failing, ["subtracts"]);
      assert.deepEqual(red.rerun?.failing, ["subtracts"]);
      assert.equal(red.rerun?.counts?.run, 1);
      assert.deepEqual([...green.left, ...red.left], []);
      assert.deepEqual(red.inRepo, ["CMakeLists.txt", "src", "tests"]);
    },
  );
});

Deno.test("a Meson project is set up in a temp folder and meson test names the failure", async () => {
  const red = await runOnly(MESON, true);
  assert.equal(red.check.name, "meson test");
  assert.deepEqual(red.run.failing, ["demo:math / subtracts"]);
  assert.deepEqual(red.rerun?.failing, ["demo:math / subtracts"]);
  assert.equal(red.rerun?.counts?.run, 1);
  assert.deepEqual(red.left, []);
  assert.deepEqual(red.inRepo, ["meson.build", "src", "tests"]);
});

const RUBY = {
  "lib/calc.rb": "module Calc\n  def self.sub(a, b) = a - b\nend\n",
  Rakefile: [
    'require "rake/testtask"',
    "Rake::TestTask.new do |t|",
    '  t.libs << "test"',
    '  t.test_files = FileList["test/test_*.rb"]',
    "end",
    "task default: :test",
    "",
  ].join("\n"),
};

Deno.test("a Rakefile's test task runs with minitest or test-unit, the failing test named", async (t) => {
  for (
    const [framework, header, base] of [
      ["minitest", 'require "minitest/autorun"', "Minitest::Test"],
      ["test-unit", 'require "test/unit"', "Test::Unit::TestCase"],
    ] as const
  ) {
    await t.step(framework, async () => {
      const test = [
        header,
        'require "calc"',
        `class TestCalc < ${base}`,
        "  def test_sub = assert_equal(2, Calc.sub(5, 3))",
        "  def test_other = assert_equal(1, 1)",
        "end",
        "",
      ].join("\n");
      const files = { ...RUBY, "test/test_calc.rb": test };
      await using dir = await repo({
        ...files,
        "lib/calc.rb": files["lib/calc.rb"].replace("a - b", "a + b"),
      });
      const { checks } = await detectChecks(dir.path);
      assert.deepEqual(checks.map((check) => [check.command, check.runner]), [[
        "rake test",
        framework,
      ]]);
      const run = await runRepoCheck(checks[0], { cwd: dir.path, timeoutMs: 120_000 });
      assert.equal(run.green, false);
      assert.deepEqual(run.failing, ["TestCalc#test_sub"]);
      assert.equal(run.counts?.run, 2);
      const narrowed = await filteredCommand(checks[0], run.failing, {
        read: () => Promise.resolve(undefined),
      });
      assert.ok("command" in narrowed);
      const rerun = await runRepoCheck({ ...checks[0], command: narrowed.command }, {
        cwd: dir.path,
        timeoutMs: 120_000,
      });
      assert.deepEqual([rerun.failing, rerun.counts?.run], [["TestCalc#test_sub"], 1]);
    });
  }
  await t.step(
    "bundle exec where the Gemfile's gems are installed, never writing its lock",
    async () => {
      await using dir = await repo({
        ...RUBY,
        Gemfile: 'source "https://rubygems.org"\ngem "rake"\n',
        "test/test_calc.rb": 'require "minitest/autorun"\n',
      });
      const { checks } = await detectChecks(dir.path);
      assert.equal(checks[0].command, "bundle exec rake test");
      assert.match(checks[0].why, /the Gemfile's gems are installed/);
      await assert.rejects(Deno.stat(join(dir.path, "Gemfile.lock")));
    },
  );
  await t.step("a Gemfile whose gems are missing: rake without bundler, and why", async () => {
    await using dir = await repo({
      ...RUBY,
      Gemfile: 'source "https://rubygems.org"\ngem "no-such-gem-finishline"\n',
    });
    const { checks } = await detectChecks(dir.path);
    assert.equal(checks[0].command, "rake test");
    assert.match(checks[0].why, /not all installed/);
  });
  await t.step(
    "a test task in rakelib/*.rake counts: rake loads it with the Rakefile",
    async () => {
      // Builder 3.2.4: the Rakefile defines test_units; rakelib/testing.rake defines test.
      await using dir = await repo({
        Rakefile: 'require "rake/testtask"\nRake::TestTask.new("test_units") do |t|\nend\n',
        "rakelib/testing.rake": RUBY.Rakefile,
        "rakelib/publish.rake": "task :publish\n",
        "test/helper.rb": 'require "minitest/autorun"\n',
      });
      const detection = await detectChecks(dir.path);
      assert.deepEqual(
        detection.checks.map((check) => [check.command, check.source, check.runner]),
        [["rake test", "rakelib/testing.rake task test", "minitest"]],
      );
      assert.match(detection.checks[0].why, /rake loads rakelib\/\*\.rake with Rakefile/);
      assert.deepEqual(detection.configFiles, [
        "Rakefile",
        "rakelib/publish.rake",
        "rakelib/testing.rake",
      ]);
    },
  );
  await t.step("a Rakefile without a test task is skipped with why", async () => {
    await using dir = await repo({ Rakefile: 'task :build do\n  sh "true"\nend\n' });
    const detection = await detectChecks(dir.path);
    assert.deepEqual(detection.checks, []);
    assert.match(formatDetection(detection), /Rakefile {2}\(no "test" task/);
  });
});

Deno.test("CI's cmake, ctest and bundle exec rake steps confirm the check, none dropped", async () => {
  const workflow = [
    "on: [push, pull_request]",
    "jobs:",
    "  test:",
    "    runs-on: ubuntu-latest",
    "    steps:",
    "      - uses: actions/checkout@v4",
    "      - run: cmake -B build -DDEMO_BUILD_TESTS=ON",
    "      - run: cmake --build build",
    "      - run: cd build && ctest --output-on-failure",
    "",
  ].join("\n");
  await using dir = await repo({ ...CMAKE, ".github/workflows/ci.yml": workflow });
  const detection = await detectChecks(dir.path);
  assert.equal(detection.checks.length, 1);
  assert.deepEqual(detection.hints, []);
  assert.match(
    detection.checks[0].why,
    /CI runs it too \(\.github\/workflows\/ci\.yml, job "test": cmake -B build/,
  );
  await using ruby = await repo({
    ...RUBY,
    ".github/workflows/ci.yml": workflow.replace(
      / {6}- run: cmake[^]*$/,
      "      - run: bundle install\n      - run: bundle exec rake test\n",
    ),
  });
  await using smoke = await repo({
    ...CMAKE,
    "tools/smoke.sh": "#!/bin/sh\n",
    ".github/workflows/ci.yml": `${workflow}      - run: sh tools/smoke.sh\n`,
  });
  const withSmoke = await detectChecks(smoke.path);
  // The job's cmake and ctest steps are the CMake check's: the job's own check runs the rest.
  assert.deepEqual(withSmoke.checks.map((check) => check.command).slice(1), ["sh tools/smoke.sh"]);
  const rubyDetection = await detectChecks(ruby.path);
  assert.deepEqual(rubyDetection.hints, []);
  assert.match(rubyDetection.checks[0].why, /CI runs it too/);
});

Deno.test("autotools, Gradle and Maven say why they do not run here", async (t) => {
  await t.step("autotools without autoreconf: configure must be generated first", async () => {
    await using dir = await repo({ "configure.ac": "AC_INIT([demo], [1.0])\n", "Makefile.am": "" });
    const detection = await detectChecks(dir.path, { path: "/nonexistent" });
    assert.deepEqual(detection.checks, []);
    assert.match(
      formatDetection(detection),
      /configure\.ac {2}\(autoreconf is not installed here \(configure is generated by autoreconf\)\)/,
    );
  });
  await t.step("a shipped configure: configure out of the tree, then make check", async () => {
    await using dir = await repo({
      "configure.ac": "AC_INIT([demo], [1.0])\n",
      "Makefile.am": "",
      configure: "#!/bin/sh\n",
    });
    const { checks } = await detectChecks(dir.path);
    assert.equal(checks[0].name, "make check");
    assert.match(
      checks[0].command,
      /s=\$\(pwd\) && \{ test -f "\$b\/config\.status" \|\| \(cd "\$b" && ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true "\$s\/configure"\); \} && make -C "\$b" check$/,
    );
    assert.equal(checks[0].buildFolder, "autotools");
  });
  await t.step(
    "a shipped configure is used as it is, whatever times the checkout gave its inputs",
    async () => {
      // As automake's Makefiles do: aclocal.m4 made again when configure.ac looks newer, with
      // the aclocal of the release's automake (GNU Hello 2.10: aclocal-1.14, not installed).
      const configure = [
        "#!/bin/sh",
        's=$(dirname "$0")',
        "cat > Makefile <<EOF",
        "ACLOCAL = ${ACLOCAL-aclocal-finishline-none}",
        "check: $s/aclocal.m4",
        "\t@echo PASS: t1",
        "$s/aclocal.m4: $s/configure.ac",
        "\t\\$(ACLOCAL)",
        "EOF",
        "",
      ].join("\n");
      await using dir = await repo({
        "aclocal.m4": "",
        "Makefile.am": "",
        configure,
      });
      await Deno.chmod(join(dir.path, "configure"), 0o755);
      // Written after aclocal.m4, as a checkout may.
      await Deno.writeTextFile(join(dir.path, "configure.ac"), "AC_INIT([demo], [1.0])\n");
      await Deno.utime(join(dir.path, "aclocal.m4"), new Date(0), new Date(0));
      const { checks } = await detectChecks(dir.path);
      const run = await runRepoCheck(checks[0], { cwd: dir.path, timeoutMs: 60_000 });
      assert.equal(run.green, true, run.tail);
      assert.match(checks[0].why, /used as it is: make does not run automake again/);
    },
  );
  await t.step("Gradle and Maven without an offline cache: not run, and why", async () => {
    await using home = await tempDir("finishline-home-");
    const previous = Deno.env.get("HOME");
    Deno.env.set("HOME", home.path);
    try {
      await using dir = await repo({
        "build.gradle": "",
        gradlew: "#!/bin/sh\n",
        "pom.xml": "<project/>",
      });
      const text = formatDetection(await detectChecks(dir.path));
      assert.match(text, /build\.gradle {2}\(not run: no offline cache/);
      assert.match(
        text,
        /pom\.xml {2}\(not run: (?:no offline cache|neither mvnw nor mvn is here)/,
      );
    } finally {
      if (previous === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", previous);
    }
  });
});

/** Runs `fn` with the variables set (undefined: unset), restoring them after. */
async function withEnv(
  vars: Record<string, string | undefined>,
  fn: () => Promise<void>,
): Promise<void> {
  const previous = Object.fromEntries(Object.keys(vars).map((name) => [name, Deno.env.get(name)]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  };
  apply(vars);
  try {
    await fn();
  } finally {
    apply(previous);
  }
}

Deno.test("Maven's local repository is found where Maven finds it, offline setups included", async (t) => {
  await using root = await tempDir("finishline-maven-");
  const home = join(root.path, "home");
  // A Maven installation of its own (as Debian's /usr/share/maven, /usr/bin/mvn linking to it).
  const install = join(root.path, "maven");
  const bin = join(root.path, "bin");
  await Deno.mkdir(join(install, "bin"), { recursive: true });
  await Deno.mkdir(join(install, "conf"));
  await Deno.mkdir(bin);
  await Deno.mkdir(join(home, ".m2"), { recursive: true });
  await Deno.writeTextFile(join(install, "bin", "mvn"), "#!/bin/sh\n");
  await Deno.chmod(join(install, "bin", "mvn"), 0o755);
  await Deno.symlink(join(install, "bin", "mvn"), join(bin, "mvn"));
  // A packaged repository with entries (as Debian's /usr/share/maven-repo), and an empty one.
  const packaged = join(root.path, "maven-repo");
  await Deno.mkdir(join(packaged, "junit"), { recursive: true });
  const empty = join(root.path, "empty-repo");
  await Deno.mkdir(empty);
  const settings = (repository: string) =>
    `<settings>\n  <!-- <localRepository>${empty}</localRepository> -->\n  <offline>true</offline>\n  <localRepository>${repository}</localRepository>\n</settings>\n`;
  const clean = { HOME: home, MAVEN_OPTS: undefined, MAVEN_HOME: undefined, M2_HOME: undefined };
  const detect = async (files: Record<string, string> = {}) => {
    await using dir = await repo({ "pom.xml": "<project/>", ...files });
    const detection = await detectChecks(dir.path, { path: bin });
    return { detection, text: formatDetection(detection) };
  };
  const reset = async () => {
    await Deno.remove(join(home, ".m2", "settings.xml")).catch(() => {});
    await Deno.remove(join(install, "conf", "settings.xml")).catch(() => {});
  };

  await t.step("-Dmaven.repo.local in the project's .mvn/maven.config", async () => {
    await withEnv(clean, async () => {
      const { detection } = await detect({
        ".mvn/maven.config": `-Dmaven.repo.local=${packaged}\n`,
      });
      assert.deepEqual(detection.checks.map((check) => check.command), ["mvn -o test"]);
      assert.match(detection.checks[0].why, /-Dmaven\.repo\.local in \.mvn\/maven\.config/);
      assert.ok(detection.configFiles.includes(".mvn/maven.config"));
    });
  });
  await t.step("-Dmaven.repo.local in MAVEN_OPTS", async () => {
    await withEnv({ ...clean, MAVEN_OPTS: `-Xmx1g -Dmaven.repo.local="${packaged}"` }, async () => {
      const { detection } = await detect();
      assert.deepEqual(detection.checks.map((check) => check.command), ["mvn -o test"]);
      assert.match(detection.checks[0].why, /in MAVEN_OPTS/);
    });
  });
  await t.step(
    "the user's settings.xml: <localRepository> (comments skipped, ${user.home} read)",
    async () => {
      await withEnv(clean, async () => {
        await reset();
        await Deno.writeTextFile(join(home, ".m2", "settings.xml"), settings(packaged));
        assert.equal((await detect()).detection.checks[0]?.command, "mvn -o test");
        await Deno.rename(packaged, join(home, "packaged"));
        try {
          await Deno.writeTextFile(
            join(home, ".m2", "settings.xml"),
            settings("${user.home}/packaged"),
          );
          assert.equal((await detect()).detection.checks[0]?.command, "mvn -o test");
        } finally {
          await Deno.rename(join(home, "packaged"), packaged);
        }
        await Deno.writeTextFile(join(home, ".m2", "settings.xml"), settings(empty));
        const { detection, text } = await detect();
        assert.deepEqual(detection.checks, []);
        assert.ok(
          text.includes(
            `not run: no offline cache (${empty}, <localRepository> in ${home}/.m2/settings.xml)`,
          ),
          text,
        );
      });
    },
  );
  await t.step(
    "the installation's conf/settings.xml, found through the mvn on PATH or MAVEN_HOME",
    async () => {
      await withEnv(clean, async () => {
        await reset();
        await Deno.writeTextFile(join(install, "conf", "settings.xml"), settings(packaged));
        const { detection } = await detect();
        assert.equal(detection.checks[0]?.command, "mvn -o test");
        assert.match(detection.checks[0].why, /<localRepository> in .*maven\/conf\/settings\.xml/);
      });
      await withEnv({ ...clean, MAVEN_HOME: join(root.path, "elsewhere") }, async () => {
        const { text } = await detect();
        assert.match(text, /not run: no offline cache \(.*\.m2\/repository, Maven's default\)/);
      });
      await reset();
    },
  );
});
