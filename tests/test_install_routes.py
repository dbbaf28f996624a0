"""Every way a user installs ace-engine, end to end: `git init && ace install && ace doctor` exits 0,
and the hooks written into `.claude/settings.json` run through the installed launcher.

Routes: an editable install (`pip install -e`), the built wheel and the sdist in a fresh venv,
`pipx install` and `uv tool install` from the clone and from the wheel, and the Claude Code plugin
(hooks from the plugin's source tree, `ace` from the wheel). One wheel and sdist are built for the
file (`python -m build`, which builds the wheel from the sdist, so the sdist is proven complete
too); pipx, uv and build come from the package index into a tool venv under pytest's tmp
directory, with one package cache. Each route is installed once for the file (`installed`), into its
own venv (or pipx / uv tool dir), and shared by the checks of that route (the plugin route uses the
wheel route's venv: the same wheel, installed the same way); each check runs it with its own HOME,
XDG dirs and ACE_HOME. (Module-scoped: under xdist's loadgroup the file runs on one worker, builds
once and installs each route once: 7 installs for the 11 route checks, 11 before.) Nothing touches
the real home.

Also checked here: the wheel carries every package data file of the source tree, and a missing
extra's fix (`ace install --mcp` without the `mcp` package; doctor with `llm.provider = anthropic`
and no SDK) is the right command for the route and works as written.

Marked `slow`: about two to three minutes on 2 cores, mostly package installs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# The tree installed; ACE_ROUTES_SOURCE points it at another checkout (to show a route failing there).
REPO = Path(os.environ.get("ACE_ROUTES_SOURCE") or Path(__file__).resolve().parent.parent)
TIMEOUT = 600


def run(argv, env=None, cwd=None, input=None, check=True):
    proc = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, input=input, capture_output=True, text=True,
                          timeout=TIMEOUT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return proc


def make_venv(path: Path, env: dict[str, str]) -> Path:
    """A venv with pip, made in the route's private environment: ensurepip's pip asks `rustc --version`
    for its user agent, and rustup writes its settings under whatever HOME that process has."""
    run([sys.executable, "-m", "venv", "--symlinks", path], env=env)
    return path / "bin" / "python"


def clean_env(base: Path, cache: Path, path_dirs: list[Path] = ()) -> dict[str, str]:
    """A private environment: HOME, XDG dirs and ACE_HOME under `base`; PATH with the route's bin
    dirs first; the package caches shared for the session; the index settings (PIP_*) kept."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ACE_", "VIRTUAL_ENV", "PYTHON", "PIPX_", "UV_", "XDG_", "CLAUDE"))}
    env.update(PIP_CACHE_DIR=str(cache / "pip"),
               UV_CACHE_DIR=str(cache / "uv"), PIPX_HOME=str(base / "pipx"), PIPX_BIN_DIR=str(base / "bin"),
               UV_TOOL_DIR=str(base / "uv-tools"), UV_TOOL_BIN_DIR=str(base / "bin"), COLUMNS="200",
               PATH=os.pathsep.join([*(str(d) for d in path_dirs), str(base / "bin"), "/usr/local/bin", "/usr/bin",
                                     "/bin"]))
    return with_home(env, base)


def with_home(env: dict[str, str], base: Path) -> dict[str, str]:
    """`env` with HOME, the XDG dirs and ACE_HOME under `base` (the installed tools and caches kept)."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {**env, "HOME": str(home), "ACE_HOME": str(base / "ace-home"), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state")}


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    """A venv with build, pipx and uv from the package index, and a package cache for the session."""
    base = tmp_path_factory.mktemp("install-tools")
    cache = base / "cache"
    env = clean_env(base, cache)
    python = make_venv(base / "venv", env)
    run([python, "-m", "pip", "install", "-q", "build", "pipx", "uv"], env=env)
    return {"python": python, "bin": base / "venv" / "bin", "cache": cache}


@pytest.fixture(scope="module")
def dist(tools, tmp_path_factory):
    """One sdist and one wheel of the working tree for the whole session (the wheel built from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    run([tools["python"], "-m", "build", "--outdir", out, REPO], env=clean_env(out / "env", tools["cache"]))
    wheel, = out.glob("ace_engine-*.whl")
    sdist, = out.glob("ace_engine-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def install_route(route: str, base: Path, tools: dict, dist: dict) -> tuple[dict, Path]:
    """Install ace-engine by `route` under `base`; the environment to run it in and its `ace`."""
    env = clean_env(base, tools["cache"], [tools["bin"]])
    if route in ("editable", "wheel", "sdist", "plugin"):
        python = make_venv(base / "venv", env)
        source = {"editable": ["-e", REPO], "sdist": [dist["sdist"]]}.get(route, [dist["wheel"]])
        run([python, "-m", "pip", "install", "-q", *source], env=env)
        return env, base / "venv" / "bin" / "ace"
    tool, _, origin = route.partition("-")
    source = REPO if origin == "clone" else dist["wheel"]
    argv = [tools["bin"] / "pipx", "install", source] if tool == "pipx" else \
        [tools["bin"] / "uv", "tool", "install", source]
    run(argv, env=env)
    return env, base / "bin" / "ace"


@pytest.fixture(scope="module")
def installed(tools, dist, tmp_path_factory):
    """`installed(route, base)`: the route's environment (HOME, XDG dirs, ACE_HOME under `base`) and its
    `ace`, installed on the first ask and reused after. A check that adds packages to its route (the
    missing-extra check installs the fix) runs after the route's doctor check, in file order; neither
    check needs the other's packages absent but its own."""
    done: dict[str, tuple[dict, Path]] = {}

    def get(route: str, base: Path) -> tuple[dict, Path]:
        # The plugin route is the wheel in a venv, as the wheel route is: one install serves both.
        key = "wheel" if route == "plugin" else route
        if key not in done:
            done[key] = install_route(key, tmp_path_factory.mktemp(f"route-{key}"), tools, dist)
        env, ace = done[key]
        return with_home(env, base), ace

    return get


def _enable_plugin(env: dict) -> None:
    """What `claude plugin install ace-engine@ace-engine` leaves in the user's settings."""
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"enabledPlugins": {"ace-engine@ace-engine": True}}))


def _plugin_commands() -> dict[str, str]:
    """The plugin's hook commands, with CLAUDE_PLUGIN_ROOT as Claude Code sets it (the plugin's tree)."""
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    return {event: groups[0]["hooks"][0]["command"] for event, groups in data["hooks"].items()}


def _settings_commands(project: Path) -> dict[str, str]:
    data = json.loads((project / ".claude" / "settings.json").read_text())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in data["hooks"].items()}


def _hook(command: str, payload: dict, env: dict, project: Path) -> subprocess.CompletedProcess:
    """Run a hook command exactly as Claude Code does: through the shell, the payload on stdin."""
    return run(["/bin/sh", "-c", command], env=env, cwd=project, input=json.dumps(payload))


ROUTES = ["editable", "wheel", "sdist", "pipx-clone", "pipx-wheel", "uv-clone", "uv-wheel", "plugin"]


@pytest.mark.parametrize("route", ROUTES)
def test_install_then_doctor_is_green_and_the_hooks_run(route, installed, tmp_path):
    env, ace = installed(route, tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    run(["git", "init", "-q"], env=env, cwd=project)
    assert run([ace, "--version"], env=env, cwd=project).stdout.strip()
    if route == "plugin":
        _enable_plugin(env)
        env["CLAUDE_PLUGIN_ROOT"] = str(REPO)
        env["PATH"] = os.pathsep.join([str(ace.parent), env["PATH"]])  # the user's `ace`, for `ace mcp`
    installed = run([ace, "install"], env=env, cwd=project)
    doctor = run([ace, "doctor", "--json"], env=env, cwd=project, check=False)
    report = json.loads(doctor.stdout)
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert doctor.returncode == 0 and report["ok"], (installed.stdout, failed)
    checks = {c["check"]: c for c in report["checks"]}

    if route == "plugin":
        assert "provides the hooks" in " ".join(installed.stdout.split())
        assert not (project / ".claude" / "settings.json").exists(), "hooks in both places would run twice"
        assert checks["hooks"]["status"] == "ok" and checks["plugin python"]["status"] == "ok"
        commands = _plugin_commands()
    else:
        assert checks["hooks (project)"]["status"] == "ok", checks["hooks (project)"]
        commands = _settings_commands(project)
        python = shlex.split(commands["SessionStart"])[0]
        # The interpreter of the environment `ace` runs in, not the one running the tests.
        assert Path(python).parent == Path(ace).resolve().parent or Path(python).parent == ace.parent

    run([ace, "add", "Run the tests with make check before pushing", "--section", "strategies"], env=env, cwd=project)
    start = _hook(commands["SessionStart"], {"hook_event_name": "SessionStart", "session_id": "route-1",
                                             "cwd": str(project), "source": "startup"}, env, project)
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "make check before pushing" in context
    asked = _hook(commands["PermissionRequest"], {"hook_event_name": "PermissionRequest", "session_id": "route-1",
                                                  "cwd": str(project), "tool_name": "Bash",
                                                  "tool_input": {"command": "ace clear --confirm"}}, env, project)
    assert json.loads(asked.stdout)["hookSpecificOutput"]["decision"]["behavior"] == "deny"


@pytest.mark.parametrize("route, hint", [("wheel", "/bin/python -m pip install 'mcp"),
                                         ("pipx-wheel", "pipx inject ace-engine 'mcp"),
                                         ("uv-wheel", "uv tool install --with 'mcp")])
def test_missing_mcp_extra_is_refused_with_the_routes_fix_which_works(route, hint, installed, tmp_path):
    """`ace install --mcp` where `mcp` is missing: refused, nothing written, the fix is this route's
    command; run as written (pipx and uv from the tool venv), it makes `--mcp` and doctor green."""
    env, ace = installed(route, tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    run(["git", "init", "-q"], env=env, cwd=project)
    refused = run([ace, "install", "--mcp"], env=env, cwd=project, check=False)
    assert refused.returncode == 1 and not (project / ".mcp.json").exists() and not (project / ".claude").exists()
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1 and hint in line, line
    fix = line.split("`")[-2]  # the command, the last quoted part
    run(["/bin/sh", "-c", fix], env=env, cwd=project)
    run([ace, "install", "--mcp"], env=env, cwd=project)
    report = json.loads(run([ace, "doctor", "--json"], env=env, cwd=project).stdout)
    assert {c["check"]: c["status"] for c in report["checks"]}["mcp"] == "ok"
    if route != "wheel":
        return
    # A configured feature whose extra is missing: doctor fails, names the command; run as written, it passes.
    env["ACE_LLM_PROVIDER"] = "anthropic"
    doctor = run([ace, "doctor", "--json"], env=env, cwd=project, check=False)
    llm = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}["llm extra"]
    assert doctor.returncode == 1 and llm["status"] == "fail" and "-m pip install 'anthropic>=" in llm["fix"], llm
    run(["/bin/sh", "-c", llm["fix"].split("`")[1]], env=env, cwd=project)
    report = json.loads(run([ace, "doctor", "--json", "--offline"], env=env, cwd=project, check=False).stdout)
    checks = {c["check"]: c for c in report["checks"]}
    assert checks["llm extra"]["status"] == "ok"
    # The SDK is there now; the model path still cannot work, and doctor says what is missing next.
    assert checks["model"]["status"] == "fail" and "`llm.model` is not set" in checks["model"]["detail"]


def test_the_wheel_carries_every_package_data_file(dist):
    tracked = run(["git", "-C", REPO, "ls-files", "src/ace_engine"]).stdout.split()
    data = {p.removeprefix("src/") for p in tracked if not p.endswith(".py")}
    assert data, "the package has data files (templates, static files, retrieval data, the demo session)"
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
    assert data <= names, sorted(data - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
