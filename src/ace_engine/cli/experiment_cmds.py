"""`ace experiment start|stop|status` (the holdout) and `ace report` (with vs without).

Thin: the setting is written to the user's config file (`inject.holdout` is user-level: a
repository cannot switch it), the experiment is recorded in the store, and the report is
`experiment.report.build`'s, printed. Cost: `report` reads every session given an arm.
"""

from __future__ import annotations

import os
import time
from typing import Any

import click

from ..core import config as config_mod
from ..core import config_write, paths
from ..experiment import report as report_mod
from ..integrations.agent_files import START, TARGETS
from .common import json_option, open_store, project_of, project_option
from .output import emit_json, fail, plural, say, table, when


@click.group("experiment")
def experiment_group() -> None:
    """Hold a share of sessions out of injection, so `ace report` can tell whether the lessons help."""


def _has_section(path: str) -> bool:
    """Does the file (an agent file of the work tree) hold `ace sync`'s section? Read capped, never followed."""
    try:
        fd = paths.open_nofollow(path, os.O_RDONLY)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        try:
            return START.encode() in handle.read(1_000_000)
        except OSError:  # a directory by that name
            return False


def _set_share(share: float) -> None:
    config_write.write_value(os.path.realpath(paths.user_config_path()), "inject.holdout", share, new_mode=0o600)


@experiment_group.command("start")
@click.option("--share", type=float, default=0.2, show_default=True,
              help="Share of sessions (0..1) that get no lessons at all.")
@json_option
def start(share: float, as_json: bool) -> None:
    """Start an experiment: from the next session on, SHARE of sessions (chosen from each session's
    id, recorded) get no injection; everything is still captured and learned from."""
    if not 0.0 < share < 1.0:
        fail("--share must be between 0 and 1 (0.2 holds one session in five out)")
    now = time.time()
    _set_share(share)
    with open_store() as store:
        experiment_id = store.start_experiment(share, now, announced=True)
    if as_json:
        return emit_json({"experiment": experiment_id, "share": share, "started_at": now})
    say("Experiment {} started: {} % of sessions from now on get no lessons (capture and learning go on).",
        experiment_id, round(share * 100))
    say("`ace report` compares them with the others once each side has {}; `ace experiment stop` ends it.",
        plural(report_mod.MIN_PER_ARM, "session"))
    root = project_of(None).root
    synced = [name for name in TARGETS if _has_section(os.path.join(root, name))]
    if synced:  # those files reach every session, held out or not: the comparison would be blurred
        say("[yellow]{} {} the lessons `ace sync` wrote[/]: every session reads them, held out or not, so the "
            "report would understate what lessons do; `ace sync --remove` takes them out for the experiment.",
            ", ".join(synced), "holds" if len(synced) == 1 else "hold")
    effective = config_mod.load(root)["inject.holdout"]
    if effective != share:  # ACE_INJECT_HOLDOUT (or ACE_CONFIG's file) wins over the user file just written
        say("[yellow]But the effective inject.holdout is {}[/] (`ace config get inject.holdout --json` says where "
            "it comes from): the hooks use that.", effective)


@experiment_group.command("stop")
@json_option
def stop(as_json: bool) -> None:
    """Stop the running experiment: every session gets lessons again. Its sessions stay in the report."""
    _set_share(0.0)
    with open_store() as store:
        row = store.stop_experiment(time.time())
    if as_json:
        return emit_json({"stopped": row})
    if row is None:
        say("No experiment was running; `inject.holdout` is 0 (off).")
    else:
        say("Experiment {} stopped; every session gets lessons again. `ace report` still shows it.", row["id"])


@experiment_group.command("status")
@json_option
def status(as_json: bool) -> None:
    """The experiments so far and how many sessions each arm has."""
    with open_store() as store:
        rows = store.experiments()
        arms = store.arm_sessions()
    counts = {(a["experiment_id"], a["arm"]): 0 for a in arms}
    for a in arms:
        counts[(a["experiment_id"], a["arm"])] += 1
    data: list[dict[str, Any]] = [
        {**r, "with": counts.get((r["id"], "inject"), 0), "without": counts.get((r["id"], "holdout"), 0)} for r in rows]
    if as_json:
        return emit_json({"experiments": data})
    if not data:
        say("No experiment yet: `ace experiment start --share 0.2` starts one.")
        return
    table("Experiments", ["id", "share", "started", "stopped", "sessions with", "without"],
          [[r["id"], f"{round(r['share'] * 100)} %", when(r["started_at"]),
            when(r["stopped_at"]) if r["stopped_at"] else "running", r["with"], r["without"]] for r in data])


def _number(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.0f} %" if kind == "rate" else f"{value:.2f}"


def _interval(row: dict[str, Any]) -> str:
    if row.get("diff") is None:
        return "-"
    scale, unit = (100, " pt") if row.get("kind", "rate") == "rate" else (1, "")
    return f"{row['diff'] * scale:+.2f}{unit} [{row['low'] * scale:+.2f}, {row['high'] * scale:+.2f}]"


def show_outcomes(rows: list[dict[str, Any]], title: str) -> None:
    table(title, ["outcome", "with lessons", "without", "difference [95 %]", "sessions", "verdict"],
          [[r["what"], _number(r["with"], r["kind"]), _number(r["without"], r["kind"]), _interval(r),
            f"{r['n_with']} / {r['n_without']}", r["verdict"]] for r in rows], body=("outcome",))


@click.command("report")
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Every repository, not just this one.")
@click.option("--min-sessions", type=click.IntRange(2, None), default=report_mod.MIN_PER_ARM, show_default=True,
              help="Sessions each arm needs before a difference is given.")
@json_option
def report(project_dir: str | None, all_projects: bool, min_sessions: int, as_json: bool) -> None:
    """Do the lessons pay? Sessions with lessons against the experiment's holdout, per outcome: each
    side's value, the difference with its 95 % interval, and the sessions behind it."""
    with open_store() as store:
        pid = None if all_projects else store.project_id(project_of(project_dir).key)
        if pid is None and not all_projects:
            data = report_mod.compare([], {}, min_sessions)
            data.update(experiments=store.experiments(), running=store.running_experiment())
        else:
            data = report_mod.build(store, pid, time.time(), min_sessions)
    if as_json:
        return emit_json(data)
    if not data["experiments"]:
        say("No experiment yet: `ace experiment start --share 0.2` holds one session in five out, and this report "
            "then compares them with the others.")
        return
    say("{} with lessons, {} without (the holdout); a difference is given from {} per side.",
        plural(data["sessions_with"], "session"), data["sessions_without"], data["min_per_arm"])
    if not data["enough"]:
        say("[yellow]Not enough sessions yet[/]: each side needs {}.", data["min_per_arm"])
    show_outcomes(data["outcomes"], "With vs without lessons (lower is better; difference = with - without)")
    for project in data["by_project"]:
        show_outcomes(project["outcomes"], f"In {project['project']}")
    if data["lessons"]:
        table("Per lesson: sessions where the failure it covers came back", ["id", "shown in", "with", "without",
              "verdict", "lesson"],
              [[r["id"], r["shown"], f"{r['recurred_with']} of {r['n_with']}",
                f"{r['recurred_without']} of {r['n_without']}", r["verdict"], r["content"]] for r in data["lessons"]],
              body=("lesson",), bare=("id",))
    say("Arms are random, so a difference is the lessons' doing; an interval that includes 0 means the sessions "
        "so far cannot tell. Few sessions and a changing mix of tasks make it wide.")


COMMANDS = (experiment_group, report)
