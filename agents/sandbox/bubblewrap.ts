/**
 * bubblewrap (`bwrap`), the sandbox finishline drives on Linux: whether it
 * can start a sandbox on this machine, and the command line of one.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import type { SessionWorld } from "./session_world.ts";

/** Whether a sandbox can be had here, and if not, why. */
export type SandboxAvailability =
  | { available: true; tool: string }
  | { available: false; reason: string };

/** System folders a session reads (read-only); the ones absent here are skipped. */
const SYSTEM_DIRS = ["/usr", "/etc", "/opt", "/nix", "/snap"];

/** Top-level names that are links into `/usr` on merged-usr systems. */
const USR_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

let cached: SandboxAvailability | undefined;

/**
 * Whether bubblewrap can start a sandbox here: it is on PATH and an
 * unprivileged user namespace can be made (Ubuntu 24.04 forbids that unless
 * AppArmor allows it). Asked once per process (about 10 ms).
 *
 * @returns Available with the tool's name, or the reason it is not.
 * @example
 * ```ts
 * import { bubblewrapAvailability } from "./bubblewrap.ts";
 *
 * const found = bubblewrapAvailability();
 * console.log(found.available ? found.tool : found.reason);
 * ```
 */
export function bubblewrapAvailability(): SandboxAvailability {
  if (cached) return cached;
  if (Deno.build.os !== "linux") {
    return cached = { available: false, reason: `no sandbox on ${Deno.build.os} yet` };
  }
  const probe = spawnSync(
    "bwrap",
    [...systemArgs(), "--unshare-pid", "--die-with-parent", "--", "true"],
    { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 },
  );
  if (probe.error) {
    const missing = (probe.error as NodeJS.ErrnoException).code === "ENOENT";
    return cached = {
      available: false,
      reason: missing ? "bubblewrap (bwrap) is not installed" : `bwrap: ${probe.error.message}`,
    };
  }
  if (probe.status !== 0) {
    const said = String(probe.stderr ?? "").trim().split("\n")[0] || `exit ${probe.status}`;
    return cached = { available: false, reason: `bwrap cannot make a sandbox here: ${said}` };
  }
  return cached = { available: true, tool: "bwrap" };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The read-only system: `/usr`, `/etc`, ... and the links of merged-usr systems. */
function systemArgs(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) if (exists(dir)) args.push("--ro-bind", dir, dir);
  for (const link of USR_LINKS) {
    let target: string | undefined;
    try {
      target = Deno.readLinkSync(link);
    } catch {
      target = undefined;
    }
    if (target !== undefined) args.push("--symlink", target, link);
    else if (exists(link)) args.push("--ro-bind", link, link);
  }
  // Ubuntu's /etc/resolv.conf is a link into /run.
  if (exists("/run/systemd/resolve")) {
    args.push("--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve");
  }
  return args;
}

/**
 * The `bwrap` arguments that start a command in a session's world: the
 * system read-only, its checkout and git store writable (the repository's
 * config and hooks read-only), a private home and /tmp, its tools
 * read-only, nothing else. The order matters: later mounts cover earlier ones.
 *
 * @param world What the session may see.
 * @returns The arguments before `--` and the command.
 */
export function bubblewrapArgs(world: SessionWorld): string[] {
  const args = [
    ...systemArgs(),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    // Private /tmp first: a checkout or home under the host's /tmp is bound into it.
    "--bind",
    world.tmp,
    "/tmp",
    "--dir",
    "/var/tmp",
  ];
  args.push("--bind", world.home, world.homePath);
  for (const [source, target] of world.homeReadOnly) args.push("--ro-bind", source, target);
  // Tools the session runs, read-only (some live under the user's home, now covered).
  for (const dir of world.readOnly) args.push("--ro-bind", dir, dir);
  for (const dir of world.writable) args.push("--bind", dir, dir);
  for (const file of world.writableFiles) args.push("--bind", file, file);
  for (const dir of world.hidden) args.push("--tmpfs", dir);
  for (const path of world.readOnlyInside) args.push("--ro-bind", path, path);
  args.push("--chdir", world.cwd);
  return args;
}
