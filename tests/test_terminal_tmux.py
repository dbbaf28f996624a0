"""`ace patterns` and `ace events` in a real terminal (issue 13: "readable at 80 and 200 columns").

tmux runs an interactive bash in a pane of 80, then 200 columns; the test types the command
(send-keys), waits for it to finish and reads the pane back with its history (capture-pane -p -J,
wrapped lines joined, so a line the terminal had to wrap shows as one line longer than the pane).
The store holds realistic, long lessons (code, paths, an unbroken 100-character token) and a
session captured by the real hook processes. Checked: every line fits the width; each lesson is
there in full and in reading order (a narrow terminal gets one block per lesson, a wide one a
table whose lesson column is read back cell by cell); ids are never split; table borders line up.
And the pager: a listing longer than the screen opens `less` on a terminal, never when piped.

tmux comes from the system (`apt-get install -y tmux`; scripts/test.sh must install it). When it
is missing and can't be installed, the tests skip, saying so.
"""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ace_engine.core.project import identify
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from hookutil import payload, run_hook

HEIGHT = 50
DONE = "__DONE__"
LESSONS = [
    ("pitfalls", "When `python -m pytest -q` fails with `tests/test_textutil.py::test_unicode - AssertionError: "
                 "assert 'cr-me-br-l-e' == 'creme-brulee'`, the cause is in src/textutil.py: strip accents with "
                 "`unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode()` before lowercasing, "
                 "then run the tests again."),
    ("rules", "Run the linters with `ruff check src tests && mypy src` before pushing; CI fails the build on "
              "either, and `ruff check --fix` repairs import order and unused imports by itself."),
    ("pitfalls", "Docker builds on Apple silicon need `--platform linux/amd64`: the base image "
                 "registry.example.com/platform/python-runtime-images/python-3.11-slim-bookworm-with-build-tools"
                 "-and-certificates:2024.11 has no arm64 variant, and the build fails with `exec format error`."),
    ("snippets", "Refresh an expired JWT with `client.refresh_token()` before retrying a request that "
                 "returned 401; the access token lives 15 minutes, the refresh token 30 days."),
    ("apis", "Use `textutil.slugify(text, max_length=80)` instead of hand-rolled `re.sub` calls: it folds "
             "accents, collapses separators and trims at a word boundary."),
    ("rules", "Database migrations run with `alembic upgrade head` inside the `api` container "
              "(`docker compose exec api alembic upgrade head`), never against production from a laptop."),
    ("pitfalls", "`npm ci` fails with EINTEGRITY after a registry switch: delete node_modules and "
                 "package-lock.json's `resolved` URLs are stale — run `npm install --package-lock-only`, "
                 "commit the lock file, then `npm ci` again."),
    ("rules", "Keep functions under 50 lines in src/ace_engine/ and give every module a docstring that "
              "states its contract and its cost; tests/test_layers.py enforces the module size."),
]


def _tmux_or_skip() -> str:
    tmux = shutil.which("tmux")
    if tmux is None and shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-qq", "tmux"], capture_output=True, timeout=600)
        tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed and could not be installed (apt-get install -y tmux); "
                    "the terminal test needs a real terminal")
    return tmux


class Pane:
    """One tmux server (its own socket) with an interactive bash in a pane of `width` columns."""

    def __init__(self, tmux: str, width: int, cwd: Path, env: dict[str, str], rcfile: Path,
                 height: int = HEIGHT) -> None:
        self.tmux, self.width = tmux, width
        self.socket = f"ace-test-{uuid.uuid4().hex[:10]}"
        exports = "".join(f"export {k}={_quote(v)}\n" for k, v in env.items())
        rcfile.write_text(f"{exports}unset LESS PAGER MANPAGER\nexport PS1='$ '\n")
        conf = rcfile.with_suffix(".tmux.conf")
        conf.write_text("set -g history-limit 50000\nset -g status off\n")
        self.run("-f", str(conf), "new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd),
                 f"env -i HOME={_quote(env['HOME'])} TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 "
                 f"bash --rcfile {_quote(str(rcfile))} -i")
        self.wait_for(lambda text: text.rstrip().endswith("$"), "the shell prompt")

    def run(self, *args: str) -> str:
        proc = subprocess.run([self.tmux, "-L", self.socket, "-u", *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def screen(self, history: bool = True) -> str:
        return self.run("capture-pane", "-p", "-J", *(["-S", "-", "-E", "-"] if history else []))

    def wait_for(self, done, what: str, history: bool = True, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen(history)
            if done(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{text}")
            time.sleep(0.1)

    def fresh(self) -> None:
        """An empty screen and history, the prompt on the first line."""
        self.type("clear")
        self.wait_for(lambda t: [line.rstrip() for line in t.splitlines() if line.strip()] == ["$"],
                      "a cleared screen", history=False)
        self.run("clear-history")

    def type(self, command: str) -> None:
        self.run("send-keys", "-t", "0", command, "Enter")

    def output_of(self, command: str) -> list[str]:
        """Type `command`, wait until it is done, return the lines it printed (trailing blanks cut)."""
        self.fresh()
        self.type(f"{command}; echo __DO''NE__")  # the typed line never reads DONE itself
        text = self.wait_for(lambda t: DONE in t.splitlines(), command)
        lines = [line.rstrip() for line in text.splitlines()]
        start = next(i for i, line in enumerate(lines) if line.endswith("__DO''NE__")) + 1
        return lines[start:lines.index(DONE, start)]

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A project with the lessons above and one captured session, in a private ACE_HOME, and the
    environment a shell needs to run this `ace` on it."""
    tmux = _tmux_or_skip()
    base = tmp_path_factory.mktemp("tmux")
    home, ace_home, project = base / "home", base / "ace-home", base / "textutil"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "https://github.com/example/textutil.git"],
                   check=True)
    env = {"HOME": str(home), "ACE_HOME": str(ace_home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update({k: v for k, v in env.items() if k != "PATH"})
    try:
        with SQLiteStore() as store:
            pb = Playbook(store, identify(str(project)))
            ids = [pb.add(content, section, now=1_790_000_000.0 + n)[0]["id"]
                   for n, (section, content) in enumerate(LESSONS)]
        # No learning: the worker would merge what it learns from this session into the lessons above.
        hook_env = {**{k: v for k, v in env.items() if k != "PATH"}, "ACE_LEARNING_ENABLED": "false"}
        session = "sess-tmux-7f3a9c"
        events = [
            ("SessionStart", {"source": "startup"}),
            ("UserPromptSubmit", {"prompt": "test_unicode fails for accented input; fix slugify so the tests pass"}),
            ("PostToolUseFailure", {"tool_name": "Bash", "tool_use_id": "t-1", "is_interrupt": False,
                                    "tool_input": {"command": "python -m pytest -q", "description": "Run the tests"},
                                    "error": "Exit code 1\nFAILED tests/test_textutil.py::test_unicode - "
                                             "AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'"}),
            ("PostToolUse", {"tool_name": "Edit", "tool_use_id": "t-2",
                             "tool_input": {"file_path": str(project / "src" / "textutil.py"),
                                            "old_string": "text = text.lower()",
                                            "new_string": "text = unicodedata.normalize('NFKD', text).lower()"},
                             "tool_response": {"filePath": str(project / "src" / "textutil.py")}}),
            ("PostToolUse", {"tool_name": "Bash", "tool_use_id": "t-3",
                             "tool_input": {"command": "python -m pytest -q", "description": "Run the tests"},
                             "tool_response": {"stdout": "1 passed in 0.02s", "stderr": "", "interrupted": False}}),
            ("Stop", {"stop_hook_active": False,
                      "last_assistant_message": "Fixed slugify: it now folds accents with unicodedata before "
                                                "lowercasing, and `python -m pytest -q` passes."}),
        ]
        for event, fields in events:
            code, _, err, _ = run_hook(event, payload(event, str(project), session_id=session, **fields),
                                       env=hook_env)
            assert code == 0, err
        with SQLiteStore() as store:
            captured = store.session_events(session)
    finally:
        for k, v in old.items():
            if k == "PATH":
                continue
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"tmux": tmux, "base": base, "project": project, "env": env, "ids": ids, "session": session,
            "captured": captured}


@pytest.fixture(params=[80, 200])
def pane(request, world):
    p = Pane(world["tmux"], request.param, world["project"], world["env"], world["base"] / f"rc-{request.param}.sh")
    yield p
    p.close()


def squash(text: str) -> str:
    return "".join(text.split())


def check_fits(lines: list[str], width: int) -> None:
    too_long = [line for line in lines if len(line) > width]
    assert not too_long, f"{len(too_long)} lines wider than {width}:\n" + "\n".join(too_long[:5])


def table_rows(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows of cell texts) of the one rich table in `lines`, checking its borders: every
    line of the table is as wide as the top border, and every row's separators sit exactly under
    the header's."""
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("└"))
    block = lines[top:bottom + 1]
    assert len({len(line) for line in block}) == 1, "table lines of different widths:\n" + "\n".join(block)
    header = block[1]
    cuts = [i for i, ch in enumerate(header) if ch == "┃"]
    heads = [header[a + 1:b].strip() for a, b in zip(cuts, cuts[1:], strict=False)]
    rows: list[list[str]] = []
    for line in block[3:-1]:
        assert [i for i, ch in enumerate(line) if ch == "│"] == cuts, f"broken borders:\n{header}\n{line}"
        cells = [line[a + 1:b].strip() for a, b in zip(cuts, cuts[1:], strict=False)]
        if cells[0] or not rows:
            rows.append(cells)
        else:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells, strict=True)]
    return heads, rows


def list_blocks(lines: list[str], ids: list[str]) -> dict[str, list[str]]:
    """id -> the lines of its block in the list layout (header first)."""
    starts = {line.split(" ", 1)[0]: n for n, line in enumerate(lines) if line.split(" ", 1)[0] in ids}
    order = sorted(starts.values())
    return {ident: lines[n:next((m for m in order if m > n), len(lines))] for ident, n in starts.items()}


def test_patterns_reads_well(pane, world):
    lines = pane.output_of("ace --no-pager patterns")
    check_fits(lines, pane.width)
    assert lines[-1] == f"{len(LESSONS)} bullets."
    contents = {ident: content for ident, (_, content) in zip(world["ids"], LESSONS, strict=True)}
    if pane.width < 100:
        assert not any(ch in "".join(lines) for ch in "┃│┏└"), "a narrow terminal gets the list layout"
        blocks = list_blocks(lines, world["ids"])
        assert set(blocks) == set(world["ids"]), "every id, whole, at the start of its block"
        for ident, block in blocks.items():
            body = [line for line in block[1:] if line.startswith("  ") and not line.startswith("  domains: ")]
            assert squash(" ".join(body)) == squash(contents[ident]), f"{ident}: the lesson in full, in order"
    else:
        heads, rows = table_rows(lines)
        assert heads[:3] == ["id", "section", "lesson"]
        assert {row[0] for row in rows} == set(world["ids"]), "ids are whole, one cell each"
        for row in rows:
            assert squash(row[2]) == squash(contents[row[0]]), f"{row[0]}: the lesson in full, in order"
        lesson_width = max(len(seg) for seg in lines[1].split("┃")[3:4])
        assert lesson_width >= 60, "at 200 columns the lesson column is wide"


def test_events_reads_well(pane, world):
    lines = pane.output_of(f"ace --no-pager events {world['session'][:12]}")
    check_fits(lines, pane.width)
    assert world["session"] in " ".join(lines), "the session id, whole"
    captured = world["captured"]
    # Each message and tool input, in the order it happened; the view clips a long one at 160
    # characters, so its first 150 are what must be there, whole.
    happened = sorted([(m["created_at"], m["text"]) for m in captured["messages"]]
                      + [(t["created_at"], t["input"]) for t in captured["tool_events"]], key=lambda p: p[0])
    if pane.width < 100:
        assert not any(ch in "".join(lines) for ch in "┃│┏└")
        reading = squash(" ".join(line for line in lines if line.startswith("  ")))
        whats = [line for line in lines if " · tool · " in line]
        assert any(line.endswith("Bash [FAILED exit=1]") for line in whats), whats
    else:
        heads, rows = table_rows(lines)
        assert heads == ["time", "kind", "what", "content"]
        reading = squash(" ".join(row[3] for row in rows))
        assert "Bash [FAILED exit=1]" in [row[2] for row in rows]
    at = -1
    for _, text in happened:
        found = reading.find(squash(text)[:150], at + 1)
        assert found > at, f"missing, cut or out of order: {text[:80]!r}"
        at = found


def test_a_long_listing_pages_on_a_terminal_but_not_through_a_pipe(world):
    if shutil.which("less") is None:
        pytest.skip("less is not installed: the pager test needs it")
    # 24 rows: the listing (~45 lines at 80 columns) is longer than the screen.
    pane = Pane(world["tmux"], 80, world["project"], world["env"], world["base"] / "rc-pager.sh", height=24)
    try:
        pane.fresh()
        pane.type("ace patterns; echo __DO''NE__")
        screen = pane.wait_for(lambda t: t.rstrip().endswith(":") or "(END)" in t, "the pager", history=False)
        lines = [line.rstrip() for line in screen.splitlines()]
        assert DONE not in lines, "the command waits in the pager"
        check_fits(lines, 80)
        assert any(line.startswith(world["ids"][0]) or line.startswith("ctx-") for line in lines), screen
        pane.run("send-keys", "-t", "0", "q")
        after = pane.wait_for(lambda t: DONE in t.splitlines(), "the command to end after q")
        assert f"{len(LESSONS)} bullets." in after
        assert any(line.startswith("ctx-") for line in after.splitlines()), "the listing stays on screen (-X)"
        piped = pane.output_of("ace patterns | cat")
        assert piped[-1] == f"{len(LESSONS)} bullets.", "piped: no pager, everything printed"
    finally:
        pane.close()
