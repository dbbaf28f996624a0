"""The playbook from the command line, reading side: `ace search`, `patterns`, `top`, `domains`,
`show`, `recall` and `cache recall` (the ACE plugin's name for it). None of these writes.

Changing the playbook: `playbook_edit_cmds`; export / import / sync: `share_cmds`. One piece, past 400
lines, because these read-only commands share how they open the store, resolve the project and print a
bullet (text or `--json`); the commands that write are already apart.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from ..playbook.playbook import STATUSES, Playbook
from ..playbook.transfer import public_bullet
from .common import json_option, load_config, open_store, project_of, project_option, wide_option
from .output import details, emit_json, fail, iso, plural, say, table, when
from .playbook_common import (
    BULLET_BARE,
    BULLET_BODY,
    BULLET_COLUMNS,
    bullet_row,
    compat_item,
    counters_text,
    get_bullet,
    known_project_id,
    recheck_notes,
    section_option_value,
    seen_text,
    show_to_recheck,
    show_waiting,
    totals,
    waiting,
)

if TYPE_CHECKING:
    from ..store.interfaces import PlaybookStore, Store

SEARCH_MODES = ("auto", "lexical", "semantic", "hybrid")


# -- search ----------------------------------------------------------------------------------------


def _first(request: dict, *keys: str) -> Any:
    for key in keys:
        value = request.get(key)
        if value not in (None, "", []):
            return value
    return None


def _names(value: object) -> list[str]:
    """Domain names from a string (comma or space separated) or a list of strings."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value if str(v).strip()]


def read_search_request(raw: str) -> dict:
    """The ACE plugin's search request, leniently: a JSON object with `query` (or `prompt`, `text`,
    `q`), optional `limit` / `k` / `top_k`, `threshold`, `allowed_domains` / `blocked_domains`
    (lists or comma-separated strings); a JSON string; or plain text, taken as the query."""
    raw = raw.strip()
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        data = raw
    out: dict = {"query": "", "k": None, "threshold": None, "allowed": [], "blocked": []}
    if isinstance(data, str):
        return {**out, "query": data}
    if not isinstance(data, dict):
        return out
    out["query"] = _first(data, "query", "prompt", "text", "q") or ""
    if not isinstance(out["query"], str):
        out["query"] = str(out["query"])
    k = _first(data, "limit", "k", "top_k")
    threshold = _first(data, "threshold", "min_score")
    try:
        out["k"] = int(k) if k is not None else None
    except (TypeError, ValueError):
        out["k"] = None
    try:
        out["threshold"] = float(threshold) if threshold is not None else None
    except (TypeError, ValueError):
        out["threshold"] = None
    out["allowed"] = _names(_first(data, "allowed_domains", "domains", "domain"))
    out["blocked"] = _names(_first(data, "blocked_domains", "excluded_domains"))
    return out


@click.command()
@click.argument("query", required=False)
@click.option("--k", "k", type=click.IntRange(min=1), default=None, help="At most this many bullets [default: 5].")
@click.option("--domain", "domains", multiple=True, help="Only bullets of this domain (repeatable).")
@click.option("--exclude-domain", "excluded", multiple=True, help="No bullets of this domain (repeatable).")
@click.option("--threshold", type=float, default=None, help="Minimum score 0..1 [default: retrieval.threshold].")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="auto", show_default=True,
              help="lexical (full text), semantic (embeddings), hybrid, "
                   "or auto (hybrid when retrieval.semantic is on).")
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Read the request from stdin: the ACE plugin's JSON ({query, limit, threshold, "
                   "allowed_domains, blocked_domains}) or plain text.")
@project_option
@wide_option
@json_option
def search(query, k, domains, excluded, threshold, mode, from_stdin, project_dir, as_json):
    """The bullets most relevant to QUERY, best first, with their score and why.

    `--stdin --json` answers the ACE plugin's `ace-cli search` shape exactly:
    {similar_patterns: [{id, section, content, confidence, helpful, harmful, domain, evidence}],
    domains_summary, count, threshold}. `helpful` / `harmful` count explicit marks too, `domain` is
    the primary domain, `evidence` a list of strings. Plain `--json` adds `score`, `why` and
    `domains` to each item, and the `query`.
    """
    from ..retrieval.search import search as run_search

    request = {**read_search_request(""), "query": query or ""}
    if from_stdin:
        request = read_search_request(sys.stdin.read())
        if query:
            request["query"] = f"{query} {request['query']}".strip()
    elif not query:
        fail("give a QUERY (`ace search \"jwt refresh\"`), or pipe a request with --stdin", code=2)
    # Options given on the command line win over the request's.
    k = k or request["k"] or 5
    allowed = list(domains) or request["allowed"]
    blocked = list(excluded) or request["blocked"]
    project = project_of(project_dir)
    cfg = load_config(project.root)
    threshold = threshold if threshold is not None else request["threshold"]
    effective: float = cfg["retrieval.threshold"] if threshold is None else threshold
    _check_mode(mode, cfg, quiet=as_json)
    with open_store() as store:
        project_id = known_project_id(store, project)
        _vectors_notice(store, mode, cfg, quiet=as_json)
        hits = run_search(store, project_id, request["query"], k=k, domains_allowed=allowed or None,
                          domains_blocked=blocked or None, threshold=effective, mode=mode, cfg=cfg) \
            if request["query"].strip() else []
        summary = _domains_summary(store, project_id)
    if as_json:
        items = [compat_item(h) for h in hits]
        answer = {"similar_patterns": items, "domains_summary": summary, "count": len(items), "threshold": effective}
        if not from_stdin:
            for item, hit in zip(items, hits, strict=True):
                item.update(score=hit.get("score"), why=hit.get("why"), domains=hit.get("domains"))
            answer["query"] = request["query"]
        return emit_json(answer)
    if not hits:
        say("No bullet scores {} or more for that query. Try other words, a lower --threshold, or "
            "`ace patterns` to browse.", f"{effective:g}")
        return
    table(None, ["#", "id", "score", "section", "lesson", "✓ ✗ conf.", "why"], [
        [rank, h["id"], f"{h['score']:.2f}", h["section"], h["content"], counters_text(h), h.get("why", "")]
        for rank, h in enumerate(hits, 1)], body=("lesson", "why"), bare=("id", "section", "✓ ✗ conf."))


def _check_mode(mode: str, cfg: Any, quiet: bool) -> None:
    """A search that asked for meaning (`--mode semantic` / `hybrid`) when the chosen embedder
    can't run here stops with the reason and the fix, instead of quietly ranking by words alone;
    `auto` carries on lexically and says so (on stderr, so `--json` stays clean)."""
    if mode == "lexical" or (mode == "auto" and not cfg["retrieval.semantic"]):
        return
    from ..embed import vectors

    problem = vectors.status(None, cfg)["problem"]
    if problem is None:
        return
    if mode != "auto":
        fail(f"--mode {mode} needs embeddings, and the `{cfg['retrieval.embedder']}` embedder can't run here: "
             f"{problem}; or set retrieval.embedder = \"static\" (`ace config set retrieval.embedder static`), "
             "or search with --mode lexical")
    if not quiet:
        click.echo(f"note: searching by words only: {problem} (`ace doctor` checks search)", err=True)


def _vectors_notice(store: Store, mode: str, cfg: Any, quiet: bool) -> None:
    """A search by meaning over lessons that have no vector for the chosen embedder yet (after
    `ace config set retrieval.embedder minilm`, say) ranks those by their words alone: say so,
    with the fix, once per search (on stderr). Not for `auto` with the built-in embedder, which
    embeds a few missing lessons itself at each search."""
    if mode == "lexical" or (mode == "auto" and (not cfg["retrieval.semantic"]
                                                 or cfg["retrieval.embedder"] != "minilm")):
        return
    from ..embed import vectors

    state = vectors.status(store, cfg)
    missing = state.get("missing_vectors") or 0
    if missing and not quiet:
        click.echo(f"note: {plural(missing, 'lesson')} {'has' if missing == 1 else 'have'} no vector yet for "
                   f"{cfg['retrieval.embedder']}, so {'it is' if missing == 1 else 'they are'} ranked by words "
                   "only: run `ace embed`", err=True)


def _domains_summary(store: PlaybookStore, project_id: int | None) -> dict[str, int]:
    """Domain → number of active bullets (the project's and the global ones), most first."""
    counts = store.domain_counts(project_id)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# -- browsing --------------------------------------------------------------------------------------


@click.command()
@click.option("--section", default=None, help="Only this section (aliases like `pitfalls` work).")
@click.option("--min-helpful", type=click.IntRange(min=0), default=0,
              help="Only bullets marked helpful at least N times.")
@click.option("--domain", default=None, help="Only bullets of this domain.")
@click.option("--status", type=click.Choice(STATUSES + ("all",)), default="active", show_default=True,
              help="active: what is injected (the waiting candidates follow, counted); candidate: lessons seen "
                   "once, waiting to recur (`ace keep ID` promotes one); quarantined: held for `ace review`; "
                   "archived.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many.")
@click.option("--to-recheck", is_flag=True,
              help="Only lessons something they rest on changed under since they were written, with what changed "
                   "(`ace show ID` lists every anchor; `ace keep ID` confirms one as the project is now).")
@project_option
@wide_option
@json_option
def patterns(section, min_helpful, domain, status, limit, to_recheck, project_dir, as_json):
    """The playbook's bullets (this project's and the global ones), most valuable first.
    Candidates are listed with the sessions they were seen in and their evidence confidence.

    By default (the active lessons) the lessons learned once and waiting to recur follow, marked
    as waiting: how many, the newest few, and how to keep one (`ace keep ID`). `--json` lists
    what `--status` asks for under `patterns`, and counts the waiting ones under `waiting`."""
    project = project_of(project_dir)
    section = section_option_value(section)
    statuses = STATUSES if status == "all" else (status,)
    with open_store() as store:
        project_id = known_project_id(store, project)
        changed = recheck_notes(store, project_id) if to_recheck else {}
        rows = store.list_bullets(project_id, statuses=statuses, section=section, domain=domain,
                                  min_helpful=min_helpful, limit=None if to_recheck else limit)
        if to_recheck:
            rows = [b for b in rows if b["id"] in changed][:limit]
        held, newest = waiting(store, project_id, section=section, domain=domain) \
            if status == "active" and not to_recheck else (0, [])
    if as_json:
        answer: dict[str, Any] = {"patterns": [public_bullet(b) | ({"to_recheck": changed[b["id"]]} if to_recheck
                                                                   else {}) for b in rows], "count": len(rows)}
        if status == "active" and not to_recheck:
            answer["waiting"] = held
        return emit_json(answer)
    if to_recheck:
        return show_to_recheck(rows, changed)
    if not rows and not held:
        say("No bullets match. The playbook fills up as ace-engine learns from your sessions; "
            "`ace add` writes one by hand, `ace bootstrap` seeds it from the repository.")
        return
    if not rows:
        say("No active lessons yet.")
        show_waiting(held, newest)
        return
    extra = (["status"] if status == "all" else []) + (["seen"] if status in ("all", "candidate") else [])
    table(None, BULLET_COLUMNS + extra, [bullet_row(b) + ([b["status"]] if status == "all" else [])
                                         + ([seen_text(b)] if status in ("all", "candidate") else []) for b in rows],
          body=BULLET_BODY, bare=BULLET_BARE + ("status",))
    say("{}.", plural(len(rows), "bullet"))
    show_waiting(held, newest)


@click.command()
@click.option("--k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@project_option
@wide_option
@json_option
def top(k, project_dir, as_json):
    """The most valuable bullets (confidence, helpfulness, recent use): what a session starts with."""
    from ..retrieval.search import top as run_top

    project = project_of(project_dir)
    cfg = load_config(project.root)
    with open_store() as store:
        rows = run_top(store, known_project_id(store, project), k, cfg=cfg)
    if as_json:
        return emit_json({"bullets": [{**public_bullet(b), "score": b.get("score"), "why": b.get("why")}
                                      for b in rows]})
    if not rows:
        say("The playbook is empty. `ace add` writes a lesson by hand; `ace bootstrap` seeds it.")
        return
    table(None, ["#", "id", "value", "section", "lesson", "✓ ✗ conf."], [
        [rank, b["id"], f"{b['score']:.2f}", b["section"], b["content"], counters_text(b)]
        for rank, b in enumerate(rows, 1)], body=("lesson",), bare=("id", "section", "✓ ✗ conf."))


@click.command()
@project_option
@wide_option
@json_option
def domains(project_dir, as_json):
    """Domains of the active bullets and how many bullets each has (filter with `--domain`)."""
    project = project_of(project_dir)
    with open_store() as store:
        counts = _domains_summary(store, known_project_id(store, project))
    if as_json:
        return emit_json({"domains": counts, "total_domains": len(counts)})
    if not counts:
        say("No domains yet: the playbook has no active bullets.")
        return
    table(None, ["domain", "bullets"], [[d, n] for d, n in counts.items()])


@click.command()
@click.argument("bullet_id")
@wide_option
@json_option
def show(bullet_id, as_json):
    """Everything about one bullet (a unique id prefix is enough): counters, confidence, domains,
    provenance, what it rests on (its anchors and their state) and its change history."""
    from ..agents import lessons as agents_mod
    from ..agents import registry
    from .history_cmds import _what

    with open_store() as store:
        bullet = get_bullet(Playbook(store, None), bullet_id)
        changes = store.changes(bullet_id=bullet["id"], limit=1000)
        project = store.project_row(bullet["project_id"]) if bullet["project_id"] is not None else None
        # Which agents' sessions taught and confirmed it (one playbook serves every agent).
        agents = agents_mod.lesson_agents(bullet, store.session_agents(agents_mod.provenance_sessions(bullet)))
        anchors = store.anchors_of(bullet["id"])  # what it rests on, as the last check found it
    if as_json:
        return emit_json({"bullet": public_bullet(bullet), "agents": agents, "anchors": anchors,
                          "project": project["key"] if project else None,
                          "changes": [{**change, "created_at_iso": iso(change["created_at"])} for change in changes]})
    helpful, harmful = totals(bullet)
    scope = f"project {project['name']}" if project else "global"
    if bullet.get("origin") == "team":
        scope = f"team ({scope}: pulled from the team server)"
    rows = [
        ["id", bullet["id"]], ["status", bullet["status"]], ["scope", scope], ["section", bullet["section"]],
        ["lesson", bullet["content"]], ["domains", ", ".join(bullet["domains"]) or "-"],
        ["agent", (registry.label(agents[0]) + (
            f" (also confirmed in: {', '.join(map(registry.label, agents[1:]))})" if agents[1:] else ""))
         if agents else "-"],
        ["helpful", f"{helpful} ({bullet['helpful_explicit']} explicit, each counts 3×)"],
        ["harmful", f"{harmful} ({bullet['harmful_explicit']} explicit, each counts 3×)"],
        ["confidence", f"{bullet['confidence']:.2f}"],
        ["used", f"{plural(bullet['retrieval_count'], 'time')}, last {when(bullet['last_used_at'])}"],
        ["created", when(bullet["created_at"])], ["updated", when(bullet["updated_at"])],
    ]
    for key, value in (bullet.get("provenance") or {}).items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rows.append([f"provenance.{key}", text if len(text) <= 300 else text[:297] + "..."])
    details(None, [(field, value) for field, value in rows])
    if anchors:
        table("Rests on (ok / gone / changed: to re-check, shown with a caveat / recheck: it only grew / "
              "unchecked: a command, checked by later sessions)",
              ["kind", "name", "in", "state", "found"],
              [[a["kind"], a["name"], a["file"] or "-", a["state"], a["detail"] or "-"] for a in anchors],
              body=("found",))
    if changes:
        table("History (newest first)", ["when", "op", "source", "what"],
              [[when(c["created_at"]), c["op"], c["source"] or "-", _what(c)] for c in changes],
              body=("what",), bare=("op",))


# -- what a session was shown ---------------------------------------------------------------------


def _recall(store: Store, session_id: str, now: float) -> dict:
    """What `session_id` was shown: its injections, its live pins, and the bullets to recall —
    the pinned ones, or, before any compaction pinned them, every bullet injected so far."""
    injections = store.injected(session_id)
    pins = store.pins(session_id, now)
    ids = [p["bullet_id"] for p in pins] or list(dict.fromkeys(row["bullet_id"] for row in injections))
    # Only what may still be injected: a lesson quarantined or archived since (e.g. by a
    # re-screen under a newer safety policy) is not handed back to the agent.
    bullets = [b for b in store.get_bullets(ids) if b.get("status") == "active"]
    return {
        "session_id": session_id,
        "bullets": bullets,
        "injections": injections,
        "pins": pins,
        "pinned_at": min((p["pinned_at"] for p in pins), default=None),
        "expires_at": max((p["expires_at"] for p in pins), default=None),
        "arm": store.session_arm(session_id),  # the holdout's arm (`ace experiment`), None outside one
    }


def _session_id(store: Store, given: str) -> str:
    """`given` when the store has anything for it, else the one captured session it prefixes."""
    if store.session(given) or store.injected(given) or store.pins(given, 0):
        return given
    from .capture_cmds import _find_session

    return _find_session(store, given)["session_id"]


@click.command()
@click.option("--session", "session_id", required=True, help="Session id (a unique prefix is enough).")
@wide_option
@json_option
def recall(session_id, as_json):
    """What a session was shown (every injection, by which hook) and what it has pinned to
    survive compaction."""
    with open_store() as store:
        found = _recall(store, _session_id(store, session_id), time.time())
        by_id = {b["id"]: b for b in store.get_bullets(list({r["bullet_id"] for r in found["injections"]}))}
    if as_json:
        return emit_json({
            "session_id": found["session_id"],
            "similar_patterns": [compat_item(b) for b in found["bullets"]],
            "pinned_at": found["pinned_at"], "expires_at": found["expires_at"],
            "pins": found["pins"],
            "arm": found["arm"],
            "injections": [{**row, "created_at_iso": iso(row["created_at"])} for row in found["injections"]],
        })
    if found["arm"]:
        arm = found["arm"]
        say("Session {} is in the {} arm of experiment {}{}.", found["session_id"], arm["arm"], arm["experiment_id"],
            ": nothing is injected into it" if arm["arm"] == "holdout" else "")
    if not found["injections"] and not found["pins"]:
        say("Nothing was injected in session {}.", found["session_id"])
        return
    table(f"Injected in session {found['session_id']}", ["when", "hook", "rank", "score", "id", "lesson"], [
        [when(r["created_at"]), r["hook"], r["rank"], "-" if r["score"] is None else f"{r['score']:.2f}",
         r["bullet_id"], by_id[r["bullet_id"]]["content"] if r["bullet_id"] in by_id else "(deleted)"]
        for r in found["injections"]], body=("lesson",), bare=("hook", "id"))
    if found["pins"]:
        say("{} pinned for recall after compaction, until {}.", plural(len(found["pins"]), "bullet"),
            when(found["expires_at"]))
    else:
        say("Nothing pinned: pins are made when the conversation is compacted.")


@click.group("cache")
def cache_group():
    """Compatibility with the ACE plugin's `ace-cli cache …`."""


@cache_group.command("recall")
@click.option("--session", "session_id", required=True, help="Claude Code session id.")
@wide_option
@json_option
def cache_recall(session_id, as_json):
    """The bullets pinned for SESSION (or, before any compaction, those injected in it), as
    {similar_patterns, session_id, pinned_at, expires_at}. An unknown session answers an empty list."""
    with open_store() as store:
        found = _recall(store, session_id, time.time())
    answer = {"similar_patterns": [compat_item(b) for b in found["bullets"]], "session_id": session_id,
              "pinned_at": found["pinned_at"], "expires_at": found["expires_at"]}
    if as_json:
        return emit_json(answer)
    if not answer["similar_patterns"]:
        say("Nothing to recall for session {}.", session_id)
        return
    table(f"Recalled for session {session_id}", BULLET_COLUMNS, [bullet_row(b) for b in found["bullets"]],
          body=BULLET_BODY, bare=BULLET_BARE)


COMMANDS = [search, patterns, top, domains, show, recall, cache_group]


@click.command()
@click.option("--limit", type=int, default=None, help="Embed at most this many bullets.")
@json_option
def embed(limit, as_json):
    """Compute the embeddings of every active or candidate lesson that lacks one. Lessons are
    embedded when they are written, so this is for stores from older versions, or after switching
    `retrieval.embedder`. Runs locally."""
    from ..embed import vectors

    cfg = load_config(None)
    state = vectors.status(None, cfg)
    if state["problem"]:
        fail(f"semantic search is not available: {state['problem']}")
    with open_store() as store:
        total = store.missing_vector_count(state["model"])
        if limit is not None:
            total = min(total, limit)
        if as_json:
            done = vectors.embed_missing(store, cfg=cfg, limit=limit)
        else:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task("Embedding lessons", total=total)
                done = vectors.embed_missing(store, cfg=cfg, limit=limit,
                                             progress=lambda n: bar.update(task, completed=n))
        if limit is None:
            from ..embed import write_time  # the full model, when installed and `retrieval.write_time` is on

            write_time.refresh_if_on(store, cfg)
    if as_json:
        return emit_json({"embedded": done, "model": state["model"]})
    say("Embedded {} with {}.", plural(done, "lesson"), state["model"])


COMMANDS.append(embed)
