"""The layered config and its trust rule: which keys a repository's `.ace.toml` may set.

The attacks themselves (a project file choosing a binary or an endpoint) are in
tests/security/test_config_trust.py and test_execution.py; here: the table of project keys, the
user's own layers staying trusted, and the hook's cost when no project file needs trust.
"""

import json
import os
import subprocess
import sys

from ace_engine import config as config_mod


def test_user_level_keys_are_not_project_keys():
    for key in config_mod.DEFAULTS:
        if key.startswith(("llm.", "store.", "retention.")) or key in (
                "learning.trusted_hosts", "learning.code_patterns_file", "learning.reflector",
                "learning.max_attempts", "learning.linger_seconds", "learning.lease_seconds"):
            assert not config_mod.project_may_set(key), key
    for key in ("capture.skip_tools", "inject.prompt_k", "retrieval.threshold", "retrieval.abbreviations",
                "learning.merge_similarity", "learning.enabled"):
        assert config_mod.project_may_set(key), key
    assert config_mod.PROJECT_KEYS <= set(config_mod.DEFAULTS)


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
    from ace_engine import log

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
             "from ace_engine import config\n"
             "cfg = config.load(sys.argv[1])\n"
             "print(json.dumps(['ace_engine.trust' in sys.modules, cfg['inject.prompt_k']]))\n")
    src = os.path.dirname(os.path.dirname(config_mod.__file__))

    def run():
        out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {src!r})\n" + probe,
                              str(git_project)], capture_output=True, text=True, env=dict(os.environ), check=True)
        return json.loads(out.stdout)

    assert run() == [False, 5]
    (git_project / ".ace.toml").write_text("[inject]\nprompt_k = 2\n")
    assert run() == [False, 2]
    (git_project / ".ace.toml").write_text("[inject]\nprompt_k = 2\n[llm]\nprovider = \"claude-cli\"\n")
    assert run() == [True, 2]
