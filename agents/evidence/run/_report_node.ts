/**
 * node --test's output: the spec and TAP reporters.
 *
 * @module
 */

import { Names, type Parsed, report, type Status, Tree } from "./_report_common.ts";
import { MOCHA_TAP } from "./_report_mocha.ts";

// Node's spec reporter prints " # reason" after the duration of a skipped or
// todo test; skipped ones carry "﹣", so a "✖" with it is a failing todo.
export const NODE_SPEC = /^( *)(✔|✖|﹣|▶) (.*?)(?: \(([\d.]+m?s)\)(?: # (.*))?)?$/;
export const NODE_SPEC_FAILING = /^✖ (.*?)(?: \([\d.]+m?s\)(?: # (.*))?)?$/;
export const NODE_TAP = /^( *)(not ok|ok) \d+(?: - (.*))?$/;
export const NODE_TAP_SUBTEST = /^( *)# Subtest: (.*)$/;
export const NODE_COUNT = /^(?:ℹ|#) (tests|pass|fail|skipped|todo) (\d+)$/;

export function parseNode(lines: string[]): Parsed {
  const spec = new Tree();
  const tap = new Tree();
  const names = new Names();
  const counts: Record<string, number> = {};
  let inFailingSection = false;
  let mochaTap = false;
  for (const line of lines) {
    if (MOCHA_TAP.test(line)) mochaTap = true;
    const count = NODE_COUNT.exec(line);
    if (count !== null) {
      // Several runs in one output (`node --test a && node --test b`) add up.
      counts[count[1]] = (counts[count[1]] ?? 0) + Number(count[2]);
      continue;
    }
    if (line === "✖ failing tests:") {
      inFailingSection = true;
      continue;
    }
    // That closing list holds only failures; any other result starts another run.
    if (inFailingSection && /^(?:✔|﹣|▶) |^TAP version/.test(line)) inFailingSection = false;
    if (inFailingSection) {
      // That closing list names tests without their suites.
      const failing = NODE_SPEC_FAILING.exec(line);
      if (failing !== null && failing[2] === undefined) names.addLeaf(failing[1]);
      continue;
    }
    const subtest = NODE_TAP_SUBTEST.exec(line);
    if (subtest !== null) {
      tap.open(Math.floor(subtest[1].length / 4), splitTapDescription(subtest[2]).name);
      continue;
    }
    const tapLine = NODE_TAP.exec(line);
    if (tapLine !== null) {
      const { name, directive } = splitTapDescription(tapLine[3] ?? "");
      const level = Math.floor(tapLine[1].length / 4);
      tap.add(level, name, tapStatus(tapLine[2] === "not ok", directive));
      continue;
    }
    const specLine = NODE_SPEC.exec(line);
    if (specLine === null) continue;
    const [, indent, mark, name, duration, directive] = specLine;
    // A bare "▶ suite" opens a suite; its result comes after its children.
    if (mark === "▶" && duration === undefined) {
      spec.open(Math.floor(indent.length / 2), name);
      continue;
    }
    const status: Status = mark === "﹣" || directive !== undefined
      ? "skipped"
      : mark === "✖"
      ? "failed"
      : "passed";
    spec.add(Math.floor(indent.length / 2), name, status);
  }
  for (const name of [...spec.failedNames(), ...tap.failedNames()]) names.add(name);
  // mocha's TAP reporter prints the same "# pass" lines; its results are not node's.
  const summary = (counts.pass !== undefined || counts.fail !== undefined) && !mochaTap;
  return {
    report: report("node", {
      failed: names.list(),
      passed: counts.pass,
      failedCount: counts.fail,
      skipped: summary ? counts.skipped : undefined,
      todo: summary ? counts.todo : undefined,
      skippedTests: [...spec.skippedNames(), ...tap.skippedNames()],
    }),
    summary,
  };
}

/** A TAP result: "not ok" fails unless marked TODO; SKIP and TODO set the test aside. */
export function tapStatus(notOk: boolean, directive: string): Status {
  if (/^(?:skip|todo)\b/i.test(directive)) return "skipped";
  return notOk ? "failed" : "passed";
}

/** Split a TAP description at its first unescaped `#`, undoing TAP's escapes. */
export function splitTapDescription(text: string): { name: string; directive: string } {
  const match = /^((?:\\.|[^\\#])*)(?:#\s*(.*))?$/.exec(text);
  const raw = match?.[1] ?? text;
  return { name: raw.trim().replace(/\\(.)/g, "$1"), directive: match?.[2] ?? "" };
}
