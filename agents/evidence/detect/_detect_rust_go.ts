/**
 * Cargo and Go: `cargo test` (with `--workspace` for a Cargo workspace, so
 * that every member is tested, not only the root package), and `go test
 * ./...` for the root module and for each module a go.work uses, or, with
 * no go.work, each module below the root whose requirements can be had here
 * (`./...` never crosses into another module).
 *
 * @module
 */

import {
  addCheck,
  addConfigFile,
  inFolder,
  inRepository,
  read,
  readPath,
  type Scan,
  sectionOf,
  skip,
  within,
} from "./_detect_scan.ts";
import { nestedModules, unreachableRequirements } from "./_go_modules.ts";

/** Cargo.toml at the root: `cargo test`, or `cargo test --workspace` when it declares a workspace. */
export async function detectCargo(scan: Scan): Promise<void> {
  if (!scan.files.has("Cargo.toml")) return;
  const text = await read(scan, "Cargo.toml");
  const workspace = sectionOf(text, /^\[workspace\]$/) !== undefined;
  const command = workspace ? "cargo test --workspace" : "cargo test";
  if (
    addCheck(
      scan,
      {
        name: command,
        command,
        source: workspace ? "Cargo.toml [workspace]" : "Cargo.toml",
        why: workspace
          ? "Cargo.toml declares a [workspace]; --workspace tests every member, not only the root package"
          : "Cargo.toml is at the root",
        executable: "cargo",
        runner: "cargo",
        kind: "test",
      },
      ["cargo:.:test"],
    )
  ) await addConfigFile(scan, "Cargo.toml");
}

/** The folders a go.work uses (`use ./a` and `use ( ./a ./b )`), repository-relative. */
export function goWorkModules(text: string): string[] {
  const folders: string[] = [];
  const body = text.replace(/\/\/.*$/gm, "");
  for (const match of body.matchAll(/^\s*use\s*(?:\(([^)]*)\)|(\S+))/gm)) {
    const listed = match[1] !== undefined ? match[1].trim().split(/\s+/) : [match[2]];
    for (const entry of listed) {
      const folder = inRepository(entry.replace(/^"|"$/g, ""));
      if (entry !== "" && folder !== undefined && !folders.includes(folder)) folders.push(folder);
    }
  }
  return folders;
}

/** go.mod at the root, and each module of a go.work, or else each module below the root. */
export async function detectGo(scan: Scan): Promise<void> {
  const modules: Array<{ dir: string; source: string; why: string }> = [];
  if (scan.files.has("go.mod")) {
    modules.push({ dir: ".", source: "go.mod", why: "go.mod is at the root" });
  }
  const work = await read(scan, "go.work");
  if (work !== undefined) {
    for (const dir of goWorkModules(work)) {
      if (dir === ".") continue;
      if (await readPath(scan, within(dir, "go.mod")) === undefined) {
        skip(scan, `go.work use ./${dir}`, `${within(dir, "go.mod")} does not exist`);
        continue;
      }
      modules.push({
        dir,
        source: `go.work use ./${dir}`,
        why: `go.work uses ./${dir}, a module of its own that ./... at the root does not reach`,
      });
    }
  }
  // A go.work lists the workspace's modules: go refuses to test another one inside it.
  const below = work === undefined && scan.files.has("go.mod") ? await nestedModules(scan) : [];
  for (const dir of below) {
    const unreachable = await unreachableRequirements(scan, dir);
    if (unreachable !== undefined) {
      skip(scan, within(dir, "go.mod"), unreachable);
      continue;
    }
    modules.push({
      dir,
      source: within(dir, "go.mod"),
      why: `${
        within(dir, "go.mod")
      } declares a module of its own that ./... at the root does not reach`,
    });
  }
  for (const { dir, source, why } of modules) {
    const command = inFolder(dir, "go test ./...");
    if (
      addCheck(
        scan,
        { name: command, command, source, why, executable: "go", runner: "go", kind: "test" },
        [`go:${dir}:test`],
      )
    ) {
      await addConfigFile(scan, within(dir, "go.mod"));
      if (dir !== ".") await addConfigFile(scan, "go.work");
    }
  }
}
