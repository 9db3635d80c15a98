/**
 * Brings a corpus repository to this machine: downloads its archive once
 * (checked against its SHA-256), unpacks it, installs its development
 * dependencies once, all in the corpus cache; then copies it into a fresh
 * git repository for each scenario.
 *
 * @module
 */

import { corpusCache, type CorpusRepo, type Edit } from "./_corpus.ts";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "../../agents/support/process.ts";
import { git } from "../_helpers.ts";

/** A corpus repository ready to copy, or why it cannot be used on this machine. */
export type Prepared =
  | {
    ok: true;
    repo: CorpusRepo;
    src: string;
    env: Record<string, string>;
    /** The `needs` that failed here: detection can run, scenarios cannot. */
    missing: string[];
  }
  | { ok: false; repo: CorpusRepo; unavailable: string };

/** Runs `sh -c command` in `cwd` (10 minutes at most: installs); returns its exit code and output. */
async function sh(
  command: string,
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const result = await runTool("sh", ["-c", command], { cwd, env, timeoutMs: 600_000 });
  return { code: result.code, output: result.stdout + result.stderr };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of a folder's files, their paths and contents, in a stable order. */
async function treeDigest(root: string): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = [];
    for await (const entry of Deno.readDir(`${root}/${dir}`)) entries.push(entry);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(path);
      else parts.push(`${path}\0${await sha256(`${root}/${path}`)}`);
    }
  };
  await walk("");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\n")));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

let cachedEnv: Record<string, string> | undefined;

/**
 * The environment the corpus's checks need when a test moves `HOME`: the
 * user's toolchain homes (rustup, cargo, Go's build cache, pyenv, npm's
 * cache) stay where they are, and `python3` is one that has pytest (Debian's
 * when the first on PATH lacks it), through a bin folder in the cache.
 *
 * @returns Variables to add to the CLI's environment.
 */
export async function toolEnv(): Promise<Record<string, string>> {
  if (cachedEnv) return cachedEnv;
  const home = Deno.env.get("HOME") ?? "/root";
  const env: Record<string, string> = {};
  const keep: Array<[string, string]> = [
    ["RUSTUP_HOME", `${home}/.rustup`],
    ["CARGO_HOME", `${home}/.cargo`],
    ["PYENV_ROOT", `${home}/.pyenv`],
    ["GOCACHE", `${home}/.cache/go-build`],
    ["GOPATH", `${home}/go`],
    ["npm_config_cache", `${home}/.npm`],
  ];
  for (const [name, fallback] of keep) env[name] = Deno.env.get(name) ?? fallback;
  env.GOFLAGS = "-mod=mod";
  env.GOPROXY = "off";
  env.GOTOOLCHAIN = "local";
  // Tools a corpus project's workflow needs (pnpm) come first, from the cache.
  let path = `${corpusCache()}/tools/node_modules/.bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
  const pytest = await sh("python3 -m pytest --version", "/", { PATH: path }).catch(() => ({
    code: 1,
    output: "",
  }));
  if (pytest.code !== 0 && (await sh("/usr/bin/python3 -m pytest --version", "/")).code === 0) {
    const bin = `${corpusCache()}/bin`;
    await Deno.mkdir(bin, { recursive: true });
    await Deno.remove(`${bin}/python3`).catch(() => {});
    await Deno.symlink("/usr/bin/python3", `${bin}/python3`);
    path = `${bin}:${path}`;
  }
  env.PATH = path;
  cachedEnv = env;
  return env;
}

/** Applies `edit` to the file under `root`; throws when `from` is not there (exactly once unless `all`). */
export async function applyEdit(root: string, edit: Edit): Promise<void> {
  const path = `${root}/${edit.file}`;
  const text = await Deno.readTextFile(path);
  const count = text.split(edit.from).length - 1;
  if (count === 0 || (count > 1 && !edit.all)) {
    throw new Error(`${edit.file}: the edit's text occurs ${count} times, expected one`);
  }
  await Deno.writeTextFile(path, text.split(edit.from).join(edit.to));
}

/** The reverse of an edit. */
export function reverse(edit: Edit): Edit {
  return { ...edit, from: edit.to, to: edit.from };
}

/**
 * Downloads `source.url` to `file` unless it is there with the pinned
 * SHA-256; returns why not when the registry does not answer.
 */
async function download(
  source: { url: string; sha256: string },
  file: string,
  id: string,
): Promise<string | undefined> {
  if (await exists(file) && await sha256(file) === source.sha256) return undefined;
  let response: Response;
  try {
    response = await fetch(source.url);
  } catch (error) {
    return `cannot download ${source.url}: ${error}`;
  }
  if (!response.ok) {
    await response.body?.cancel();
    return `${source.url} answered ${response.status}`;
  }
  await Deno.writeFile(`${file}.part`, new Uint8Array(await response.arrayBuffer()));
  const got = await sha256(`${file}.part`);
  if (got !== source.sha256) {
    await Deno.remove(`${file}.part`);
    throw new Error(`${id}: ${source.url} has SHA-256 ${got}, expected ${source.sha256}`);
  }
  await Deno.rename(`${file}.part`, file);
  return undefined;
}

/**
 * Downloads, checks, unpacks and installs a corpus repository in the cache,
 * once; later calls return at once.
 *
 * @param repo The repository.
 * @returns Where it is and which of its `needs` this machine lacks, or why
 * it cannot be used here (a download that failed).
 * @throws {Error} When the archive's SHA-256 is not the pinned one, or the
 * install or an edit fails: the corpus itself is wrong.
 */
export async function prepareRepo(repo: CorpusRepo): Promise<Prepared> {
  const env = { ...await toolEnv(), ...repo.env };
  const tools = `${corpusCache()}/tools`;
  const toolName = (spec: string) => spec.replace(/(?<=.)@[^@/]*$/, "");
  const absent = [];
  for (const spec of repo.tools ?? []) {
    if (!(await exists(`${tools}/node_modules/${toolName(spec)}`))) absent.push(spec);
  }
  if (absent.length > 0) {
    await Deno.mkdir(tools, { recursive: true });
    const installed = await sh(
      `npm install --prefix ${tools} --no-audit --no-fund --no-save ${absent.join(" ")}`,
      tools,
      env,
    );
    if (installed.code !== 0) {
      return { ok: false, repo, unavailable: `cannot install ${absent.join(", ")}` };
    }
  }
  const missing: string[] = [];
  for (const need of repo.needs) {
    const result = await sh(need, "/", env).catch(() => ({ code: 127 }));
    if (result.code !== 0) missing.push(need);
  }
  const folder = `${corpusCache()}/${repo.id}`;
  const src = `${folder}/src`;
  const ready = `${folder}/ready.json`;
  const snapshot = repo.source.kind === "snapshot"
    ? fileURLToPath(new URL(`../../${repo.source.path}`, import.meta.url))
    : undefined;
  const key = JSON.stringify({
    source: repo.source,
    // A committed snapshot's content: an edit of it must not be hidden by the cache.
    ...(snapshot ? { content: await treeDigest(snapshot) } : {}),
    deps: repo.deps,
    files: repo.files,
    install: repo.install,
  });
  if (await exists(ready) && await Deno.readTextFile(ready) === key) {
    return { ok: true, repo, src, env, missing };
  }
  await Deno.mkdir(folder, { recursive: true });
  const archive = `${folder}/archive`;
  if (repo.source.kind !== "snapshot") {
    const failed = await download(repo.source, archive, repo.id);
    if (failed !== undefined) return { ok: false, repo, unavailable: failed };
  }
  const deps = `${folder}/deps`;
  await Deno.remove(deps, { recursive: true }).catch(() => {});
  for (const [index, dep] of (repo.deps ?? []).entries()) {
    const file = `${folder}/dep-${index}.deb`;
    const depFailed = await download(dep, file, repo.id);
    if (depFailed !== undefined) return { ok: false, repo, unavailable: depFailed };
    await Deno.mkdir(deps, { recursive: true });
    const unpackedDep = await sh(`dpkg-deb -x ${file} ${deps}`, folder);
    if (unpackedDep.code !== 0) throw new Error(`${repo.id}: ${unpackedDep.output}`);
  }
  await Deno.remove(src, { recursive: true }).catch(() => {});
  const unpacked = `${folder}/unpacked`;
  await Deno.remove(unpacked, { recursive: true }).catch(() => {});
  await Deno.mkdir(unpacked);
  // --no-same-owner: an archive's owner (Builder's is www-data) would make git refuse the copy.
  const unpack = repo.source.kind === "snapshot"
    ? await sh(`cp -R ${snapshot} ${unpacked}/src`, folder)
    : repo.source.kind === "tar"
    ? await sh(`tar xzf ${archive} --no-same-owner -C ${unpacked}`, folder)
    : await sh(`dpkg-deb -x ${archive} ${unpacked}`, folder);
  if (unpack.code !== 0) throw new Error(`${repo.id}: unpacking failed: ${unpack.output}`);
  await Deno.rename(
    `${unpacked}/${repo.source.kind === "snapshot" ? "src" : repo.source.dir}`,
    src,
  );
  await Deno.remove(unpacked, { recursive: true });
  for (const [file, text] of Object.entries(repo.files ?? {})) {
    await Deno.mkdir(dirname(`${src}/${file}`), { recursive: true });
    await Deno.writeTextFile(`${src}/${file}`, text.replaceAll("{deps}", deps));
  }
  // Every edit must apply to the release as shipped (checked on a scratch copy).
  const scratch = `${folder}/scratch`;
  await Deno.remove(scratch, { recursive: true }).catch(() => {});
  const copied = await sh(`cp -a ${src} ${scratch}`, folder);
  if (copied.code !== 0) throw new Error(`${repo.id}: ${copied.output}`);
  try {
    await applyEdit(scratch, repo.bug);
    for (const edit of repo.weaken) await applyEdit(scratch, edit);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
  if (repo.install) {
    const installed = await sh(repo.install, src, env);
    if (installed.code !== 0) {
      throw new Error(`${repo.id}: ${repo.install} failed:\n${installed.output.slice(-3000)}`);
    }
  }
  await Deno.writeTextFile(ready, key);
  return { ok: true, repo, src, env, missing };
}

/**
 * A fresh git repository at `target` holding the prepared project: one
 * commit of the release (with the harness's packaging files and the lock
 * file the install wrote), dependency and build folders ignored through
 * `.git/info/exclude`, and the dependency folders copied (not linked: an
 * agent that edits them must not reach the cache).
 *
 * @param prepared The prepared repository.
 * @param target An empty folder.
 */
export async function copyRepo(prepared: Prepared & { ok: true }, target: string): Promise<void> {
  const copied = await sh(`cp -a ${prepared.src}/. ${target}/`, "/");
  if (copied.code !== 0) throw new Error(copied.output);
  await git(target, "init", "-q", "-b", "main");
  await git(target, "config", "user.name", "Corpus");
  await git(target, "config", "user.email", "corpus@example.invalid");
  await Deno.writeTextFile(
    `${target}/.git/info/exclude`,
    [...prepared.repo.exclude, ""].join("\n"),
  );
  await git(target, "add", "-A");
  // The harness's packaging files are committed even where the release's .gitignore names them
  // (json-simple's ignores *.xml, its pom.xml among them, which upstream tracks all the same).
  const files = Object.keys(prepared.repo.files ?? {});
  if (files.length > 0) await git(target, "add", "-f", "--", ...files);
  await git(target, "commit", "-qm", `upstream: ${prepared.repo.project}`);
}
