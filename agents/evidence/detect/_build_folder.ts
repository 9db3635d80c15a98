/**
 * A command that builds in a folder outside the clean copy: CMake's and
 * Meson's build trees, and an autotools project's configured tree, never
 * land in the repository. Where finishline names a folder it keeps
 * (`FINISHLINE_BUILD_DIR`, in its copies: see `run/build_folder.ts`), the
 * command builds there and leaves it; anywhere else in a temp folder of its
 * own, removed when the command ends (also when it is stopped), so that no
 * build sees another's.
 *
 * @module
 */

import { BUILD_FOLDER_VARIABLE } from "../run/build_folder.ts";

/**
 * `steps`, run with `$b` set to the build folder: the kept one when
 * finishline names it and `kept` is on, else a new temp folder removed when
 * the shell exits, on SIGINT or SIGTERM too.
 *
 * @param steps Shell commands joined with `&&`, using `"$b"` for the folder.
 * @param options `kept`: whether the steps may start from a folder built before
 * (they configure only what is not configured yet). @default false
 * @returns The whole command.
 */
export function inBuildFolder(steps: string, options: { kept?: boolean } = {}): string {
  const temp = `b=$(mktemp -d) && trap 'rm -rf "$b"' EXIT`;
  const folder = options.kept
    ? `if [ -n "$${BUILD_FOLDER_VARIABLE}" ]; then b=$${BUILD_FOLDER_VARIABLE} && mkdir -p "$b"; else ${temp}; fi`
    : temp;
  return `${folder} && trap 'exit 143' INT TERM && ${steps}`;
}
