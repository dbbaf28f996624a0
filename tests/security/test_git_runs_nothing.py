"""Git runs nothing the repository chose (issue 35, "repository config"): a repository's `.git/config`
is repository content (an unpacked archive, a shared folder). Its `core.fsmonitor` names a program
`git status` / `git diff` run; its pager, external diff, textconv and signature programs likewise. The
learning worker (git context of a task), continuity (the session's head and commits) and `ace
bootstrap` (the history) run git through one helper (`observe.git_context.git_command`) that turns
those off. On 42195db the worker's `git status` ran the repository's fsmonitor script.
"""

from __future__ import annotations

import os
import subprocess

from ace_engine.observe import git_context
from conftest import ace
from learnutil import Session, fix_session, wait_for_learning


def _booby_trap(root, marker) -> None:
    """Every program-naming key a read-only git command may run points at a script that leaves `marker`."""
    script = root.parent / "trap.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat >/dev/null 2>&1\nexit 0\n")
    script.chmod(0o755)
    run = ["git", "-C", str(root)]
    subprocess.run([*run, "config", "user.email", "dev@example.com"], check=True)
    subprocess.run([*run, "config", "user.name", "Dev"], check=True)
    (root / "src").mkdir()
    (root / "src" / "textutil.py").write_text("import re\n\ndef slugify(text):\n    text = text.lower()\n")
    (root / ".gitattributes").write_text("*.py diff=trap filter=trap.x\n")
    subprocess.run([*run, "add", "."], check=True)
    subprocess.run([*run, "commit", "-qm", "init"], check=True)
    for key in ("core.fsmonitor", "core.pager", "diff.external", "diff.trap.textconv", "diff.trap.command",
                "gpg.program", "filter.trap.x.clean"):
        subprocess.run([*run, "config", key, str(script)], check=True)
    subprocess.run([*run, "config", "log.showSignature", "true"], check=True)
    subprocess.run([*run, "config", "core.hooksPath", str(root.parent)], check=True)
    (root / "src" / "textutil.py").write_text("import re\n\ndef slugify(text):\n    return text.lower()\n")


def _git_would_run_it(root, marker) -> bool:
    """The control: plain git in this repository does run the trap (else the test proves nothing)."""
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    ran = os.path.exists(marker)
    if ran:
        os.unlink(marker)
    return ran


def test_the_learning_worker_runs_no_program_of_the_repositorys_git_config(ace_home, git_project, tmp_path):
    marker = tmp_path / "MARKER"
    _booby_trap(git_project, marker)
    assert _git_would_run_it(git_project, marker)
    s = Session(git_project)
    s.start()
    fix_session(s)
    wait_for_learning(ace_home)
    s.end()
    jobs = wait_for_learning(ace_home)
    assert jobs and all(j["status"] == "done" for j in jobs), jobs
    assert not marker.exists(), "a git run by the worker or the hooks ran the repository's program"


def test_git_context_continuity_and_bootstrap_run_no_program_of_the_repositorys_git_config(ace_home, git_project,
                                                                                           tmp_path):
    marker = tmp_path / "MARKER"
    _booby_trap(git_project, marker)
    assert _git_would_run_it(git_project, marker)
    facts = git_context.context(str(git_project), since=1.0)
    assert facts["branch"] and "src/textutil.py" in facts["files_changed"], "git still answers"
    assert git_context.run_git(str(git_project), "log", "-p", "-n1") is not None
    assert git_context.run_git(str(git_project), "show", "HEAD") is not None
    result = ace("bootstrap", "--project", git_project, "--json", cwd=git_project)
    assert result.exit_code == 0, result.output
    assert not marker.exists(), "git ran a program the repository's config named"


def test_one_helper_builds_every_git_command():
    argv, env = git_context.git_command("/r", "-c", "core.quotepath=off", "diff", "--numstat", "HEAD")
    assert argv[:3] == ["git", "-C", "/r"] and "core.fsmonitor=false" in argv and "core.hooksPath=/dev/null" in argv
    assert argv[argv.index("diff"):] == ["diff", "--no-ext-diff", "--no-textconv", "--numstat", "HEAD"]
    assert argv.index("core.quotepath=off") < argv.index("diff")
    assert env["GIT_PAGER"] == "cat" and env["GIT_CONFIG_NOSYSTEM"] == "1" and "GIT_EXTERNAL_DIFF" not in env
