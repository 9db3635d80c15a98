import assert from "node:assert/strict";
import type { Detection } from "../../../agents/evidence/detect/detect.ts";
import { detectIn } from "./_detect_helpers.ts";
import { tempDir } from "../../_helpers.ts";

function commands(detection: Detection): string[] {
  return detection.checks.map((found) => found.command);
}

const pkg = (fields: Record<string, unknown>) => JSON.stringify(fields);

Deno.test("npm workspaces: the root script when there is one, else one check per package", async (t) => {
  const packages = {
    "packages/a/package.json": pkg({
      name: "@m/a",
      scripts: { test: "vitest run", typecheck: "tsc" },
    }),
    "packages/b/package.json": pkg({ name: "@m/b", scripts: { test: "node --test" } }),
    "packages/c/package.json": pkg({ name: "@m/c", scripts: { build: "tsc" } }),
    "packages/skipped/package.json": pkg({ name: "@m/skipped", scripts: { test: "jest" } }),
    "packages/not-a-package/README.md": "# no package.json here\n",
  };

  await t.step("without a root test script, each package that has one", async () => {
    const detection = await detectIn({
      "package.json": pkg({
        private: true,
        workspaces: ["packages/*", "!packages/skipped"],
        scripts: { lint: "eslint ." },
      }),
      "package-lock.json": "{}",
      ...packages,
    });
    const declared =
      'npm workspaces (package.json workspaces: "packages/*", "!packages/skipped"); package-lock.json names npm';
    assert.deepEqual(detection.checks, [
      {
        name: "npm run lint",
        command: "npm run lint",
        source: "package.json scripts.lint",
        why:
          "package.json has scripts.lint; package-lock.json names npm; the root script stands for the workspaces",
        executable: "npm",
        kind: "lint",
      },
      {
        name: "npm test -w packages/a",
        command: "npm test -w packages/a",
        source: "packages/a/package.json scripts.test",
        why:
          `packages/a/package.json has scripts.test and the root package.json has none; ${declared}`,
        executable: "npm",
        runner: "vitest",
        kind: "test",
      },
      {
        name: "npm test -w packages/b",
        command: "npm test -w packages/b",
        source: "packages/b/package.json scripts.test",
        why:
          `packages/b/package.json has scripts.test and the root package.json has none; ${declared}`,
        executable: "npm",
        runner: "node",
        kind: "test",
      },
      {
        name: "npm run typecheck -w packages/a",
        command: "npm run typecheck -w packages/a",
        source: "packages/a/package.json scripts.typecheck",
        why:
          `packages/a/package.json has scripts.typecheck and the root package.json has none; ${declared}`,
        executable: "npm",
        kind: "typecheck",
      },
    ]);
    assert.deepEqual(detection.skipped, []);
    assert.deepEqual(detection.configFiles, [
      "package.json",
      "packages/a/package.json",
      "packages/b/package.json",
    ]);
  });

  await t.step(
    "a root test script (npm test --workspaces) is the repository's command",
    async () => {
      const detection = await detectIn({
        "package.json": pkg({
          workspaces: ["packages/*"],
          scripts: { test: "npm test --workspaces --if-present" },
        }),
        "package-lock.json": "{}",
        ...packages,
        ".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    steps:\n" +
          "      - run: npm test --workspaces\n      - run: npm test -w packages/b\n",
      });
      // The root lacks typecheck, so that one is per package.
      assert.deepEqual(commands(detection), ["npm test", "npm run typecheck -w packages/a"]);
      // The root test runs every workspace's: CI's run of one package is the same gate.
      assert.deepEqual(detection.skipped, []);
      assert.match(
        detection.checks[0].why,
        /the root script stands for the workspaces; CI runs it too \(\.github\/workflows\/ci\.yml, job "t"\)$/,
      );
    },
  );

  await t.step("CI's per-package command is the per-package check", async () => {
    const detection = await detectIn({
      "package.json": pkg({ workspaces: ["packages/*"] }),
      ...packages,
      ".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    steps:\n" +
        "      - run: npm test -w packages/b\n      - run: npm run build --workspace=@m/c\n",
    });
    assert.deepEqual(commands(detection), [
      "npm test -w packages/a",
      "npm test -w packages/b",
      "npm test -w packages/skipped",
      "npm run typecheck -w packages/a",
      "npm run build --workspace=@m/c",
    ]);
    assert.match(detection.checks[1].why, /CI runs it too/);
  });

  await t.step("a glob with ** finds nested packages; node_modules is never searched", async () => {
    const detection = await detectIn({
      "package.json": pkg({ workspaces: ["libs/**"] }),
      "libs/x/y/package.json": pkg({ name: "y", scripts: { test: "jest" } }),
      "libs/node_modules/z/package.json": pkg({ name: "z", scripts: { test: "jest" } }),
    });
    assert.deepEqual(commands(detection), ["npm test -w libs/x/y"]);
  });
});

Deno.test("yarn, bun and pnpm workspaces address packages their own way", async (t) => {
  const packages = {
    "packages/a/package.json": pkg({
      name: "a",
      scripts: { test: "vitest run", lint: "eslint ." },
    }),
    "packages/b/package.json": pkg({ scripts: { test: "jest" } }),
  };

  await t.step("yarn: by name; a package without a name is skipped", async () => {
    const detection = await detectIn({
      "package.json": pkg({ private: true, workspaces: { packages: ["packages/*"] } }),
      "yarn.lock": "",
      ...packages,
    });
    assert.deepEqual(commands(detection), ["yarn workspace a test", "yarn workspace a run lint"]);
    assert.deepEqual(detection.skipped, [{
      source: "packages/b/package.json scripts.test",
      why: 'packages/b/package.json has no "name"; yarn addresses workspaces by name',
    }]);
  });

  await t.step("bun: in the package's folder", async () => {
    const detection = await detectIn({
      "package.json": pkg({ workspaces: ["packages/*"] }),
      "bun.lock": "",
      ...packages,
    });
    assert.deepEqual(commands(detection), [
      "cd packages/a && bun run test",
      "cd packages/b && bun run test",
      "cd packages/a && bun run lint",
    ]);
  });

  await t.step(
    "pnpm monorepo: pnpm-workspace.yaml, --filter by folder; CI's pnpm -r test is the same gate",
    async () => {
      const detection = await detectIn({
        "package.json": pkg({ private: true, scripts: { build: "pnpm -r build" } }),
        "pnpm-workspace.yaml": 'packages:\n  - "packages/*"\n  - "!**/test/**"\n',
        "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
        ...packages,
        ".github/workflows/ci.yml": "on: [pull_request]\njobs:\n  t:\n    steps:\n" +
          "      - run: pnpm install --frozen-lockfile\n      - run: pnpm -r test\n" +
          "      - run: pnpm --filter a lint\n",
      });
      assert.deepEqual(detection.checks.map((found) => [found.command, found.runner]), [
        ["pnpm --filter ./packages/a test", "vitest"],
        ["pnpm --filter ./packages/b test", "jest"],
        ["pnpm --filter ./packages/a run lint", undefined],
      ]);
      assert.match(
        detection.checks[0].why,
        /pnpm-workspace\.yaml packages: "packages\/\*", "!\*\*\/test\/\*\*"/,
      );
      assert.match(detection.checks[0].why, /CI runs it too/);
      assert.match(detection.checks[2].why, /CI runs it too/);
      assert.deepEqual(detection.configFiles, [
        "package.json",
        "packages/a/package.json",
        "packages/b/package.json",
        "pnpm-workspace.yaml",
      ]);
    },
  );

  await t.step("a malformed workspace package is skipped; the others still count", async () => {
    const detection = await detectIn({
      "package.json": pkg({ workspaces: ["packages/*"] }),
      "packages/a/package.json": packages["packages/a/package.json"],
      "packages/bad/package.json": "{",
    });
    assert.deepEqual(commands(detection), ["npm test -w packages/a", "npm run lint -w packages/a"]);
    assert.deepEqual(detection.skipped, [{
      source: "packages/bad/package.json",
      why: "invalid JSON: line 1, column 2: unexpected end of file, close brace expected",
    }]);
  });
});

Deno.test("Cargo workspaces test every member; Go modules are tested one by one", async (t) => {
  await t.step("[workspace] gives cargo test --workspace", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n',
      "crates/a/Cargo.toml": '[package]\nname = "a"\n',
    });
    assert.deepEqual(detection, {
      checks: [{
        name: "cargo test --workspace",
        command: "cargo test --workspace",
        source: "Cargo.toml [workspace]",
        why:
          "Cargo.toml declares a [workspace]; --workspace tests every member, not only the root package",
        executable: "cargo",
        runner: "cargo",
        kind: "test",
      }],
      hints: [],
      skipped: [],
      configFiles: ["Cargo.toml"],
    });
  });

  await t.step("CI's cargo test --all is the same check", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[package]\nname = "x"\n\n[workspace]\nmembers = [".", "xtask"]\n',
      ".github/workflows/ci.yml":
        "on: [push]\njobs:\n  t:\n    steps:\n      - run: cargo test --all --locked\n",
    });
    assert.deepEqual(commands(detection), ["cargo test --workspace"]);
  });

  await t.step("go.work: go test ./... in each module it uses", async () => {
    const detection = await detectIn({
      "go.work": "go 1.22\n\nuse (\n\t./api\n\t./worker // jobs\n)\nuse ./gone\n",
      "api/go.mod": "module example.com/api\n",
      "worker/go.mod": "module example.com/worker\n",
      ".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    steps:\n" +
        "      - run: go vet ./...\n        working-directory: api\n",
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.source, found.runner]), [
      ["cd api && go test ./...", "go.work use ./api", "go"],
      ["cd worker && go test ./...", "go.work use ./worker", "go"],
      ["cd api && go vet ./...", '.github/workflows/ci.yml job "t" step "go vet ./..."', undefined],
    ]);
    assert.deepEqual(detection.skipped, [
      { source: "go.work use ./gone", why: "gone/go.mod does not exist" },
    ]);
    assert.deepEqual(detection.configFiles, [
      "api/go.mod",
      "go.work",
      "worker/go.mod",
      ".github/workflows/ci.yml",
    ]);
  });

  await t.step(
    "without a go.work, each module below the root whose requirements are here",
    async () => {
      // blang/semver 4.0.0: the root module and v4/, a module of its own that ./... does not reach.
      const detection = await detectIn({
        "go.mod": "module example.com/semver\n",
        "v4/go.mod": "module example.com/semver/v4\n",
        "cmd/tool/go.mod":
          "module example.com/semver/cmd/tool\n\nrequire example.com/semver/v4 v4.0.0\n\nreplace example.com/semver/v4 => ../../v4\n",
        "bench/go.mod":
          "module example.com/semver/bench\n\nrequire (\n\tgithub.com/Other/hash v1.2.5 // indirect\n\texample.com/semver/v4 v4.0.0\n)\n\nreplace example.com/semver/v4 => ../v4\n",
        "_examples/go.mod": "module example.com/examples\n",
        "v4/testdata/go.mod": "module example.com/fixture\n",
      });
      assert.deepEqual(detection.checks.map((found) => [found.command, found.source]), [
        ["go test ./...", "go.mod"],
        ["cd cmd/tool && go test ./...", "cmd/tool/go.mod"],
        ["cd v4 && go test ./...", "v4/go.mod"],
      ]);
      assert.match(
        detection.checks[2].why,
        /a module of its own that \.\/\.\.\. at the root does not reach/,
      );
      assert.deepEqual(detection.skipped, [{
        source: "bench/go.mod",
        why:
          "could not run: it requires modules that are not in Go's module cache (github.com/Other/hash v1.2.5), and ./... at the root does not reach it",
      }]);
      assert.deepEqual(detection.configFiles, ["go.mod", "cmd/tool/go.mod", "v4/go.mod"]);
    },
  );

  await t.step("a requirement in Go's module cache is here", async () => {
    await using cache = await tempDir("finishline-gomodcache-");
    await Deno.mkdir(`${cache.path}/cache/download/github.com/!other/hash/@v`, { recursive: true });
    await Deno.writeTextFile(
      `${cache.path}/cache/download/github.com/!other/hash/@v/v1.2.5.zip`,
      "",
    );
    const previous = Deno.env.get("GOMODCACHE");
    Deno.env.set("GOMODCACHE", cache.path);
    try {
      const detection = await detectIn({
        "go.mod": "module example.com/x\n",
        "bench/go.mod": "module example.com/x/bench\n\nrequire github.com/Other/hash v1.2.5\n",
      });
      assert.deepEqual(commands(detection), ["go test ./...", "cd bench && go test ./..."]);
    } finally {
      if (previous === undefined) Deno.env.delete("GOMODCACHE");
      else Deno.env.set("GOMODCACHE", previous);
    }
  });

  await t.step(
    "with a go.work, a module it does not use is not tested (go refuses it)",
    async () => {
      const detection = await detectIn({
        "go.mod": "module example.com/x\n",
        "go.work": "go 1.22\nuse .\n",
        "other/go.mod": "module example.com/other\n",
      });
      assert.deepEqual(commands(detection), ["go test ./..."]);
    },
  );

  await t.step("a root module and a go.work module", async () => {
    const detection = await detectIn({
      "go.mod": "module example.com/root\n",
      "go.work": "go 1.22\nuse (\n  .\n  ./tools\n)\n",
      "tools/go.mod": "module example.com/tools\n",
    });
    assert.deepEqual(commands(detection), ["go test ./...", "cd tools && go test ./..."]);
  });
});
