/**
 * A real terminal for tests: a tmux server of its own (its socket in a temp
 * folder), one session running one shell script at a given size, and the
 * pane read back with its scrollback.
 */

/** Whether tmux is installed; tests under a terminal are skipped without it. */
export const HAS_TMUX: boolean = (() => {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
})();

/** How long a pane may take to show what a test waits for: generous, for a loaded machine. */
const WAIT_MS = 180_000;
const POLL_MS = 100;

/** Quote a value for `sh`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A tmux server of its own, one session (`run`) running one script. */
export class Tmux implements AsyncDisposable {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * Start a session of `width` × `height` running `commands` (one per line)
   * after exporting `env`, with CI unset so the run sees a terminal. The pane
   * stays when the script ends.
   */
  static async start(
    dir: string,
    options: { width: number; height: number; env: Record<string, string>; commands: string[] },
  ): Promise<Tmux> {
    await Deno.writeTextFile(
      `${dir}/run.sh`,
      [
        "unset CI",
        ...Object.entries(options.env).map(([name, value]) =>
          `export ${name}=${shellQuote(value)}`
        ),
        ...options.commands,
      ].join("\n"),
    );
    await Deno.writeTextFile(
      `${dir}/tmux.conf`,
      "set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n",
    );
    const tmux = new Tmux(dir);
    const size = ["-x", String(options.width), "-y", String(options.height)];
    await tmux.run("new-session", "-d", ...size, "-s", "run", `sh ${dir}/run.sh`);
    return tmux;
  }

  /** Run a tmux command against this server; its stdout. */
  async run(...args: string[]): Promise<string> {
    const output = await new Deno.Command("tmux", {
      args: ["-L", "finishline-test", "-f", `${this.#dir}/tmux.conf`, ...args],
      env: { TMUX_TMPDIR: this.#dir, LANG: "C.UTF-8" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    if (!output.success) throw new Error(`tmux ${args[0]}: ${text.decode(output.stderr)}`);
    return text.decode(output.stdout);
  }

  /** The pane's lines, scrollback included, wrapped rows joined, trailing blanks cut. */
  async capture(): Promise<string[]> {
    const text = await this.run("capture-pane", "-p", "-J", "-S", "-", "-t", "run");
    return text.split("\n").map((line) => line.trimEnd());
  }

  /** Poll the pane until `found` gives a value; fail with the pane after the bound. */
  async waitFor<T>(found: (lines: string[]) => T | undefined, what: string): Promise<T> {
    const end = Date.now() + WAIT_MS;
    let lines: string[] = [];
    while (Date.now() < end) {
      lines = await this.capture();
      const hit = found(lines);
      if (hit !== undefined) return hit;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`no ${what} within ${WAIT_MS / 1000}s; the pane:\n${lines.join("\n")}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.run("kill-server").catch(() => {});
  }
}
