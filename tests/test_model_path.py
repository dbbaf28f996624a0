"""Learning with a model, as a user meets it (issue 34 item 1, issue 40 "a broken model path looks
healthy"): `ace install`'s one-time offer (yes by default in a terminal, off without one, not made
without `claude` on PATH), the budget meter (`ace status`, the status line), the fallback told once
with the provider's own message, and `ace doctor`'s real check. Real `ace` processes, real hook
processes and a real store; `claude` is a stand-in script on PATH (the real CLI against a scripted
model is in tests/e2e/test_model_path_e2e.py)."""

from __future__ import annotations

import json
import time

import pytest

from ace_engine.llm import health
from ace_engine.llm.budget import UsageLedger, meter, meter_text
from ace_engine.llm.codex_cli import parse_events
from hookutil import check_answer, payload, run_hook
from modelpathutil import SYSTEM_PATH, ace_in_terminal, ace_process, fake_claude, user_config
from test_learning_cli import PAYLOAD

NOT_LOGGED_IN = "Not logged in · Please run /login"


@pytest.fixture
def bindir(tmp_path):
    return tmp_path / "bin"


def path_env(bindir) -> dict[str, str]:
    return {"PATH": f"{bindir}:{SYSTEM_PATH}"}


def test_without_claude_on_path_install_offers_nothing_and_writes_no_config(ace_home, git_project):
    proc = ace_process("install", env={"PATH": SYSTEM_PATH}, cwd=git_project)
    assert proc.returncode == 0, proc.stderr
    assert "Learn with your Claude Code" not in proc.stdout and "llm.provider claude-cli" not in proc.stdout
    assert not proc.stderr.strip()
    assert not user_config().exists()
    # The offline explanation names the one SDK a model needs here only when it is really missing.
    assert "needs `" not in proc.stdout  # anthropic is installed in the test environment
    code, shown = ace_in_terminal("install", env={"PATH": SYSTEM_PATH}, cwd=git_project)  # a terminal: nothing asked
    assert code == 0 and "Learn with" not in shown and not user_config().exists()


def test_a_question_left_unanswered_remembers_nothing(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    code, shown = ace_in_terminal("install", env=path_env(bindir), cwd=git_project, answer=b"\x04")  # Ctrl-D
    assert code == 0, shown
    assert "Not answered: off for now" in shown and "`ace config set llm.provider claude-cli`" in shown
    assert not user_config().exists()


def without_anthropic(tmp_path) -> dict[str, str]:
    """The environment of a process in which the `anthropic` SDK cannot be imported (as in an
    install without the [llm] extra), whatever this test environment has."""
    blocker = tmp_path / "site"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoAnthropic:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'anthropic' or name.startswith('anthropic.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'anthropic'\")\n"
        "sys.meta_path.insert(0, _NoAnthropic())\n")
    return {"PATH": SYSTEM_PATH, "PYTHONPATH": str(blocker)}


def test_install_says_the_sdk_is_needed_only_when_it_is_missing(ace_home, git_project, tmp_path):
    proc = ace_process("install", env=without_anthropic(tmp_path), cwd=git_project)
    assert proc.returncode == 0, proc.stderr
    assert "needs `" in proc.stdout and "anthropic" in proc.stdout.split("needs `")[1].split("`")[0]


def test_doctor_names_the_install_command_for_a_missing_sdk(ace_home, git_project, tmp_path):
    env = without_anthropic(tmp_path)
    for key, value in (("llm.provider", "anthropic"), ("llm.model", "claude-test")):
        ace_process("config", "set", key, value, env=env, cwd=git_project)
    doctor = ace_process("doctor", "--json", env={**env, "ANTHROPIC_API_KEY": "k"}, cwd=git_project)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "fail" and "the `anthropic` package is not installed" in check["detail"]
    from ace_engine.core.install_route import extra_hint

    # the exact command for this install route (pip in a venv, pipx inject, uv tool…), as the CLI computes it
    assert check["fix"] == f"install the anthropic SDK (ace-engine's [llm] extra): `{extra_hint('llm', ['anthropic'])}`"


def test_doctor_says_which_endpoint_refused_the_connection(ace_home, git_project):
    env = {"PATH": SYSTEM_PATH}
    for key, value in (("llm.provider", "openai"), ("llm.model", "m"), ("llm.base_url", "http://127.0.0.1:9/v1")):
        ace_process("config", "set", key, value, env=env, cwd=git_project)
    doctor = ace_process("doctor", "--json", env=env, cwd=git_project)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "fail"
    assert "the endpoint http://127.0.0.1:9/v1 refused the connection" in check["detail"]
    assert "start the server at `llm.base_url` or correct it" in check["fix"]


def test_without_a_terminal_the_offer_stays_off_and_prints_the_command(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    proc = ace_process("install", env=path_env(bindir), cwd=git_project)
    assert proc.returncode == 0, proc.stderr
    assert "Learn with your Claude Code?" in proc.stdout
    assert "never the raw output" in proc.stdout and "your own Claude Code account" in proc.stdout
    assert "`ace config set llm.provider claude-cli`" in proc.stdout
    assert not user_config().exists()  # off: nothing written, nothing learned with a model
    # The printed command is the real one: it turns the model path on.
    on = ace_process("config", "set", "llm.provider", "claude-cli", env=path_env(bindir), cwd=git_project)
    assert on.returncode == 0, on.stderr
    got = ace_process("config", "get", "llm.provider", env=path_env(bindir), cwd=git_project)
    assert got.stdout.strip() == "claude-cli"


def test_in_a_terminal_yes_is_the_default_and_it_is_asked_once(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    code, shown = ace_in_terminal("install", env=path_env(bindir), cwd=git_project)
    assert code == 0, shown
    assert "Learn with it? [Y/n]" in shown
    assert "Cap: 200 calls and 2,000,000 tokens a day" in shown
    config = user_config().read_text()
    assert 'provider = "claude-cli"' in config
    assert not (git_project / ".ace.toml").exists()  # the user's file, never the repository's
    # Asked once: the answer is remembered, in a terminal too.
    code, again = ace_in_terminal("install", env=path_env(bindir), cwd=git_project)
    assert code == 0 and "Learn with it?" not in again and "written by the LLM reflector (claude-cli" in again


def test_a_no_is_remembered_too(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    code, shown = ace_in_terminal("install", env=path_env(bindir), cwd=git_project, answer=b"n\r")
    assert code == 0, shown
    assert 'provider = "none"' in user_config().read_text()
    code, again = ace_in_terminal("install", env=path_env(bindir), cwd=git_project)
    assert code == 0 and "Learn with it?" not in again


def test_no_offer_when_the_user_chose_offline_learning(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    ace_process("config", "set", "learning.reflector", "heuristic", env=path_env(bindir), cwd=git_project)
    code, shown = ace_in_terminal("install", env=path_env(bindir), cwd=git_project)
    assert code == 0 and "Learn with it?" not in shown and "llm.provider" not in user_config().read_text()


def test_learn_with_answers_for_scripts(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=True, answer="ok")
    proc = ace_process("install", "--learn-with", "claude", "--json", env=path_env(bindir), cwd=git_project)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["model_offer"]["provider"] == "claude-cli" and answer["learning"]["reflector"] == "llm"
    assert answer["learning"]["model"] == "haiku"  # the small fast default (llm.claude_model)
    assert 'provider = "claude-cli"' in user_config().read_text()


def test_a_logged_out_claude_is_not_offered_and_install_says_how_to_log_in(ace_home, git_project, bindir):
    fake_claude(bindir, logged_in=False)
    proc = ace_process("install", env=path_env(bindir), cwd=git_project)
    assert proc.returncode == 0, proc.stderr
    assert "Learn with it?" not in proc.stdout
    assert "not logged in" in proc.stdout and "`claude /login`" in proc.stdout
    assert not user_config().exists()


def test_a_broken_model_path_is_red_everywhere_with_its_true_cause_told_once(ace_home, git_project, bindir, tmp_path):
    calls = tmp_path / "claude-calls.log"
    fake_claude(bindir, logged_in=False, calls_log=calls)
    env = path_env(bindir)
    assert ace_process("config", "set", "llm.provider", "claude-cli", env=env, cwd=git_project).returncode == 0

    # install no longer claims the LLM reflector writes the lessons
    installed = ace_process("install", env=env, cwd=git_project)
    assert "learned offline for now" in installed.stdout and "`claude /login`" in installed.stdout

    # The learner falls back to offline learning; the provider's own message is recorded.
    learned = ace_process("learn", "--stdin", "--json", env=env, cwd=git_project, stdin=json.dumps(PAYLOAD))
    assert learned.returncode == 0, learned.stderr
    assert json.loads(learned.stdout)["success"] is True
    assert len(calls.read_text().splitlines()) == 1  # it did try the model

    stats = ace_process("stats", env=env, cwd=git_project)
    assert "fallback from llm:claude-cli" in stats.stdout
    assert NOT_LOGGED_IN in stats.stdout and "claude /login" in stats.stdout

    status = ace_process("status", env=env, cwd=git_project)
    assert "the last model call failed" in status.stdout and NOT_LOGGED_IN in status.stdout

    line = ace_process("statusline", env=env, cwd=git_project, stdin=json.dumps({"cwd": str(git_project)}))
    assert "llm ⚠ offline: login" in line.stdout

    # Told once, at the next session start, with the true cause and the fix.
    code, out, err, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), "s-1", source="startup"),
                                 env=env, cwd=str(git_project))
    assert code == 0, err
    answer = check_answer("SessionStart", out)
    assert answer and NOT_LOGGED_IN in answer["systemMessage"] and "claude /login" in answer["systemMessage"]
    code, out, err, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), "s-2", source="startup"),
                                 env=env, cwd=str(git_project))
    assert code == 0 and "Not logged in" not in out

    # doctor makes one real call and fails with the fix; --offline still fails on the recorded call.
    doctor = ace_process("doctor", env=env, cwd=git_project)
    assert doctor.returncode == 1
    model_line = next(line for line in doctor.stdout.splitlines() if "model:" in line)
    assert "FAIL" in model_line and NOT_LOGGED_IN in doctor.stdout
    assert "fix: run `claude /login`" in doctor.stdout
    assert len(calls.read_text().splitlines()) == 2
    offline = ace_process("doctor", "--offline", "--json", env=env, cwd=git_project)
    check = next(c for c in json.loads(offline.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "fail" and "not called (--offline)" in check["detail"]
    assert NOT_LOGGED_IN in check["detail"]
    assert len(calls.read_text().splitlines()) == 2  # --offline made no call


def test_doctor_checks_a_working_path_for_real_and_counts_the_call(ace_home, git_project, bindir, tmp_path):
    calls = tmp_path / "claude-calls.log"
    fake_claude(bindir, logged_in=True, answer="ok", calls_log=calls)
    env = path_env(bindir)
    ace_process("config", "set", "llm.provider", "claude-cli", env=env, cwd=git_project)
    doctor = ace_process("doctor", "--json", env=env, cwd=git_project)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "ok", check
    assert "claude-cli (haiku) answered" in check["detail"] and "1/200 calls" in check["detail"]
    assert "--model haiku" in calls.read_text()
    status = ace_process("status", env=env, cwd=git_project)
    assert "Learning: with claude-cli, model haiku — 1/200 calls, 22/2M tokens today" in status.stdout
    report = json.loads(ace_process("status", "--json", env=env, cwd=git_project).stdout)["llm"]
    assert report["provider"] == "claude-cli" and report["failure"] is None
    assert {k: report["meter"][k] for k in ("calls", "calls_cap", "tokens", "reached")} == \
        {"calls": 1, "calls_cap": 200, "tokens": 22, "reached": None}
    line = ace_process("statusline", env=env, cwd=git_project, stdin=json.dumps({"cwd": str(git_project)}))
    assert line.returncode == 0 and line.stdout.rstrip().endswith("llm 1/200 calls")


def test_past_the_daily_cap_doctor_makes_no_call_and_the_fallback_says_why(ace_home, git_project, bindir, tmp_path):
    calls = tmp_path / "claude-calls.log"
    fake_claude(bindir, logged_in=True, answer="ok", calls_log=calls)
    env = path_env(bindir)
    for key, value in (("llm.provider", "claude-cli"), ("llm.max_calls_per_day", "1")):
        ace_process("config", "set", key, value, env=env, cwd=git_project)
    UsageLedger().record("claude-cli", 100, 10)  # today's one call, made earlier

    doctor = ace_process("doctor", "--json", env=env, cwd=git_project)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "warn" and "the daily calls cap is reached (1/1 calls" in check["detail"]
    learned = ace_process("learn", "--stdin", "--json", env=env, cwd=git_project, stdin=json.dumps(PAYLOAD))
    assert learned.returncode == 0, learned.stderr
    assert not calls.exists()  # past the cap: no call at all, from doctor or the learner
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), "s-1", source="startup"),
                               env=env, cwd=str(git_project))
    message = json.loads(out)["systemMessage"]
    assert "daily LLM call budget reached (1/1 calls today)" in message and "llm.max_calls_per_day" in message
    line = ace_process("statusline", env=env, cwd=git_project, stdin="{}")
    assert "llm ⚠ offline: budget" in line.stdout


# -- the pieces, on their own ----------------------------------------------------------------------

def test_a_failure_is_told_once_and_again_only_when_it_is_news(tmp_path):
    where = str(tmp_path / health.FILE_NAME)
    health.record_failure("claude-cli", f"claude exited 1 without a result: '{NOT_LOGGED_IN}'", path=where)
    first = health.notice(where)
    assert first and NOT_LOGGED_IN in first and "claude /login" in first
    health.record_failure("claude-cli", f"claude exited 1 without a result: '{NOT_LOGGED_IN}'", path=where)
    assert health.notice(where) is None  # the same failure again: already told
    health.record_failure("claude-cli", "claude did not answer within 120s; raise `llm.timeout_s`", path=where)
    assert "llm.timeout_s" in (health.notice(where) or "")  # another cause: news
    health.record_success("claude-cli", path=where)
    assert health.failure(where) is None and health.notice(where) is None
    health.record_failure("claude-cli", "claude did not answer within 120s; raise `llm.timeout_s`", path=where)
    assert health.notice(where)  # failing again after it worked: news again


def test_a_recorded_cause_carries_no_terminal_controls(tmp_path):
    where = str(tmp_path / health.FILE_NAME)
    health.record_failure("claude-cli", "claude exited 1: '\x1b]0;pwned\x07Not logged in\x1b[2J'\nsecond line",
                          path=where)
    told = health.notice(where) or ""
    assert "Not logged in" in told and "second line" in told
    assert not any(ord(c) < 32 or c == "\x7f" for c in told)


@pytest.mark.parametrize(("provider", "cause", "fix"), [
    ("claude-cli", f"claude exited 1 without a result: '{NOT_LOGGED_IN}'", "`claude /login`"),
    ("codex-cli", "codex exited 1: 'Not logged in'", "`codex login`"),
    ("anthropic", "the `anthropic` package is not installed; `pip install 'anthropic>=0.40'`",
     "install the anthropic SDK (ace-engine's [llm] extra): `pip install 'anthropic>=0.40'`"),
    ("openai", "the call to http://127.0.0.1:9/v1 failed: Connection error.; check that the server runs",
     "start the server at `llm.base_url`"),
    ("claude-cli", "daily LLM token budget reached (5/4 tokens today); learning falls back", "llm.max_tokens_per_day"),
    ("claude-cli", "Claude Code CLI not found: `claude` on PATH; install Claude Code", "llm.claude_path"),
])
def test_each_kind_of_failure_gets_its_exact_fix(provider, cause, fix):
    assert fix in health.fix_for(provider, cause)


def test_the_meter_counts_today_against_the_caps(tmp_path):
    ledger = UsageLedger(str(tmp_path / "usage.json"))
    now = time.time()
    ledger.record("claude-cli", 12_000, 345, now=now)
    ledger.record("claude-cli", 100, 5, now=now - 86_400)  # yesterday's does not count
    m = meter(50, 2_000_000, ledger, now=now)
    assert (m["calls"], m["tokens"], m["reached"]) == (1, 12_345, None)
    assert meter_text(m) == "1/50 calls, 12k/2M tokens today" and meter_text(m, short=True) == "1/50 calls"
    assert meter(1, 0, ledger, now=now)["reached"] == "calls"
    assert meter_text(meter(0, 0, ledger, now=now), short=True) == "1 calls (no cap)"


def test_codex_exec_events_give_the_answer_the_usage_and_the_true_error():
    ok = "\n".join([
        "WARNING: proceeding, even though we could not create PATH aliases",
        json.dumps({"type": "thread.started", "thread_id": "t1"}),
        json.dumps({"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": '{"a": 1}'}}),
        json.dumps({"type": "turn.completed", "usage": {"input_tokens": 900, "cached_input_tokens": 0,
                                                        "output_tokens": 40}}),
    ])
    assert parse_events(ok) == {"text": '{"a": 1}', "usage": {"input_tokens": 900, "cached_input_tokens": 0,
                                                               "output_tokens": 40}, "error": None}
    failed = json.dumps({"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}})
    assert parse_events(failed)["error"] == "unexpected status 401 Unauthorized"
