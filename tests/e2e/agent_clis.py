"""Install and drive the real Codex CLI and Gemini CLI (pinned, from npm) offline.

* :func:`ensure_cli` installs ``@openai/codex@0.169.0`` or ``@google/gemini-cli@0.61.0`` with npm
  into ``~/.cache/ace-engine-tests/<name>-<version>`` (as ``claude_cli`` does for Claude Code) and
  returns the binary; :class:`AgentCliUnavailable` (a test *failure*, never a skip) otherwise.
* :func:`codex_home` writes a throw-away Codex home: a custom provider at the scripted
  Responses server, a one-model catalog (``model_catalog_json``: Codex knows no metadata for a
  custom provider's model, and only with it does it offer ``apply_patch``), the project trusted.
* :func:`run_codex` runs ``codex exec`` with ``--dangerously-bypass-hook-trust`` — Codex runs a
  hook only once a person has reviewed it in ``/hooks``; the flag stands in for that review in a
  throw-away home, and is never something ``ace install`` writes — and full access (the sandbox
  needs namespaces the test machine may not have).
* :func:`gemini_home` / :func:`run_gemini` do the same for ``gemini -p … --yolo`` against the
  scripted Gemini API (``GOOGLE_GEMINI_BASE_URL``, an API key that is never checked).

Facts verified against the pinned versions (their hook payloads are in
``tests/fixtures/agents/hook_payloads.json``): Codex reads ``.codex/hooks.json`` and
``.codex/config.toml`` of a trusted project; Gemini reads ``.gemini/settings.json`` of the project
when folder trust is off, and prepends SessionStart's added context to the prompt in ``-p`` mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claude_cli import _STRIPPED_ENV_NAMES, _STRIPPED_ENV_PREFIXES, _file_lock

PACKAGES = {"codex": ("@openai/codex", "0.169.0", "codex"), "gemini": ("@google/gemini-cli", "0.61.0", "gemini")}
MODEL = "ace-test-model"


class AgentCliUnavailable(RuntimeError):
    """A pinned agent CLI could not be installed or run."""


def cache_dir(agent: str) -> Path:
    """Beside Claude Code's cache (`$ACE_TEST_CACHE`, kept under the real home by the test set-up)."""
    package, version, _ = PACKAGES[agent]
    claude = os.environ.get("ACE_TEST_CACHE")
    root = Path(claude).expanduser().parent if claude else Path.home() / ".cache" / "ace-engine-tests"
    return root / f"{package.split('/')[-1]}-{version}"


def _version_of(binary: Path) -> str | None:
    import tempfile

    # A throw-away HOME: `gemini --version` already writes its project registry under ~/.gemini.
    with tempfile.TemporaryDirectory(prefix="agent-cli-home-") as home:
        try:
            proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                                  env={"PATH": os.environ.get("PATH", ""), "HOME": home})
        except (OSError, subprocess.TimeoutExpired):
            return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def find_cli(agent: str, prefix: Path) -> Path | None:
    package, version, binary = PACKAGES[agent]
    path = prefix / "node_modules" / ".bin" / binary
    try:
        if json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"] != version:
            return None
    except (OSError, ValueError, KeyError):
        return None
    reported = _version_of(path)
    return path if reported and version in reported else None


def ensure_cli(agent: str) -> Path:
    """Install (once) and return the pinned CLI of `agent`, or raise AgentCliUnavailable."""
    package, version, _ = PACKAGES[agent]
    prefix = cache_dir(agent)
    with _file_lock(prefix.parent / f".{prefix.name}.lock"):
        found = find_cli(agent, prefix)
        if found:
            return found
        npm = shutil.which("npm")
        if not npm or not shutil.which("node"):
            raise AgentCliUnavailable(f"node/npm not on PATH: needed to install {package}@{version}")
        prefix.mkdir(parents=True, exist_ok=True)
        cmd = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"{package}@{version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        found = find_cli(agent, prefix)
        if proc.returncode != 0 or not found:
            raise AgentCliUnavailable(f"could not install {package}@{version} into {prefix}: exit "
                                      f"{proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return found


def clean_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith((*_STRIPPED_ENV_PREFIXES, "CODEX", "GEMINI", "GOOGLE", "OPENAI"))
           and k not in _STRIPPED_ENV_NAMES}
    env.update(HOME=str(home), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(extra or {})
    return env


# ---------------------------------------------------------------------------------------------
# Codex


def codex_home(home: Path, server_url: str, project: Path, codex: Path) -> Path:
    """A Codex home (`$CODEX_HOME`) pointed at the scripted server, with `project` trusted."""
    folder = home / ".codex"
    folder.mkdir(parents=True, exist_ok=True)
    catalog = folder / "models.json"
    catalog.write_text(json.dumps({"models": [codex_model_entry(codex)]}))
    (folder / "config.toml").write_text(
        f'model = "{MODEL}"\nmodel_provider = "scripted"\nmodel_catalog_json = {json.dumps(str(catalog))}\n\n'
        f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{server_url}/v1"\nwire_api = "responses"\n'
        f'env_key = "SCRIPTED_API_KEY"\n\n[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n')
    return folder


def codex_model_entry(codex: Path) -> dict[str, Any]:
    """An entry of the model catalog bundled in the installed Codex binary (so every field its
    `model_catalog_json` requires is there, as this version expects it), renamed to the scripted
    model: shell through `exec_command`, edits through the freeform `apply_patch`."""
    binaries = sorted((codex.parent.parent / "@openai").glob("codex-*/vendor/*/bin/codex"))
    if not binaries:
        raise AgentCliUnavailable(f"no native Codex binary under {codex.parent.parent / '@openai'}")
    data = binaries[0].read_bytes()
    at = data.find(b'"apply_patch_tool_type": "freeform"')
    start = data.rfind(b'{\n  "models"', 0, at)
    if at < 0 or start < 0:
        raise AgentCliUnavailable("the Codex binary carries no model catalog where expected")
    catalog, _ = json.JSONDecoder().raw_decode(data[start:start + 4_000_000].decode("utf-8", "replace"))
    plain = [m for m in catalog["models"] if m.get("apply_patch_tool_type") == "freeform" and not m.get("tool_mode")]
    entry = dict(plain[-1] if plain else catalog["models"][0])
    # No websockets (the scripted server speaks HTTP+SSE); no tool search, so MCP servers' tools
    # are listed in the request itself (a real model finds them through `tool_search`).
    entry.update(slug=MODEL, display_name=MODEL, prefer_websockets=False, supports_search_tool=False)
    return entry


@dataclass
class AgentRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[Any] = field(default_factory=list)

    def describe(self) -> str:
        return (f"{' '.join(self.args[:3])} … -> exit {self.returncode} in {self.seconds:.1f}s\n"
                f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-4000:]}")


def _run(args: list[str], cwd: Path, env: dict[str, str], server: Any, timeout: float) -> AgentRun:
    first = len(server.requests)
    started = time.monotonic()
    proc = subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    return AgentRun(args, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started,
                    list(server.requests[first:]))


def run_codex(codex: Path, project: Path, home: Path, server: Any, prompt: str, script: list[Any],
              env: dict[str, str], timeout: float = 180) -> AgentRun:
    server.set_script(script)
    full = clean_env(home, {**env, "CODEX_HOME": str(home / ".codex"), "SCRIPTED_API_KEY": "unused"})
    args = [str(codex), "exec", "--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check", prompt]
    return _run(args, project, full, server, timeout)


# ---------------------------------------------------------------------------------------------
# Gemini


def gemini_home(home: Path) -> Path:
    """The user settings of a throw-away Gemini home: API-key auth, folder trust off."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False}, "general": {"disableAutoUpdate": True},
    }))
    return folder


def run_gemini(gemini: Path, project: Path, home: Path, server: Any, prompt: str, script: list[Any],
               env: dict[str, str], timeout: float = 180) -> AgentRun:
    server.set_script(script)
    full = clean_env(home, {**env, "GEMINI_API_KEY": "unused", "GOOGLE_GEMINI_BASE_URL": server.url})
    args = [str(gemini), "-p", prompt, "--yolo"]
    return _run(args, project, full, server, timeout)
