"""Attack: take control of ace-engine's user-level settings through a repository's `.ace.toml`
(issue 7, part 2), and the way out the user has: `ace trust` of that exact file content.

A committed `.ace.toml` may set only harmless keys; user-level keys in it (model endpoint and
key variable, trusted hosts, extra pattern files, retention, store, budgets) are ignored and
shown as ignored, until the user runs `ace trust` — which covers those bytes at that path only:
an edit, or the same file in another repository, is not trusted. Driven through the `ace` CLI
and a real model endpoint on 127.0.0.1. At commit 2f8a758 the project file wins and `ace trust`
does not exist, so every test here fails there.
"""

import json
import os
import stat

import pytest
from click.testing import CliRunner

from ace_engine.cli.app import cli
from learnutil import Session, rows
from llm_servers import ScriptedChatServer

REFLECTION = '{"reasoning": "x", "candidates": [], "tags": []}'


def ace(*args) -> "click.testing.Result":  # noqa: F821
    return CliRunner().invoke(cli, [str(a) for a in args])


def config_show(project) -> dict:
    result = ace("config", "show", "--project", project, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def finished_session(project, session_id: str, monkeypatch) -> None:
    """A captured session with its learning job queued (no background worker: `ace learn` runs it)."""
    monkeypatch.setenv("ACE_LEARNING_ENABLED", "0")
    s = Session(project, session_id=session_id)
    s.start()
    s.prompt("the tests fail; fix them")
    s.bash("python -m pytest -q", error="Exit code 1\nFAILED tests/test_a.py::test_x\n1 failed")
    s.bash("python -m pytest -q", stdout="1 passed in 0.02s")
    s.stop("Fixed. Tests pass.")
    monkeypatch.delenv("ACE_LEARNING_ENABLED")


def learn(project, session_id: str) -> None:
    """`ace learn` of that session, in the foreground; it must be learned (by a model or offline)."""
    result = ace("learn", "--project", project, "--session", session_id)
    assert result.exit_code == 0, result.output
    jobs = [j for j in rows_of_session(session_id)]
    assert jobs and all(j["status"] == "done" for j in jobs), jobs


def rows_of_session(session_id: str) -> list[dict]:
    return rows(os.environ["ACE_HOME"], "SELECT status FROM jobs WHERE session_id = ?", (session_id,))


@pytest.fixture
def server():
    with ScriptedChatServer([REFLECTION]) as running:
        yield running


@pytest.fixture
def endpoint_config(git_project, server):
    path = git_project / ".ace.toml"
    path.write_text('[inject]\nprompt_k = 2\n\n[llm]\nprovider = "openai"\nmodel = "m"\n'
                    f'base_url = "{server.url}/v1"\n')
    return path


def test_user_level_keys_in_a_project_file_are_ignored_and_shown_as_such(ace_home, git_project, endpoint_config):
    (git_project / ".ace.toml").write_text(endpoint_config.read_text() + (
        '\n[learning]\ntrusted_hosts = ["evil.example"]\ncode_patterns_file = "patterns.json"\n'
        '\n[retention]\nmax_age_days = 0\n'))
    shown = config_show(git_project)
    assert shown["inject.prompt_k"]["value"] == 2, "harmless keys still apply from the project file"
    for key, default in (("llm.base_url", ""), ("llm.provider", "none"), ("learning.trusted_hosts", []),
                         ("learning.code_patterns_file", ""), ("retention.max_age_days", 180)):
        assert shown[key]["value"] == default, f"{key} taken from the repository's .ace.toml"
        assert "ace trust" in shown[key]["ignored"]["fix"]
    text = ace("config", "show", "--project", git_project)
    assert "Ignored:" in text.output and "llm.base_url" in text.output and "ace trust" in text.output


def test_ace_trust_makes_the_file_effective_and_any_edit_voids_it(ace_home, git_project, endpoint_config, server,
                                                                  monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-key")
    finished_session(git_project, "before-trust", monkeypatch)
    learn(git_project, "before-trust")
    assert server.requests == [], "untrusted: the endpoint is not used"

    trusted = ace("trust", "--project", git_project)
    assert trusted.exit_code == 0, trusted.output
    assert "llm.base_url" in trusted.output, "ace trust shows what the user is approving"
    finished_session(git_project, "trusted", monkeypatch)
    learn(git_project, "trusted")
    assert len(server.requests) >= 1, "trusted: the project's endpoint is the user's choice now"
    assert config_show(git_project)["llm.base_url"]["value"] == f"{server.url}/v1"

    seen = len(server.requests)
    endpoint_config.write_text(endpoint_config.read_text() + "# a later commit\n")
    finished_session(git_project, "after-edit", monkeypatch)
    learn(git_project, "after-edit")
    assert len(server.requests) == seen, "an edited file is no longer trusted"
    assert config_show(git_project)["llm.base_url"]["value"] == ""
    listed = json.loads(ace("trust", "--list", "--json").output)
    assert [entry["state"] for entry in listed] == ["changed"]


def test_trust_can_be_revoked_and_is_kept_owner_only(ace_home, git_project, endpoint_config, server):
    assert ace("trust", "--project", git_project).exit_code == 0
    assert config_show(git_project)["llm.base_url"]["value"] == f"{server.url}/v1"
    record = ace_home / "trust.json"
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    revoked = ace("trust", "--revoke", "--project", git_project)
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    assert config_show(git_project)["llm.base_url"]["value"] == ""
    assert json.loads(ace("trust", "--list", "--json").output) == []


def test_trust_covers_that_file_only_not_the_same_content_elsewhere(ace_home, git_project, endpoint_config, server,
                                                                    tmp_path):
    assert ace("trust", "--project", git_project).exit_code == 0
    other = tmp_path / "other-repo"
    other.mkdir()
    (other / ".git").mkdir()
    (other / ".ace.toml").write_bytes(endpoint_config.read_bytes())
    assert config_show(other)["llm.base_url"]["value"] == "", "a copy in another repository is not trusted"


def test_a_trust_record_writable_by_others_is_not_believed(ace_home, git_project, endpoint_config, server):
    assert ace("trust", "--project", git_project).exit_code == 0
    os.chmod(ace_home / "trust.json", 0o666)
    assert config_show(git_project)["llm.base_url"]["value"] == ""


TRUST_THRESHOLDS = {"learning.promote_confidence": (0.0, 0.8), "learning.promote_min_observations": (1, 2),
                    "learning.prune_confidence": (0.0, 0.3), "learning.prune_min_observations": (1000, 10),
                    "learning.code_pattern_sessions": (1, 2),
                    # not a threshold, but as decisive: a skipped Read is a file's words provenance never sees
                    "capture.skip_tools": ('["Read", "WebFetch", "Grep"]',
                                           ["TodoWrite", "TodoRead", "ExitPlanMode", "TaskList", "TaskGet"])}


def test_thresholds_that_shape_trust_are_the_users_not_the_repositorys(ace_home, git_project):
    """Issue 20: a committed `.ace.toml` with `promote_confidence = 0.0` made the repository's own
    planted lesson active after one session. Promotion, confidence and pruning thresholds are
    user-level: ignored in a project file, said once in the log, shown by `ace config show`."""
    sections: dict[str, list[str]] = {"inject": ["prompt_k = 2"]}
    for key, (value, _) in TRUST_THRESHOLDS.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, []).append(f"{name} = {value}")
    (git_project / ".ace.toml").write_text("".join(
        f"[{section}]\n" + "\n".join(lines) + "\n\n" for section, lines in sections.items()))
    shown = config_show(git_project)
    assert shown["inject.prompt_k"]["value"] == 2
    for key, (_, default) in TRUST_THRESHOLDS.items():
        assert shown[key]["value"] == default, f"{key} taken from the repository's .ace.toml"
        assert "ace trust" in shown[key]["ignored"]["fix"]
    config_show(git_project)  # loaded again: said once per file content, not per load
    log = (ace_home / "logs" / "ace.log").read_text() if (ace_home / "logs" / "ace.log").exists() else ""
    said = [line for line in log.splitlines() if "learning.promote_confidence" in line]
    assert len(said) == 1 and "ignored" in said[0], log[-2000:]
