"""No tracked text file carries an absolute path of one machine: the workspace the repository is
developed in (`/work/…`), root's home (`/root/…`), a run's temporary directory (`/tmp/pytest-of-…`,
`/tmp/tmpXXXXXXXX`, the suite's `/tmp/ace-test-…`), or this checkout's own absolute path. Results,
docs and scripts name files relative to the repository (`build/static/corpus.txt`,
`.venv/bin/python`) or by a variable (`$ACE_LEARNING_CORPUS`).

Only a path at its start counts (`/home/me/work/x` is not `/work/…`), so the invented project roots
of the fixtures (`/home/dev/shop`, `/srv/shop`) and other people's transcripts in the corpus (their
own home directories, not this machine's) pass. ALLOWED names the files that must spell such a
path, and why.

Cost: reads every tracked text file once (~100 MB, mostly the corpus): about a second.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# A path starts after a character that cannot be inside one (`memory://root/…`, `~/work/…` do not).
_START = rb"(?<![\w.~$/-])"
MACHINE = re.compile(_START + rb"(?:/work/|/root/|/tmp/pytest-of-|/tmp/tmp[a-z0-9_]{8}|/tmp/ace-test-)")

ALLOWED = {
    # The scorer's pattern for the paths it strips from a lesson (a regex that names /root/, /tmp/, …).
    "bench/data/learning/score.py",
    # tests/test_repository_paths.py itself names the forms it looks for in its docstring.
    "tests/test_repository_paths.py",
}


def tracked_text_files() -> list[str]:
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name]


def machine_paths(data: bytes, own: bytes | None) -> list[str]:
    """Each machine path in `data` (`own`: this checkout's path, or None), with the text around it."""
    spans = [m.span() for m in MACHINE.finditer(data)]
    if own and own in data:
        start = data.index(own)
        spans.append((start, start + len(own)))
    return [data[max(0, a - 20):b + 40].decode(errors="replace") for a, b in spans]


def test_no_tracked_file_names_a_path_of_one_machine():
    # This checkout's own path, when it is specific enough not to be a fixture's invented root.
    own = str(REPO).encode() + b"/" if len(REPO.parts) >= 4 else None
    offenders = {}
    for name in tracked_text_files():
        if name in ALLOWED:
            continue
        path = REPO / name
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        found = machine_paths(data, own)
        if found:
            offenders[name] = sorted(set(found))[:3]
    assert not offenders, offenders


def test_the_check_sees_each_form_and_only_at_a_path_start():
    """The pattern above, on the forms it must catch and the ones it must let through."""
    caught = [b'"python": "/work/main/.venv/bin/python"', b"see /root/.pyenv/versions", b"/tmp/pytest-of-root/x",
              b"/tmp/tmpab12cd_9/file", b"(/tmp/ace-test-session-1/home)"]
    passed = [b"/home/me/work/shop", b"memory://root/skills", b"/home/dev/shop", b"/tmp/x.go", b"~/work/a",
              b"/srv/shop", b"/tmp/build/out"]
    assert all(machine_paths(text, None) for text in caught)
    assert not [text for text in passed if machine_paths(text, None)]
    assert machine_paths(b"at /x/y/z/checkout/src", b"/x/y/z/checkout/")
