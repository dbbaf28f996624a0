"""The layered config and its trust rule: which keys a repository's `.ace.toml` may set.

The attacks themselves (a project file choosing a binary or an endpoint) are in
tests/security/test_config_trust.py and test_execution.py; here: the table of project keys, the
user's own layers staying trusted, and the hook's cost when no project file needs trust.
"""

import json
import os
import subprocess
import sys

from ace_engine.core import config as config_mod


def test_user_level_keys_are_not_project_keys():
    for key in config_mod.DEFAULTS:
        if key.startswith(("llm.", "store.", "retention.")) or key in (
                "learning.trusted_hosts", "learning.code_patterns_file", "learning.reflector",
                "learning.max_attempts", "learning.linger_seconds", "learning.lease_seconds"):
            assert not config_mod.project_may_set(key), key
    for key in ("inject.prompt_k", "retrieval.threshold", "retrieval.abbreviations",
                "learning.merge_similarity", "learning.enabled"):
        assert config_mod.project_may_set(key), key
    assert config_mod.PROJECT_KEYS <= set(config_mod.DEFAULTS)


def test_project_keys_are_marked_on_the_settings_table():
    """`project=True` on a row is the trust list; this is the list issue 7 reviewed, key by key."""
    marked = {s.key for s in config_mod.SETTINGS if s.project}
    assert marked == config_mod.PROJECT_KEYS
    # retrieval.embedder is user-level: a repository must not make every prompt load a 90 MB model;
    # nor retrieval.write_time the learning worker run it on every lesson.
    # continuity.* shape what is injected, like inject.*; the narrative calls the LLM: user-level.
    # inject.holdout (issue 37) is the user's experiment: a repository must not switch or skew it.
    # inject.recheck (issue 38) decides whether the user's lessons are hidden: the user's.
    assert marked == {key for key in config_mod.DEFAULTS
                      if key.startswith(("capture.", "inject.", "retrieval.", "continuity."))
                      and key not in ("retrieval.embedder", "retrieval.write_time", "continuity.llm_narrative",
                                      "capture.skip_tools", "capture.max_input_chars",
                                      "capture.max_response_chars", "capture.max_message_chars",
                                      "inject.holdout", "inject.recheck")} | {
        "learning.enabled", "learning.merge_similarity", "learning.stale_days", "learning.max_bullets",
        "learning.max_tokens", "learning.slow_step_seconds", "learning.co_edit_sessions"}
    # Issue 20: thresholds of promotion, confidence and pruning decide what reaches the agent: user-level.
    assert not marked & {"learning.promote_confidence", "learning.promote_min_observations",
                         "learning.prune_confidence", "learning.prune_min_observations",
                         "learning.code_pattern_sessions",
                         # what is not captured is not evidence: skipping `Read` would hide a file's words,
                         # a 24-character cap an output's (issue 35)
                         "capture.skip_tools", "capture.max_input_chars", "capture.max_response_chars",
                         "capture.max_message_chars"}


def test_one_table_is_the_only_source_of_keys_defaults_and_help():
    keys = [s.key for s in config_mod.SETTINGS]
    assert len(keys) == len(set(keys)) == len(config_mod.DEFAULTS) == 76
    for setting in config_mod.SETTINGS:
        assert config_mod.SETTINGS_BY_KEY[setting.key] is setting
        assert config_mod.DEFAULTS[setting.key] is setting.default
        assert setting.type is type(setting.default) and setting.help.strip(), setting.key
    assert not hasattr(config_mod, "DESCRIPTIONS")


def test_values_are_coerced_once_at_load(ace_home, git_project, tmp_path, monkeypatch):
    """`cfg[key]` is of its setting's type whatever layer set it: callers never coerce again."""
    user_config = tmp_path / "xdg-config" / "ace-engine" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text("[llm]\ntimeout_s = 30\n[retention]\nmax_age_days = 7.0\n")
    monkeypatch.setenv("ACE_INJECT_PROMPT_K", "7")
    monkeypatch.setenv("ACE_INJECT_ENABLED", "off")
    monkeypatch.setenv("ACE_CAPTURE_SKIP_TOOLS", "Read, Grep")
    monkeypatch.setenv("ACE_RETRIEVAL_ABBREVIATIONS", "k8s=kubernetes")
    cfg = config_mod.load(str(git_project), strict=True)
    for key in config_mod.DEFAULTS:
        assert type(cfg[key]) is config_mod.SETTINGS_BY_KEY[key].type, key
    assert cfg["llm.timeout_s"] == 30.0 and cfg["retention.max_age_days"] == 7 and cfg["inject.prompt_k"] == 7
    assert cfg["inject.enabled"] is False and cfg["capture.skip_tools"] == ["Read", "Grep"]
    assert cfg["retrieval.abbreviations"] == {"k8s": "kubernetes"}


def test_a_value_of_the_wrong_type_names_the_key_and_the_expected_type(ace_home, git_project, monkeypatch):
    import pytest

    (git_project / ".ace.toml").write_text("[inject]\nenabled = 3\n")
    with pytest.raises(config_mod.ConfigError, match=r"`inject.enabled` must be bool like True, got 3"):
        config_mod.load(str(git_project), strict=True)
    (git_project / ".ace.toml").write_text("[retrieval]\ncandidates = true\n")
    with pytest.raises(config_mod.ConfigError, match=r"`retrieval.candidates` must be int like 40, got True"):
        config_mod.load(str(git_project), strict=True)
    (git_project / ".ace.toml").write_text("")
    monkeypatch.setenv("ACE_LLM_MODEL", "ok")  # strings from the environment are strings
    assert config_mod.load(str(git_project), strict=True)["llm.model"] == "ok"
    assert config_mod.load(str(git_project))["inject.enabled"] is True  # non-strict (hooks): the default stays


def test_environment_and_user_config_stay_trusted(ace_home, git_project, tmp_path, monkeypatch):
    user_config = tmp_path / "xdg-config" / "ace-engine" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n')
    (git_project / ".ace.toml").write_text('[llm]\nbase_url = "http://evil.example/v1"\n')
    monkeypatch.setenv("ACE_LLM_MODEL", "from-env")
    cfg = config_mod.load(str(git_project), strict=True)
    assert cfg["llm.base_url"] == "http://127.0.0.1:9/v1" and cfg["llm.model"] == "from-env"
    assert cfg.sources["llm.base_url"].startswith("user") and cfg.sources["llm.model"].startswith("env")
    assert cfg.ignored == {"llm.base_url": ("http://evil.example/v1", str(git_project / ".ace.toml"))}


def test_the_ignored_keys_are_logged_once_per_file_content(ace_home, git_project):
    from ace_engine.core import log

    path = git_project / ".ace.toml"
    path.write_text('[llm]\nprovider = "claude-cli"\n')
    for _ in range(3):
        config_mod.load(str(git_project))
    said = [line for line in log.tail(50, level="WARN") if "not trusted" in line]
    assert len(said) == 1 and "llm.provider" in said[0] and "ace trust" in said[0]
    path.write_text('[llm]\nprovider = "anthropic"\n')
    config_mod.load(str(git_project))
    assert len([line for line in log.tail(50, level="WARN") if "not trusted" in line]) == 2


def test_a_hook_pays_for_trust_only_when_the_project_file_needs_it(ace_home, git_project):
    """No project file, or one with harmless keys only: the trust module (and hashlib) stay unloaded."""
    probe = ("import json, sys\n"
             "from ace_engine.core import config\n"
             "cfg = config.load(sys.argv[1])\n"
             "print(json.dumps(['ace_engine.core.trust' in sys.modules, cfg['inject.prompt_k']]))\n")
    src = os.path.dirname(os.path.dirname(os.path.dirname(config_mod.__file__)))  # …/src

    def run():
        out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {src!r})\n" + probe,
                              str(git_project)], capture_output=True, text=True, env=dict(os.environ), check=True)
        return json.loads(out.stdout)

    assert run() == [False, 5]
    (git_project / ".ace.toml").write_text("[inject]\nprompt_k = 2\n")
    assert run() == [False, 2]
    (git_project / ".ace.toml").write_text("[inject]\nprompt_k = 2\n[llm]\nprovider = \"claude-cli\"\n")
    assert run() == [True, 2]


def test_the_table_costs_a_hook_no_import():
    """Hooks load the config on every run: the table is plain `__slots__` objects, and `typing`,
    `dataclasses` and `__future__` stay unloaded by it (`errors` is the one module it adds)."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(config_mod.__file__)))  # …/src
    probe = (f"import sys; sys.path.insert(0, {src!r}); before = set(sys.modules)\n"
             "from ace_engine.core import config\n"
             "config.load(None)\n"
             "print(' '.join(sorted(set(sys.modules) - before)))\n")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True,
                         env=dict(os.environ)).stdout.split()
    assert set(out) <= {"ace_engine", "ace_engine.core", "ace_engine.core.paths", "ace_engine.core.errors",
                        "ace_engine.core.config"}, out
