"""The README's commands, as a newcomer types them, in order, in a fresh environment: the set-up
command in a fresh copy of the repository (a new `.venv`, the package installed into it, the demo),
then "Use it with Claude Code" in a new git project — whose first line must put `ace` on PATH, since
nothing else does (`ace install` right after set-up answered `ace: command not found`).

The commands are read from the README's own fenced blocks (the first `bash` block under "## Set up"
and under "## Use it with Claude Code"); `/path/to/ace-engine` and `your-project` stand for the copy
and the project. One bash process runs them with `set -e`, HOME, XDG dirs and ACE_HOME private, and a
PATH without any venv of this machine.

Marked `slow`: one package install into a fresh venv (a minute or two on 2 cores).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def first_bash_block(readme: str, heading: str) -> str:
    """The first ```bash block after `heading` (and before the next `## ` heading)."""
    section = readme.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert found, f"no bash block under {heading}"
    return found.group(1)


def copy_of_the_repository(to: Path) -> Path:
    """The repository's tracked files as they are in the working tree (a fresh clone, uncommitted
    changes included), without any .venv or build output."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in listed.decode().split("\0"):
        source = REPO / name
        if name and source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    return to


def test_the_readme_commands_work_in_order_in_a_fresh_environment(tmp_path):
    readme = (REPO / "README.md").read_text()
    setup, use = first_bash_block(readme, "## Set up"), first_bash_block(readme, "## Use it with Claude Code")
    clone = copy_of_the_repository(tmp_path / "ace-engine")
    project = tmp_path / "your-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k.startswith("PIP_") or k in ("LANG", "LC_ALL", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")}
    env.update(HOME=str(home), ACE_HOME=str(tmp_path / "ace-home"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_STATE_HOME=str(home / ".local" / "state"), PATH="/usr/local/bin:/usr/bin:/bin", COLUMNS="200",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"))
    use = use.replace("/path/to/ace-engine", str(clone)).replace("your-project", str(project))
    script = f"set -e\ncd {clone}\n{setup}\ncd {tmp_path}\n{use}\nace doctor --offline\n"
    proc = subprocess.run(["bash", "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{script}\n-- stdout:\n{proc.stdout[-3000:]}\n-- stderr:\n{proc.stderr[-3000:]}"
    assert "command not found" not in proc.stderr
    assert (project / ".claude" / "settings.json").is_file()
