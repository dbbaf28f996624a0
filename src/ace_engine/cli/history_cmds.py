"""What learning did: `ace stats` (per-task learning statistics, queue, LLM spend), `ace log`
(the playbook's change history) and `ace review` (quarantined lessons: approve or reject)."""

import click

from ..core.project import identify
from ..playbook.playbook import Playbook
from .common import json_option, open_store, project_option, resolve_bullet, resolve_dir, wide_option
from .output import clip, emit_json, fail, iso, plural, say, table, when

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..store.records import ChangeRow


@click.command()
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Every project.")
@click.option("--limit", default=15, show_default=True, help="Tasks to list, newest first.")
@click.option("--remote", is_flag=True, help="The team's statistics from this project's team server instead.")
@click.option("--days", type=click.IntRange(1, 366), default=30, show_default=True,
              help="With --remote: days to report.")
@wide_option
@json_option
@click.pass_context
def stats(ctx, project_dir, all_projects, limit, remote, days, as_json):
    """Learning statistics: per task (created, updated, merged, pruned, average confidence), in
    total, the job queue, and LLM spend. `--remote`: the team's, from the server (`ace remote stats`)."""
    if remote:
        from .remote_cmds import stats_cmd

        return ctx.invoke(stats_cmd, days=days, project_dir=project_dir, as_json=as_json)
    project = identify(resolve_dir(project_dir))
    with open_store() as store:
        project_id = store.project_id(project.key)
        runs = store.learning_runs(project_id, all_projects=all_projects, limit=limit)
        totals = store.learning_totals(project_id, all_projects=all_projects)
        jobs = store.job_counts(project_id, all_projects=all_projects)
        active = store.count_bullets(project_id) if project_id is not None else 0
        quarantined = store.count_bullets(project_id, statuses=("quarantined",)) if project_id is not None else 0
    spend = _spend()
    if as_json:
        return emit_json({"project": None if all_projects else project.key, "totals": totals, "jobs": jobs,
                          "tasks": [{**run, "created_at_iso": iso(run["created_at"])} for run in runs],
                          "playbook": {"active": active, "quarantined": quarantined}, "llm": spend})
    if not totals["tasks"]:
        say("Nothing learned yet. Jobs are queued when a Claude Code turn ends; `ace learn` runs them now.")
    else:
        table("Per task (changes: +created ~updated merged / pruned, quarantined, rejected)",
              ["when", "task", "outcome", "learned", "changes", "👍/👎", "conf."], [
            [when(r["created_at"]), clip(r["task"], 160), r["outcome"],
             (r["reflector"] or "yes") if r["learned"] else f"no: {clip(r['gate_reason'], 80)}",
             f"+{r['created']} ~{r['updated']} m{r['merged']} / p{r['pruned']} q{r['quarantined']} r{r['rejected']}",
             f"{r['helpful']}/{r['harmful']}",
             "-" if r["average_confidence"] is None else f"{r['average_confidence']:.2f}"] for r in runs],
              body=("task",), bare=("outcome",))
        avg = totals["average_confidence"]
        say("{} ({} learned): {} created, {} updated, {} merged, {} pruned, {} quarantined, {} rejected; "
            "feedback {} helpful / {} harmful; average confidence {}.", plural(totals["tasks"], "task"),
            *(totals[k] for k in ("learned", "created", "updated", "merged", "pruned", "quarantined",
                                  "rejected", "helpful", "harmful")), "-" if avg is None else f"{avg:.2f}")
    if not all_projects:
        say("Playbook: {} active, {} awaiting `ace review`.", plural(active, "bullet"), quarantined)
    say("Jobs: {}.", ", ".join(f"{k} {v}" for k, v in sorted(jobs.items())) or "none")
    if spend and spend.get("total", {}).get("calls"):
        total, today = spend["total"], spend["today"]
        say("LLM: today {}, {}+{} tokens; last {} {}, {}+{} tokens, ${}.", plural(today.get("calls", 0), "call"),
            today.get("input_tokens", 0), today.get("output_tokens", 0), plural(spend["last_days"], "day"),
            plural(total["calls"], "call"), total["input_tokens"], total["output_tokens"],
            f"{total.get('cost_usd', 0):.4f}")
    else:
        say("LLM: no calls{}.", "" if spend is None or spend.get("provider") else " (heuristic reflector)")
    _say_fallback(spend, any("fallback from" in str(r.get("reflector") or "") for r in runs))


def _say_fallback(spend: dict | None, fell_back: bool) -> None:
    """Why the model was not used — "fallback from llm:…" in the table, or a model configured and
    no calls — from the cause its provider recorded (`llm/health.py`)."""
    if not spend or not (spend.get("provider") and (fell_back or spend.get("failure")
                                                     or not spend.get("total", {}).get("calls"))):
        return
    failure = spend.get("failure") or spend.get("last_failure")
    if failure and failure.get("cause"):
        now = "fails" if spend.get("failure") else "failed last"
        say("Model {} ({}): {}{}", now, spend["provider"], failure["cause"],
            f" — fix: {failure['fix']}" if failure.get("fix") else " (it has worked since)")
    elif fell_back:
        say("Model: the fallback's cause was not recorded (it predates this version); `ace doctor` checks the "
            "model with one call.")


def _spend() -> dict | None:
    try:
        from ..llm.budget import usage_summary
    except ImportError:
        return None
    try:
        spend = usage_summary()
    except Exception:  # noqa: BLE001 — a damaged ledger must not break `ace stats`
        return None
    from .. import llm
    from ..core import config

    try:
        spend["provider"] = llm.provider_name(config.load(None))
    except config.ConfigError:
        spend["provider"] = None
    state = llm.health.read() or {}
    spend["failure"] = llm.health.failure()
    spend["last_failure"] = state.get("last_failure")
    return spend


@click.command("log")
@project_option
@click.option("--bullet", "bullet_id", default=None, help="Only this bullet's history (a unique id prefix is enough).")
@click.option("--all", "all_projects", is_flag=True, help="Changes of every project.")
@click.option("--limit", default=40, show_default=True)
@wide_option
@json_option
def log_cmd(project_dir, bullet_id, all_projects, limit, as_json):
    """The playbook's change history, newest first: every ADD, UPDATE, MERGE, TAG, REMOVE,
    QUARANTINE and RESTORE with its source, reason and session."""
    project = identify(resolve_dir(project_dir))
    with open_store() as store:
        if bullet_id:
            bullet_id = resolve_bullet(store, bullet_id)["id"]
            rows = store.changes(bullet_id=bullet_id, limit=limit)
        else:
            project_id = None if all_projects else store.project_id(project.key)
            if project_id is None and not all_projects:
                rows = []
            else:
                rows = store.changes(project_id=project_id, limit=limit)
    if as_json:
        return emit_json({"changes": [{**row, "created_at_iso": iso(row["created_at"])} for row in rows]})
    if not rows:
        say("No changes recorded yet.")
        return
    table(None, ["when", "bullet", "op", "source", "what"], [
        [when(r["created_at"]), r["bullet_id"], r["op"], r["source"] or "-", _what(r)] for r in rows],
          body=("what",), bare=("bullet", "op"))


def _what(change: "ChangeRow") -> str:
    detail = change.get("detail") or {}
    op = change["op"]
    if op == "TAG":
        text = f"{detail.get('tag')}{' (explicit)' if detail.get('explicit') else ''} → {detail.get('confidence')}"
    elif op == "ADD":
        text = str(detail.get("content", ""))
    elif op == "MERGE":
        text = f"absorbed {detail.get('absorbed')}"
    elif op == "UPDATE":
        after = detail.get("after") or {}
        text = (", ".join(f"{k}: {str(v)[:60]}" for k, v in after.items())
                or ("evidence" if detail.get("provenance") else ""))
    else:
        text = f"{detail.get('from', '')} → {detail.get('to', '')}".strip(" →")
    reason = change.get("reason")
    out = f"{text} — {reason}" if reason else text
    one = " ".join(out.split())
    return one if len(one) <= 140 else one[:137] + "..."


@click.command()
@project_option
@click.option("--approve", "approve_ids", multiple=True, help="Make this quarantined bullet active (repeatable).")
@click.option("--reject", "reject_ids", multiple=True, help="Archive this quarantined bullet (repeatable).")
@wide_option
@json_option
def review(project_dir, approve_ids, reject_ids, as_json):
    """Lessons held back by the poisoning defence (downloads piped to a shell, disabled safety
    checks, unknown hosts, secrets…). They are never injected until approved here."""
    project = identify(resolve_dir(project_dir))
    done = []
    with open_store() as store:
        playbook = Playbook(store, project)
        for ids, action in ((approve_ids, "approve"), (reject_ids, "reject")):
            for given in ids:
                bullet = resolve_bullet(store, given)
                if bullet["status"] != "quarantined":
                    fail(f"{bullet['id']} is {bullet['status']}, not quarantined; "
                         "`ace review` lists the ones to review")
                if action == "approve":
                    playbook.restore(bullet["id"], source="user", reason="approved in `ace review`", reviewed=True)
                else:
                    playbook.remove(bullet["id"], source="user", reason="rejected in `ace review`")
                done.append({"id": bullet["id"], "action": action})
        pending = playbook.bullets(statuses=("quarantined",), order="recent")
    if as_json:
        return emit_json({"done": done, "quarantined": pending})
    for item in done:
        say("{}: {}", item["id"], "approved (active)" if item["action"] == "approve" else "rejected (archived)")
    if not pending:
        say("Nothing to review: no quarantined lessons.")
        return
    table("Quarantined lessons (never injected until approved)", ["id", "section", "lesson", "why held back", "from"], [
        [b["id"], b["section"], b["content"], "; ".join(b["provenance"].get("concerns") or []) or "-",
         f"session {b['provenance'].get('session_id') or '-'}"] for b in pending],
          body=("lesson", "why held back"), bare=("section", "from"))
    say("Approve with `ace review --approve ID`, reject with `ace review --reject ID`.")


COMMANDS = [stats, log_cmd, review]
