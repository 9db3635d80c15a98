import assert from "node:assert/strict";
import { detectChecks, type DetectedCheck } from "../../../agents/evidence/detect/detect.ts";
import { runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { runTool } from "../../../agents/support/process.ts";
import { detectIn, type Machine, machine, repo } from "./_detect_helpers.ts";

const TOX4: Machine = {
  tox: "4.11.3 from /usr/lib/python3/dist-packages/tox/__init__.py\n",
  python: "Python 3.11.7\n",
};
const TOX3: Machine = {
  tox: "3.28.0 imported from /usr/lib/python3/dist-packages/tox/__init__.py\n",
  python: "Python 3.11.2\n",
};

/** The envlist of a project that supports five Pythons, of which the machine has one. */
const FIVE_PYTHONS =
  "[tox]\nenvlist = py38,py39,py310,py311,py312\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n";

function pytestCheck(source: string, why: string): DetectedCheck {
  return {
    name: "pytest",
    command: "python3 -m pytest",
    source,
    why,
    executable: "python3",
    runner: "pytest",
    kind: "test",
  };
}

Deno.test("tox runs the environment of the interpreter at hand, never the whole envlist", async (t) => {
  await t.step("envlist py38..py312 with python3.11: tox -e py311", async () => {
    const detection = await detectIn({ "tox.ini": FIVE_PYTHONS, "pytest.ini": "[pytest]\n" }, TOX4);
    assert.deepEqual(detection, {
      checks: [{
        name: "tox -e py311",
        command: "tox -e py311",
        source: "tox.ini",
        why:
          "tox.ini lists py311 among 5 environments; python3 is 3.11; tox 4.11.3; the other environments need interpreters CI provides",
        executable: "tox",
        runner: "pytest",
        kind: "test",
      }],
      hints: [],
      skipped: [{ source: "pytest.ini", why: "tox runs pytest, so pytest is not run directly" }],
      configFiles: ["tox.ini", "pytest.ini"],
    });
  });

  await t.step("tox 3 reads a tox 3 configuration the same way", async () => {
    const detection = await detectIn({ "tox.ini": FIVE_PYTHONS }, TOX3);
    assert.deepEqual(detection.checks.map((found) => found.command), ["tox -e py311"]);
  });

  await t.step("generative names: every environment with the interpreter's factor", async () => {
    const detection = await detectIn({
      "tox.ini":
        "[tox]\nenvlist =\n    py3{9-12}-django{42,50}\n    lint\n[testenv]\ncommands = pytest\n",
    }, { ...TOX4, python: "Python 3.12.1" });
    assert.deepEqual(detection.checks.map((found) => found.command), [
      "tox -e py312-django42,py312-django50",
    ]);
  });

  await t.step("an envlist with py (any interpreter) runs py", async () => {
    const detection = await detectIn({
      "tox.ini": "[tox]\nenvlist = py, lint\n[testenv]\ncommands = pytest\n",
    }, TOX4);
    assert.deepEqual(detection.checks.map((found) => found.command), ["tox -e py"]);
  });

  await t.step("without an envlist, the [testenv:NAME] sections are the environments", async () => {
    const detection = await detectIn({
      "tox.ini":
        "[testenv]\ncommands = pytest\n[testenv:py311]\n[testenv:docs]\ncommands = sphinx-build\n",
    }, TOX4);
    assert.deepEqual(detection.checks.map((found) => found.command), ["tox -e py311"]);
  });

  await t.step("with no environments named at all, py runs [testenv]", async () => {
    const detection = await detectIn({ "tox.ini": "[testenv]\ncommands = pytest\n" }, TOX4);
    assert.deepEqual(detection.checks.map((found) => [found.command, found.why]), [[
      "tox -e py",
      "tox.ini lists no environments; py runs [testenv] on the interpreter at hand; tox 4.11.3; the other environments need interpreters CI provides",
    ]]);
  });

  await t.step(
    "setup.cfg [tox:tox], pyproject legacy_tox_ini and tox.toml are read too",
    async () => {
      const setupCfg = await detectIn({
        "setup.cfg":
          "[metadata]\nname = demo\n[tox:tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n",
      }, TOX4);
      assert.deepEqual(setupCfg.checks.map((found) => [found.command, found.source]), [
        ["tox -e py311", "setup.cfg [tox:tox]"],
      ]);
      assert.deepEqual(setupCfg.configFiles, ["setup.cfg"]);
      const legacy = await detectIn({
        "pyproject.toml":
          "[tool.tox]\nlegacy_tox_ini = '''\n[tox]\nenvlist = py310, py311\n[testenv]\ncommands = pytest\n'''\n",
      }, TOX4);
      assert.deepEqual(legacy.checks.map((found) => [found.command, found.source]), [
        ["tox -e py311", "pyproject.toml [tool.tox]"],
      ]);
      const toml = await detectIn({
        "tox.toml": 'requires = ["tox>=4.22"]\nenv_list = ["3.13", "py311", "lint"]\n' +
          '[env_run_base]\ncommands = [["pytest"]]\n',
      }, { ...TOX4, tox: "4.23.2 from /x\n" });
      assert.deepEqual(toml.checks.map((found) => [found.command, found.source]), [
        ["tox -e py311", "tox.toml"],
      ]);
    },
  );
});

Deno.test("when tox cannot run here, the pytest it would run runs directly", async (t) => {
  await t.step(
    "tox is not installed: python3 -m pytest, and tox.ini is skipped with why",
    async () => {
      const detection = await detectIn({ "tox.ini": FIVE_PYTHONS, "pytest.ini": "[pytest]\n" });
      assert.deepEqual(detection, {
        checks: [
          pytestCheck(
            "pytest.ini",
            "pytest.ini configures pytest; tox is not used: tox is not installed",
          ),
        ],
        hints: [],
        skipped: [{
          source: "tox.ini",
          why: "tox is not installed; python3 -m pytest runs instead",
        }],
        configFiles: ["pytest.ini", "tox.ini"],
      });
    },
  );

  await t.step("without a pytest configuration, tox's [testenv] commands name pytest", async () => {
    const detection = await detectIn({ "tox.ini": FIVE_PYTHONS });
    assert.deepEqual(detection.checks, [
      pytestCheck(
        "tox.ini [testenv] commands",
        "tox.ini runs pytest in [testenv]; tox is not used: tox is not installed",
      ),
    ]);
  });

  await t.step("a tox 4 configuration under tox 3: requires, min_version, env_list", async () => {
    const cases: Array<[string, string]> = [
      ["[tox]\nrequires = tox>=4.2\nenvlist = py311\n", 'tox.ini requires "tox>=4.2"'],
      ["[tox]\nmin_version = 4.0\nenvlist = py311\n", "tox.ini sets min_version = 4.0"],
      ["[tox]\nminversion = 4.6\nenvlist = py311\n", "tox.ini sets min_version = 4.6"],
      ["[tox]\nenv_list = py311\n", "tox.ini spells env_list"],
    ];
    for (const [config, because] of cases) {
      const detection = await detectIn({
        "tox.ini": `${config}[testenv]\ncommands = pytest\n`,
        "pyproject.toml": "[tool.pytest.ini_options]\n",
      }, TOX3);
      const reason =
        `${because}, and tox 3.28.0 is installed (it would try to install a newer tox)`;
      assert.deepEqual(detection.checks, [
        pytestCheck(
          "pyproject.toml [tool.pytest.ini_options]",
          `pyproject.toml [tool.pytest.ini_options] configures pytest; tox is not used: ${reason}`,
        ),
      ], config);
      assert.deepEqual(detection.skipped, [
        { source: "tox.ini", why: `${reason}; python3 -m pytest runs instead` },
      ]);
    }
  });

  await t.step("the same configuration under tox 4 runs tox", async () => {
    const detection = await detectIn({
      "tox.ini": "[tox]\nrequires = tox>=4.2\nenv_list = py311\n[testenv]\ncommands = pytest\n",
    }, TOX4);
    assert.deepEqual(detection.checks.map((found) => found.command), ["tox -e py311"]);
  });

  await t.step("a TOML configuration needs tox 4.21", async () => {
    const detection = await detectIn({
      "pyproject.toml":
        '[tool.tox]\nenv_list = ["py311"]\n[tool.tox.env_run_base]\ncommands = [["pytest"]]\n',
    }, TOX4);
    assert.deepEqual(detection.skipped, [{
      source: "pyproject.toml [tool.tox]",
      why:
        "pyproject.toml [tool.tox] is a TOML configuration, and tox 4.11.3 is installed (it would try to install a newer tox); python3 -m pytest runs instead",
    }]);
  });

  await t.step("a plugin in requires that tox does not have would be downloaded", async () => {
    const config =
      "[tox]\nrequires =\n    tox-gh-actions>=3\nenvlist = py311\n[testenv]\ncommands = pytest\n";
    const missing = await detectIn({ "tox.ini": config }, TOX4);
    assert.deepEqual(missing.skipped, [{
      source: "tox.ini",
      why:
        "tox.ini requires tox-gh-actions, which tox 4.11.3 does not have (it would install it); python3 -m pytest runs instead",
    }]);
    const present = await detectIn({ "tox.ini": config }, {
      ...TOX4,
      tox: "4.11.3 from /x\nregistered plugins:\n    tox-gh-actions-3.2.0 at /y\n",
    });
    assert.deepEqual(present.checks.map((found) => found.command), ["tox -e py311"]);
  });

  await t.step("no environment for this interpreter", async () => {
    const detection = await detectIn({
      "tox.ini": "[tox]\nenvlist = py38,py39\n[testenv]\ncommands = pytest\n",
    }, TOX4);
    assert.deepEqual(detection.skipped, [{
      source: "tox.ini",
      why:
        "its environments (py38, py39) have none for Python 3.11 (py311); python3 -m pytest runs instead",
    }]);
    assert.deepEqual(detection.checks.map((found) => found.command), ["python3 -m pytest"]);
  });

  await t.step("nothing to fall back on: tox is skipped and nothing runs", async () => {
    const detection = await detectIn({
      "tox.ini": "[tox]\nenvlist = py38\n[testenv]\ncommands = python -m unittest\n",
    });
    assert.deepEqual(detection, {
      checks: [],
      hints: [],
      skipped: [{
        source: "tox.ini",
        why: "tox is not installed; its [testenv] does not run pytest to fall back on",
      }],
      configFiles: [],
    });
  });

  await t.step("the machine is asked only when there is a tox configuration", async () => {
    const { probe, asked } = machine(TOX4);
    await using pytestOnly = await repo({ "pytest.ini": "[pytest]\n" });
    await detectChecks(pytestOnly.path, { probe });
    assert.deepEqual(asked, []);
    await using withTox = await repo({ "tox.ini": FIVE_PYTHONS });
    await detectChecks(withTox.path, { probe });
    assert.deepEqual(asked, ["tox --version", "python3 --version"]);
  });
});

const realTox = await runTool("tox", ["--version"], { cwd: ".", timeoutMs: 10_000 });
const realPython = await runTool("python3", ["--version"], { cwd: ".", timeoutMs: 10_000 });
const realVersion = /Python (\d+)\.(\d+)/.exec(realPython.stdout + realPython.stderr);

Deno.test("on this machine's real python3 and tox, the chosen check is the interpreter's", async () => {
  assert.ok(realVersion, "python3 is installed");
  const env = `py${realVersion[1]}${realVersion[2]}`;
  await using dir = await repo({
    "tox.ini": `[tox]\nenvlist = py38,${env},py399\n[testenv]\ncommands = pytest\n`,
    "pytest.ini": "[pytest]\n",
  });
  const detection = await detectChecks(dir.path);
  // The configuration is plain enough for tox 3 and 4 alike.
  const expected = realTox.code === 0 ? `tox -e ${env}` : "python3 -m pytest";
  assert.deepEqual(detection.checks.map((found) => found.command), [expected]);
});

Deno.test({
  name: "with tox installed, tox -e pyXY passes where bare tox fails on missing interpreters",
  ignore: realTox.code !== 0 || realVersion === null,
  fn: async () => {
    const env = `py${realVersion![1]}${realVersion![2]}`;
    // No packaging and no dependencies: tox builds its environment offline.
    await using dir = await repo({
      "tox.ini": `[tox]\nenvlist = py38,${env},py399\nskipsdist = true\n\n[testenv]\n` +
        `commands = python -c "print('tests ran')"\n`,
    });
    const detection = await detectChecks(dir.path);
    assert.deepEqual(detection.checks.map((found) => found.command), [`tox -e ${env}`]);
    const chosen = await runRepoCheck(detection.checks[0], { cwd: dir.path, timeoutMs: 120_000 });
    assert.equal(chosen.green, true, chosen.tail);
    assert.match(chosen.tail, /tests ran/);
    if (/^3\./.test(realTox.stdout)) {
      // tox 3 fails the run on each interpreter it cannot find (tox 4 may skip them).
      const whole = await runRepoCheck({ name: "tox", command: "tox" }, {
        cwd: dir.path,
        timeoutMs: 120_000,
      });
      assert.equal(whole.green, false);
      assert.match(whole.tail, /InterpreterNotFound/);
    }
  },
});
