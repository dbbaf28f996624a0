"""Which project a hook is about: the git top level (and normalized remote) of its directory.

Reads `.git` by hand instead of running `git`: a subprocess would cost more than the whole
hook's budget. Handles worktrees and submodules (`.git` as a file pointing elsewhere).

The worktrees of one repository are ONE project: the key is the remote when there is one, else
the main worktree's root (what `git rev-parse --git-common-dir` leads to), never the linked
worktree's own directory. `root` stays the directory of the worktree the session works in, so
paths are still made relative to the files it touched.

What it reads of `.git` is repository content (an unpacked archive can hold `.git/config` as a
link to `/dev/zero`): a `.git` file, `commondir` and `config` are read only as regular files, by a
bounded read (`paths.read_optional`); anything else reads as absent.
"""

import os
import re

from . import paths
from .errors import AceError

GIT_FILE_BYTES = 4096  # a `.git` file or `commondir`: one path
GIT_CONFIG_BYTES = 1024 * 1024  # a repository's config: remotes, branches, a few settings


class _Unreadable(AceError):
    """A `.git` file that is no small regular file: read as absent."""


def _small(path: str, limit: int) -> str | None:
    """The text of a regular file of at most `limit` bytes; None when absent, unreadable or else."""
    try:
        data = paths.read_optional(path, _Unreadable, "", limit=limit)
    except _Unreadable:
        return None
    return data.decode("utf-8", "replace") if data is not None else None


class Project:
    __slots__ = ("root", "remote", "name", "key", "main_root")

    def __init__(self, root: str, remote: str | None, main_root: str | None = None):
        self.root = root
        self.remote = remote
        # A linked worktree (`git worktree add`) files under its main worktree. Derived from the
        # `.git` file when not given, so a Project rebuilt from a stored row keys the same way.
        self.main_root = main_root or _main_root_of(root) or root
        self.name = (remote.rsplit("/", 1)[-1] if remote else os.path.basename(self.main_root)) or root
        # One store serves all projects: clones of the same remote share a project.
        self.key = f"git:{remote}" if remote else f"path:{self.main_root}"


def find_git_root(start: str) -> tuple[str, str] | None:
    """(work tree root, git dir) for the repository containing `start`, or None."""
    path = os.path.abspath(start)
    while True:
        dot_git = os.path.join(path, ".git")
        if os.path.isdir(dot_git):
            return path, dot_git
        if os.path.isfile(dot_git):
            first = (_small(dot_git, GIT_FILE_BYTES) or "").split("\n", 1)[0].strip()
            if first.startswith("gitdir:"):
                gitdir = first[len("gitdir:") :].strip()
                return path, os.path.normpath(os.path.join(path, gitdir))
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def common_dir(git_dir: str) -> str:
    """The repository's common git dir: `git_dir` itself, or for a linked worktree (whose git dir
    is `<main>/.git/worktrees/<name>`) the one its `commondir` file names."""
    common = _small(os.path.join(git_dir, "commondir"), GIT_FILE_BYTES)
    if common is None:
        return git_dir
    common = common.strip()
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def main_root(root: str, git_dir: str) -> str:
    """The main worktree's root for the worktree at `root` (itself unless it is a linked one)."""
    common = common_dir(git_dir)
    if common == git_dir:
        return root
    # `<main>/.git` → `<main>`; a bare repository has no main worktree: its directory stands in.
    return os.path.dirname(common) if os.path.basename(common) == ".git" else common


def _main_root_of(root: str) -> str | None:
    dot_git = os.path.join(root, ".git")
    if not os.path.isfile(dot_git):  # the usual case (a directory, or no repository): one stat
        return None
    found = find_git_root(root)
    return main_root(*found) if found and found[0] == root else None


def _config_path(git_dir: str) -> str:
    return os.path.join(common_dir(git_dir), "config")  # a linked worktree's config is the common one


def read_remote(git_dir: str) -> str | None:
    """URL of `origin`, else of the first remote, from the repository's config file."""
    text = _small(_config_path(git_dir), GIT_CONFIG_BYTES)
    if text is None:
        return None
    remotes: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            m = re.match(r'\[remote\s+"([^"]+)"\]', line)
            current = m.group(1) if m else None
        elif current and "=" in line:
            name, _, value = line.partition("=")
            if name.strip() == "url" and current not in remotes:
                remotes[current] = value.strip()
    url = remotes.get("origin") or next(iter(remotes.values()), None)
    return normalize_remote(url) if url else None


def normalize_remote(url: str) -> str:
    """`git@github.com:Org/Repo.git`, `https://user:pw@github.com/Org/Repo` → `github.com/Org/Repo`."""
    url = url.strip()
    m = re.match(r"^[\w.+-]+://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.*)$", url)
    if m:
        host, path = m.group(1), m.group(2)
    else:
        m = re.match(r"^(?:[^@]+@)?([^:/]+):(.*)$", url)  # scp-like syntax
        if not m:
            return url.rstrip("/").removesuffix(".git")
        host, path = m.group(1), m.group(2)
    path = path.strip("/").removesuffix(".git")
    return f"{host.lower()}/{path}"


def identify(cwd: str) -> Project:
    """The project of `cwd`: its git repository; outside one, the directory the agent's session was
    started in when `cwd` lies inside it (`non_git_root`), else `cwd` itself."""
    found = find_git_root(cwd)
    if not found:
        return Project(non_git_root(cwd), None)
    root, git_dir = found
    return Project(root, read_remote(git_dir), main_root(root, git_dir))


def non_git_root(cwd: str) -> str:
    """Outside a git repository, the project's directory: `$CLAUDE_PROJECT_DIR` (where Claude Code
    started the session; the agent sets it for its hooks) when `cwd` is that directory or below it —
    so a session that moves into a subdirectory stays one project instead of becoming another —
    else `cwd`. A repository file can't set it: it is the host agent's environment."""
    here = os.path.abspath(cwd)
    started = os.environ.get("CLAUDE_PROJECT_DIR")
    if started and os.path.isabs(started):
        started = os.path.abspath(started)
        if (here == started or here.startswith(started.rstrip(os.sep) + os.sep)) and os.path.isdir(started):
            return started
    return here
