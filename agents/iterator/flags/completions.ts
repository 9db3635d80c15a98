/**
 * `completions bash|zsh|fish`: a shell completion script made from the table
 * of flags and commands. It completes the commands, each command's flags,
 * the values of flags with a fixed set (`--backend`, `--permission-mode`),
 * folders for `--cwd`, files for `--store`, and the agents of `.agent/` for
 * `--agent`.
 *
 * @module
 */

import { VERSION } from "../../support/version.ts";
import { flagHelpFor } from "./help.ts";
import { COMMANDS, type CommandSpec, flagNamed, flagsOf, type FlagSpec } from "./table.ts";
import { kindValues } from "./values.ts";

/** A place on the command line: the words typed so far ("runs"), what comes next. */
interface Place {
  /** The command words ("" for a run). */
  path: string;
  /** The flags offered there. */
  flags: Array<{ flag: FlagSpec; help: string }>;
  /** The words that may come next (subcommands, or an argument's values). */
  words: Array<{ word: string; help: string }>;
}

/** Every place of the command line, from the table. */
function places(): Place[] {
  const paths = new Set<string>([""]);
  for (const command of COMMANDS) {
    const words = command.name.split(" ").filter((word) => !word.startsWith("-"));
    for (let i = 1; i <= words.length; i++) paths.add(words.slice(0, i).join(" "));
  }
  return [...paths].map((path) => {
    const command = COMMANDS.find((spec) => spec.name === path);
    // A command that is a flag (`--resume`, `fleet --resume`) is offered as that flag.
    const asFlags = COMMANDS.filter((spec) =>
      spec.name.startsWith(path === "" ? "--" : `${path} --`) &&
      !spec.name.slice(path.length).trim().includes(" ")
    ).map((spec) => ({
      flag: flagNamed(spec.name.slice(path.length).trim().slice(2)),
      help: short(spec.summary),
    }));
    const flags = command
      ? flagsOf(command).map((flag) => ({ flag, help: short(flagHelpFor(flag, command)) }))
      : [];
    const next = COMMANDS.filter((spec) => isChild(spec, path)).map((spec) => ({
      word: spec.name.split(" ")[path === "" ? 0 : path.split(" ").length],
      help: short(spec.summary),
    }));
    const values = (command?.args?.[0]?.values ?? []).map((word) => ({ word, help: "" }));
    return { path, flags: [...flags, ...asFlags], words: [...unique(next), ...values] };
  });
}

function isChild(spec: CommandSpec, path: string): boolean {
  if (spec.name === "") return false;
  const words = spec.name.split(" ");
  if (words.some((word) => word.startsWith("-"))) return false;
  const parent = path === "" ? [] : path.split(" ");
  return words.length > parent.length && parent.every((word, i) => words[i] === word);
}

function unique(
  words: Array<{ word: string; help: string }>,
): Array<{ word: string; help: string }> {
  return words.filter((item, i) => words.findIndex((other) => other.word === item.word) === i);
}

/** A description short enough for a completion menu: no asides, the first clause, 70 characters. */
function short(text: string): string {
  const bare = text.replace(/\s*\([^()]*\)/g, "").trim() || text;
  const first = bare.split("; ")[0].replace(/\.$/, "");
  return first.length <= 70 ? first : `${first.slice(0, 67).replace(/\s+\S*$/, "")}...`;
}

/** Every flag that takes a value, long and short forms. */
function valuedForms(): string[] {
  return [...new Set(places().flatMap((place) => place.flags.map((item) => item.flag)))]
    .filter((flag) => flag.kind !== "boolean" && flag.name !== "resume")
    .flatMap(forms);
}

function forms(flag: FlagSpec): string[] {
  return [`--${flag.name}`, ...(flag.short ? [`-${flag.short}`] : [])];
}

/** The flags whose values are completed, grouped by what is offered. */
function valueCases(): Array<{ forms: string[]; values?: readonly string[]; complete?: string }> {
  const flags = [...new Set(places().flatMap((place) => place.flags.map((item) => item.flag)))]
    .filter((flag) => flag.kind !== "boolean" && flag.name !== "resume");
  return flags.map((flag) => ({
    forms: forms(flag),
    values: kindValues(flag.kind),
    complete: flag.complete,
  }));
}

/** Transitions between command words, as `case` patterns: `/runs`, `runs/show`. */
function transitions(): Array<{ from: string; word: string; to: string }> {
  return places().filter((place) => place.path !== "").map((place) => {
    const words = place.path.split(" ");
    return { from: words.slice(0, -1).join(" "), word: words.at(-1)!, to: place.path };
  });
}

function single(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function bash(program: string): string {
  const all = places();
  const fn = "_finishline";
  const valueLines = valueCases().map(({ forms, values, complete }) => {
    const pattern = forms.join("|");
    if (values) return `    ${pattern}) _finishline_reply -W ${single(values.join(" "))} ;;`;
    if (complete === "directory") return `    ${pattern}) _finishline_reply -d ;;`;
    if (complete === "file") return `    ${pattern}) _finishline_reply -f ;;`;
    if (complete === "agent") {
      return `    ${pattern}) _finishline_reply -W "$(_finishline_agents)" ;;`;
    }
    return undefined; // an open value: nothing to offer
  }).filter((line) => line !== undefined);
  const moves = transitions().map(({ from, word, to }) =>
    `      ${single(`${from}/${word}`)}) cmd=${single(to)} ;;`
  );
  const flagLines = all.map((place) =>
    `    ${single(place.path)}) flags=${
      single(place.flags.map((item) => `--${item.flag.name}`).join(" "))
    } ;;`
  );
  const wordLines = all.filter((place) => place.words.length > 0).map((place) =>
    `    ${single(place.path)}) words=${single(place.words.map((item) => item.word).join(" "))} ;;`
  );
  return `# bash completion for ${program}, from "${program} completions bash" (finishline ${VERSION}).
# Load it in ~/.bashrc with: source <(${program} completions bash)

_finishline_agents() {
  local file names="iterator"
  for file in .agent/*/agent.json; do
    [[ -e $file ]] || continue
    file="\${file#.agent/}"
    names="$names \${file%/agent.json}"
  done
  printf '%s\\n' "$names"
}

# COMPREPLY from compgen, one candidate a line (file names with spaces stay whole).
_finishline_reply() {
  local IFS=$'\\n'
  if [[ $1 == -W ]]; then
    set -- -W "\${2// /$'\\n'}"
  else
    compopt -o filenames 2>/dev/null
  fi
  COMPREPLY=($(compgen "$@" -- "$cur"))
}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" nargs=0 word i flags="" words=""
  if ((COMP_CWORD > 0)); then prev="\${COMP_WORDS[COMP_CWORD - 1]}"; fi
  # With "=" among the word breaks, "--backend=co" comes as "--backend" "=" "co".
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    prev="\${COMP_WORDS[COMP_CWORD - 2]}"
  fi
  local valued=${single(` ${valuedForms().join(" ")} `)}
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ $valued == *" $word "* ]]; then
      if [[ \${COMP_WORDS[i + 1]} == "=" ]]; then i=$((i + 2)); else i=$((i + 1)); fi
      continue
    fi
    [[ $word == -* || $word == "=" ]] && continue
    case "$cmd/$word" in
${moves.join("\n")}
      *) nargs=$((nargs + 1)) ;;
    esac
  done
  COMPREPLY=()
  if [[ $valued == *" $prev "* ]]; then
    case "$prev" in
${valueLines.join("\n")}
    esac
    return 0
  fi
  case "$cmd" in
${flagLines.join("\n")}
  esac
  if [[ $cur != -* ]] && ((nargs == 0)) && { [[ -n $cmd ]] || ((COMP_CWORD == 1)); }; then
    case "$cmd" in
${wordLines.join("\n")}
    esac
  fi
  if [[ -n $words ]]; then
    _finishline_reply -W "$words"
  else
    _finishline_reply -W "$flags"
  fi
  return 0
}

complete -F ${fn} ${program}
`;
}

function zsh(program: string): string {
  const all = places();
  const describe = (items: Array<{ name: string; help: string }>) =>
    items.map((item) =>
      single(item.help ? `${item.name.replaceAll(":", "\\:")}:${item.help}` : item.name)
    ).join(" ");
  const valueLines = valueCases().map(({ forms, values, complete }) => {
    const pattern = `(${forms.join("|")}`;
    if (values) return `    ${pattern}) compadd -- ${values.map(single).join(" ")} ;;`;
    if (complete === "directory") return `    ${pattern}) _files -/ ;;`;
    if (complete === "file") return `    ${pattern}) _files ;;`;
    if (complete === "agent") return `    ${pattern}) _finishline_agents ;;`;
    return `    ${pattern}) _message -r ${single(placeholderOf(forms[0]))} ;;`;
  });
  const moves = transitions().map(({ from, word, to }) =>
    `      (${single(`${from}/${word}`)}) cmd=${single(to)} ;;`
  );
  const flagLines = all.map((place) =>
    `    (${single(place.path)}) items=(${
      describe(place.flags.map((item) => ({ name: `--${item.flag.name}`, help: item.help })))
    }) ;;`
  );
  const wordLines = all.filter((place) => place.words.length > 0).map((place) =>
    `      (${single(place.path)}) items=(${
      describe(place.words.map((item) => ({ name: item.word, help: item.help })))
    }) ;;`
  );
  return `#compdef ${program}
# zsh completion for ${program}, from "${program} completions zsh" (finishline ${VERSION}).
# Load it in ~/.zshrc, after compinit, with: source <(${program} completions zsh)
# or save it as _${program} in a folder of $fpath.

_finishline_agents() {
  local -a names files
  local file
  names=(iterator)
  files=(.agent/*/agent.json(N))
  for file in $files; do
    file=\${file#.agent/}
    names+=(\${file%/agent.json})
  done
  compadd -a names
}

_finishline() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} cmd="" word
  local -i i nargs=0
  local -a valued items
  valued=(${valuedForms().join(" ")})
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    if ((\${valued[(Ie)$word]})); then
      i=$((i + 1))
      continue
    fi
    [[ $word == -* ]] && continue
    case "$cmd/$word" in
${moves.join("\n")}
      (*) nargs=$((nargs + 1)) ;;
    esac
  done
  if [[ $cur == --*=* ]]; then
    prev=\${cur%%=*}
    compset -P '*='
  fi
  if ((\${valued[(Ie)$prev]})); then
    case $prev in
${valueLines.join("\n")}
    esac
    return 0
  fi
  if [[ $cur != -* ]] && ((nargs == 0)) && [[ -n $cmd || CURRENT -eq 2 ]]; then
    case $cmd in
${wordLines.join("\n")}
    esac
    if ((\${#items})); then
      _describe -t commands command items
      return 0
    fi
  fi
  case $cmd in
${flagLines.join("\n")}
  esac
  _describe -t options flag items
}

if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _finishline "$@"
else
  compdef _finishline ${program}
fi
`;
}

function placeholderOf(form: string): string {
  const flag = flagNamed(form.replace(/^--/, ""));
  return flag.placeholder ?? "VALUE";
}

function fishQuote(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function fish(program: string): string {
  const all = places();
  const cases = transitions().map(({ from, word, to }) =>
    `            case ${fishQuote(`${from}/${word}`)}\n                set cmd ${fishQuote(to)}`
  );
  const lines: string[] = [];
  for (const place of all) {
    const at = fishQuote(`__finishline_at ${fishQuote(place.path)}`);
    for (const { word, help } of place.words) {
      const where = fishQuote(`__finishline_at ${fishQuote(place.path)} 0`);
      lines.push(
        `complete -c ${program} -n ${where} -a ${fishQuote(word)}${
          help ? ` -d ${fishQuote(help)}` : ""
        }`,
      );
    }
    for (const { flag, help } of place.flags) {
      const parts = [`complete -c ${program} -n ${at} -l ${flag.name}`];
      if (flag.short) parts.push(`-s ${flag.short}`);
      const values = kindValues(flag.kind);
      if (flag.kind === "boolean" || flag.name === "resume") {
        // no value
      } else if (values) parts.push(`-x -a ${fishQuote(values.join(" "))}`);
      else if (flag.complete === "directory") {
        parts.push(`-x -a '(__fish_complete_directories (commandline -ct))'`);
      } else if (flag.complete === "file") parts.push("-r -F");
      else if (flag.complete === "agent") parts.push(`-x -a '(__finishline_agents)'`);
      else parts.push("-x");
      parts.push(`-d ${fishQuote(help)}`);
      lines.push(parts.join(" "));
    }
  }
  return `# fish completion for ${program}, from "${program} completions fish" (finishline ${VERSION}).
# Load it with: ${program} completions fish | source
# or save it as ~/.config/fish/completions/${program}.fish

function __finishline_agents
    echo iterator
    for file in .agent/*/agent.json
        string replace -r '^\\.agent/(.*)/agent\\.json$' '$1' -- $file
    end
end

# The command the line is at ("=runs show") and how many arguments it has.
function __finishline_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd ""
    set -l nargs 0
    set -l skip 0
    for word in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $word ${valuedForms().join(" ")}
            set skip 1
            continue
        end
        if string match -q -- '-*' $word
            continue
        end
        switch "$cmd/$word"
${cases.join("\n")}
            case '*'
                set nargs (math $nargs + 1)
        end
    end
    echo "=$cmd"
    echo $nargs
end

# Whether the line is at this command (and, when given, has this many arguments).
function __finishline_at
    set -l state (__finishline_state)
    test "$state[1]" = "=$argv[1]"; or return 1
    test (count $argv) -lt 2; or test "$state[2]" = "$argv[2]"
end

complete -c ${program} -f
${lines.join("\n")}
`;
}

/**
 * The completion script for a shell, completing `program`.
 *
 * @param shell `bash`, `zsh` or `fish`.
 * @param program The command to complete (`finishline`).
 * @returns The script.
 * @throws {RangeError} For another shell.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { completionScript } from "./completions.ts";
 * assert.match(completionScript("bash", "finishline"), /complete -F _finishline finishline/);
 * ```
 */
export function completionScript(shell: string, program: string): string {
  if (shell === "bash") return bash(program);
  if (shell === "zsh") return zsh(program);
  if (shell === "fish") return fish(program);
  throw new RangeError(`No completion script for the shell "${shell}"`);
}

/**
 * The name the completions register for: the installed command the user
 * ran, else `finishline`.
 *
 * @param invokedAs How the user runs finishline.
 * @returns One word.
 */
export function completedProgram(invokedAs: string): string {
  return /^[\w.-]+$/.test(invokedAs) ? invokedAs : "finishline";
}
