"""PermissionRequest: when Claude asks to run an `ace` command through Bash, allow the ones that
only read this project's data, deny the destructive ones with a reason, and give no opinion on
anything else (Claude Code then asks the user).

An approval cannot be widened. `allow` needs all of:
- the command is one plain invocation (no chaining, redirection, substitution, globbing, comments,
  control characters) whose first word is the bare word `ace` — not a path (`./ace`), not
  `ace-cli`, not an interpreter (`python -m ace_engine`), not an environment assignment;
- the subcommand is in `cli_marks.READS`, every option is marked read-only there, positional
  arguments are within the command's count, and a session id is the asking session's own;
- `ace` resolves on PATH, the way bash does, to ace-engine's installed console script: an
  executable regular file outside the project (nor a symlink into it), owned by the user or root,
  not world-writable, whose content is the pip / uv / installer console-script template importing
  `ace_engine.cli` with an absolute interpreter outside the project. A relative PATH entry before
  it makes the answer depend on the shell's directory: no opinion.
`deny` (for `cli_marks.DESTRUCTIVE`) needs only a plain invocation of something named `ace`:
refusing cannot widen anything.

Cost: pure string work plus, for a would-be `allow`, a PATH walk (one stat per entry) and one
read of at most 4 KB. Imports only os, shlex and the data tables (`cli_marks`, `tools`).
"""

import os
import shlex
import stat

from ..capture.tools import command_of
from ..core.cli_marks import DESTRUCTIVE, FLAG, HELP, READS, REFUSE, SESSION, TEXT, TOP_LEVEL

# Anything that could chain a second command, redirect, substitute, expand or comment out part of
# the line makes the request not ours: what bash runs must be exactly the words shlex sees.
SHELL_META = frozenset(";&|<>`$(){}[]*?~!#\\\n\r\t\x0b\x0c")
MAX_SCRIPT_BYTES = 4096  # a console script is ~250 bytes; anything bigger is something else

# The body lines of the console scripts pip (distlib), uv and `installer` write for
# `ace = "ace_engine.cli:main"`, stripped, with ' normalised to ".
_SCRIPT_LINES = frozenset({
    "# -*- coding: utf-8 -*-",
    "import re",
    "import sys",
    "from ace_engine.cli import main",
    'if __name__ == "__main__":',
    r'sys.argv[0] = re.sub(r"(-script\.pyw|\.exe)?$", "", sys.argv[0])',
    r'sys.argv[0] = re.sub(r"(-script\.pyw?|\.exe)?$", "", sys.argv[0])',
    'sys.argv[0] = sys.argv[0].removesuffix(".exe")',
    'if sys.argv[0].endswith("-script.pyw"):',
    "sys.argv[0] = sys.argv[0][:-11]",
    'elif sys.argv[0].endswith(".exe"):',
    "sys.argv[0] = sys.argv[0][:-4]",
    "sys.exit(main())",
    "",
})
_SCRIPT_REQUIRED = ("from ace_engine.cli import main", "sys.exit(main())")


def decide(tool_name: str | None, tool_input: object, session_id: str | None = None,
           project_dirs: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """('allow' | 'deny', message) for ace commands run through a shell tool; None for anything else.

    `session_id` is the asking session's; `project_dirs` the directories an `ace` on PATH must
    not live in (the payload's cwd, the project root); the process's working directory and
    `$CLAUDE_PROJECT_DIR` are always added."""
    command = command_of(tool_name, tool_input)
    words = _plain_words(command) if command else None
    if not words:
        return None
    head, argv = words[0], words[1:]
    if head != "ace":
        # Not approvable, but a recognisable ace-engine invocation can still be refused.
        module_args = (["-m", "ace_engine"], ["-m", "ace_engine.cli"])
        named_ace = os.path.basename(head) == "ace" or (
            os.path.basename(head).startswith("python") and argv[:2] in module_args)
        if not named_ace:
            return None
        argv = argv[2:] if argv[:1] == ["-m"] else argv
        verdict = classify(argv, session_id)
        return verdict if verdict and verdict[0] == "deny" else None
    verdict = classify(argv, session_id)
    if verdict is None or verdict[0] == "deny":
        return verdict
    roots = [d for d in project_dirs if isinstance(d, str) and d]
    roots.append(os.environ.get("CLAUDE_PROJECT_DIR") or "")
    try:
        roots.append(os.getcwd())
    except OSError:
        pass
    return verdict if installed_ace(os.environ.get("PATH", os.defpath), [r for r in roots if r]) else None


def _plain_words(command: str) -> list[str] | None:
    """The words of `command` when it is one plain invocation bash would split the same way."""
    if any(ch in SHELL_META or ch < " " or ch == "\x7f" for ch in command):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def classify(argv: list[str], session_id: str | None) -> tuple[str, str] | None:
    """The table's verdict on `ace ARGV`, ignoring which `ace` runs: allow, deny or None."""
    if not argv:
        return None
    if len(argv) == 1 and argv[0] in TOP_LEVEL:
        return "allow", f"`ace {argv[0]}` only prints"
    for width in (2, 1):  # `config show`, `cache recall` before one-word commands
        if len(argv) < width:
            continue
        name = " ".join(argv[:width])
        if name in DESTRUCTIVE:
            return "deny", (f"`ace {name}` changes or deletes ace-engine data; only the user runs it, "
                            "from a terminal.")
        spec = READS.get(name)
        if spec is not None:
            return ("allow", f"`ace {name}` only reads this project's data") \
                if _reads_only(argv[width:], spec, session_id) else None
    return None


def _reads_only(args: list[str], spec: tuple[dict[str, str], tuple[str, ...]], session_id: str | None) -> bool:
    """Whether `args` use only read-only options and at most the positional arguments `spec` allows.
    Parsed as click does: `--opt=value`, `--opt value` (the next word, whatever it is)."""
    options, positional = spec
    marks = {**HELP, **options}
    seen = 0
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.startswith("-") and word != "-":
            name, eq, value = word.partition("=")
            mark = marks.get(name)
            # Unknown options, `--`, bundled or glued short options (`-ofile`): not ours to judge.
            if mark is None or mark == REFUSE or (eq and not name.startswith("--")):
                return False
            if mark == FLAG:
                if eq:
                    return False
                continue
            if not eq:
                if i >= len(args):
                    return False
                value = args[i]
                i += 1
            if mark == SESSION and not _own_session(value, session_id):
                return False
            continue
        if seen >= len(positional):
            return False
        if positional[seen] == SESSION and not _own_session(word, session_id):
            return False
        if positional[seen] not in (TEXT, SESSION):
            return False
        seen += 1
    return True


def _own_session(value: str, session_id: str | None) -> bool:
    return bool(session_id) and isinstance(session_id, str) and value == session_id


# -- which `ace` bash would run ---------------------------------------------------------------------


def installed_ace(path_var: str, roots: list[str]) -> bool:
    """Whether the `ace` bash finds on `path_var` is ace-engine's console script, outside `roots`."""
    for entry in path_var.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            return False  # `.`, `bin`, or an empty entry: depends on the shell's directory
        candidate = os.path.join(entry, "ace")
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if not (stat.S_ISREG(st.st_mode) and os.access(candidate, os.X_OK)):
            continue  # bash skips directories and files it cannot execute
        return _is_console_script(candidate, st, roots)
    return False


def _inside(path: str, roots: list[str]) -> bool:
    for place in {os.path.abspath(path), os.path.realpath(path)}:
        for root in roots:
            for r in {os.path.abspath(root), os.path.realpath(root)}:
                if place == r or place.startswith(r.rstrip(os.sep) + os.sep):
                    return True
    return False


def _is_console_script(path: str, st: os.stat_result, roots: list[str]) -> bool:
    if _inside(path, roots) or st.st_size > MAX_SCRIPT_BYTES:
        return False
    if st.st_uid not in (0, os.getuid()) or st.st_mode & 0o002:
        return False  # someone else could rewrite it between this check and bash running it
    try:
        with open(os.path.realpath(path), "rb") as fh:
            raw = fh.read(MAX_SCRIPT_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if len(raw) > MAX_SCRIPT_BYTES:
        return False
    lines = text.split("\n")
    if lines[0] == "#!/bin/sh" and len(lines) > 2 and lines[2] == "' '''":
        # distlib's trampoline for long or spaced interpreter paths: '''exec' "PY" "$0" "$@"
        exec_line = lines[1]
        prefix, suffix = "'''exec' ", ' "$0" "$@"'
        if not (exec_line.startswith(prefix) and exec_line.endswith(suffix)):
            return False
        interpreter = exec_line[len(prefix):-len(suffix)]
        if interpreter.startswith('"') and interpreter.endswith('"') and len(interpreter) > 1:
            interpreter = interpreter[1:-1]  # sh expands only $, ` and \ inside double quotes
        elif any(ch.isspace() for ch in interpreter):
            return False  # unquoted, sh would run the first word: another program
        if any(ch in interpreter for ch in '"$`\\'):
            return False
        body = lines[3:]
    elif lines[0].startswith("#!"):
        interpreter = lines[0][2:].strip()
        if not interpreter or any(ch.isspace() for ch in interpreter):
            return False  # `#!/usr/bin/env python`, or interpreter flags: not what pip writes
        body = lines[1:]
    else:
        return False
    if not os.path.isabs(interpreter) or _inside(interpreter, roots):
        return False
    stripped = [line.strip().replace("'", '"') for line in body]
    return all(line in _SCRIPT_LINES for line in stripped) and all(req in stripped for req in _SCRIPT_REQUIRED)
