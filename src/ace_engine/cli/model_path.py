"""Learning with a model, as the CLI shows it: `ace install`'s one-time offer to learn with the
agent the user already has (Claude Code's `claude -p`, Codex's `codex exec`), the budget meter of
`ace status`, and `ace doctor`'s real check of the model path.

The offer: made by `ace install` when `llm.provider` was never chosen (its value still the table's
default: not in the user file, not in `ACE_LLM_PROVIDER`) and the agent's CLI is on PATH and not
known to be logged out (`llm.cli_login`). It says what is sent, where it goes and the daily caps;
in a terminal the answer defaults to yes, without one (or with `--json`) nothing is asked and the
one command that turns it on is printed. The answer — yes or no — is written to the user config
(never a repository's), so it is asked once; `--learn-with claude|codex|none` answers for scripts.

The check: with a provider configured, one tiny call (counted in the budget) unless `--offline` or
the daily cap is reached; a failure is FAIL with the provider's own message and the exact fix
(`llm.health.fix_for`). While the last call failed (`llm.health`), doctor is red even offline.

Cost: the offer runs one `claude auth status` / `codex login status` (no network); the check one
model call.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..core import config as config_mod
from ..core import config_write, paths
from ..learning import reflector_choice
from .common import extra_hint
from .doctor_checks import Check
from .output import say

AGENT_PROVIDER = {"claude": "claude-cli", "codex": "codex-cli"}
PROVIDER_AGENT = {v: k for k, v in AGENT_PROVIDER.items()}
CLI_NAME = {"claude": "Claude Code", "codex": "Codex"}
PROBE_SYSTEM = "You are a health check. Answer with the single word ok."
PROBE_USER = "ok?"
PROBE_MAX_TOKENS = 64
PROBE_TIMEOUT_S = 90.0


def find_agent_cli(agent: str, cfg: Any = None) -> str | None:
    """The agent's CLI (`llm.claude_path` / `llm.codex_path`, else on PATH), or None."""
    return _find(agent, cfg if cfg is not None else config_mod.load(None))


def _find(agent: str, cfg: Any) -> str | None:
    from ..llm.agent_cli import find_cli

    try:
        return find_cli(agent, cfg[f"llm.{agent}_path"] or None, f"llm.{agent}_path")
    except Exception:  # noqa: BLE001 — a relative path is refused; the offer just isn't made
        return None


def _model(agent: str, cfg: Any) -> str:
    return str(cfg["llm.model"] or cfg[f"llm.{agent}_model"] or "")


def _cap_text(cfg: Any) -> str:
    calls, tokens = cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"]
    return (f"{calls:,} calls" if calls else "no call cap") + " and " + \
        (f"{tokens:,} tokens" if tokens else "no token cap")


def explanation(agent: str, cfg: Any) -> list[str]:
    """The two or three lines that say what learning with the agent's model does, sends and costs."""
    model = _model(agent, cfg)
    how = "`claude -p`" if agent == "claude" else "`codex exec`"
    return [
        f"Learn with your {CLI_NAME[agent]}? After each finished task, ace-engine asks {how}"
        f"{f' (model {model})' if model else ''} in the background to write the lessons the offline learner misses.",
        "Sent: a redacted, size-capped digest of the task (its steps, commands, short excerpts of their output and "
        f"the files changed; secrets removed) — never the raw output. It goes to your own {CLI_NAME[agent]} account.",
        f"Cap: {_cap_text(cfg)} a day on this machine (`ace status` shows today's); past it, or on any failure, "
        "learning goes offline.",
    ]


def turn_on_command(agent: str) -> str:
    return f"ace config set llm.provider {AGENT_PROVIDER[agent]}"


def _write_choice(provider: str) -> str:
    path = os.path.realpath(paths.user_config_path())  # a symlinked dotfile: written through
    config_write.write_value(path, "llm.provider", provider, new_mode=0o600)
    return path


def offer(agent: str, root: str, learn_with: str | None, *, quiet: bool = False) -> dict[str, Any]:
    """`ace install`'s offer for `agent` ("claude" / "codex"): {asked, provider, written, reason}.
    `learn_with` ("claude" / "codex" / "none") answers without asking; `quiet` (`--json`) asks nothing
    and prints nothing."""
    cfg = config_mod.load(root)
    if learn_with is not None:
        provider = AGENT_PROVIDER.get(learn_with, "none")
        path = _write_choice(provider)
        if not quiet:
            say("Learning with a model: `llm.provider = {}` written to {}.", provider, path)
            if learn_with in AGENT_PROVIDER and not _find(learn_with, cfg):
                say("[yellow]Note[/]: `{}` is not on PATH: learning stays offline until it is (`ace doctor` "
                    "checks).", learn_with)
        return {"asked": False, "provider": provider, "written": path, "reason": "--learn-with"}
    if agent not in AGENT_PROVIDER:
        return {"asked": False, "provider": None, "written": None, "reason": "no model CLI for this agent"}
    if cfg.sources.get("llm.provider", "default") != "default":
        return {"asked": False, "provider": cfg["llm.provider"], "written": None, "reason": "already chosen"}
    if str(cfg["learning.reflector"]).lower() not in ("auto", "llm"):  # the user chose offline learning
        return {"asked": False, "provider": None, "written": None, "reason": "learning.reflector = heuristic"}
    binary = _find(agent, cfg)
    if not binary:
        return {"asked": False, "provider": None, "written": None, "reason": f"`{agent}` not on PATH"}
    from ..llm.cli_login import login_status

    logged_in, said = login_status(agent, binary)
    if logged_in is False:
        if not quiet:
            fix = "claude /login" if agent == "claude" else "codex login"
            say("{} is on PATH but not logged in (`{}`): after `{}`, `{}` learns with it in the background.",
                CLI_NAME[agent], "claude auth status" if agent == "claude" else "codex login status", fix,
                turn_on_command(agent))
        return {"asked": False, "provider": None, "written": None, "reason": f"not logged in: {said}",
                "command": turn_on_command(agent)}
    if quiet:
        return {"asked": False, "provider": None, "written": None, "reason": "--json: not asked",
                "command": turn_on_command(agent)}
    lines = explanation(agent, cfg)
    if not _interactive():
        say("{}", lines[0])
        say("{}", lines[1])
        say("Off for now (no terminal to ask in). To turn it on: `{}` (or `ace install --learn-with {}`).",
            turn_on_command(agent), agent)
        return {"asked": False, "provider": None, "written": None, "reason": "no terminal",
                "command": turn_on_command(agent)}
    import click

    for line in lines:
        say("{}", line)
    try:
        yes = click.confirm("Learn with it?", default=True)
    except (click.Abort, EOFError):  # Ctrl-C / Ctrl-D: no answer, so nothing is remembered
        say("\nNot answered: off for now. To turn it on: `{}`.", turn_on_command(agent))
        return {"asked": True, "provider": None, "written": None, "reason": "not answered",
                "command": turn_on_command(agent)}
    provider = AGENT_PROVIDER[agent] if yes else "none"
    path = _write_choice(provider)
    if yes:
        say("On: `llm.provider = {}` in {}. `ace doctor` checks it with one call; `ace config set llm.provider none` "
            "turns it off.", provider, path)
    else:
        say("Off: `llm.provider = none` in {} (not asked again). `{}` turns it on.", path, turn_on_command(agent))
    return {"asked": True, "provider": provider, "written": path, "reason": "answered"}


def _interactive() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


# -- what install says about learning ----------------------------------------------------------

def say_learning(info: dict, offered: dict | None = None) -> None:
    """Which reflector writes the lessons — and, when it is a model, whether it can be used now —, what
    a model adds and how to turn it on (unless the offer just said so), and the spending caps."""
    if info["reflector"] == "llm":
        problem = _model_problem(info["provider"])
        if problem:
            say("[bold]Lessons[/]: meant to be written by the LLM reflector ({}), but [yellow]learned offline for "
                "now[/]: {}. Fix: {}.", info["provider"], *problem)
        else:
            say("[bold]Lessons[/]: written by the LLM reflector ({}{}), which states root causes; the offline "
                "reflector takes over when the model fails or a cap is reached. `ace doctor` checks it with one "
                "call.", info["provider"], f", model {info['model']}" if info["model"] else "")
    elif info["problem"]:
        say("[bold]Lessons[/]: learned [yellow]offline[/] for now: `llm.provider = {}` is set but can't be used: {}",
            info["provider"], info["problem"])
    else:
        why = " (`learning.reflector = heuristic`)" if info["choice"] == "heuristic" else ""
        say("[bold]Lessons[/]: learned offline by the heuristic reflector{}: which command failed, what changed, "
            "which commands work — it cannot say why something failed. With a language model the reflector reads "
            "each task and the offline candidates and writes the root cause instead (\"X requires Y\", \"do Z "
            "before W\"), dropping one-off events.", why)
        if offered and (offered.get("asked") or offered.get("command")):
            return _say_caps(info)  # the offer above said how to turn it on, with the one command
        say("To turn it on, add to {}:", paths.user_config_path())
        if info["claude_on_path"]:
            lines, env = ['provider = "claude-cli"    # your Claude Code login, no API key'], \
                "ACE_LLM_PROVIDER=claude-cli"
        else:
            lines = ['provider = "anthropic"    # the key in ANTHROPIC_API_KEY', 'model = "<model name>"']
            env = "ACE_LLM_PROVIDER=anthropic ACE_LLM_MODEL=<model name>"
        if info["choice"] == "heuristic":
            lines.append('# and under [learning]: reflector = "auto"')
        say("    {}", "\n    ".join(["[llm]", *lines]))
        if not info["claude_on_path"]:
            need = "" if _installed("anthropic") else f"needs `{extra_hint('llm', only=['anthropic'])}`; "
            say("({}with Claude Code on PATH, provider = \"claude-cli\" uses "
                "its login instead; \"openai\" takes any OpenAI-compatible server, with model and base_url)", need)
        say("or export {} where Claude Code starts; `ace config show` lists the llm.* settings.", env)
    _say_caps(info)


def _say_caps(info: dict) -> None:
    if all(info["budget"].values()):
        say("Spending caps, on by default: {}; past a cap, learning goes offline.", _caps(info["budget"]))
    else:
        say("[yellow]Spending caps[/]: {}; past a cap, learning goes offline.", _caps(info["budget"]))


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _model_problem(provider: str | None) -> tuple[str, str] | None:
    """(cause, fix) when the configured model path is known not to work: the agent CLI says it is
    not logged in, or the last model call failed (`llm.health`); None when nothing says so."""
    from .. import llm

    agent = PROVIDER_AGENT.get(provider or "")
    if agent:
        binary = find_agent_cli(agent)
        if binary:
            from ..llm.cli_login import login_status

            logged_in, said = login_status(agent, binary)
            if logged_in is False:
                return f"{CLI_NAME[agent]} is not logged in ({said})", llm.health.fix_for(provider or "",
                                                                                                        said)
    failure = llm.health.failure()
    if failure:
        return f"the last model call failed: {failure['cause']}", str(failure["fix"])
    return None


def _caps(budget: dict) -> str:
    job, calls, tokens = (budget[k] for k in reflector_choice.BUDGET_KEYS)
    return ", ".join([
        f"{job} model calls per task" if job else "no per-task call cap (llm.max_calls_per_job = 0)",
        f"{calls:,} calls and" if calls else "no daily call cap (llm.max_calls_per_day = 0),",
        f"{tokens:,} tokens a day on this machine" if tokens else "no daily token cap (llm.max_tokens_per_day = 0)",
    ]).replace("and,", "and").replace(",,", ",")


# -- what status, the dashboard and doctor show ---------------------------------------------------

def summary(cfg: Any) -> dict[str, Any]:
    """{provider, model, meter, failure}: the model path as configured, today's spend against the
    caps, and the recorded failure while the last call failed (None otherwise)."""
    from .. import llm
    from ..llm.budget import meter

    name = llm.provider_name(cfg)
    agent = PROVIDER_AGENT.get(name or "")
    model = _model(agent, cfg) if agent else str(cfg["llm.model"] or "")
    try:
        spent = meter(cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"])
    except Exception:  # noqa: BLE001 — a damaged ledger reads as empty; status must not fail on it
        spent = None
    return {"provider": name, "model": model or None, "meter": spent,
            "failure": llm.health.failure() if name else None}


def show_summary(info: dict[str, Any]) -> None:
    """`ace status`'s lines about learning with a model."""
    from ..llm.budget import meter_text

    spent = info.get("meter")
    if not info["provider"]:
        say("Learning: offline (no model: `llm.provider = none`); README \"Learning with a model\" says how to "
            "turn one on.")
        return
    model = f", model {info['model']}" if info["model"] else ""
    used = meter_text(spent) if spent else "usage unreadable"
    say("Learning: with {}{} — {}{}", info["provider"], model, used,
        " [yellow](daily cap reached: learning is offline until tomorrow, UTC)[/]" if spent and spent["reached"]
        else "")
    failure = info.get("failure")
    if failure:
        say("  [yellow]offline now[/]: the last model call failed: {}", failure["cause"])
        say("  fix: {}", failure["fix"])


def doctor_check(cfg: Any, *, offline: bool) -> Check:
    """The model path, for real: one tiny call (counted in the budget) unless `offline` or the cap
    is reached. FAIL with the provider's message and the fix when it fails."""
    from .. import llm
    from ..llm.budget import meter, meter_text

    if cfg is None:
        return Check("model", False, "not checked: the config is invalid (see above)", None, warn=True)
    name = llm.provider_name(cfg)
    if not name:
        return Check("model", True, "none configured: lessons are learned offline (`llm.provider = none`)")
    try:
        provider = llm.get_provider(cfg)
    except Exception as exc:  # noqa: BLE001 — whatever stops the provider is the finding
        cause = llm.short_error(exc)
        return Check("model", False, f"{name} cannot be used: {cause}", llm.health.fix_for(name, cause))
    assert provider is not None
    spent = meter(cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"])
    failure = llm.health.failure()
    if offline or spent["reached"]:
        why = "--offline" if offline else f"the daily {spent['reached']} cap is reached ({meter_text(spent)})"
        if failure:
            return Check("model", False, f"{provider.describe()}: not called ({why}); the last call failed: "
                         f"{failure['cause']}", failure["fix"])
        return Check("model", False, f"{provider.describe()}: not called ({why}); {meter_text(spent)}", warn=True,
                     fix="`ace doctor` without --offline makes one small call" if offline else
                     "raise `llm.max_calls_per_day` / `llm.max_tokens_per_day`, or wait until tomorrow (UTC)")
    provider.timeout_s = min(float(provider.timeout_s), PROBE_TIMEOUT_S)
    try:
        done = provider.complete(PROBE_SYSTEM, PROBE_USER, max_tokens=PROBE_MAX_TOKENS)
    except llm.FAILURES as exc:
        cause = llm.short_error(exc)
        return Check("model", False, f"{provider.describe()} failed: {cause}", llm.health.fix_for(name, cause))
    after = meter(cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"])
    return Check("model", True, f"{provider.describe()} answered in {done.seconds:.1f}s "
                 f"({done.input_tokens + done.output_tokens} tokens, counted); {meter_text(after)}")
