"""Detached background processes that hooks start but never wait for (the automatic gc, the
learning worker), and the lock that keeps one of a kind running.

Hook-safe: imports `os` and `sys` only. The process is started with `os.posix_spawn` (vfork +
exec, ~1 ms) rather than `subprocess`, whose import alone costs a hook more than its whole
budget. The child runs in its own session (Claude Code's process-group signals don't reach it),
with stdio on /dev/null.

Isolation (a hook runs with the repository as working directory, and a repository is not
trusted): the child is `python -I -c …` — no working directory or script directory on
`sys.path`, `PYTHON*` variables ignored, no user site — so a repository holding
`ace_engine/__init__.py` or a stdlib-named `json.py` is never imported. The code it runs first
changes to a neutral directory, then puts the folder that holds *this* `ace_engine` (the
installed package, found from this file, never from the environment) on `sys.path`, plus the
user site directory when this process had one (a `pip install --user` keeps its dependencies
there); only then does it import anything of ours.
"""

import os
import sys

try:  # POSIX; elsewhere ProcessLock falls back to an exclusive lock file
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no flock there: ProcessLock checks for None


def package_parent() -> str:
    """The directory containing the `ace_engine` package this code runs from (this file is
    `ace_engine/core/background.py`: three levels up)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _stray_fds(keep: tuple[int, ...]) -> list[int]:
    """Inheritable descriptors beyond stdio that the child must not keep (a pipe Claude Code
    waits on, say). `subprocess` closes them by default; `posix_spawn` has to be told."""
    try:
        names = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
    except OSError:
        return []
    stray = []
    for name in names:
        fd = int(name) if name.isdigit() else -1
        if fd <= 2 or fd in keep:
            continue
        try:
            if os.get_inheritable(fd):
                stray.append(fd)
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return stray


NEUTRAL_DIR = "/" if os.name != "nt" else os.path.abspath(os.sep)


def isolated_code(code: str) -> str:
    """`code` behind a prologue that makes an isolated (`-I`) interpreter safe and able to import
    the installed ace_engine: neutral working directory first, then the trusted paths."""
    site_mod = sys.modules.get("site")  # imported at startup already: free
    user_site = getattr(site_mod, "USER_SITE", None) if getattr(site_mod, "ENABLE_USER_SITE", False) else None
    prologue = (
        "import os, sys\n"
        f"os.chdir({NEUTRAL_DIR!r})\n"
        f"sys.path.insert(0, {package_parent()!r})\n"
    )
    if user_site and os.path.isabs(user_site):
        prologue += f"import site\nos.path.isdir({user_site!r}) and site.addsitedir({user_site!r})\n"
    return prologue + code


def spawn_python(code: str, *, keep_fds: tuple[int, ...] = (), env: dict | None = None) -> int:
    """Start `python -I -c code` detached (see the module's isolation contract); returns its
    pid. `keep_fds` are inherited by the child (e.g. a held lock, which then lives exactly as
    long as the child). Raises OSError."""
    environ = dict(os.environ if env is None else env)
    argv = [sys.executable, "-I", "-c", isolated_code(code)]
    for fd in keep_fds:
        os.set_inheritable(fd, True)
    try:
        if hasattr(os, "posix_spawn"):
            devnull = os.devnull
            actions: list[tuple[object, ...]] = [(os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
                                                 (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
                                                 (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0)]
            actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _stray_fds(keep_fds)]
            try:
                return os.posix_spawn(sys.executable, argv, environ, file_actions=actions, setsid=True)
            except NotImplementedError:  # pragma: no cover - libc without POSIX_SPAWN_SETSID
                pass
        import subprocess  # pragma: no cover - only where posix_spawn can't do it

        return subprocess.Popen(  # pragma: no cover
            argv, env=environ, start_new_session=True, pass_fds=keep_fds, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ).pid
    finally:
        for fd in keep_fds:
            try:
                os.set_inheritable(fd, False)
            except OSError:
                pass


def named_lock(name: str) -> "ProcessLock":
    """`state/<name>.lock` under ACE_HOME: at most one background job of this kind at a time."""
    from . import paths  # stdlib-only, and already imported by every hook

    return ProcessLock(os.path.join(paths.ensure_private_dir(paths.state_dir()), name + ".lock"))


def spawn_holding(lock: "ProcessLock", code: str) -> int | None:
    """Take `lock` and start `code` detached while holding it: the child inherits the locked
    descriptor (as `LOCK_FD` in `code`), so the lock lives exactly as long as that process and
    dies with it, and "is one running?" and "start one" are a single atomic step — two hooks
    racing start one child between them. None when another process holds the lock; OSError when
    the spawn fails (the lock is released)."""
    if not lock.acquire() or lock.fd is None:  # (acquired means a descriptor: the None is for mypy)
        return None
    fd = lock.fd
    try:
        pid = spawn_python(f"LOCK_FD = {fd}\n{code}", keep_fds=(fd,))
    except OSError:
        lock.release()
        raise
    lock.hand_over()
    return pid


def enter_detached(lock: "ProcessLock", lock_fd: int | None, *, nice: bool = True) -> bool:
    """The start of every detached process's entry point: owner-only files, a lower priority
    (background work never competes with the hooks), and the lock — adopted from the process that
    spawned us (`spawn_holding`), or taken when run in the foreground. False: another holds it."""
    os.umask(0o077)
    if nice:
        try:
            os.nice(10)
        except (AttributeError, OSError):
            pass
    if lock_fd is not None:
        lock.adopt(lock_fd)
        return True
    return lock.acquire()


class ProcessLock:
    """An exclusive, non-blocking lock on a file, released by the kernel when the holding process
    dies — a killed worker never leaves a stale lock behind (flock(2) on POSIX).

    A hook takes the lock and hands its file descriptor to the worker it spawns (`keep_fds`), so
    "is a worker running?" and "start one" are a single atomic step: two hooks racing for it
    start one worker between them.
    """

    def __init__(self, path: str):
        self.path = path
        self.fd: int | None = None

    def acquire(self, blocking: bool = False) -> bool:
        if self.fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is None:  # pragma: no cover - no flock: an exclusive file, stale after a day
            os.close(fd)
            return self._acquire_exclusive_file()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def adopt(self, fd: int) -> None:
        """Take over a lock inherited from the process that spawned us."""
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            if fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            else:  # pragma: no cover
                os.unlink(self.path + ".held")
            os.close(self.fd)
        except OSError:
            pass
        self.fd = None

    def hand_over(self) -> None:
        """Close our descriptor after a child inherited it, without unlocking: flock belongs to
        the open file, which the child keeps open (LOCK_UN here would unlock it for the child)."""
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def held_elsewhere(self) -> bool:
        """True when another process holds the lock (probing does not keep it)."""
        if self.fd is not None:
            return False
        if not self.acquire():
            return True
        self.release()
        return False

    def _acquire_exclusive_file(self) -> bool:  # pragma: no cover - non-POSIX fallback
        import time

        marker = self.path + ".held"
        try:
            if time.time() - os.path.getmtime(marker) > 86400:
                os.unlink(marker)
        except OSError:
            pass
        try:
            self.fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            return True
        except OSError:
            return False
