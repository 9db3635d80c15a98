/**
 * A command that builds in a temp folder of its own, outside the clean copy,
 * removed when the command ends (also when it is stopped): CMake's and
 * Meson's build trees, and an autotools project's configured tree, never
 * land in the repository, and a claim's build never sees the last one's.
 *
 * @module
 */

/**
 * `steps`, run with `$b` set to a new temp folder that is removed when the
 * shell exits, on SIGINT or SIGTERM too.
 *
 * @param steps Shell commands joined with `&&`, using `"$b"` for the folder.
 * @returns The whole command.
 */
export function inBuildFolder(steps: string): string {
  return `b=$(mktemp -d) && trap 'rm -rf "$b"' EXIT && trap 'exit 143' INT TERM && ${steps}`;
}
