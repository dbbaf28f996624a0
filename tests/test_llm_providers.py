"""The LLM providers against real local HTTP servers, through the real SDKs.

* OpenAI-compatible: the `openai` SDK against a scripted `/v1/chat/completions` endpoint (what a
  local Ollama / vLLM / LM Studio looks like);
* Anthropic: the `anthropic` SDK against the e2e harness's scripted Messages server, and against
  the scripted chat server for sequences, errors and timeouts.

Budgets (per job, per day), the one retry on invalid JSON, timeouts and configuration errors.
The Claude Code CLI provider runs against the real `claude` in tests/e2e/test_llm_reflector_e2e.py.
"""

import json
import time

import pytest

from ace_engine import llm
from ace_engine.core import config as config_mod
from ace_engine.llm.budget import UsageLedger, usage_summary
from e2e.model_server import ScriptedModelServer

# Through the real SDKs: without the `llm` extra (pip install -e '.[llm]', also in `test`) the file skips.
for _sdk in ("openai", "anthropic"):
    pytest.importorskip(_sdk, reason=f"the LLM providers are tested through their SDKs: `{_sdk}` (the `llm` extra)")

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


def cfg(**values) -> dict:
    """A full config (defaults) with `llm.*` values overridden: keys use `_` for `.` after `llm`."""
    out = dict(config_mod.DEFAULTS)
    for key, value in values.items():
        out["llm." + key] = value
    return out


@pytest.fixture
def ledger(ace_home):
    return UsageLedger()


@pytest.fixture
def chat(scripted_chat):
    return scripted_chat


def openai_provider(server, ledger, **over):
    return llm.get_provider(cfg(provider="openai", model="qwen-test", base_url=server.url + "/v1", **over),
                            env={}, ledger=ledger)


# -- OpenAI-compatible -------------------------------------------------------------------------------

def test_openai_compatible_endpoint_answers_json(chat, ledger):
    server = chat(['```json\n{"answer": "42"}\n```'])
    provider = openai_provider(server, ledger)
    assert provider.name == "openai"
    assert provider.complete_json("You answer questions.", "What is six times seven?", SCHEMA) == {"answer": "42"}

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "qwen-test"
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"].startswith("You answer questions.")
    assert '"required":["answer"]' in body["messages"][0]["content"]  # the schema goes with the system prompt
    assert body["messages"][1] == {"role": "user", "content": "What is six times seven?"}
    assert body["max_tokens"] == config_mod.DEFAULTS["llm.max_tokens"]
    # A local endpoint without a key gets a placeholder, never a real key from the environment.
    assert request["headers"]["authorization"] == "Bearer not-needed"
    # Usage comes from the response and lands in the daily ledger.
    assert provider.usage["calls"] == 1 and provider.usage["input_tokens"] == 321 and provider.usage["output_tokens"] == 45
    assert ledger.day()["calls"] == 1 and ledger.day()["providers"] == {"openai": 1}


def test_the_key_comes_from_the_named_environment_variable(chat, ledger):
    server = chat(['{"answer": "ok"}'])
    provider = llm.get_provider(cfg(provider="openai", model="m", base_url=server.url + "/v1", api_key_env="MY_LLM_KEY"),
                                env={"MY_LLM_KEY": "sk-local-123", "OPENAI_API_KEY": "wrong"}, ledger=ledger)
    provider.complete_json("s", "u", SCHEMA)
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-local-123"


def test_invalid_reply_is_retried_once_with_a_nudge(chat, ledger):
    server = chat(["I think the answer is 42.", '{"answer": "42"}'])
    provider = openai_provider(server, ledger)
    assert provider.complete_json("sys", "question", SCHEMA) == {"answer": "42"}
    assert len(server.requests) == 2
    retry = server.requests[1]["body"]["messages"][1]["content"]
    assert retry.startswith("question")
    assert "could not be used: the reply held no JSON object" in retry
    assert "Reply with JSON only" in retry
    assert provider.usage["calls"] == 2


def test_reply_invalid_twice_raises_invalid_output(chat, ledger):
    server = chat(['{"answer": 42}'])  # wrong type both times
    provider = openai_provider(server, ledger)
    with pytest.raises(llm.InvalidOutput, match=r"\$\.answer: expected string, got int.*after one retry"):
        provider.complete_json("sys", "q", SCHEMA)
    assert len(server.requests) == 2  # exactly one retry


def test_timeout_raises_llm_timeout(chat, ledger):
    server = chat(['{"answer": "late"}'], delay=10)
    provider = openai_provider(server, ledger, timeout_s=0.5)
    with pytest.raises(llm.LLMTimeout, match="did not answer within 0.5s"):  # a late answer would not raise
        provider.complete_json("sys", "q", SCHEMA)
    assert len(server.requests) == 1  # a timeout is not retried: the job has a fallback


def test_http_error_names_the_status_and_the_fix(chat, ledger):
    server = chat([(404, {"error": {"message": "model 'nope' not found", "type": "not_found"}})])
    provider = openai_provider(server, ledger)
    with pytest.raises(llm.LLMError, match=r"refused the call \(404\).*model 'nope' not found.*check `llm.model`"):
        provider.complete_json("sys", "q", SCHEMA)


def test_unreachable_endpoint_is_an_llm_error(ledger):
    provider = llm.get_provider(cfg(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", timeout_s=5),
                                env={}, ledger=ledger)
    with pytest.raises(llm.LLMError, match=r"the endpoint http://127\.0\.0\.1:9/v1 refused the connection "
                                           r"\(.*Connection refused\); start the server or correct `llm.base_url`"):
        provider.complete_json("sys", "q", SCHEMA)


# -- budgets ----------------------------------------------------------------------------------------

def test_per_job_call_cap_stops_the_retry_and_resets_per_job(chat, ledger):
    server = chat(["no json here", '{"answer": "x"}'])
    provider = openai_provider(server, ledger, max_calls_per_job=1)
    with pytest.raises(llm.BudgetExceeded, match="already made 1 LLM calls.*llm.max_calls_per_job"):
        provider.complete_json("s", "q", SCHEMA)
    assert len(server.requests) == 1
    provider.start_job()
    assert provider.complete_json("s", "q", SCHEMA) == {"answer": "x"}


def test_daily_budget_is_shared_through_the_ledger(chat, ledger):
    server = chat(['{"answer": "x"}'])
    first = openai_provider(server, ledger, max_calls_per_day=2)
    first.complete_json("s", "q", SCHEMA)
    # Another worker process (another provider object, same ledger file) sees the spend.
    second = openai_provider(server, UsageLedger(ledger.path), max_calls_per_day=2)
    second.complete_json("s", "q", SCHEMA)
    with pytest.raises(llm.BudgetExceeded, match=r"daily LLM call budget reached \(2/2 calls today\)"):
        second.complete_json("s", "q", SCHEMA)
    assert len(server.requests) == 2
    token_capped = openai_provider(server, ledger, max_calls_per_day=0, max_tokens_per_day=700)
    with pytest.raises(llm.BudgetExceeded, match=r"daily LLM token budget reached \(732/700"):
        token_capped.complete_json("s", "q", SCHEMA)


def test_usage_summary_and_ledger_file(ledger):
    now = time.time()
    ledger.record("anthropic", 1000, 200, 0.01, now=now)
    ledger.record("claude-cli", 50, 5, 0.002, now=now - 86_400)
    summary = usage_summary(7, ledger, now=now)
    assert summary["today"]["calls"] == 1 and summary["today"]["providers"] == {"anthropic": 1}
    assert summary["total"] == {"calls": 2, "input_tokens": 1050, "output_tokens": 205, "cost_usd": 0.012}
    assert [d["calls"] for d in summary["days"]] == [1, 1]
    import os
    import stat

    assert stat.S_IMODE(os.stat(ledger.path).st_mode) == 0o600
    # A damaged ledger never blocks learning: it starts over.
    with open(ledger.path, "w") as fh:
        fh.write("{not json")
    assert ledger.day()["calls"] == 0
    ledger.record("openai", 1, 1, now=now)
    assert json.load(open(ledger.path))[summary["today"]["day"]]["calls"] == 1


# -- Anthropic ------------------------------------------------------------------------------------

def test_anthropic_sdk_against_the_scripted_messages_server(ledger):
    server = ScriptedModelServer().start()
    try:
        server.side_text = 'Reflection follows.\n{"answer": "from the messages API"}'
        provider = llm.get_provider(cfg(provider="anthropic", model="claude-test-model", base_url=server.url),
                                    env={"ANTHROPIC_API_KEY": "sk-ant-test"}, ledger=ledger)
        assert provider.complete_json("You reflect.", "Trajectory here.", SCHEMA, max_tokens=900) == \
            {"answer": "from the messages API"}
        (request,) = [r for r in server.requests if r.method == "POST"]
        assert request.path == "/v1/messages"
        assert request.body["model"] == "claude-test-model"
        assert request.body["max_tokens"] == 900
        assert request.body["system"].startswith("You reflect.")
        assert request.body["messages"] == [{"role": "user", "content": "Trajectory here."}]
        assert not request.body.get("tools")
        headers = {k.lower(): v for k, v in request.headers.items()}
        # The SDK's auth header differs between versions (x-api-key / Bearer); the key must be in one.
        assert "sk-ant-test" in (headers.get("x-api-key", ""), headers.get("authorization", "").removeprefix("Bearer "))
        assert provider.usage["input_tokens"] == 100 and provider.usage["output_tokens"] == 20
    finally:
        server.stop()


def test_anthropic_retry_timeout_and_refusal(chat, ledger):
    server = chat(["```\nnot json\n```", '{"answer": "second time"}'])
    provider = llm.get_provider(cfg(provider="anthropic", model="m", base_url=server.url), env={"ANTHROPIC_API_KEY": "k"},
                                ledger=ledger)
    assert provider.complete_json("s", "q", SCHEMA) == {"answer": "second time"}
    assert [r["kind"] for r in server.requests] == ["anthropic", "anthropic"]

    slow = chat(['{"answer": "late"}'], delay=10)
    provider = llm.get_provider(cfg(provider="anthropic", model="m", base_url=slow.url, timeout_s=0.5),
                                env={"ANTHROPIC_API_KEY": "k"}, ledger=ledger)
    with pytest.raises(llm.LLMTimeout, match="Anthropic API did not answer within 0.5s"):
        provider.complete_json("s", "q", SCHEMA)

    refusing = chat([(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})])
    provider = llm.get_provider(cfg(provider="anthropic", model="m", base_url=refusing.url), env={"ANTHROPIC_API_KEY": "k"},
                                ledger=ledger)
    with pytest.raises(llm.LLMError, match=r"refused the call \(401\).*invalid x-api-key"):
        provider.complete_json("s", "q", SCHEMA)


# -- configuration --------------------------------------------------------------------------------

def test_no_provider_means_no_model_and_nothing_leaves_the_machine():
    assert config_mod.DEFAULTS["llm.provider"] == "none"
    assert llm.get_provider(dict(config_mod.DEFAULTS)) is None
    assert llm.get_provider(cfg(provider="off")) is None


@pytest.mark.parametrize("values, env, message", [
    ({"provider": "gpt"}, {}, "unknown `llm.provider` 'gpt'; use one of: none, claude-cli, codex-cli, anthropic, openai"),
    ({"provider": "anthropic"}, {"ANTHROPIC_API_KEY": "k"}, "`llm.model` is not set"),
    ({"provider": "anthropic", "model": "m"}, {}, "environment variable `ANTHROPIC_API_KEY` is empty"),
    ({"provider": "anthropic", "model": "m", "api_key_env": "TEAM_KEY"}, {"ANTHROPIC_API_KEY": "k"},
     "environment variable `TEAM_KEY` is empty"),
    ({"provider": "openai", "model": "m"}, {}, "`OPENAI_API_KEY` is empty; export it, or set `llm.base_url`"),
    ({"provider": "openai"}, {}, "`llm.model` is not set"),
    ({"provider": "claude-cli", "claude_path": "/nonexistent/claude"}, {},
     "Claude Code CLI not found: `/nonexistent/claude` \\(llm.claude_path\\)"),
])
def test_configuration_errors_name_the_problem_and_the_fix(values, env, message, ledger):
    with pytest.raises(llm.LLMError, match=message):
        llm.get_provider(cfg(**values), env=env, ledger=ledger)


def test_config_layers_reach_the_provider(ace_home, monkeypatch, tmp_path, chat, ledger):
    """`ace config`'s layering: a user config file and ACE_LLM_* variables choose the provider."""
    server = chat(['{"answer": "configured"}'])
    config_file = tmp_path / "xdg-config" / "ace-engine" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(f'[llm]\nprovider = "openai"\nmodel = "from-file"\nbase_url = "{server.url}/v1"\n'
                           "max_calls_per_job = 2\n")
    monkeypatch.setenv("ACE_LLM_MODEL", "from-env")
    loaded = config_mod.load(None, strict=True)
    provider = llm.get_provider(loaded, env={}, ledger=ledger)
    assert (provider.name, provider.model, provider.max_calls_per_job) == ("openai", "from-env", 2)
    assert provider.complete_json("s", "q", SCHEMA) == {"answer": "configured"}
    assert server.requests[0]["body"]["model"] == "from-env"


# -- the claude-cli provider's process: never a repository's binary, settings or MCP servers -------

def test_claude_cli_runs_outside_any_repository_with_user_settings_only(ace_home, tmp_path, monkeypatch, ledger):
    """A stand-in `claude` records its argv and working directory: the real CLI loads a project's
    `.claude/settings.json` (hooks, env) from its working directory unless told
    `--setting-sources user`, and `.mcp.json` servers unless `--strict-mcp-config` (checked against
    Claude Code 2.1.197: without the flag a repository's SessionStart hook ran)."""
    seen = tmp_path / "seen.json"
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text(
        "#!/bin/sh\n"
        f"python3 -c 'import json, os, sys; json.dump({{\"argv\": sys.argv[1:], \"cwd\": os.getcwd(), "
        f"\"project_dir\": os.environ.get(\"CLAUDE_PROJECT_DIR\")}}, open(\"{seen}\", \"w\"))' \"$@\"\n"
        "cat > /dev/null\n"
        "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"{\\\"answer\\\": \\\"ok\\\"}\"}'\n")
    claude.chmod(0o755)
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    monkeypatch.chdir(repo)
    provider = llm.get_provider(cfg(provider="claude-cli", claude_path=str(claude)),
                                env={**__import__("os").environ, "CLAUDE_PROJECT_DIR": str(repo)}, ledger=ledger)
    assert provider.complete_json("s", "q", SCHEMA) == {"answer": "ok"}
    run = json.loads(seen.read_text())
    argv = run["argv"]
    assert argv[argv.index("--setting-sources") + 1] == "user"
    assert "--strict-mcp-config" in argv and argv[argv.index("--tools") + 1] == ""
    assert not run["cwd"].startswith(str(repo)) and run["project_dir"] is None


@pytest.mark.parametrize("path", ["./tools/claude", "tools/claude", "../repo/tools/claude"])
def test_a_relative_claude_path_is_refused_never_resolved_against_the_working_directory(
        tmp_path, monkeypatch, ledger, path):
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "claude").write_text("#!/bin/sh\nexit 0\n")
    (repo / "tools" / "claude").chmod(0o755)
    monkeypatch.chdir(repo)
    with pytest.raises(llm.LLMError, match="relative path; ace-engine never resolves it"):
        llm.get_provider(cfg(provider="claude-cli", claude_path=path), ledger=ledger)


def test_claude_on_path_ignores_relative_path_entries(tmp_path, monkeypatch, ledger):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "claude").write_text("#!/bin/sh\nexit 0\n")
    (repo / "claude").chmod(0o755)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", ".:" + __import__("os").environ["PATH"].replace(str(repo), ""))
    from ace_engine.llm.claude_cli import find_claude

    found = find_claude()
    assert found is None or not found.startswith(str(repo))
