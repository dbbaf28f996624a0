"""`ace replay`: this repository's past sessions lived again, in order, in a throwaway store — how
many recurring failures a lesson would have preceded, and what the injection would have cost.

Thin: the sessions are the ones `ace learn --all-transcripts` reads (`transcript_learn.find_all`),
replayed by `experiment.replay` (the package's replay, the one `bench/replay.py` runs on the corpus)
and summed by `experiment.replay_score.figures`. The user's store, config and agent folders are
only read; everything is learned in a temporary ACE_HOME removed afterwards.

Offline by default. `--model` learns with the configured model (`llm.*`): the cost is said before
the first call, and the replay's learning processes see today's spend and the daily caps, so they
stop at the cap (and fall back offline) as any learning would; what they spent is added to this
machine's ledger afterwards, so later learning counts it too.

Cost: per session ~2-6 s offline (two hook and two `ace learn` processes); `--limit` bounds it.
"""

from __future__ import annotations

import calendar
import json
import os
import shutil
import sys
import time
from typing import Any

import click

from ..core import paths
from .common import json_option, load_config, project_of, project_option
from .output import console, emit_json, fail, plural, say, table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..experiment.replay import Session

_LLM_KEYS = ("provider", "model", "claude_model", "codex_model", "codex_path", "base_url", "api_key_env",
             "claude_path", "timeout_s", "max_tokens", "max_calls_per_job", "max_calls_per_day", "max_tokens_per_day")
_CLI_PROVIDERS = ("claude-cli", "codex-cli")  # they log in with the user's own agent folders


def _sessions(project: Any, limit: int | None) -> list[Session]:
    from ..experiment import replay as replay_mod
    from ..learning import transcript_learn

    found = transcript_learn.find_all(project, transcript_learn.claude_projects_dir())
    out: list[Session] = []
    for item in found:
        path = item["path"]
        when = replay_mod.first_timestamp(path) or time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(path)))
        out.append({"id": os.path.splitext(os.path.basename(path))[0], "path": path, "when": when})
    ordered = replay_mod.order(out)
    return ordered[-limit:] if limit else ordered


def _model_config(cfg: Any) -> str:
    """The `[llm]` table of the user's effective settings (TOML; JSON strings and numbers are TOML too)."""
    lines = ["[llm]"] + [f"{key} = {json.dumps(cfg[f'llm.{key}'])}" for key in _LLM_KEYS]
    return "\n".join(lines) + "\n"


def _spend_of(path: str) -> dict[str, dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class _Ledger:
    """Today's model spend carried into the throwaway home, and the replay's own spend brought back."""

    def __init__(self, provider: str) -> None:
        from ..llm import budget

        self.provider = provider
        self.real = budget.UsageLedger()
        self.before: dict[str, dict[str, Any]] = {}
        self.spent = {"calls": 0, "tokens": 0}

    def seed(self, ace_home: str) -> None:
        state = os.path.join(ace_home, "state")
        paths.ensure_private_dir(state)
        if os.path.isfile(self.real.path):
            shutil.copyfile(self.real.path, os.path.join(state, os.path.basename(self.real.path)))
        self.before = _spend_of(self.real.path)

    def bring_back(self, ace_home: str) -> None:
        after = _spend_of(os.path.join(ace_home, "state", os.path.basename(self.real.path)))
        for day, entry in after.items():
            old = self.before.get(day) or {}
            calls = int(entry.get("calls", 0)) - int(old.get("calls", 0))
            tokens_in = int(entry.get("input_tokens", 0)) - int(old.get("input_tokens", 0))
            tokens_out = int(entry.get("output_tokens", 0)) - int(old.get("output_tokens", 0))
            cost = float(entry.get("cost_usd", 0.0)) - float(old.get("cost_usd", 0.0))
            at = calendar.timegm(time.strptime(day, "%Y-%m-%d")) + 12 * 3600  # noon UTC: that day's entry
            for n in range(max(0, calls)):  # the ledger counts one call per record
                first = n == 0
                self.real.record(self.provider, tokens_in if first else 0, tokens_out if first else 0,
                                 cost if first else 0.0, now=at)
            self.spent["calls"] += max(0, calls)
            self.spent["tokens"] += max(0, tokens_in + tokens_out)


def _cost_line(cfg: Any, sessions: list[Session]) -> str:
    from ..llm import budget

    today = budget.UsageLedger().day()
    calls_cap, tokens_cap = int(cfg["llm.max_calls_per_day"]), int(cfg["llm.max_tokens_per_day"])
    per_job = int(cfg["llm.max_calls_per_job"])
    left_calls = "no cap" if not calls_cap else str(max(0, calls_cap - today["calls"]))
    left_tokens = "no cap" if not tokens_cap else str(
        max(0, tokens_cap - today["input_tokens"] - today["output_tokens"]))
    return (f"Learning with {cfg['llm.provider']}: up to {per_job} model calls per turn learned, over "
            f"{plural(len(sessions), 'session')}; today's cap leaves calls: {left_calls}, tokens: {left_tokens} "
            f"(llm.max_calls_per_day, llm.max_tokens_per_day), past which learning goes offline.")


@click.command("replay")
@project_option
@click.option("--limit", type=click.IntRange(2, None), default=None,
              help="Replay only the last N sessions (oldest of them first); each takes a few seconds.")
@click.option("--model", "use_model", is_flag=True,
              help="Learn with the configured model (llm.*) instead of offline: model calls, within the daily caps, "
                   "counted in this machine's spend.")
@json_option
def replay(project_dir: str | None, limit: int | None, use_model: bool, as_json: bool) -> None:
    """Replay this repository's past sessions in order, learning as you go in a throwaway store: how many
    failures that came back a lesson shown at the session's start would have covered ("spared"), how many
    shown lessons the session did not need ("noise"), and the tokens injected per session. Your lessons,
    settings and sessions are only read (with --model, its calls are added to today's model spend)."""
    from ..experiment import replay as replay_mod
    from ..experiment import replay_score
    from ..integrations.claude_settings import hook_argv
    from ..learning import transcript_learn

    project = project_of(project_dir)
    cfg = load_config(project.root)
    sessions = _sessions(project, limit)
    if not sessions:
        folder = transcript_learn.claude_projects_dir()
        fail(f"no transcripts of {project.root} to replay: none of Claude Code ({folder}), "
             "Codex CLI or Gemini CLI ran in this repository or its worktrees here. Run `ace replay` in the repository "
             "the sessions ran in (or pass --project), or set CLAUDE_CONFIG_DIR / CODEX_HOME to where they are kept")
    if len(sessions) < 2:
        fail("only one session of this repository to replay: a failure can only come back in a later session; "
             "replay once there are two or more")
    ledger = None
    config_text = ""
    provider = str(cfg["llm.provider"])
    if use_model:
        if provider == "none":
            fail("--model: no model is configured (llm.provider is none); `ace config set llm.provider claude-cli` "
                 "(or anthropic / openai) sets one, or leave --model out to replay offline")
        config_text = _model_config(cfg)
        ledger = _Ledger(provider)
        click.echo(_cost_line(cfg, sessions), err=True)

    def progress(n: int, total: int, row: dict[str, Any]) -> None:
        if not as_json and console.is_terminal:
            click.echo(f"\r[{n}/{total}] replayed", nl=n == total, err=True)

    started = time.time()
    hook = hook_argv("SessionStart")[:-1]  # the installed hook's command, its event left off
    rows = replay_mod.replay(sessions, ace=[sys.executable, "-m", "ace_engine.cli"], hook=hook,
                             offline=not use_model, config_text=config_text,
                             keep_home=use_model and provider in _CLI_PROVIDERS,
                             on_session=progress, on_home=ledger.seed if ledger else None,
                             on_done=ledger.bring_back if ledger else None)
    figures = replay_score.figures(rows)
    data = {"project": project.root, "learner": provider if use_model else "offline", "figures": figures,
            "model_spend": ledger.spent if ledger else None, "seconds": round(time.time() - started, 1),
            "sessions": [{k: r[k] for k in ("id", "path", "order", "prompts", "lines", "tokens", "captured", "errors")}
                         for r in rows]}
    if as_json:
        return emit_json(data)
    _show(data)


def _show(data: dict[str, Any]) -> None:
    f = data["figures"]
    say("Replayed {} of {} in order ({} learner, {} s), each starting with what the earlier ones taught.",
        plural(f["sessions"], "session"), data["project"], data["learner"], data["seconds"])
    if f["recurring"]:
        say("[bold]Spared {} of {}[/]: failures that came back, where a lesson shown at the session's start "
            "covered them.", f["spared"], plural(f["recurring"], "recurring failure"))
    else:
        say("No failure came back from one session to a later one ({} seen in all), so none could be spared.",
            plural(f["failures"], "failure"))
    say("Noise per session: {} lesson lines shown but not needed by it. Tokens injected per session: {}.",
        f["noise_per_session"], f["tokens_per_session"])
    if f["missed_because"]:
        say("Not spared, where the lesson stood: {}.",
            ", ".join(f"{n} {why}" for why, n in f["missed_because"].items()))
    if data["model_spend"] is not None:
        say("Model spend: {} and {}, added to today's ledger.",
            plural(data["model_spend"]["calls"], "call"), plural(data["model_spend"]["tokens"], "token"))
    spared = [(r["id"], sig) for r in data["sessions"] for sig in r["captured"]["spared"]]
    if spared:
        table("Spared", ["session", "failure"], [[sid, sig] for sid, sig in spared[:10]], body=("failure",))
    if f["errors"]:
        say("[yellow]{} while replaying[/] (`ace replay --json` lists them).", plural(f["errors"], "error"))
    say("A replay learns from the past without the lessons it would have given: a first estimate; "
        "`ace experiment start` measures them on the sessions to come.")


COMMANDS = (replay,)
