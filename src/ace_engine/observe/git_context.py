"""Git context of a task: branch, commits made during the session, files changed, lines added
and removed. Runs `git` (fine in the worker, never in a hook), each call bounded by a timeout,
with optional locks off so it never blocks the user's own git commands (`run_git`, also used by
`ace bootstrap` to read the history; `commits_between` gives continuity the commits between a
session's first and last HEAD). Cost: up to six `git` commands per learned task (each with the
`git config` below).

Git runs nothing the repository chose: a repository's `.git/config` is as much
repository content as its files (an unpacked archive, a shared folder), and some of its keys name
programs git runs for read-only commands — `core.fsmonitor` on `status` and `diff`, a filter
driver's `clean` on a changed file, a pager, an external diff or a `textconv` driver on `diff` /
`log`, `gpg.program` when `log.showSignature` is set, hooks. `git_command` is the ONE place that
builds git's argv and environment: every git this package, continuity, bootstrap and the demo run
goes through it, with those keys overridden on the command line (which outranks every config
file; the filter drivers' names read first by `git config`, which runs nothing), external diffs
and textconv off for the commands that diff, the system config skipped, and no prompt, editor,
askpass, ssh or credential helper. Cost: one more `git config` per command.
"""

import os

TIMEOUT_SECONDS = 10.0


# `-c` outranks every config file, the repository's included: what each key would run is disabled.
_OVERRIDES = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=true",
    "core.sshCommand=false", "credential.helper=",
    "log.showSignature=false", "gpg.program=false", "gpg.ssh.program=false", "gpg.x509.program=false",
    "protocol.allow=never", "core.untrackedCache=false", "submodule.recurse=false",
)
_DIFFING = ("diff", "log", "show")  # subcommands that may run an external diff or a textconv driver
# Variables that would point git at a program, a config or a repository other than the one asked for.
_DROPPED_ENV = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH",
                "GIT_SSH_COMMAND", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
                "GIT_CONFIG_COUNT", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TRACE", "GIT_ATTR_SOURCE")


def git_command(root: str, *args: str, filters: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) for `git -C root ARGS` that runs no program the repository's config
    names (module docstring). Global options in `args` (`-c key=value`) come before the subcommand.
    `filters`: the repository's filter drivers (`filter_drivers`), whose clean / smudge / process
    commands `status` and `diff` would run on a changed file: each is emptied, which disables it."""
    argv = ["git", "-C", root]
    for item in _OVERRIDES:
        argv += ["-c", item]
    for name in filters:
        for kind in ("clean", "smudge", "process"):
            argv += ["-c", f"filter.{name}.{kind}="]
        argv += ["-c", f"filter.{name}.required=false"]
    rest = list(args)
    while len(rest) >= 2 and rest[0] == "-c":  # the caller's own `-c`s: global options too
        argv += rest[:2]
        rest = rest[2:]
    if rest and rest[0] in _DIFFING:
        rest = [rest[0], "--no-ext-diff", "--no-textconv", *rest[1:]]
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
                "PAGER": "cat", "GIT_CONFIG_NOSYSTEM": "1", "GIT_ASKPASS": "true", "GIT_EDITOR": "true",
                "GIT_NO_REPLACE_OBJECTS": "1"})
    return argv + rest, env


_FILTER_KEY = r"^filter\..+\.(clean|smudge|process)$"


def filter_drivers(root: str) -> tuple[str, ...]:
    """The names of the filter drivers the repository's config defines now (`git config` reads the
    config and runs nothing; read before each command, never cached: the config may change between
    two); () when none or git fails."""
    out = _run(root, ("config", "--null", "--get-regexp", _FILTER_KEY), ())
    names = []
    for entry in (out or "").split("\0"):
        key = entry.split("\n", 1)[0]
        if key.startswith("filter.") and key.count(".") >= 2:
            names.append(key[len("filter."):key.rindex(".")])
    return tuple(dict.fromkeys(names))


def run_git(root: str, *args: str) -> str | None:
    """`git -C root ARGS`'s stdout (`git_command`, the repository's filter drivers disabled); None
    when git is missing, fails or takes over TIMEOUT_SECONDS."""
    return _run(root, args, filter_drivers(root))


def _run(root: str, args: tuple[str, ...], filters: tuple[str, ...]) -> str | None:
    import subprocess  # only for tasks that are learned (see pipeline.job_trajectories)

    argv, env = git_command(root, *args, filters=filters)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, env=env,
                              errors="replace", stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def context(root: str | None, since: float | None = None) -> dict:
    """{} when `root` is not a git work tree; else branch, head, commits since `since` (epoch
    seconds, the session's start), files changed since then (committed or not), insertions and
    deletions."""
    if not root or not os.path.isdir(root):
        return {}
    inside = run_git(root, "rev-parse", "--is-inside-work-tree")
    if not inside or inside.strip() != "true":
        return {}
    out: dict = {"branch": None, "head": None, "commits": [], "files_changed": [], "insertions": 0, "deletions": 0}
    branch = run_git(root, "rev-parse", "--abbrev-ref", "HEAD")
    out["branch"] = branch.strip() if branch else None
    head = run_git(root, "rev-parse", "--verify", "-q", "HEAD")
    out["head"] = head.strip() if head else None
    base = None
    if out["head"] and since:
        log = run_git(root, "log", f"--since=@{int(since)}", "--format=%H%x1f%s%x1f%an%x1f%ct", "-n", "50")
        for line in (log or "").splitlines():
            sha, _, rest = line.partition("\x1f")
            subject, _, rest = rest.partition("\x1f")
            author, _, when = rest.partition("\x1f")
            out["commits"].append({"sha": sha[:12], "subject": subject[:200], "author": author,
                                   "time": int(when) if when.isdigit() else None})
        before = run_git(root, "rev-list", "-1", f"--before=@{int(since)}", "HEAD")
        base = before.strip() if before and before.strip() else None
        if base is None and out["commits"]:
            base = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree: all commits are new
    diff_args = ["diff", "--numstat", base] if base else (["diff", "--numstat", "HEAD"] if out["head"] else None)
    files: dict[str, tuple[int, int]] = {}
    if diff_args:
        for line in (run_git(root, *diff_args) or "").splitlines():
            added, _, rest = line.partition("\t")
            removed, _, path = rest.partition("\t")
            if path:
                files[path] = (int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0)
    for line in (run_git(root, "status", "--porcelain", "--untracked-files=normal") or "").splitlines():
        if line.startswith("??"):
            files.setdefault(line[3:].strip(), (0, 0))
    out["files_changed"] = sorted(files)[:200]
    out["insertions"] = sum(a for a, _ in files.values())
    out["deletions"] = sum(d for _, d in files.values())
    return out


def commits_between(root: str, first: str, last: str, limit: int = 20, since: float | None = None) -> list[dict]:
    """The commits after `first` up to `last`, on the path from one to the other (`git rev-list
    --ancestry-path first..last`), oldest first, at most `limit` (the newest kept): [{sha,
    subject}]. [] when either is no object name, `first` is not an ancestor of `last`, or git fails.
    What the session's commits are (continuity): the commit graph decides, never a date alone (a
    commit dated in the future that was already there is before `first`). `since` (the session's
    start) only takes out more: a commit committed before it (a branch made earlier, checked out
    during the session) is not the session's."""
    if not _object_name(first) or not _object_name(last) or first == last:
        return []
    out = run_git(root, "rev-list", "--ancestry-path", f"--max-count={int(limit)}", "--format=%H%x1f%ct%x1f%s",
                  f"{first}..{last}", "--")
    commits = []
    for line in (out or "").splitlines():
        if line.startswith("commit "):
            continue  # rev-list's own header line before each --format line
        sha, sep, rest = line.partition("\x1f")
        when, _, subject = rest.partition("\x1f")
        if not sep or not _object_name(sha):
            continue
        if since is not None and when.isdigit() and int(when) < int(since) - 1:
            continue
        commits.append({"sha": sha, "subject": subject[:200]})
    return commits[::-1]


def _object_name(value: str | None) -> bool:
    text = (value or "").strip().lower()
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
