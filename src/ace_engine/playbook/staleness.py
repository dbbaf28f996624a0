"""Lessons re-checked against what they rest on: only what changed since the last check.

Contract: `record(store, bullet, root, now)` finds a lesson's anchors (`anchors.extract`) and keeps
them; `check(store, project_id, root, now)` stats the project's anchor files (one row each in
`anchor_files`, never a scan of the repository), re-reads only those whose stamp (mtime, size)
moved, and compares each anchor living there with the value it had when the lesson was written
or last confirmed:

- gone (a Makefile target, a script, a file, a locked package, a config key no longer there) →
  the lesson is archived (REMOVE, source `anchors`), the reason in its history ("`gen` is no
  longer a Makefile target"). An archive is a delta like any other: the team sync sends it.
- changed (a recipe or script rewritten, a dependency's major version, a config value, a CI
  job's block, a symbol's definition line; a symbol no longer in the file that held it — moved or
  renamed, not proven gone) → the lesson is *to re-check*: by default (setting `inject.recheck` =
  caveat) it stays active and is injected with what changed beside it (the anchor's state and
  detail, `store.rechecks`); with `inject.recheck` = withhold it is demoted to a candidate
  (DEMOTE): not injected, listed by `ace patterns --status candidate`. Either way it is confirmed
  again by a later session's evidence (the curator re-observes it: `reconfirm`), by the model
  (`learning/recheck.py`) or by `ace keep`, which take its anchors as they are then. Why caveat:
  in the replay on real histories (bench/anchors_history.py) the lessons flagged changed were still
  true; hiding them lost them, a caveat costs a wrong one a line the agent can check.
- recheck (the anchored thing changed but kept all it was: options appended to a script, an item
  added to a config list, a line added to a recipe, a definition line that grew) → to re-check
  without a caveat and without hiding: nothing the lesson said of it can have become untrue, so it
  is only offered to the next confirmation (`ace show` lists the anchor's state).
- an anchor back as it was (a revert) → ok again, and a lesson this check demoted is promoted back.

A check stops re-reading files once `deadline` (a `time.perf_counter()` value) passes; the files
left keep their old stamp and are re-read by the next check. Acting on what it found (archiving,
demoting) stops there too: the anchors' states are written, the project is marked pending
(`session_state`, key `PENDING`) and the next check acts on the rest (`store.unsettled_anchors`).
Each check reads one file and acts on one lesson at least, so a slow machine still gets there.
Commands (`kind` command) are not checked here: a later session's evidence does that
(`learning/contradiction.py`).

Cost: at SessionStart with nothing changed, one indexed read of `anchor_files` and one lstat per
anchor file; a changed file costs one bounded read and parse, and one indexed read of its anchors.
Stdlib only; the playbook's operations are imported only when a lesson is archived or demoted.
"""

import time

from . import anchor_files as af  # stamps; its patterns compile on first use

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Any

    from ..store.interfaces import Store
    from . import anchors as anchor_mod

SOURCE = "anchors"
PENDING = "anchors_pending"  # session_state key of `ace:project:N`: a check stopped acting at its deadline
UNSETTLED = 200  # anchors a pending check reads back: more than it acts on in its time
MAX_FILES = 2000  # anchor files stat'ed per check (a project's lessons name far fewer)
_WHAT = {"make": "a Makefile target", "script": "a package.json script", "just": "a justfile recipe",
         "mix": "a mix alias", "ci": "a CI job", "dep": "a locked dependency", "config": "a config key",
         "flag": "an option of", "symbol": "in", "file": "a file"}


def record(store: "Store", bullet: "dict[str, Any]", root: "str | None", now: float,
           reader: "anchor_mod.Reader | None" = None) -> "list[dict[str, Any]]":
    """Find and keep the anchors of `bullet` (its content read against the project at `root`)."""
    if not root or bullet.get("project_id") is None:
        return []
    from . import anchors as anchor_mod  # its patterns compile at import: only where a lesson is read
    prov = bullet.get("provenance")
    prov = prov if isinstance(prov, dict) else {}
    files = [str(f) for f in (prov.get("files") or []) if isinstance(f, str)]
    found = anchor_mod.extract(str(bullet["content"]), root, files, reader)
    store.put_anchors(bullet["id"], bullet["project_id"], found, anchor_mod.stamps(root, found), now)
    return found


def withholds(cfg: "Any") -> bool:
    """Does the setting `inject.recheck` withhold a lesson to re-check (else: caveat, the default)?"""
    return str(cfg["inject.recheck"]).strip().lower() == "withhold"


def judge(anchor: "dict[str, Any]", current: "str | None") -> "tuple[str, str | None]":
    """(state, detail) of one anchor whose value is now `current` (None: not there): ok, gone,
    changed (the anchored thing itself changed), or recheck (it changed but kept all it was: only
    additions, which cannot make what a lesson said of it untrue)."""
    kind, name, file, was = anchor["kind"], anchor["name"], anchor["file"], anchor.get("value")
    if current is None:
        if kind == "symbol":
            return "changed", f"`{name}` is no longer in {file} (moved or renamed?)"
        if kind == "file":
            return "gone", f"`{file}` no longer exists"
        if kind == "flag":
            return "gone", f"`{name}` is no longer an option of {file}"
        return "gone", f"`{name}` is no longer {_WHAT.get(kind, kind)}" + (
            "" if kind in ("make", "script") and file in ("Makefile", "package.json") else f" in {file}")
    if kind == "dep":
        if af.major(current) != af.major(was):
            return "changed", f"`{name}` went {was} → {current} in {file}"
        return "ok", None
    if kind == "symbol" and was and current != was:  # was "": recorded before definitions were (presence only)
        if af.kept(was, current):
            return "recheck", f"the definition of `{name}` in {file} grew: `{_short(was)}` → `{_short(current)}`"
        return "changed", (f"the definition of `{name}` changed in {file}: `{_short(was)}` → `{_short(current)}`"
                           if current else f"`{name}` is no longer defined in {file} (moved?)")
    if kind in ("make", "script", "just", "mix", "config", "ci") and (was or "") != current:
        what = {"make": "target's recipe", "script": "script", "just": "recipe", "mix": "alias",
                "config": "value", "ci": "CI job"}[kind]
        shown = "" if kind == "ci" else f": `{_short(was)}` → `{_short(current)}`"
        if kind != "ci" and af.kept(was, current):  # a CI job is kept as a digest: any change is a change
            return "recheck", f"the `{name}` {what} grew in {file}, keeping all it was{shown}"
        return "changed", f"the `{name}` {what} changed in {file}{shown}"
    return "ok", None


def _short(text: "str | None") -> str:
    text = (text or "").replace("`", "'")
    return text if len(text) <= 60 else text[:57] + "..."


def check(store: "Store", project_id: "int | None", root: "str | None", now: float, *,
          deadline: "float | None" = None, withhold: bool = False) -> "dict[str, int]":
    """Re-check the anchors whose files changed since the last check (module doc); the counts.
    `withhold` (setting `inject.recheck` = withhold): a lesson whose anchor changed is demoted, not
    injected with a caveat."""
    out = {"files": 0, "changed_files": 0, "anchors": 0, "archived": 0, "demoted": 0, "restored": 0,
           "caveated": 0, "recheck": 0}
    if project_id is None or not root:
        return out
    known = store.anchor_stamps(project_id)
    out["files"] = len(known)
    moved: dict[str, str | None] = {}
    for file in list(known)[:MAX_FILES]:
        st = af.stamp(root, file)
        if st != known[file]:
            moved[file] = st
    owner = f"ace:project:{project_id}"
    pending = store.get_state(owner, PENDING) is not None  # an earlier check ran out of time acting
    if not moved and not pending:
        return out
    # A file still there keeps its `file` anchors ok: only what lives in it is re-judged (a file a
    # thousand lessons name changes often; reading their rows back was most of a check's time).
    present = [f for f, st in moved.items() if st is not None]
    rows = store.anchors_in(project_id, list(moved), present) if moved else []
    by_file: dict[str, list[Any]] = {}
    for row in rows:
        by_file.setdefault(row["file"], []).append(row)
    from .anchor_files import Reader

    reader = Reader(root)
    seen: dict[str, str | None] = {}
    updates: list[dict[str, Any]] = []
    verdicts: dict[str, list[tuple[str, str | None]]] = {}
    status: dict[str, str] = {}
    for file, st in moved.items():
        if seen and deadline is not None and time.perf_counter() > deadline:
            break  # the rest keeps its old stamp: the next check re-reads it (each check reads one at least)
        seen[file] = st
        for row in by_file.get(file, ()):
            state, detail = judge(row, reader.value(row["kind"], row["name"], file))
            status[row["bullet_id"]] = row.get("status") or "active"
            verdicts.setdefault(row["bullet_id"], []).append((state, detail))
            if state != row["state"] or detail != row["detail"]:
                updates.append({**row, "state": state, "detail": detail})
    out["changed_files"], out["anchors"] = len(seen), sum(len(v) for v in verdicts.values())
    if updates:
        store.set_anchor_states(updates, now)
    unread = [f for f in seen if f not in by_file]
    live = store.live_files(project_id, unread) if unread else set()
    forget = [f for f in unread if f not in live]
    store.set_file_stamps(project_id, {f: s for f, s in seen.items() if f in by_file or f in live}, now, forget)
    more = False
    if pending:  # what it found and did not act on: its anchors' states are written, the lessons wait
        judged = {(r["bullet_id"], r["kind"], r["name"], r["file"]) for f in seen for r in by_file.get(f, ())}
        cap = UNSETTLED if deadline is not None else 1_000_000  # the worker's check, unhurried, takes all
        unsettled = store.unsettled_anchors(project_id, ("gone", "changed") if withhold else ("gone",), cap)
        more = len(unsettled) >= cap
        for row in unsettled:
            if (row["bullet_id"], row["kind"], row["name"], row["file"]) not in judged:
                status[row["bullet_id"]] = row.get("status") or "active"
                verdicts.setdefault(row["bullet_id"], []).append((row["state"], row["detail"]))
    done = _act(store, verdicts, status, now, out, withhold, deadline) and not more
    if not done or pending:
        store.set_state(owner, PENDING, None if done else repr(now))
    return out


def _act(store: "Store", verdicts: "dict[str, list[tuple[str, str | None]]]", status: "dict[str, str]",
         now: float, out: "dict[str, int]", withhold: bool, deadline: "float | None" = None) -> bool:
    """Archive the lessons with an anchor gone; for one changed, demote it (withhold) or leave it
    injected with its caveat (the anchor's state and detail, written above); promote back a lesson
    this check demoted whose anchors all hold again. A lesson whose anchors only grew (recheck)
    stays as it is, counted: it is in the next batch to confirm, not hidden. Past `deadline` it
    stops (a file deleted that a thousand lessons name): False, and the next check goes on."""
    todo = {b: v for b, v in verdicts.items() if any(s != "ok" for s, _ in v) or status[b] == "candidate"}
    if not todo:
        return True
    from .playbook import Playbook, PlaybookError

    pb = Playbook(store, None)
    with pb:
        acted = 0
        for bullet_id, found in todo.items():
            gone = [d or "" for s, d in found if s == "gone"]
            changed = [d or "" for s, d in found if s == "changed"]
            writes = gone or (changed and withhold) or (not changed and status[bullet_id] == "candidate")
            if writes and acted and deadline is not None and time.perf_counter() > deadline:
                return False  # each check acts on one lesson at least: a slow machine still gets there
            acted += bool(writes)
            out["recheck"] += not gone and not changed and any(s == "recheck" for s, _ in found)
            try:
                if gone:
                    pb.remove(bullet_id, source=SOURCE, reason="stale: " + "; ".join(dict.fromkeys(gone))[:400],
                              now=now)
                    out["archived"] += 1
                elif changed and status[bullet_id] == "active" and withhold:
                    pb.demote(bullet_id, reason="to re-check: " + "; ".join(dict.fromkeys(changed))[:400], now=now)
                    out["demoted"] += 1
                elif changed:
                    out["caveated"] += status[bullet_id] == "active"
                elif status[bullet_id] == "candidate" and demoted_by_check(store, bullet_id) and all(
                        a["state"] not in ("gone", "changed") for a in store.anchors_of(bullet_id)):
                    # every anchor holds again, not only this check's: one in another file may still be changed
                    pb.promote(bullet_id, source=SOURCE, reason="what it rests on is as it was again", now=now)
                    out["restored"] += 1
            except PlaybookError:
                continue
    return True


def demoted_by_check(store: "Store", bullet_id: str) -> bool:
    """Is this candidate one a staleness check (or a contradicting session) demoted?"""
    last = next((c for c in store.changes(bullet_id=bullet_id, limit=20)
                 if c["op"] in ("DEMOTE", "PROMOTE", "ADD", "RESTORE")), None)
    return bool(last and last["op"] == "DEMOTE")


def reconfirm(store: "Store", bullet: "dict[str, Any]", root: "str | None", now: float) -> "list[dict[str, Any]]":
    """The lesson is confirmed (a session's evidence, `ace keep`): its anchors are found again as
    the project holds them now, so the next check compares with today's values."""
    return record(store, bullet, root, now)
