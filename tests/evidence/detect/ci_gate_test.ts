import assert from "node:assert/strict";
import type { DetectedCheck, Detection } from "../../../agents/evidence/detect/detect.ts";
import { githubWorkflow } from "../../../agents/iterator/commands/init.ts";
import { detectIn } from "./_detect_helpers.ts";

/** A workflow that runs on push and pull requests with one job of the given steps (YAML lines). */
function workflow(steps: string, job = "test", extra = ""): string {
  return `name: CI
on:
  push:
    branches: [main]
  pull_request:
jobs:
  ${job}:
    runs-on: ubuntu-latest
${extra}    steps:
      - uses: actions/checkout@v4
${steps}`;
}

function commands(detection: Detection): string[] {
  return detection.checks.map((found) => found.command);
}

/** A TypeScript library whose CI gates on `npm run check` (tsc, eslint, prettier). */
const CHECK_LIBRARY = {
  "package.json": JSON.stringify({
    name: "lib",
    scripts: {
      build: "tsc -p tsconfig.build.json",
      check: "tsc --noEmit && eslint . && prettier --check .",
      test: "vitest run",
      format: "prettier --write .",
      release: "npm publish",
    },
    devDependencies: { typescript: "^5", eslint: "^9", prettier: "^3", vitest: "^2" },
  }),
  "package-lock.json": "{}",
  ".github/workflows/ci.yml": workflow(
    `      - uses: actions/setup-node@v4
        with:
          node-version: \${{ matrix.node }}
      - run: npm ci
      - run: npm run build
      - name: Check
        run: npm run check
      - run: npm test -- --coverage
`,
    "test",
    "    strategy:\n      matrix:\n        node: [20, 22]\n",
  ),
};

Deno.test("a CI step that runs a package script makes the script a check", async (t) => {
  await t.step(
    "npm run check (tsc, eslint, prettier) is detected, after the build CI runs first",
    async () => {
      const detection = await detectIn(CHECK_LIBRARY);
      assert.deepEqual(
        detection.checks,
        [
          {
            name: "npm run build",
            command: "npm run build",
            source: '.github/workflows/ci.yml job "test" step "npm run build"',
            why:
              '.github/workflows/ci.yml, job "test" runs it; package.json has scripts.build ("tsc -p tsconfig.build.json")',
            executable: "npm",
            kind: "build",
          },
          {
            name: "npm run check",
            command: "npm run check",
            source: '.github/workflows/ci.yml job "test" step "Check"',
            why:
              '.github/workflows/ci.yml, job "test" runs it; package.json has scripts.check ("tsc --noEmit && eslint . && prettier --check .")',
            executable: "npm",
            kind: "gate",
          },
          {
            name: "npm test",
            command: "npm test",
            source: "package.json scripts.test",
            why:
              'package.json has scripts.test; package-lock.json names npm; CI runs it too (.github/workflows/ci.yml, job "test")',
            executable: "npm",
            runner: "vitest",
            kind: "test",
          },
        ] satisfies DetectedCheck[],
      );
      assert.deepEqual(detection.skipped, [{
        source: '.github/workflows/ci.yml job "test" step "npm ci"',
        why: '"npm ci" is setup (it installs or prepares), not a check',
      }]);
      assert.deepEqual(detection.hints, []);
      assert.deepEqual(detection.configFiles, ["package.json", ".github/workflows/ci.yml"]);
    },
  );

  await t.step("pnpm, yarn and bun run scripts by their bare names", async () => {
    const scripts = JSON.stringify({ scripts: { verify: "tsc && vitest run", ci: "make ci" } });
    const pnpm = await detectIn({
      "package.json": scripts,
      ".github/workflows/ci.yml": workflow("      - run: pnpm install\n      - run: pnpm verify\n"),
    });
    assert.deepEqual(
      pnpm.checks.map((found) => [found.command, found.kind, found.runner, found.executable]),
      [["pnpm verify", "gate", "vitest", "pnpm"]],
    );
    const yarn = await detectIn({
      "package.json": scripts,
      ".github/workflows/ci.yml": workflow(
        "      - run: yarn --frozen-lockfile\n      - run: yarn ci\n",
      ),
    });
    assert.deepEqual(commands(yarn), ["yarn ci"]);
    assert.equal(
      yarn.skipped.at(-1)?.why,
      '"yarn --frozen-lockfile" is setup (it installs or prepares), not a check',
    );
    const bun = await detectIn({
      "package.json": scripts,
      ".github/workflows/ci.yml": workflow(
        "      - run: bun install\n      - run: bun run verify\n",
      ),
    });
    assert.deepEqual(commands(bun), ["bun run verify"]);
  });

  await t.step("a script that is absent is skipped, quietly so with --if-present", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "lint": "eslint ." } }',
      ".github/workflows/ci.yml": workflow(
        "      - run: npm run typecheck --if-present\n      - run: npm run docs\n",
      ),
    });
    assert.deepEqual(detection.skipped, [
      {
        source: '.github/workflows/ci.yml job "test" step "npm run typecheck --if-present"',
        why:
          '"npm run typecheck --if-present": package.json has no scripts.typecheck (--if-present)',
      },
      {
        source: '.github/workflows/ci.yml job "test" step "npm run docs"',
        why: '"npm run docs": package.json has no scripts.docs',
      },
    ]);
  });

  await t.step(
    "scripts that publish, deploy, serve, rewrite files or need a browser are skipped",
    async () => {
      const detection = await detectIn({
        "package.json": JSON.stringify({
          scripts: {
            release: "semantic-release",
            deploy: "vercel --prod",
            start: "node server.js",
            format: "prettier --write .",
            fix: "eslint --fix .",
            e2e: "playwright test",
            ship: "npm run build && npm publish",
            build: "tsc",
          },
        }),
        ".github/workflows/ci.yml": workflow(
          [
            "release",
            "deploy",
            "start",
            "format",
            "fix",
            "e2e",
            "ship",
          ].map((script) => `      - run: npm run ${script}\n`).join(""),
        ),
      });
      assert.deepEqual(detection.checks, []);
      assert.deepEqual(detection.skipped.map((entry) => entry.why), [
        'no "test", "typecheck" or "lint" script',
        '"npm run release": scripts.release publishes or deploys',
        '"npm run deploy": scripts.deploy publishes or deploys',
        '"npm run start": scripts.start starts a server or watcher',
        '"npm run format": scripts.format rewrites files (a format:check would check them)',
        '"npm run fix": scripts.fix rewrites files',
        '"npm run e2e": scripts.e2e needs a browser that CI installs',
        '"npm run ship": scripts.ship publishes packages',
      ]);
    },
  );

  await t.step("npx runs a check only when the tool is a dependency", async () => {
    const detection = await detectIn({
      "package.json": '{ "devDependencies": { "typescript": "5", "prettier": "3" } }',
      ".github/workflows/ci.yml": workflow(
        "      - run: npx tsc --noEmit\n      - run: npx prettier --check .\n" +
          "      - run: npx prettier --write .\n      - run: npx cowsay hi\n",
      ),
    });
    assert.deepEqual(
      detection.checks.map((found) => [found.command, found.kind, found.executable]),
      [["npx tsc --noEmit", "typecheck", "npx"], ["npx prettier --check .", "lint", "npx"]],
    );
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      'no "test", "typecheck" or "lint" script',
      '"npx prettier --write .": rewrites files',
      '"npx cowsay hi": "cowsay" is not a dependency of package.json, so npx would download it',
    ]);
  });
});

Deno.test("a Makefile repository whose CI runs make all && make check", async (t) => {
  const makefile = [
    "CC ?= cc",
    ".PHONY: all check install clean",
    "",
    "all: lib",
    "",
    "lib: src/a.c",
    "\t$(CC) -c src/a.c -o a.o",
    "",
    "check: all",
    "\t./run-tests.sh",
    "",
    "install: all",
    "\tinstall -m 644 a.o $(DESTDIR)/usr/lib",
    "",
    "clean:",
    "\trm -f *.o",
    "",
  ].join("\n");

  await t.step("both targets are checks, in CI's order", async () => {
    const detection = await detectIn({
      "Makefile": makefile,
      ".github/workflows/build.yml": workflow(
        `      - name: Install deps
        run: sudo apt-get install -y libfoo-dev
      - name: Build and test
        run: make all && make check
      - run: make -j4 V=1
      - run: make install DESTDIR=/tmp/x
      - run: make clean
      - run: make distcheck
      - name: Windows
        shell: pwsh
        run: ./build.ps1
`,
        "build",
      ),
    });
    assert.deepEqual(detection.checks, [
      {
        name: "make all",
        command: "make all",
        source: '.github/workflows/build.yml job "build" step "Build and test"',
        why: '.github/workflows/build.yml, job "build" runs it; Makefile has the target "all"',
        executable: "make",
        kind: "gate",
      },
      {
        name: "make check",
        command: "make check",
        source: '.github/workflows/build.yml job "build" step "Build and test"',
        why: '.github/workflows/build.yml, job "build" runs it; Makefile has the target "check"',
        executable: "make",
        kind: "gate",
      },
    ]);
    const step = (name: string) => `.github/workflows/build.yml job "build" step "${name}"`;
    assert.deepEqual(detection.skipped, [
      { source: "Makefile", why: 'no "test" target' },
      {
        source: step("Install deps"),
        why: '"sudo apt-get install -y libfoo-dev" is setup (it installs or prepares), not a check',
      },
      {
        source: step("make install DESTDIR=/tmp/x"),
        why: '"make install DESTDIR=/tmp/x": target "install" installs into the system',
      },
      { source: step("make clean"), why: '"make clean": target "clean" deletes build output' },
      {
        source: step("make distcheck"),
        why: '"make distcheck": Makefile has no "distcheck" target',
      },
      { source: step("Windows"), why: "runs in pwsh, not a POSIX shell" },
    ]);
    assert.deepEqual(detection.configFiles, [".github/workflows/build.yml", "Makefile"]);
  });

  await t.step("bare make is the default goal, the same check as make all", async () => {
    const detection = await detectIn({
      "Makefile": makefile,
      ".github/workflows/ci.yml": workflow("      - run: make\n      - run: make all\n"),
    });
    assert.deepEqual(commands(detection), ["make"]);
    assert.match(detection.checks[0].why, /Makefile has the target "all" \(its default goal\)/);
  });

  await t.step("a target whose recipe uses docker is skipped", async () => {
    const detection = await detectIn({
      "Makefile":
        "integration: image\n\tgo test -tags integration ./...\nimage:\n\tdocker build -t x .\n",
      ".github/workflows/ci.yml": workflow("      - run: make integration\n"),
    });
    assert.deepEqual(detection.skipped.at(-1), {
      source: '.github/workflows/ci.yml job "test" step "make integration"',
      why: '"make integration": target "integration" needs docker',
    });
  });

  await t.step("the test target CI runs is the one already detected", async () => {
    const detection = await detectIn({
      "Makefile": "test:\n\tgo test ./...\n",
      ".github/workflows/ci.yml": workflow("      - run: make test\n"),
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.why]), [[
      "make test",
      'Makefile has a "test" target; CI runs it too (.github/workflows/ci.yml, job "test")',
    ]]);
  });
});

Deno.test("steps that need secrets, services, deploys or CI's own values are skipped with why", async (t) => {
  await t.step(
    "a step using secrets, directly, through its env, or through the job's env",
    async () => {
      const detection = await detectIn({
        "package.json": '{ "scripts": { "test:api": "vitest run api", "lint": "eslint ." } }',
        ".github/workflows/ci.yml": workflow(
          `      - name: Upload
        run: npx codecov --token=\${{ secrets.CODECOV_TOKEN }}
      - name: API tests
        env:
          API_KEY: \${{ secrets.API_KEY }}
        run: npm run test:api
      - name: Inherited
        run: npm run test:api -- --key "$DEPLOY_TOKEN"
      - run: npm run lint
`,
          "test",
          "    env:\n      DEPLOY_TOKEN: ${{ secrets.DEPLOY }}\n",
        ),
      });
      const step = (name: string) => `.github/workflows/ci.yml job "test" step "${name}"`;
      assert.deepEqual(detection.skipped, [
        { source: step("Upload"), why: "uses secrets.CODECOV_TOKEN, which is not available here" },
        {
          source: step("API tests"),
          why: "is given API_KEY from secrets, which are not available here",
        },
        {
          source: step("Inherited"),
          why: "uses DEPLOY_TOKEN, set from secrets, which are not available here",
        },
      ]);
      assert.deepEqual(commands(detection), ["npm run lint"]);
    },
  );

  await t.step(
    "jobs with services, a deploy environment, continue-on-error or a tag condition",
    async () => {
      const detection = await detectIn({
        "package.json": '{ "scripts": { "test:db": "jest db", "deploy": "x", "flaky": "x" } }',
        ".github/workflows/ci.yml": `on: [push, pull_request]
jobs:
  db:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:16
      redis:
        image: redis
    steps:
      - run: npm run test:db
  deploy:
    runs-on: ubuntu-latest
    environment: production
    steps:
      - run: npm run deploy
  experimental:
    continue-on-error: true
    steps:
      - run: npm run flaky
  release:
    if: startsWith(github.ref, 'refs/tags/v')
    steps:
      - run: npm publish
  pedantic:
    if: github.event_name != 'pull_request'
    steps:
      - run: npm run lint:pedantic
`,
      });
      assert.deepEqual(detection.checks, []);
      assert.deepEqual(detection.skipped, [
        { source: "package.json", why: 'no "test", "typecheck" or "lint" script' },
        {
          source: '.github/workflows/ci.yml job "db"',
          why: "starts services (postgres, redis) that are not running here",
        },
        {
          source: '.github/workflows/ci.yml job "deploy"',
          why: 'deploys to the environment "production"',
        },
        {
          source: '.github/workflows/ci.yml job "experimental"',
          why: "CI tolerates its failure (continue-on-error)",
        },
        {
          source: '.github/workflows/ci.yml job "release"',
          why: `runs only when "startsWith(github.ref, 'refs/tags/v')"`,
        },
        {
          source: '.github/workflows/ci.yml job "pedantic"',
          why: `runs only when "github.event_name != 'pull_request'"`,
        },
      ]);
    },
  );

  await t.step("publishing, docker, network tools and matrix values", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "test": "jest" } }',
      ".github/workflows/ci.yml": workflow(
        `      - run: npm publish --dry-run
      - run: docker compose up -d
      - run: curl -sSf https://example.com/install.sh
      - run: npm test -- --shard=\${{ matrix.shard }}
      - run: npm test -- --shard=$SHARD
      - run: npm test || true
`,
      ),
    });
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"npm publish --dry-run": publishes packages',
      '"docker compose up -d": needs docker',
      '"curl -sSf https://example.com/install.sh": uses the network',
      '"npm test -- --shard=${{ matrix.shard }}": uses ${{ matrix.shard }}, which has no value outside CI',
      '"npm test -- --shard=$SHARD": uses $SHARD, which CI sets',
      '"npm test": its failure is tolerated (|| true)',
    ]);
  });

  await t.step("a variable CI sets to a plain value is set for the check", async () => {
    const detection = await detectIn({
      "Makefile": "test:\n\tgo test ./...\n",
      ".github/workflows/ci.yml": workflow(
        '      - run: make test GOFLAGS="$GOFLAGS"\n',
        "test",
        "    env:\n      GOFLAGS: -mod=mod -count=1\n",
      ),
    });
    assert.deepEqual(commands(detection), ["make test"]);
    assert.match(detection.checks[0].why, /CI runs it too/);
    const other = await detectIn({
      "Makefile": "check:\n\tgo test ./...\n",
      ".github/workflows/ci.yml": workflow(
        '      - run: make check GOFLAGS="$GOFLAGS"\n',
        "test",
        "    env:\n      GOFLAGS: -mod=mod -count=1\n",
      ),
    });
    assert.deepEqual(commands(other), [
      `GOFLAGS='-mod=mod -count=1' make check GOFLAGS="$GOFLAGS"`,
    ]);
  });
});

Deno.test("only workflows that run on push and pull requests are the gate", async (t) => {
  const steps = "jobs:\n  t:\n    steps:\n      - run: make check\n";
  const makefile = "check:\n\t./check.sh\n";

  await t.step("tag pushes, releases, schedules and manual runs are not", async () => {
    const detection = await detectIn({
      "Makefile": makefile,
      ".github/workflows/a.yml": `on:\n  push:\n    tags: ["v*"]\n${steps}`,
      ".github/workflows/b.yml": `on:\n  release:\n    types: [published]\n${steps}`,
      ".github/workflows/c.yml":
        `on:\n  schedule:\n    - cron: "0 0 * * *"\n  workflow_dispatch:\n${steps}`,
    });
    assert.deepEqual(detection.checks, []);
    assert.deepEqual(detection.skipped, [
      { source: "Makefile", why: 'no "test" target' },
      {
        source: ".github/workflows/a.yml",
        why: "runs on push (tags only: a release), not on push or pull requests",
      },
      { source: ".github/workflows/b.yml", why: "runs on release, not on push or pull requests" },
      {
        source: ".github/workflows/c.yml",
        why: "runs on schedule, workflow_dispatch, not on push or pull requests",
      },
    ]);
  });

  await t.step("push as a string, a list, or a mapping with branches is", async () => {
    for (
      const on of [
        "on: push",
        "on: [pull_request]",
        "on:\n  push:\n    branches: [main]\n    tags: [v*]",
        "on: merge_group",
      ]
    ) {
      const detection = await detectIn({
        "Makefile": makefile,
        ".github/workflows/ci.yml": `${on}\n${steps}`,
      });
      assert.deepEqual(commands(detection), ["make check"], on);
    }
  });

  await t.step(
    "the workflow finishline --init writes runs on issues and is not the gate",
    async () => {
      const detection = await detectIn({
        "package.json": '{ "scripts": { "test": "node --test" } }',
        ".github/workflows/finishline.yml": githubWorkflow("fixer", "finishline"),
      });
      assert.deepEqual(commands(detection), ["npm test"]);
      assert.deepEqual(detection.skipped, [{
        source: ".github/workflows/finishline.yml",
        why: "runs on issues, workflow_dispatch, not on push or pull requests",
      }]);
    },
  );

  await t.step("a local reusable workflow counts where a gate workflow calls it", async () => {
    const detection = await detectIn({
      "Makefile": makefile,
      ".github/workflows/ci.yml":
        "on: [push]\njobs:\n  call:\n    uses: ./.github/workflows/reusable.yml\n" +
        "  remote:\n    uses: octo/ci/.github/workflows/x.yml@v1\n",
      ".github/workflows/reusable.yml": `on:\n  workflow_call:\n${steps}`,
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.source]), [
      ["make check", '.github/workflows/reusable.yml job "t" step "make check"'],
    ]);
    assert.deepEqual(detection.skipped.slice(1), [
      {
        source: '.github/workflows/ci.yml job "remote"',
        why: 'calls "octo/ci/.github/workflows/x.yml@v1", a workflow outside this repository',
      },
      {
        source: ".github/workflows/reusable.yml",
        why: "a reusable workflow: its jobs count where a push or pull request workflow calls it",
      },
    ]);
  });

  await t.step("invalid YAML and files without jobs are skipped with the reason", async () => {
    const detection = await detectIn({
      ".github/workflows/bad.yml": "jobs:\n  a: [1\n  b: 2\n",
      ".github/workflows/x.yml": "name: nothing\n",
    });
    assert.equal(detection.skipped[0].source, ".github/workflows/bad.yml");
    assert.match(detection.skipped[0].why, /^invalid YAML: .*line 3, column 3$/);
    assert.deepEqual(detection.skipped[1], {
      source: ".github/workflows/x.yml",
      why: 'no "jobs" mapping',
    });
  });
});

Deno.test("cargo, go and deno commands CI runs are checks when this machine can run them", async (t) => {
  const rust = workflow(
    `      - run: rustup component add clippy rustfmt
      - run: cargo fmt --all -- --check
      - run: cargo clippy --all-targets -- -D warnings
      - run: cargo test --all-features
      - run: cargo fmt --all
      - run: cargo publish --dry-run
`,
  );

  await t.step("cargo fmt --check and clippy join cargo test", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[package]\nname = "x"\n',
      ".github/workflows/ci.yml": rust,
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.kind]), [
      ["cargo fmt --all -- --check", "lint"],
      ["cargo clippy --all-targets -- -D warnings", "lint"],
      ["cargo test", "test"],
    ]);
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"rustup component add clippy rustfmt" is setup (it installs or prepares), not a check',
      '"cargo fmt --all": cargo fmt without --check rewrites files',
      '"cargo publish --dry-run": cargo publish publishes',
    ]);
  });

  await t.step("each feature set CI checks is a check; test runs stay one", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[package]\nname = "x"\n',
      ".github/workflows/ci.yml": workflow(
        `      - run: cargo test --all-features
      - run: cargo check --no-default-features
      - run: cargo check --features serde
      - run: cargo check --no-default-features --features serde
      - run: cargo check --features=serde --no-default-features
`,
      ),
    });
    assert.deepEqual(commands(detection), [
      "cargo test",
      "cargo check --no-default-features",
      "cargo check --features serde",
      "cargo check --no-default-features --features serde",
    ]);
  });

  await t.step("without the clippy component, clippy is skipped rather than red", async () => {
    const detection = await detectIn(
      { "Cargo.toml": '[package]\nname = "x"\n', ".github/workflows/ci.yml": rust },
      { cargo: ["fmt"] },
    );
    assert.deepEqual(commands(detection), ["cargo fmt --all -- --check", "cargo test"]);
    assert.ok(
      detection.skipped.some((entry) =>
        entry.why ===
          '"cargo clippy --all-targets -- -D warnings": cargo clippy is not installed here'
      ),
    );
  });

  await t.step(
    "go vet joins go test, go test -race is a check apart; gofmt -l is not a gate",
    async () => {
      const detection = await detectIn({
        "go.mod": "module example.com/x\n",
        ".github/workflows/ci.yml": workflow(
          "      - run: go mod download\n      - run: go vet ./...\n      - run: go test -race ./...\n" +
            "      - run: gofmt -l .\n",
        ),
      });
      assert.deepEqual(detection.checks.map((found) => [found.command, found.kind]), [
        ["go test ./...", "test"],
        ["go vet ./...", "lint"],
        ["go test -race ./...", "test"],
      ]);
      assert.deepEqual(detection.skipped.map((entry) => entry.why), [
        '"go mod download" is setup (it installs or prepares), not a check',
        '"gofmt -l .": gofmt lists or rewrites files and exits 0 either way',
      ]);
    },
  );

  await t.step(
    "go test -tags purego is a check apart (other files build); -bench alone is not",
    async () => {
      // xxhash 2.3.0's CI: the amd64 assembly by default, its pure-Go code under -tags purego.
      const detection = await detectIn({
        "go.mod": "module example.com/x\n",
        ".github/workflows/ci.yml": workflow(
          "      - run: go test -count 1 -bench . -benchtime 1x ./...\n" +
            "      - run: go test -count 1 -bench . -benchtime 1x -tags purego ./...\n" +
            '      - run: go test -tags="b a" ./...\n',
        ),
      });
      assert.deepEqual(commands(detection), [
        "go test ./...",
        "go test -count 1 -bench . -benchtime 1x -tags purego ./...",
        'go test -tags="b a" ./...',
      ]);
      assert.match(detection.checks[0].why, /CI runs it too/);
    },
  );

  await t.step(
    "a tool CI installs and this machine lacks is skipped, not a check that cannot start",
    async () => {
      const detection = await detectIn({
        "package.json": '{ "scripts": { "test": "jest" } }',
        ".github/workflows/ci.yml": workflow(
          "      - uses: actions/setup-go@v5\n      - run: go vet ./...\n      - run: npm test\n",
        ),
      }, { missing: ["go"] });
      assert.deepEqual(commands(detection), ["npm test"]);
      assert.deepEqual(detection.skipped, [{
        source: '.github/workflows/ci.yml job "test" step "go vet ./..."',
        why: '"go vet ./...": go is not installed here (CI installs it)',
      }]);
    },
  );

  await t.step("deno task ok, deno fmt --check; deno fmt alone rewrites", async () => {
    const detection = await detectIn({
      "deno.json": JSON.stringify({
        tasks: { ok: "deno fmt --check && deno lint && deno test -A", test: "deno test -A" },
      }),
      ".github/workflows/ci.yml": workflow(
        "      - uses: denoland/setup-deno@v2\n      - run: deno task ok\n      - run: deno fmt\n" +
          "      - run: deno test -A\n",
      ),
    });
    // CI runs ok before the tests, so it runs before them here too.
    assert.deepEqual(detection.checks.map((found) => [found.command, found.kind, found.runner]), [
      ["deno task ok", "gate", "deno"],
      ["deno task test", "test", "deno"],
    ]);
    assert.match(detection.checks[1].why, /CI runs it too/);
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"deno fmt": deno fmt without --check rewrites files',
    ]);
  });

  await t.step("pytest in CI is the pytest check; python tools CI installs are hints", async () => {
    const detection = await detectIn({
      "pyproject.toml": "[project]\nname = 'x'\n",
      ".github/workflows/ci.yml": workflow(
        "      - run: python -m pip install -e .[test]\n      - run: ruff check .\n" +
          "      - run: python -m pytest -n auto --cov\n",
      ),
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.runner]), [
      ["python3 -m pytest", "pytest"],
    ]);
    assert.deepEqual(detection.hints, [{
      file: ".github/workflows/ci.yml",
      job: "test",
      step: "ruff check .",
      run: "ruff check .",
      why:
        `ruff is a Python tool CI installs with pip; the job runs "ruff check .", a tool's subcommand or plugin that CI installs`,
    }]);
  });
});

Deno.test("where CI runs a command: working-directory and cd", async (t) => {
  const web = '{ "scripts": { "test": "vitest run", "lint": "eslint ." } }';

  await t.step("a step's working-directory runs the command in that folder", async () => {
    const detection = await detectIn({
      "web/package.json": web,
      ".github/workflows/ci.yml": workflow(
        "      - run: npm test\n        working-directory: web\n",
      ),
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.executable]), [
      ["cd web && npm test", "npm"],
    ]);
    assert.deepEqual(detection.configFiles, [".github/workflows/ci.yml", "web/package.json"]);
  });

  await t.step("the job's defaults.run.working-directory, and cd inside a step", async () => {
    const detection = await detectIn({
      "web/package.json": web,
      ".github/workflows/ci.yml": workflow(
        "      - run: cd web && npm run lint\n",
        "test",
        "    defaults:\n      run:\n        working-directory: .\n",
      ),
    });
    assert.deepEqual(commands(detection), ["cd web && npm run lint"]);
  });

  await t.step("a folder outside the repository is skipped", async () => {
    const detection = await detectIn({
      ".github/workflows/ci.yml": workflow(
        "      - run: npm test\n        working-directory: ../other\n",
      ),
    });
    assert.deepEqual(detection.skipped, [{
      source: '.github/workflows/ci.yml job "test" step "npm test"',
      why: 'its working-directory "../other" is not a folder of the repository',
    }]);
  });

  await t.step(
    "a folder the repository has not is skipped, unless an earlier step of the job makes it",
    async () => {
      // charmbracelet/x's build workflow, one job per module, in a copy without one of them.
      const job = (name: string) =>
        `  ${name}:\n    runs-on: ubuntu-latest\n    defaults:\n      run:\n        working-directory: ./${name}\n` +
        `    steps:\n      - uses: actions/setup-go@v5\n        with:\n          go-version-file: ./${name}/go.mod\n` +
        "      - run: go test ./...\n";
      const detection = await detectIn({
        "kept/go.mod": "module example.com/kept\n\ngo 1.19\n",
        ".github/workflows/ci.yml":
          `on: [push, pull_request]\njobs:\n${job("kept")}${job("gone")}` +
          "  cmake:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cmake -B build\n" +
          "      - run: ctest\n        working-directory: build\n",
      });
      assert.deepEqual(commands(detection), ["cd kept && go test ./..."]);
      assert.deepEqual(detection.skipped.filter((entry) => /working-directory/.test(entry.why)), [
        {
          source: '.github/workflows/ci.yml job "gone" step "go test ./..."',
          why:
            'its working-directory "./gone" is not in the repository and no earlier step of the job makes it',
        },
      ]);
    },
  );
});

const MISSING = "; the job runs ./scripts/smoke.sh, which is not a file of the repository";

Deno.test("CI commands finishline does not know stay hints when their job cannot run here", async () => {
  const detection = await detectIn({
    ".github/workflows/ci.yml": workflow(
      `      - name: Smoke
        run: ./scripts/smoke.sh
      - name: Matrix
        run: |
          for v in 1 2; do
            make test V=$v
          done
      - run: npm test | tee out.txt
`,
    ),
  });
  assert.deepEqual(detection.checks, []);
  assert.deepEqual(detection.hints, [
    {
      file: ".github/workflows/ci.yml",
      job: "test",
      step: "Smoke",
      run: "./scripts/smoke.sh",
      why:
        `smoke.sh is not a package manager, make, cargo, go, deno or a Python test runner${MISSING}`,
    },
    {
      file: ".github/workflows/ci.yml",
      job: "test",
      step: "Matrix",
      run: "for v in 1 2; do\n  make test V=$v\ndone",
      why: `uses shell control flow (for), which finishline does not read${MISSING}`,
    },
    {
      file: ".github/workflows/ci.yml",
      job: "test",
      step: "npm test | tee out.txt",
      run: "npm test | tee out.txt",
      why: `pipes its output into another command${MISSING}`,
    },
  ]);
});

Deno.test("the contributing guide's test, lint and check commands are the gate too", async (t) => {
  const guide = `# Contributing

Clone and install:

\`\`\`sh
git clone https://github.com/octo/lib
cd lib
npm install
\`\`\`

Before you open a pull request, run \`npm run verify\` and make sure it passes.

\`\`\`console
$ npm run dev
Server listening on :3000
$ make check
ok
\`\`\`

To build the docs: \`npm run docs\`. To lint only: \`npm run lint\`.

\`\`\`js
npm run not-a-command-in-js
\`\`\`
`;
  const files = {
    "package.json": JSON.stringify({
      scripts: { verify: "tsc && eslint .", dev: "vite", docs: "typedoc", lint: "eslint ." },
    }),
    "Makefile": "check:\n\t./check.sh\n",
    "CONTRIBUTING.md": guide,
  };

  await t.step(
    "verify and make check are checks; dev and docs are skipped; setup is ignored",
    async () => {
      const detection = await detectIn(files);
      assert.deepEqual(detection.checks.map((found) => [found.command, found.source, found.why]), [
        [
          "npm run lint",
          "package.json scripts.lint",
          "package.json has scripts.lint; no lock file; npm by default; the contributing guide runs it too (CONTRIBUTING.md)",
        ],
        [
          "npm run verify",
          "CONTRIBUTING.md line 11",
          'CONTRIBUTING.md runs it; package.json has scripts.verify ("tsc && eslint .")',
        ],
        [
          "make check",
          "CONTRIBUTING.md line 16",
          'CONTRIBUTING.md runs it; Makefile has the target "check"',
        ],
      ]);
      assert.deepEqual(detection.skipped, [
        { source: "Makefile", why: 'no "test" target' },
        {
          source: "CONTRIBUTING.md line 14",
          why: '"npm run dev": scripts.dev starts a server or watcher',
        },
        {
          source: "CONTRIBUTING.md line 20",
          why:
            '"npm run docs": the guide shows it, but only its test, lint, typecheck and check commands count as its gate',
        },
      ]);
      assert.deepEqual(detection.configFiles, ["package.json", "CONTRIBUTING.md", "Makefile"]);
    },
  );

  await t.step("a guide in .github/ is read after CI, and only notes what CI runs", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "verify": "tsc && eslint ." } }',
      ".github/CONTRIBUTING.md": "Run `npm run verify`.\n",
      ".github/workflows/ci.yml": workflow("      - run: npm run verify\n"),
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.why]), [[
      "npm run verify",
      '.github/workflows/ci.yml, job "test" runs it; package.json has scripts.verify ("tsc && eslint ."); ' +
      "the contributing guide runs it too (.github/CONTRIBUTING.md)",
    ]]);
  });
});

Deno.test("what CI's steps mean beyond their words", async (t) => {
  await t.step(
    "printing, moving files and CI's bookkeeping are not candidates at all",
    async () => {
      const detection = await detectIn({
        "Makefile": "check:\n\t./check.sh\n",
        ".github/workflows/ci.yml": workflow(
          `      - run: |
          echo "node $(node -v)"
          mkdir -p out && cp a out/
          echo "X=1" >> "$GITHUB_ENV"
          node --version
          make check
`,
        ),
      });
      assert.deepEqual(commands(detection), ["make check"]);
      assert.deepEqual(detection.skipped, [{ source: "Makefile", why: 'no "test" target' }]);
      assert.deepEqual(detection.hints, []);
    },
  );

  await t.step("\${{ env.NAME }} with a plain value in the workflow is that value", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[package]\nname = "x"\n',
      ".github/workflows/ci.yml": workflow(
        "      - run: ${{ env.CARGO }} build --verbose ${{ env.TARGET_FLAGS }}\n",
        "test",
        "    env:\n      CARGO: cargo\n      TARGET_FLAGS:\n",
      ),
    });
    // Nothing CI runs comes after the build, so it goes last.
    assert.deepEqual(commands(detection), ["cargo test", "cargo build --verbose"]);
  });

  await t.step(
    "uv run and poetry run: the command inside; tox there is the tox rule's check",
    async () => {
      const detection = await detectIn({
        "tox.ini": "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n",
        ".github/workflows/ci.yml": workflow(
          "      - run: uv run --locked --group dev tox run\n" +
            "      - run: uv run --group dev tox run -e typing\n      - run: poetry run pytest\n",
        ),
      }, { tox: "4.11.3 from /x\n", python: "Python 3.11.7\n" });
      assert.deepEqual(detection.checks.map((found) => [found.command, found.why]), [[
        "tox -e py311",
        "tox.ini lists py311; python3 is 3.11; tox 4.11.3; the other environments need interpreters CI provides; " +
        'CI runs it too (.github/workflows/ci.yml, job "test": uv run --locked --group dev tox run)',
      ]]);
      assert.deepEqual(detection.skipped, [{
        source: '.github/workflows/ci.yml job "test" step "uv run --group dev tox run -e typing"',
        why:
          '"uv run --group dev tox run -e typing": runs the tox environment typing; the tox rule runs the interpreter\'s environment only',
      }]);
    },
  );

  await t.step("tox in CI without a tox configuration is skipped", async () => {
    const detection = await detectIn({
      ".github/workflows/ci.yml": workflow("      - run: tox -e py\n"),
    });
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"tox -e py": there is no tox configuration at the root for it to run',
    ]);
  });

  await t.step("a coverage script around the test script is the test check", async () => {
    const detection = await detectIn({
      "package.json": JSON.stringify({
        scripts: { test: "mocha test/", "test-ci": "nyc --reporter=lcovonly npm test" },
      }),
      ".github/workflows/ci.yml": workflow("      - run: npm run test-ci\n"),
    });
    assert.deepEqual(commands(detection), ["npm test"]);
    assert.match(detection.checks[0].why, /CI runs it too/);
  });

  await t.step("make in an autotools project: the Makefile CI generates is named", async () => {
    const detection = await detectIn({
      "configure.ac": "AC_INIT([x], [1])\n",
      ".github/workflows/ci.yml": workflow("      - run: make check\n"),
    });
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"make check": there is no Makefile in .: CI generates it (configure.ac is there), which finishline does not',
    ]);
  });

  await t.step("a tool the root checks already need is not skipped for being missing", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "test": "vitest run", "build": "tsc" } }',
      "pnpm-lock.yaml": "",
      ".github/workflows/ci.yml": workflow("      - run: pnpm build\n      - run: pnpm test\n"),
    }, { missing: ["pnpm"] });
    assert.deepEqual(commands(detection), ["pnpm build", "pnpm test"]);
  });

  await t.step("a workspace member's cargo test is part of cargo test --workspace", async () => {
    const detection = await detectIn({
      "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
      ".github/workflows/ci.yml": workflow(
        "      - run: cargo test --manifest-path crates/cli/Cargo.toml --lib\n",
      ),
    });
    assert.deepEqual(commands(detection), ["cargo test --workspace"]);
  });
});

Deno.test("a make target whose recipe runs a tool this machine lacks is skipped", async (t) => {
  const makefile = "ifeq (, $(shell which golangci-lint))\n" +
    '$(warning "could not find golangci-lint in $(PATH), run: curl -sfL https://x | sh")\n' +
    "endif\n\nall: test\n\ntest:\n\t$(info running tests)\n\tgo test ./...\n\n" +
    "richtest: install_deps\n\t@richgo test -v ./...\n\ninstall_deps:\n\tgo get -v ./...\n";

  await t.step("richgo, which CI installs with go install, is not here", async () => {
    const detection = await detectIn({
      "Makefile": makefile,
      ".github/workflows/test.yml": workflow(
        "      - run: go install github.com/kyoh86/richgo@latest\n" +
          "      - run: PATH=$HOME/go/bin/:$PATH make richtest\n      - run: make\n",
      ),
    });
    assert.deepEqual(detection.checks.map((found) => [found.command, found.why]), [
      ["make test", 'Makefile has a "test" target'],
      [
        "make",
        '.github/workflows/test.yml, job "test" runs it; Makefile has the target "all" (its default goal)',
      ],
    ]);
    assert.deepEqual(detection.skipped.map((entry) => entry.why), [
      '"go install github.com/kyoh86/richgo@latest" is setup (it installs or prepares), not a check',
      '"PATH=$HOME/go/bin/:$PATH make richtest": richtest runs richgo, not installed here (CI installs it)',
    ]);
  });
});

Deno.test("a CI job of commands finishline does not know runs as one check of its steps", async (t) => {
  const job = `on: [push, pull_request]
jobs:
  smoke:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci
      - run: npm run build
      - run: npm test
      - run: ./scripts/smoke.sh --fast
      - working-directory: examples
        run: ./run.sh
`;
  const files = {
    "package.json": JSON.stringify({ scripts: { build: "tsc", test: "node --test" } }),
    "package-lock.json": "{}",
    "scripts/smoke.sh": "#!/bin/sh\n",
    "examples/run.sh": "",
    ".github/workflows/ci.yml": job,
  };
  await t.step(
    "setup and the job's own test check left out, its build kept before them",
    async () => {
      const detection = await detectIn(files);
      assert.deepEqual(detection.hints, []);
      const composite = detection.checks.find((check) => check.name.startsWith("CI job"));
      assert.deepEqual(composite, {
        name: 'CI job "smoke" (.github/workflows/ci.yml)',
        command: "npm run build && ./scripts/smoke.sh --fast && (cd examples && ./run.sh)",
        source: '.github/workflows/ci.yml job "smoke"',
        why:
          "CI runs commands finishline does not know (./scripts/smoke.sh --fast, ./run.sh): the job's commands run as one check, in CI's order, setup and its own test, lint and type checks left out",
        executable: "sh",
        kind: "gate",
      });
    },
  );
  await t.step(
    "a tool's plugin CI installs (cargo miri) keeps the job's commands as hints",
    async () => {
      const detection = await detectIn({
        "Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\n',
        ".github/workflows/ci.yml":
          "on: [push]\njobs:\n  miri:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@miri\n      - run: cargo miri test\n",
      });
      assert.deepEqual(detection.checks.map((check) => check.command), ["cargo test"]);
      assert.match(
        detection.hints[0].why ?? "",
        /; the job runs "cargo miri test", a tool's subcommand or plugin that CI installs$/,
      );
    },
  );
  await t.step(
    "git diff --exit-code keeps the job's commands as hints: the copy has no .git",
    async () => {
      // inih r59's job: regenerate the expected outputs, then fail if they changed.
      const detection = await detectIn({
        "tests/unittest.sh": "#!/bin/sh\n",
        ".github/workflows/ci.yml":
          "on: [push]\njobs:\n  diff:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          cd tests\n          ./unittest.sh\n          git diff --exit-code\n",
      });
      assert.deepEqual(detection.checks, []);
      assert.deepEqual(detection.hints.map((hint) => [hint.run, hint.why]), [
        [
          "./unittest.sh",
          'unittest.sh is not a package manager, make, cargo, go, deno or a Python test runner; the job runs "git diff --exit-code": git diff compares the files with the commit, and the clean copy the checks run in has no .git',
        ],
        [
          "git diff --exit-code",
          "git diff compares the files with the commit, and the clean copy the checks run in has no .git",
        ],
      ]);
    },
  );
  await t.step("a step with a secret keeps the job's commands as hints, and says why", async () => {
    const detection = await detectIn({
      ...files,
      ".github/workflows/ci.yml": job.replace(
        "      - run: npm test\n",
        '      - run: npm test\n      - run: ./upload.sh "${{ secrets.TOKEN }}"\n',
      ),
    });
    assert.equal(detection.checks.some((check) => check.name.startsWith("CI job")), false);
    assert.match(
      detection.hints[0].why ?? "",
      /; the job needs what is not here \(uses secrets\.TOKEN, which is not available here\)$/,
    );
  });
});
