"""Is the agent CLI on PATH logged in? The cheapest reliable question each CLI answers, no model call.

* Claude Code: `claude auth status` prints `{"loggedIn": true|false, "authMethod": …}` and exits 0
  when logged in, 1 when not (an API key in the environment counts as logged in, as it does for
  `claude -p`). An older `claude` without the subcommand gives no usable answer: unknown (None).
* Codex CLI: `codex login status` exits 0 when logged in, 1 with "Not logged in".

Unknown is not "no": `ace install` then offers as usual and `ace doctor`'s real call decides.

Cost: one short process of the CLI (no network for either, as verified with Claude Code 2.1.197 and
Codex 0.169 with networking off), bounded by `timeout`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping

ARGS = {"claude": ("auth", "status"), "codex": ("login", "status")}


def login_status(agent: str, binary: str, *, env: Mapping[str, str] | None = None,
                 timeout: float = 20.0) -> tuple[bool | None, str]:
    """(logged in: True / False / None for unknown, what the CLI said) for `agent`'s `binary`."""
    try:
        proc = subprocess.run([binary, *ARGS[agent]], capture_output=True, text=True, timeout=timeout,
                              env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
                              encoding="utf-8", errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{binary} {' '.join(ARGS[agent])} did not answer: {exc}"
    # Codex prints warnings on the same streams ("WARNING: proceeding, …"): not what it says about login.
    lines = [line.strip() for line in ((proc.stdout or "") + "\n" + (proc.stderr or "")).splitlines()
             if line.strip() and not line.lstrip().startswith("WARNING")]
    said = " ".join(" ".join(lines).split())[:300]
    if agent == "claude":
        try:
            data = json.loads(proc.stdout or "")
        except ValueError:
            data = None
        if not isinstance(data, dict) or "loggedIn" not in data:
            return None, said  # an older CLI, or a changed answer: unknown
        if data.get("loggedIn") is True and proc.returncode == 0:
            return True, f"logged in ({data.get('authMethod') or 'unknown method'})"
        return False, "Not logged in"
    if proc.returncode == 0:
        return True, said or "logged in"
    if proc.returncode == 1 and "not logged in" in said.lower():
        return False, "Not logged in"
    return None, said
