/**
 * The canaries of `go test` and `cargo test`.
 *
 * Go: a `_test.go` file in each package the claim changed (at most
 * {@linkcode GO_PACKAGES}), else in the first package with tests, declared in
 * that package, so that its `TestMain`, the `init` functions of its files
 * and of what it imports, and the build flags of the check (`-tags`,
 * `-exec`) act on it as on the package's own tests. Each package runs alone
 * (`go test -run '^TestFinishlineCanary<token>' ./<package>`): the exit
 * status a `TestMain` gives is its package's, and one package's must not
 * hide another's.
 *
 * cargo: an integration test, `tests/finishline_canary_<token>.rs`, of the
 * package the claim changed (else the root package), run with `cargo test
 * --test <name>` and the check's options. It names the package's library
 * (`extern crate`). What a crate can reach there is limited: the test
 * harness is the standard library's, compiled into each test binary, and
 * library code does not patch it; what can act is cargo's configuration in
 * the repository (`.cargo/config.toml`: a `runner` for test binaries,
 * `rustflags`), the package's `build.rs`, and code that runs in every
 * binary the library is linked into (a static constructor with an exit
 * handler), which acts on the canary only when the linker keeps the
 * library's code in it. A package that turns test discovery off
 * (`autotests = false`) has no canary.
 *
 * @module
 */

import path from "node:path";
import {
  type Canary,
  canaryNames,
  commandLine,
  distinctNumbers,
  isFile,
  nearest,
  type PlaceContext,
  type Placed,
  type Placement,
  runnerLine,
  type RunnerOptions,
  testFiles,
} from "./_canary_common.ts";

/** At most this many Go packages get a canary at one claim: each is one more build and run. */
export const GO_PACKAGES = 3;

const GO_OPTIONS: RunnerOptions = {
  values: [
    "-run",
    "-skip",
    "-bench",
    "-benchtime",
    "-count",
    "-coverprofile",
    "-covermode",
    "-coverpkg",
    "-cpu",
    "-parallel",
    "-timeout",
    "-blockprofile",
    "-blockprofilerate",
    "-cpuprofile",
    "-memprofile",
    "-memprofilerate",
    "-mutexprofile",
    "-mutexprofilefraction",
    "-trace",
    "-outputdir",
    "-list",
    "-fuzz",
    "-fuzztime",
    "-fuzzminimizetime",
    "-shuffle",
    "-tags",
    "-ldflags",
    "-gcflags",
    "-asmflags",
    "-gccgoflags",
    "-mod",
    "-modfile",
    "-exec",
    "-o",
    "-p",
    "-pkgdir",
    "-toolexec",
    "-vet",
    "-C",
    "-overlay",
    "-pgo",
    "-compiler",
    "-installsuffix",
    "-buildmode",
  ],
  dropped: [
    "-run",
    "-skip",
    "-bench",
    "-benchtime",
    "-benchmem",
    "-list",
    "-fuzz",
    "-fuzztime",
    "-fuzzminimizetime",
    "-failfast",
    "-json",
    "-count",
    "-v",
    "-shuffle",
    "-o",
    "-c",
    "-C",
    "-cover",
    "-coverprofile",
    "-covermode",
    "-coverpkg",
    "-cpuprofile",
    "-memprofile",
    "-blockprofile",
    "-mutexprofile",
    "-trace",
    "-outputdir",
  ],
};

const CARGO_OPTIONS: RunnerOptions = {
  values: [
    "-p",
    "--package",
    "--exclude",
    "--test",
    "--bin",
    "--example",
    "--bench",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--profile",
    "-j",
    "--jobs",
    "--manifest-path",
    "--message-format",
    "--color",
    "--config",
    "-Z",
    "--lockfile-path",
  ],
  dropped: [
    "-p",
    "--package",
    "--workspace",
    "--all",
    "--exclude",
    "--lib",
    "--bins",
    "--bin",
    "--tests",
    "--test",
    "--examples",
    "--example",
    "--benches",
    "--bench",
    "--all-targets",
    "--doc",
    "--no-run",
    "--manifest-path",
    "--message-format",
    "-q",
    "--quiet",
  ],
};

/** Folders Go leaves out of `./...`. */
const GO_SKIPPED = /(^|\/)(vendor|testdata|[._][^/]*)\//;

/** The Go packages the canary goes into: those of the claim's changed Go files, else the first with tests. */
async function goPackages(context: PlaceContext): Promise<{ folders: string[]; more: number }> {
  const changed = context.changed.filter((file) =>
    file.endsWith(".go") && !GO_SKIPPED.test(file) && isFile(path.join(context.dir, file))
  );
  const folders = [...new Set(changed.map((file) => path.dirname(file)))];
  const modules = context.changed.some((file) => /(^|\/)go\.(mod|sum|work)$/.test(file));
  if (folders.length === 0 || modules) {
    const tests = await testFiles(context.dir, /(^|\/)[^/]+_test\.go$/, []);
    const first = tests.find((test) => !GO_SKIPPED.test(test));
    if (first && !folders.includes(path.dirname(first))) folders.push(path.dirname(first));
  }
  return {
    folders: folders.slice(0, GO_PACKAGES),
    more: Math.max(0, folders.length - GO_PACKAGES),
  };
}

/** The package a folder's Go files declare (its non-test files first), and the assertion packages its tests import. */
async function goPackage(
  folder: string,
): Promise<{ name: string; testify: string[] } | undefined> {
  const names: string[] = [];
  const testNames: string[] = [];
  const testify = new Set<string>();
  for await (const entry of Deno.readDir(folder)) {
    if (!entry.isFile || !entry.name.endsWith(".go")) continue;
    const text = await Deno.readTextFile(path.join(folder, entry.name)).catch(() => "");
    // A file built only on request (`//go:build ignore`) may declare another package.
    if (/^\/\/(?:go:build|\s*\+build)\s+ignore\b/m.test(text)) continue;
    const declared = /^package\s+(\w+)/m.exec(text)?.[1];
    if (!declared) continue;
    if (entry.name.endsWith("_test.go")) {
      testNames.push(declared);
      for (
        const [, imported] of text.matchAll(
          /"(github\.com\/stretchr\/testify\/(?:assert|require))"/g,
        )
      ) {
        testify.add(imported);
      }
    } else names.push(declared);
  }
  const name = names.sort()[0] ?? testNames.sort()[0];
  return name ? { name, testify: [...testify].sort() } : undefined;
}

/** The Go canary file of one package. */
function goCanaryText(canary: Canary, name: string, testify: string[], token: string): string {
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const alias = (imported: string) => `finishline${imported.split("/").pop()}${token}`;
  const bodies = goStyles(testify, a, b, token, alias);
  const tests = [
    `func ${canary.mustPass}(t *testing.T) {`,
    `\tif a, b := ${n}, ${n}; a != b {`,
    `\t\tt.Fatalf("finishline canary: %d != %d", a, b)`,
    "\t}",
    "}",
    ...canary.mustFail.flatMap((test, index) => [
      `func ${test}(t *testing.T) {`,
      ...Object.values(bodies)[index].map((line) => `\t${line}`),
      "}",
    ]),
  ];
  return [
    "// finishline's canary: its own tests, removed after its run.",
    "",
    `package ${name}`,
    "",
    "import (",
    '\t"testing"',
    ...testify.map((imported) => `\t${alias(imported)} "${imported}"`),
    ")",
    "",
    ...tests,
    "",
  ].join("\n");
}

/**
 * The Go styles: the testing package's ways to fail, and testify's. No
 * panic: it ends the test binary before a `TestMain` could give its exit
 * status, and that status is what the canary is there to see.
 */
function goStyles(
  testify: string[],
  a: number,
  b: number,
  token: string,
  alias: (imported: string) => string,
): Record<string, string[]> {
  const styles: Record<string, string[]> = {
    errorf: [
      `if a, b := ${a}, ${b}; a != b {`,
      `\tt.Errorf("finishline canary: %d != %d", a, b)`,
      "}",
    ],
    fatal: [`t.Fatal("finishline canary ${token}")`],
    fail_now: ["t.FailNow()"],
  };
  for (const imported of testify) {
    styles[`testify_${imported.split("/").pop()}`] = [
      `${alias(imported)}.Equal(t, ${a}, ${b})`,
    ];
  }
  return styles;
}

/** `go test`: one canary per package, each run alone from its module's root. */
export async function placeGo(context: PlaceContext): Promise<Placement> {
  const { folders, more } = await goPackages(context);
  if (folders.length === 0) return { why: "no Go package with tests was found" };
  const line = await runnerLine(context, "go", GO_OPTIONS);
  const placed: Placed[] = [];
  const skipped: string[] = [];
  for (const folder of folders) {
    const absolute = path.join(context.dir, folder);
    const module = nearest(context.dir, absolute, (at) => isFile(path.join(at, "go.mod")));
    const declared = await goPackage(absolute).catch(() => undefined);
    if (!module || !declared) {
      skipped.push(folder);
      continue;
    }
    const canary = canaryNames("go", context.token, [
      ...Object.keys(goStyles(declared.testify, 0, 1, "", () => "")),
    ]);
    const file = path.join(absolute, `finishline_canary_${context.token}_test.go`);
    await context.write(
      file,
      goCanaryText(canary, declared.name, declared.testify, context.token),
    );
    const relative = path.relative(module, absolute);
    const target = relative === "" ? "." : `./${relative.split(path.sep).join("/")}`;
    const words = [
      "go",
      "test",
      ...(line?.options ?? []),
      "-count=1",
      "-v",
      "-run",
      `^TestFinishlineCanary${context.token}`,
      target,
    ];
    placed.push({
      canary,
      command: commandLine(line?.env ?? [], words),
      cwd: module,
      where: target === "." ? (path.relative(context.dir, module) || ".") : folder,
    });
  }
  if (placed.length === 0) {
    return { why: `no Go module or package clause was found for ${skipped.join(", ")}` };
  }
  const left = [
    ...(more > 0 ? [`${more} more changed packages (at most ${GO_PACKAGES} a claim)`] : []),
    ...(skipped.length > 0 ? [`${skipped.join(", ")} (no module or package clause found)`] : []),
  ];
  if (left.length > 0) placed[0].leftOut = left.join("; ");
  return placed;
}

/** A package's Cargo.toml: its name, its library's crate name, and whether it finds tests itself. */
function cargoPackage(
  folder: string,
): { name: string; library?: string; autotests: boolean } | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path.join(folder, "Cargo.toml"));
  } catch {
    return undefined;
  }
  const section = (header: string) => {
    const start = text.search(new RegExp(`^\\[${header}\\]\\s*$`, "m"));
    if (start === -1) return undefined;
    const rest = text.slice(start).split("\n").slice(1);
    const end = rest.findIndex((line) => /^\s*\[/.test(line));
    return (end === -1 ? rest : rest.slice(0, end)).join("\n");
  };
  const field = (body: string | undefined, key: string) =>
    body === undefined
      ? undefined
      : new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*$`, "m").exec(body)?.[1];
  const pkg = section("package");
  const name = field(pkg, "name")?.replace(/^"|"$/g, "");
  if (!name) return undefined;
  const lib = section("lib");
  const libName = field(lib, "name")?.replace(/^"|"$/g, "");
  const hasLib = lib !== undefined || isFile(path.join(folder, "src", "lib.rs"));
  return {
    name,
    ...(hasLib ? { library: (libName ?? name).replaceAll("-", "_") } : {}),
    autotests: field(pkg, "autotests") !== "false",
  };
}

/** The cargo package the canary goes into: that of the claim's first changed Rust file, else the root's, else the first found. */
async function cargoFolder(context: PlaceContext): Promise<string | undefined> {
  const isPackage = (folder: string) => cargoPackage(folder) !== undefined;
  for (const file of context.changed) {
    if (!file.endsWith(".rs") || /(^|\/)target\//.test(file)) continue;
    const found = nearest(context.dir, path.dirname(path.join(context.dir, file)), isPackage);
    if (found) return found;
  }
  if (isPackage(context.dir)) return context.dir;
  const manifests = await testFiles(context.dir, /(^|\/)Cargo\.toml$/, []);
  return manifests.map((manifest) => path.join(context.dir, path.dirname(manifest)))
    .find(isPackage);
}

/** `cargo test --test finishline_canary_<token>`: an integration test of the package. */
export async function placeCargo(context: PlaceContext): Promise<Placement> {
  const folder = await cargoFolder(context);
  const pkg = folder ? cargoPackage(folder) : undefined;
  if (!folder || !pkg) return { why: "no cargo package was found" };
  if (!pkg.autotests) {
    return {
      why: `${
        path.relative(context.dir, path.join(folder, "Cargo.toml"))
      } turns test discovery off (autotests = false)`,
    };
  }
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const bodies: Record<string, string> = {
    assert: `let (a, b) = (${a}u64, ${b}u64);\n    assert!(a == b, "finishline canary");`,
    assert_eq: `let (a, b) = (${a}u64, ${b}u64);\n    assert_eq!(a, b);`,
    panic: `panic!("finishline canary ${context.token}");`,
    result: `Err(String::from("finishline canary ${context.token}"))`,
    should_panic: "",
  };
  const canary = canaryNames("cargo", context.token, Object.keys(bodies));
  const header = (style: string) =>
    style === "should_panic" ? "#[test]\n#[should_panic]" : "#[test]";
  const signature = (style: string) => style === "result" ? " -> Result<(), String>" : "";
  const text = [
    "// finishline's canary: its own tests, removed after its run.",
    "#![allow(unused_extern_crates)]",
    ...(pkg.library ? [`extern crate ${pkg.library};`] : []),
    "",
    "#[test]",
    `fn ${canary.mustPass}() {`,
    `    assert_eq!(${n}u64, ${n}u64);`,
    "}",
    ...Object.entries(bodies).flatMap(([style, body], index) => [
      "",
      header(style),
      `fn ${canary.mustFail[index]}()${signature(style)} {`,
      ...(body ? [`    ${body}`] : []),
      "}",
    ]),
    "",
  ].join("\n");
  const target = `finishline_canary_${context.token}`;
  await context.write(path.join(folder, "tests", `${target}.rs`), text);
  const line = await runnerLine(context, "cargo", CARGO_OPTIONS);
  const words = ["cargo", "test", ...(line?.options ?? []), "--test", target];
  return [{ canary, command: commandLine(line?.env ?? [], words), cwd: folder }];
}
