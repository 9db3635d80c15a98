/**
 * Memory of a process tree, sampled from `/proc` (Linux): the resident set
 * of a process and of all its descendants, summed.
 *
 * @module
 */

/** Resident set size of one process in KiB, or 0 when it is gone. */
export function rssKiB(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const match = status.match(/^VmRSS:\s+(\d+) kB/m);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** The process and its descendants (children of every thread). */
export function processTree(root: number): number[] {
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    tree.push(pid);
    let tasks: string[] = [];
    try {
      tasks = [...Deno.readDirSync(`/proc/${pid}/task`)].map((entry) => entry.name);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = Deno.readTextFileSync(`/proc/${pid}/task/${task}/children`).trim();
        if (children) queue.push(...children.split(/\s+/).map(Number));
      } catch {
        // the thread ended
      }
    }
  }
  return tree;
}

/**
 * Samples the summed resident set of a process tree at an interval and keeps
 * the peak; `onSample` sees each sample (for per-iteration readings).
 */
export class TreeSampler {
  /** The highest sum seen, in KiB. */
  peakKiB = 0;
  #timer: ReturnType<typeof setInterval>;

  constructor(
    root: number,
    intervalMs: number,
    onSample?: (treeKiB: number, rootKiB: number) => void,
  ) {
    const sample = () => {
      let total = 0;
      let rootKiB = 0;
      for (const pid of processTree(root)) {
        const kib = rssKiB(pid);
        if (pid === root) rootKiB = kib;
        total += kib;
      }
      this.peakKiB = Math.max(this.peakKiB, total);
      onSample?.(total, rootKiB);
    };
    sample();
    this.#timer = setInterval(sample, intervalMs);
  }

  /** Stop sampling. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
