import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type Filesystem,
  OutsideRepositoryError,
  RepoFilesystem,
} from "../../agents/checks/filesystem.ts";
import { InMemoryFilesystem } from "../../agents/testing/in_memory_filesystem.ts";
import { tempDir } from "../_helpers.ts";

/** The message of the error `fn` throws, checked to be one line. */
function thrown(fn: () => unknown, kind: new (...args: never[]) => Error = Error): string {
  let message = "";
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof kind, `expected a ${kind.name}, got ${error}`);
    assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

/** A repository-like folder inside a parent that also holds a secret outside it. */
async function layout(root: string): Promise<string> {
  const repo = join(root, "repo");
  await Deno.mkdir(join(repo, "src", "lib"), { recursive: true });
  await Deno.mkdir(join(repo, ".git"), { recursive: true });
  await Deno.mkdir(join(repo, ".github"), { recursive: true });
  await Deno.writeTextFile(join(repo, "README.md"), "# demo\n");
  await Deno.writeTextFile(join(repo, "src", "main.ts"), "export {};\n");
  await Deno.writeTextFile(join(repo, "src", "lib", "util.ts"), "export {};\n");
  await Deno.writeTextFile(join(repo, "src", "lib", "notes.md"), "notes\n");
  await Deno.writeTextFile(join(repo, ".git", "config.ts"), "not the repository's code\n");
  await Deno.writeTextFile(join(repo, ".github", "ci.yml"), "on: push\n");
  await Deno.writeTextFile(join(root, "secret.txt"), "outside\n");
  await Deno.mkdir(join(root, "elsewhere"));
  await Deno.writeTextFile(join(root, "elsewhere", "leak.ts"), "outside\n");
  return repo;
}

Deno.test("RepoFilesystem reads, lists and globs inside the repository", async (t) => {
  await using root = await tempDir();
  const fs = new RepoFilesystem(await layout(root.path));

  await t.step("read and exists take paths relative to the root", () => {
    assert.equal(fs.read("README.md"), "# demo\n");
    assert.equal(fs.read("src/lib/../main.ts"), "export {};\n");
    assert.equal(fs.exists("src/lib/util.ts"), true);
    assert.equal(fs.exists("src/lib"), true);
    assert.equal(fs.exists("output.txt"), false);
    assert.equal(fs.exists("no/such/folder/file.txt"), false);
  });

  await t.step("list gives sorted names, folders with a slash", () => {
    assert.deepEqual(fs.list(), [".git/", ".github/", "README.md", "src/"]);
    assert.deepEqual(fs.list("src"), ["lib/", "main.ts"]);
  });

  await t.step("glob matches files, sorted, never inside .git", () => {
    assert.deepEqual(fs.glob("**/*.ts"), ["src/lib/util.ts", "src/main.ts"]);
    assert.deepEqual(fs.glob("src/*.ts"), ["src/main.ts"]);
    assert.deepEqual(fs.glob("src/**/*.{ts,md}"), [
      "src/lib/notes.md",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    assert.deepEqual(fs.glob(".github/*.yml"), [".github/ci.yml"]);
    assert.deepEqual(fs.glob("README.md"), ["README.md"]);
    assert.deepEqual(fs.glob("docs/**/*.md"), []);
  });

  await t.step("a missing file or a folder read is an error naming the path", () => {
    assert.equal(
      thrown(() => fs.read("CHANGELOG.md")),
      'Cannot read "CHANGELOG.md": no such file in the repository',
    );
    assert.equal(thrown(() => fs.read("src")), 'Cannot read "src": it is a folder');
    assert.equal(thrown(() => fs.list("README.md")), 'Cannot list "README.md": it is not a folder');
  });
});

Deno.test("RepoFilesystem refuses paths that leave the repository", async (t) => {
  await using root = await tempDir();
  const repo = await layout(root.path);
  await Deno.symlink(join(root.path, "secret.txt"), join(repo, "secret-link.txt"));
  await Deno.symlink(join(root.path, "elsewhere"), join(repo, "src", "elsewhere"));
  await Deno.symlink(join(repo, "README.md"), join(repo, "readme-link.md"));
  const fs = new RepoFilesystem(repo);

  for (
    const [name, call] of [
      ["read", () => fs.read("../secret.txt")],
      ["exists", () => fs.exists("../secret.txt")],
      ["list", () => fs.list("..")],
      ["read, climbing from a subfolder", () => fs.read("src/../../secret.txt")],
      ["read, an absolute path elsewhere", () => fs.read(join(root.path, "secret.txt"))],
    ] as const
  ) {
    await t.step(`${name} is refused`, () => {
      assert.match(
        thrown(call, OutsideRepositoryError),
        /^Refusing ".*secret\.txt"|^Refusing "\.\.": it is outside the repository/,
      );
    });
  }

  await t.step("a symlinked file that points outside", () => {
    const message = thrown(() => fs.read("secret-link.txt"), OutsideRepositoryError);
    assert.equal(
      message,
      `Refusing "secret-link.txt": it resolves outside the repository (to "${
        join(Deno.realPathSync(root.path), "secret.txt")
      }")`,
    );
    thrown(() => fs.exists("secret-link.txt"), OutsideRepositoryError);
  });

  await t.step("a path through a symlinked folder that points outside", () => {
    thrown(() => fs.read("src/elsewhere/leak.ts"), OutsideRepositoryError);
    thrown(() => fs.list("src/elsewhere"), OutsideRepositoryError);
    thrown(() => fs.exists("src/elsewhere/missing.ts"), OutsideRepositoryError);
  });

  await t.step("glob leaves out what points outside, keeps a symlink that stays inside", () => {
    assert.deepEqual(fs.glob("**/*.ts"), ["src/lib/util.ts", "src/main.ts"]);
    assert.deepEqual(fs.glob("*"), ["README.md", "readme-link.md"]);
    assert.equal(fs.read("readme-link.md"), "# demo\n");
  });

  await t.step("a glob that climbs out or is absolute", () => {
    assert.equal(
      thrown(() => fs.glob("../**/*.ts"), OutsideRepositoryError),
      'Refusing glob "../**/*.ts": a pattern is relative to the repository and stays inside it',
    );
    thrown(() => fs.glob(`${root.path}/*.txt`), OutsideRepositoryError);
  });

  await t.step("an empty path is a TypeError", () => {
    thrown(() => fs.read(""), TypeError);
  });
});

Deno.test("InMemoryFilesystem keeps the port's contract", async (t) => {
  const files: Filesystem = new InMemoryFilesystem({
    "README.md": "# demo\n",
    "src/main.ts": "export {};\n",
    "src/lib/util.ts": "export {};\n",
  });

  await t.step("read, exists, list, glob", () => {
    assert.equal(files.read("src/lib/../main.ts"), "export {};\n");
    assert.equal(files.exists("src/lib"), true);
    assert.equal(files.exists("src/li"), false);
    assert.deepEqual(files.list(), ["README.md", "src/"]);
    assert.deepEqual(files.list("src"), ["lib/", "main.ts"]);
    assert.deepEqual(files.glob("**/*.ts"), ["src/lib/util.ts", "src/main.ts"]);
  });

  await t.step("errors and refusals as on disk", () => {
    assert.equal(
      thrown(() => files.read("CHANGELOG.md")),
      'Cannot read "CHANGELOG.md": no such file in the repository',
    );
    thrown(() => files.exists("../secret.txt"), OutsideRepositoryError);
    thrown(() => files.glob("../*"), OutsideRepositoryError);
    thrown(() => files.list("docs"));
  });
});
