import assert from "node:assert/strict";
import { splitShell, wordsOf } from "../../agents/evidence/_shell_words.ts";

function texts(script: string): string[] | string {
  const split = splitShell(script);
  return "unsupported" in split ? split.unsupported : split.units.map((unit) => unit.text);
}

Deno.test("a run: script splits into simple commands at newlines, ; and &&", async (t) => {
  await t.step("lines, ;, && and line continuations", () => {
    assert.deepEqual(texts("npm ci\nnpm run build && npm test; make \\\n  check\n"), [
      "npm ci",
      "npm run build",
      "npm test",
      "make    check",
    ]);
  });

  await t.step("quotes, $(...) and ${{ }} keep their separators inside", () => {
    assert.deepEqual(
      texts(`echo "a && b; c" 'd;e' && x=$(git rev-parse HEAD; true) && echo \${{ matrix.os }}`),
      [
        `echo "a && b; c" 'd;e'`,
        "x=$(git rev-parse HEAD; true)",
        "echo ${{ matrix.os }}",
      ],
    );
  });

  await t.step("comments are dropped, # inside a word is kept", () => {
    assert.deepEqual(texts("# install\nnpm ci # quietly\nnpm run test#1"), [
      "npm ci",
      "npm run test#1",
    ]);
  });

  await t.step("pipes and || are marked on the command", () => {
    const split = splitShell("npm test | tee log\nnpm run lint || true\nmake check || exit 1");
    assert.ok("units" in split);
    assert.deepEqual(split.units.map((unit) => [unit.text, unit.pipe, unit.orElse]), [
      ["npm test | tee log", true, undefined],
      ["npm run lint", undefined, "true"],
      ["make check", undefined, "exit 1"],
    ]);
  });

  await t.step("control flow, here-documents, subshells and background jobs are not read", () => {
    assert.equal(texts("if [ -f x ]; then make; fi"), "shell control flow (if)");
    assert.equal(texts("for v in 1 2; do make; done"), "shell control flow (for)");
    assert.equal(texts("cat <<EOF\nx\nEOF"), "a here-document (<<)");
    assert.equal(texts("(cd web && npm test)"), "a subshell or function");
    assert.equal(texts("npm start &\nnpm test"), "a background job (&)");
    assert.equal(texts("echo 'open"), "an unclosed quote");
  });
});

Deno.test("a command's words lose their quotes and redirections", () => {
  assert.deepEqual(wordsOf(`FOO="a b" npm run 'test:unit' -- --reporter=dot 2>&1 > out.txt`), [
    "FOO=a b",
    "npm",
    "run",
    "test:unit",
    "--",
    "--reporter=dot",
  ]);
  assert.deepEqual(wordsOf(`echo "say \\"hi\\"" >>log`), ["echo", 'say "hi"']);
});
