"""Issue 20: `ace sync` writes only into files it created or plain Markdown files of the work tree.

A repository decides what `CLAUDE.md`, `AGENTS.md` and `.github/` are. Inside the project a committed
symlink can still lead into `.git/` (`AGENTS.md -> .git/config` breaks git) or into an executable
(`CLAUDE.md -> .git/hooks/post-checkout`: Markdown in a shell script runs its backticks at the next
checkout). Each case runs the real `ace sync` CLI on a real git repository and checks the bytes of
every file it must not touch, that nothing at all was written, and that the error is one line naming
the file and the fix. These fail at d570f9d (it wrote through both links) and pass now.
"""

import json
import os
import stat
import subprocess

import pytest

from conftest import ace

START = "<!-- ACE_SECTION_START -->"


@pytest.fixture
def project(ace_home, git_project) -> str:
    root = str(git_project)
    result = ace("add", "Run `python -m pytest -q` from the repository root", "--section", "rules",
                 "--project", root, "--json")
    assert result.exit_code == 0, result.output
    return root


def snapshot(root: str) -> dict[str, bytes]:
    out = {}
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, root)] = fh.read()
    return out


def refused(project: str, name: str, problem: str, *args: str) -> str:
    before = snapshot(project)
    result = ace("sync", "--project", project, *args)
    assert result.exit_code != 0, result.output
    message = " ".join(result.output.split())
    assert name in message and problem in message and "then re-run" in message, result.output
    assert snapshot(project) == before, "a file was written although the sync was refused"
    return message


def git_works(project: str) -> None:
    proc = subprocess.run(["git", "-C", project, "status", "--porcelain"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def hook(project: str, name: str) -> str:
    path = os.path.join(project, ".git", "hooks", name)
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\necho checked out\n")
    os.chmod(path, 0o755)
    return path


def test_agents_md_linked_to_the_git_config_is_refused(project):
    os.symlink(os.path.join(".git", "config"), os.path.join(project, "AGENTS.md"))
    refused(project, "AGENTS.md", "git directory")
    git_works(project)
    assert not os.path.exists(os.path.join(project, "CLAUDE.md")), "nothing at all is written"


def test_claude_md_linked_to_an_executable_hook_is_refused(project):
    target = hook(project, "post-checkout")
    os.symlink(os.path.join(".git", "hooks", "post-checkout"), os.path.join(project, "CLAUDE.md"))
    refused(project, "CLAUDE.md", "git directory")
    with open(target) as fh:
        assert fh.read() == "#!/bin/sh\necho checked out\n"
    assert os.stat(target).st_mode & stat.S_IXUSR


def test_a_markdown_file_inside_git_is_refused_too(project):
    """The `.git` rule stands alone: a `.md` name there doesn't make it a file of the work tree."""
    notes = os.path.join(project, ".git", "notes.md")
    with open(notes, "w") as fh:
        fh.write("# notes\n")
    os.symlink(os.path.join(".git", "notes.md"), os.path.join(project, "CLAUDE.md"))
    refused(project, "CLAUDE.md", "git directory")


def test_a_dangling_link_into_a_git_hook_creates_nothing(project):
    os.symlink(os.path.join(".git", "hooks", "pre-commit"), os.path.join(project, "CLAUDE.md"))
    result = ace("sync", "--project", project)
    assert not os.path.exists(os.path.join(project, ".git", "hooks", "pre-commit"))
    assert result.exit_code != 0 and "git directory" in result.output


def test_a_github_dir_linked_to_git_is_refused(project):
    os.makedirs(os.path.join(project, ".git", "info"), exist_ok=True)
    os.symlink(os.path.join(".git", "info"), os.path.join(project, ".github"))
    refused(project, ".github", "git directory")
    assert not os.path.exists(os.path.join(project, ".git", "info", "copilot-instructions.md"))
    git_works(project)


def test_an_executable_claude_md_is_refused(project):
    path = os.path.join(project, "CLAUDE.md")
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\n# setup notes\nmake setup\n")
    os.chmod(path, 0o755)
    refused(project, "CLAUDE.md", "executable")


def test_a_link_to_an_executable_script_in_the_work_tree_is_refused(project):
    os.makedirs(os.path.join(project, "scripts"))
    script = os.path.join(project, "scripts", "setup.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\nmake setup\n")
    os.chmod(script, 0o755)
    os.symlink(os.path.join("scripts", "setup.sh"), os.path.join(project, "AGENTS.md"))
    refused(project, "AGENTS.md", "not a Markdown file")


def test_a_link_to_a_text_file_that_is_not_markdown_is_refused(project):
    with open(os.path.join(project, "Makefile"), "w") as fh:
        fh.write("all:\n\techo hi\n")
    os.symlink("Makefile", os.path.join(project, "CLAUDE.md"))
    refused(project, "CLAUDE.md", "not a Markdown file")


def test_remove_refuses_a_linked_git_file_with_markers(project):
    config = os.path.join(project, ".git", "config")
    with open(config, "a") as fh:
        fh.write(f"# {START}\n# <!-- ACE_SECTION_END -->\n")
    os.symlink(os.path.join(".git", "config"), os.path.join(project, "AGENTS.md"))
    refused(project, "AGENTS.md", "git directory", "--remove")
    git_works(project)


def test_markdown_links_inside_the_work_tree_still_work(project):
    os.makedirs(os.path.join(project, "docs"))
    with open(os.path.join(project, "docs", "agents.md"), "w") as fh:
        fh.write("# Agents\n")
    os.symlink(os.path.join("docs", "agents.md"), os.path.join(project, "AGENTS.md"))
    os.symlink("AGENTS.md", os.path.join(project, "CLAUDE.md"))
    result = ace("sync", "--project", project, "--json")
    assert result.exit_code == 0, result.output
    actions = {e["file"]: e["action"] for e in json.loads(result.stdout)["files"]}
    assert actions["CLAUDE.md"] == "updated" and actions["AGENTS.md"] == "skipped"  # one file, two names
    with open(os.path.join(project, "docs", "agents.md")) as fh:
        text = fh.read()
    assert text.startswith("# Agents\n") and text.count(START) == 1
    assert os.path.islink(os.path.join(project, "AGENTS.md"))
    assert stat.S_IMODE(os.stat(os.path.join(project, "docs", "agents.md")).st_mode) & 0o111 == 0
    assert ace("sync", "--remove", "--project", project).exit_code == 0
    with open(os.path.join(project, "docs", "agents.md")) as fh:
        assert fh.read() == "# Agents\n"


def test_the_error_is_one_line(project):
    os.symlink(os.path.join(".git", "config"), os.path.join(project, "AGENTS.md"))
    result = ace("sync", "--project", project, process=True)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() + result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and "AGENTS.md" in lines[0] and "re-run" in lines[0], lines
