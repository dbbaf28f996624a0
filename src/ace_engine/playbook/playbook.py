"""The playbook of one project (plus the global bullets), changed only through delta operations.

ADD, UPDATE (content / section / domains), TAG (helpful / harmful / neutral, implicit or explicit),
REMOVE (archive; history kept), MERGE (two into one, counters summed, provenance kept),
QUARANTINE / RESTORE for the review of suspicious lessons, and PROMOTE (a candidate becomes
active). Each operation is atomic and leaves a row in the change log.

Statuses: `active` (injected, searched, synced), `candidate` (learned once from weak evidence, or
DEMOTEd to re-check: kept and listed, never injected until it recurs or the user keeps it —
`learning/curator.py` has the promotion rule), `quarantined` (held for `ace review`), `archived`.

The lesson safety policy is enforced here, in the operations themselves, so no entry path can
forget it. It is two checks (`screen`): the provenance rule (`provenance.origin_concerns`: a risky
part — a named package, remote code, a host, a permission — first seen in text someone else wrote
waits for review) and the pattern list (`safety.concerns`). ADD of a flagged lesson stores it
*quarantined* (with its concerns in the provenance); UPDATE or MERGE that gives an active or
candidate bullet flagged content (or a risky part a foreign origin) quarantines it; PROMOTE of a
flagged candidate quarantines it instead; RESTORE of a flagged lesson to active needs
`reviewed=True` (the user approving it in `ace review`), which a delta passed to `apply` cannot
set. Origins (`provenance["origins"]`) are recorded here on every content write, never taken from
the caller: the learner's computed ones (`attribution`, set by `learning/pipeline.py` while it
curates) for the learner's own writes, else the default of the operation's source. Trusted hosts
are exact names: the project's git remote host plus what the caller passes from the user-level
`learning.trusted_hosts`.

One piece, past 400 lines, on purpose: every operation shares one invariant (the safety screen and a
change-log row in one transaction); split across files, that choke point would have several homes.

Cost: stdlib plus the playbook's own modules; one store transaction per operation (a batch, `with
playbook:`, refreshes domain counts once at its end).
"""

from __future__ import annotations

import re
import time

from ..core import project_langs
from ..core.errors import AceError
from ..core.escape import normalized, plain
from . import domains as domain_mod
from . import provenance as origin_rule
from . import safety, sections
from .confidence import confidence
from .ids import looks_like_id, new_id

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing `typing` costs hooks ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Literal

    from ..core._types import Bullet, BulletFields, Delta
    from ..core.project import Project
    from ..store.interfaces import Store

MAX_CONTENT_CHARS = 2000
STATUSES = ("active", "candidate", "quarantined", "archived")
_HOLDABLE = ("active", "candidate")  # statuses a flagged lesson leaves for quarantine
_SPACE = re.compile(r"\s+")
_KEY_JUNK = re.compile(r"[^\w\s]")


class PlaybookError(AceError, ValueError):
    """A delta that can't be applied; the message says why and what to do."""


def clean_content(content: str) -> str:
    """The lesson as stored: NFKC with no tag, bidi or zero-width characters (`escape.normalized`),
    control characters and ANSI sequences dropped (`escape.plain`): they would hide a word from the
    screens while the model reads straight through them; whitespace collapsed, length checked."""
    text = _SPACE.sub(" ", plain(normalized(str(content)))).strip()
    if not text:
        raise PlaybookError("a bullet needs some content")
    if len(text) > MAX_CONTENT_CHARS:
        raise PlaybookError(f"a bullet is at most {MAX_CONTENT_CHARS} characters (this one has {len(text)}); "
                            "split it into several short lessons")
    return text


def content_key(content: str) -> str:
    """Normalized content for exact-duplicate detection: case, punctuation and spacing ignored."""
    from ..redact.redactor import redact  # the stored content is redacted: so is its key

    return _SPACE.sub(" ", _KEY_JUNK.sub(" ", redact(content).lower())).strip()


def _origins_of(bullet: Bullet) -> dict[str, str]:
    """The origins a stored lesson recorded ({} for one stored before they were)."""
    origins = (bullet["provenance"] or {}).get("origins")
    return dict(origins) if isinstance(origins, dict) else {}


class Playbook:
    """Operations on the bullets of `project` (a `project.Project`, or None for global only)."""

    def __init__(self, store: Store, project: Project | None = None, *, extra_sections: tuple[str, ...] = (),
                 trusted_hosts: Iterable[str] = ()) -> None:
        self.store = store
        self.project = project
        self.extra_sections = extra_sections
        remote = safety.remote_host(getattr(project, "remote", None))
        self.trusted_hosts: frozenset[str] = safety.normalize_hosts(
            tuple(trusted_hosts) + ((remote,) if remote else ()))
        self.project_id: int | None = None
        if project is not None:
            self.project_id = store.ensure_project(project.key, project.root, project.remote, project.name, time.time())
        self._batch_depth = 0
        self._dirty_scopes: set[int | None] = set()
        self._written: dict[str, Bullet] = {}  # lessons whose content changed: embedded at the flush
        # The learner's origins for the lesson text it writes ({risky part: origin}); set by
        # `learning/pipeline.py` around one trajectory's curation, None otherwise.
        self.attribution: Callable[[str], Mapping[str, str]] | None = None

    # -- the safety policy ---------------------------------------------------------------------------

    def trust_hosts(self, hosts: Iterable[str]) -> None:
        """Also accept these exact host names in lessons. Pass only user-level settings
        (`learning.trusted_hosts` from the user's config), never anything read from a repository."""
        self.trusted_hosts = self.trusted_hosts | safety.normalize_hosts(hosts)

    def screen(self, content: str, provenance: Mapping[str, Any] | None = None, *,
               source: str | None = None) -> list[str]:
        """Why `content` must wait for review ([] when it may be injected): `safety.concerns` and `provenance.
        origin_concerns` on the origins `provenance` records, else the learner's `attribution`, else `source`'s default.
        A host the learner placed in the project's files (`provenance.project_hosts`) is the project's for both."""
        learned = provenance is None and self.attribution is not None  # origins the learner computes now
        if provenance is None:
            provenance = {"origins": dict(self.attribution(content))} if self.attribution is not None else {}
        flagged = safety.concerns(content, self.trusted_hosts | origin_rule.project_hosts(
            provenance, "learning" if learned else source))
        return flagged + origin_rule.origin_concerns(content, provenance, source, self.trusted_hosts, said=flagged)

    def _origins(self, content: str, before: Mapping[str, Any] | None, source: str) -> dict[str, str]:
        """The origins to record for `content` written by an operation of `source` (module doc)."""
        computed = self.attribution(content) if self.attribution is not None else None
        return origin_rule.record(content, before, source, computed,
                                  replace=origin_rule.default_origin(source) == "user")

    def _with_origins(self, provenance: Mapping[str, Any], origins: Mapping[str, str]) -> dict[str, Any]:
        """`provenance` with these origins (and, for foreign parts, where the learner saw them first)."""
        return origin_rule.with_origins(provenance, origins, getattr(self.attribution, "notes", None))

    # -- reading -------------------------------------------------------------------------------------

    def get(self, bullet_id: str) -> Bullet:
        bullet = self.store.get_bullet(bullet_id)
        if bullet is None:
            matches = self.store.find_by_prefix(bullet_id) if looks_like_id(bullet_id) else []
            if len(matches) == 1:
                bullet = self.store.get_bullet(matches[0])
            elif matches:
                raise PlaybookError(
                    f"`{bullet_id}` matches several bullets ({', '.join(matches)}); give more of the id")
        if bullet is None:
            raise PlaybookError(f"no bullet `{bullet_id}`; `ace patterns` lists them")
        return bullet

    def bullets(self, **filters: Any) -> list[Bullet]:
        return self.store.list_bullets(self.project_id, **filters)

    # -- batching: domain counts are refreshed once at the end ----------------------------------------

    def __enter__(self) -> Playbook:
        self._batch_depth += 1
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._batch_depth -= 1
        if self._batch_depth == 0:
            self._flush()
        return False

    def _touch(self, project_id: int | None, written: Bullet | None = None) -> None:
        self._dirty_scopes.add(project_id)
        if written is not None:
            self._written[written["id"]] = written
        if self._batch_depth == 0:
            self._flush()

    def _flush(self) -> None:
        if self._written:
            # Lessons are embedded when they are written, whatever path wrote them (the built-in
            # table: ~1.7 ms a lesson, no model); a failure leaves them to `embed_missing`.
            from ..embed import vectors

            written, self._written = list(self._written.values()), {}
            vectors.embed_bullets(self.store, written)
        if not self._dirty_scopes:
            return
        with self.store.transaction():
            for scope in self._dirty_scopes:
                self.store.refresh_domain_counts(scope)
        self._dirty_scopes.clear()

    # -- delta operations ------------------------------------------------------------------------------

    def apply(self, delta: Delta | Mapping[str, Any]) -> Bullet:
        """Apply one delta `{op: ADD|UPDATE|TAG|REMOVE|MERGE|QUARANTINE|RESTORE, …}`; returns the bullet.
        Any mapping is accepted (deltas come from files and models): a malformed one is a PlaybookError."""
        op = str(delta.get("op", "")).upper()
        # A delta can't claim `reviewed` (the user's approval), a team lesson's id and origin (only the
        # inbox passes those) nor whose it is: not the user's, so its risky parts are foreign.
        args = {k: v for k, v in delta.items() if k not in ("op", "reviewed", "bullet_id", "origin", "source")}
        args["source"] = "delta"
        handlers: dict[str, Callable[..., Bullet | tuple[Bullet, bool]]] = {
            "ADD": self.add, "UPDATE": self.update, "TAG": self.tag, "REMOVE": self.remove,
            "MERGE": self.merge, "QUARANTINE": self.quarantine, "RESTORE": self.restore,
        }
        if (handler := handlers.get(op)) is None:
            raise PlaybookError(f"unknown delta operation {delta.get('op')!r}")
        try:
            result = handler(**args)
        except TypeError as exc:
            import inspect  # only on this error path

            try:
                inspect.signature(handler).bind(**args)
            except TypeError:  # the delta's fields don't fit the operation
                raise PlaybookError(f"malformed {op} delta: {exc}") from exc
            raise
        return result[0] if isinstance(result, tuple) else result

    def add(self, content: str, section: str, *, domains: Iterable[str] | str | None = None, scope: str = "project",
            provenance: Mapping[str, Any] | None = None, helpful: int = 0, harmful: int = 0, status: str = "active",
            source: str = "user", reason: str | None = None, session_id: str | None = None,
            now: float | None = None, bullet_id: str | None = None,
            origin: str | None = None) -> tuple[Bullet, bool]:
        """ADD. Returns (bullet, created); an exact duplicate (same normalized content in the same
        scope) is not added again — the existing bullet comes back with created False. `bullet_id`
        and `origin` are for a lesson pulled from the team server (`team_client.inbox`): it keeps the
        server's id (an id already here comes back with created False) and is marked `team`."""
        now = now or time.time()
        if bullet_id is not None:
            if not looks_like_id(bullet_id):
                raise PlaybookError(f"{bullet_id!r} is not a lesson id (ctx-…); the lesson was not added")
            known = self.store.get_bullet(bullet_id)
            if known is not None:
                return known, False
        text = clean_content(content)
        section = sections.normalize(section, self.extra_sections)
        if status not in STATUSES:
            raise PlaybookError(f"unknown status {status!r}")
        project_id = None if scope == "global" else self.project_id
        if scope not in ("project", "global"):
            raise PlaybookError(f"scope is `project` or `global`, not {scope!r}")
        key = content_key(text)
        existing = self.store.find_by_content_key(key, project_id)
        if existing is not None:
            return existing, False
        provenance = dict(provenance or {})
        provenance.setdefault("source", source)
        # Recorded here, whatever the caller claimed: the learner's computed origins or the source's.
        provenance = self._with_origins(provenance, self._origins(text, None, source))
        concerns = self.screen(text, provenance, source=source)
        if concerns:
            provenance["concerns"] = concerns
            if status in _HOLDABLE:
                status = "quarantined"
            held = "quarantined: " + "; ".join(concerns)
            reason = f"{reason} — {held}" if reason else held
        if isinstance(domains, str):
            domains = [domains]
        names = [domain_mod.normalize(d) for d in domains or () if domain_mod.normalize(d)]
        if not names:  # none given, or none usable
            # Read in the project's ecosystem: "the tests" of an Elixir project are elixir-testing.
            languages = project_langs.detect(self.project.root) if self.project is not None and project_id else ()
            names = domain_mod.derive(text, provenance.get("files") or (), provenance.get("tools") or (),
                                      languages=languages)
        helpful, harmful = max(0, int(helpful)), max(0, int(harmful))
        bullet: Bullet = {
            "id": bullet_id or new_id(now), "project_id": project_id, "section": section, "content": text,
            "domains": list(dict.fromkeys(names)), "helpful": helpful, "harmful": harmful,
            "helpful_explicit": 0, "harmful_explicit": 0, "confidence": confidence(helpful, harmful),
            "status": status, "provenance": provenance, "content_key": key, "created_at": now, "updated_at": now,
            "last_used_at": None, "retrieval_count": 0, "origin": origin,
        }
        with self.store.transaction():
            self.store.insert_bullet(bullet)
            self.store.log_change(bullet["id"], "ADD",
                                  {"content": text, "section": section, "domains": bullet["domains"]},
                                  reason, source, session_id, now)
        self._touch(project_id, bullet)
        return bullet, True

    def update(self, id: str, *, content: str | None = None, section: str | None = None,
               domains: Iterable[str] | str | None = None, provenance: Mapping[str, Any] | None = None,
               source: str = "user", reason: str | None = None, session_id: str | None = None,
               now: float | None = None) -> Bullet:
        """UPDATE content / section / domains, or the provenance (the curator adds the evidence of
        each new observation of a lesson; the log notes that it changed, not the whole of it)."""
        now = now or time.time()
        bullet = self.get(id)
        fields: BulletFields = {}
        if content is not None:
            text = clean_content(content)
            if text != bullet["content"]:
                fields["content"] = text
                fields["content_key"] = content_key(text)
        if section is not None:
            normalized = sections.normalize(section, self.extra_sections)
            if normalized != bullet["section"]:
                fields["section"] = normalized
        if domains is not None:
            if isinstance(domains, str):
                domains = [domains]
            names = list(dict.fromkeys(d for d in (domain_mod.normalize(x) for x in domains) if d)) or ["general"]
            if names != bullet["domains"]:
                fields["domains"] = names
        stored = bullet["provenance"] or {}
        new_prov = dict(provenance) if provenance is not None else dict(stored)
        # Origins are the playbook's record (never the caller's): recomputed when the content or
        # the learner's view of it changes, else kept as they were.
        if "content" in fields or self.attribution is not None:
            origins = self._origins(fields.get("content", bullet["content"]), stored, source)
        else:
            origins = _origins_of(bullet)
        new_prov = self._with_origins(new_prov, origins)
        if new_prov != stored:
            fields["provenance"] = new_prov
        if "content" in fields:
            self._hold_if_flagged(bullet, fields, source)
        elif origins != _origins_of(bullet):
            self._hold_if_foreign(bullet, fields, source)
        if not fields:
            return bullet
        fields["updated_at"] = now
        quiet = ("updated_at", "content_key", "provenance")
        row: Mapping[str, Any] = bullet
        before = {k: row[k] for k in fields if k not in quiet}
        after = {k: v for k, v in fields.items() if k not in quiet}
        detail = {"before": before, "after": after, **({"provenance": "updated"} if "provenance" in fields else {})}
        with self.store.transaction():
            self.store.update_bullet(bullet["id"], fields)
            self.store.log_change(bullet["id"], "UPDATE", detail, reason, source, session_id, now)
        updated: Bullet = {**bullet, **fields}
        self._touch(bullet["project_id"], updated if "content" in fields else None)
        return updated

    def tag(self, id: str, tag: str, *, explicit: bool = False, count: int = 1, source: str = "user",
            reason: str | None = None, session_id: str | None = None, now: float | None = None) -> Bullet:
        """TAG helpful / harmful (explicit marks weigh 3×) or neutral (recorded, counters unchanged)."""
        now = now or time.time()
        tag = tag.lower()
        if tag not in ("helpful", "harmful", "neutral"):
            raise PlaybookError(f"tag is helpful, harmful or neutral, not {tag!r}")
        count = max(1, int(count))
        bullet = self.get(id)
        counters = [bullet["helpful"], bullet["harmful"], bullet["helpful_explicit"], bullet["harmful_explicit"]]
        if tag != "neutral":
            counters[(tag == "harmful") + 2 * explicit] += count  # the column the tag counts in
        helpful, harmful, helpful_explicit, harmful_explicit = counters
        fields: BulletFields = {
            "helpful": helpful, "harmful": harmful, "helpful_explicit": helpful_explicit,
            "harmful_explicit": harmful_explicit, "confidence": confidence(*counters) if tag != "neutral"
            else bullet["confidence"], "updated_at": now,
        }
        with self.store.transaction():
            self.store.update_bullet(bullet["id"], fields)
            self.store.log_change(bullet["id"], "TAG", {"tag": tag, "explicit": explicit, "count": count,
                                                        "confidence": fields["confidence"]},
                                  reason, source, session_id, now)
        return {**bullet, **fields}

    def _hold_if_flagged(self, bullet: Bullet, fields: BulletFields, source: str) -> None:
        """New content for `bullet`: note its concerns, and quarantine an active bullet it flags."""
        provenance = fields.get("provenance") or bullet["provenance"] or {}
        self._hold(bullet, fields, self.screen(fields["content"], provenance, source=source))

    def _hold_if_foreign(self, bullet: Bullet, fields: BulletFields, source: str) -> None:
        """Same content, origins changed (another observation saw a part in someone else's text)."""
        provenance = fields.get("provenance") or bullet["provenance"] or {}
        self._hold(bullet, fields, origin_rule.origin_concerns(bullet["content"], provenance, source,
                                                               self.trusted_hosts))

    def _hold(self, bullet: Bullet, fields: BulletFields, concerns: list[str]) -> None:
        if not concerns:
            return
        fields["provenance"] = {**(fields.get("provenance") or bullet["provenance"] or {}), "concerns": concerns}
        if bullet["status"] in _HOLDABLE:
            fields["status"] = "quarantined"

    def _set_status(self, id: str, status: str, op: str, source: str, reason: str | None,
                    session_id: str | None, now: float | None, extra: Mapping[str, Any] | None = None,
                    provenance: dict[str, Any] | None = None) -> Bullet:
        now = now or time.time()
        bullet = self.get(id)
        if bullet["status"] == status:
            return bullet
        fields: BulletFields = {"status": status, "updated_at": now}
        if provenance is not None:  # written with the status change (an approval records the origins)
            fields["provenance"] = provenance
        with self.store.transaction():
            self.store.update_bullet(bullet["id"], fields)
            self.store.log_change(bullet["id"], op, {"from": bullet["status"], "to": status, **(extra or {})},
                                  reason, source, session_id, now)
        self._touch(bullet["project_id"])
        return {**bullet, **fields}

    def remove(self, id: str, *, source: str = "user", reason: str | None = None,
               session_id: str | None = None, now: float | None = None) -> Bullet:
        """REMOVE: archive the bullet. It stops being injected; its history stays."""
        return self._set_status(id, "archived", "REMOVE", source, reason, session_id, now)

    def demote(self, id: str, *, source: str = "anchors", reason: str | None = None,
               session_id: str | None = None, now: float | None = None) -> Bullet:
        """DEMOTE an active lesson to a candidate to re-check: listed, not injected until PROMOTEd again."""
        return self._set_status(id, "candidate", "DEMOTE", source, reason, session_id, now)

    def quarantine(self, id: str, *, source: str = "learning", reason: str | None = None,
                   session_id: str | None = None, now: float | None = None) -> Bullet:
        return self._set_status(id, "quarantined", "QUARANTINE", source, reason, session_id, now)

    def restore(self, id: str, *, source: str = "user", reason: str | None = None,
                session_id: str | None = None, now: float | None = None, reviewed: bool = False,
                status: str = "active") -> Bullet:
        """Make a bullet active again (or, `status="candidate"`, a candidate again: an archived
        candidate observed anew). A lesson the safety policy flags becomes active only with
        `reviewed=True`: a person approved it (`ace review --approve`)."""
        if status not in _HOLDABLE:
            raise PlaybookError(f"a bullet is restored as active or candidate, not {status!r}")
        bullet = self.get(id)
        concerns = self.screen(bullet["content"], bullet["provenance"] or {})
        if concerns and not reviewed and status == "active":
            raise PlaybookError(f"`{id}` is held back ({'; '.join(concerns)}); only `ace review --approve {id}` "
                                "makes it active")
        approved = None
        if reviewed and status == "active":
            # The user saw the parts and their origins and approved them: from now on they are theirs.
            prov = bullet["provenance"] or {}
            approved = self._with_origins(prov, origin_rule.record(bullet["content"], prov, "review", None,
                                                                   replace=True))
        return self._set_status(id, status, "RESTORE", source, reason, session_id, now, provenance=approved)

    def promote(self, id: str, *, source: str = "learning", reason: str | None = None,
                session_id: str | None = None, now: float | None = None) -> Bullet:
        """PROMOTE a candidate to active: it recurred (the curator's rule) or the user keeps it
        (`ace keep`, source `user`). Screened like every entry: a candidate the safety policy flags
        (it may be older than a rule) is quarantined instead, its concerns in the provenance."""
        bullet = self.get(id)
        if bullet["status"] != "candidate":
            raise PlaybookError(f"`{bullet['id']}` is {bullet['status']}, not a candidate")
        concerns = self.screen(bullet["content"], bullet["provenance"] or {})
        if not concerns:
            return self._set_status(bullet["id"], "active", "PROMOTE", source, reason, session_id, now)
        now = now or time.time()
        held = "held back instead of promoted: " + "; ".join(concerns)
        fields: BulletFields = {"status": "quarantined", "updated_at": now,
                                "provenance": {**(bullet["provenance"] or {}), "concerns": concerns}}
        with self.store.transaction():
            self.store.update_bullet(bullet["id"], fields)
            self.store.log_change(bullet["id"], "QUARANTINE", {"from": "candidate", "to": "quarantined"},
                                  f"{reason} — {held}" if reason else held, source, session_id, now)
        self._touch(bullet["project_id"])
        return {**bullet, **fields}

    def merge(self, keep: str, other: str, *, content: str | None = None, source: str = "learning",
              reason: str | None = None, session_id: str | None = None, now: float | None = None) -> Bullet:
        """MERGE `other` into `keep`: counters summed, domains, provenance and situations united, `other`
        archived."""
        now = now or time.time()
        a, b = self.get(keep), self.get(other)
        if a["id"] == b["id"]:
            raise PlaybookError("cannot merge a bullet with itself")
        provenance = dict(a["provenance"])
        provenance["merged"] = list(provenance.get("merged") or []) + [
            {"id": b["id"], "content": b["content"], "provenance": b["provenance"]}]
        text = a["content"] if content is None else clean_content(content)
        # The kept lesson's parts: what either lesson recorded (`provenance.stronger`), then this write.
        before = _origins_of(b)
        for part, origin in _origins_of(a).items():
            before[part] = origin_rule.stronger(before.get(part), origin)
        provenance = self._with_origins(provenance, self._origins(text, {"origins": before}, source))
        fields: BulletFields = {
            "helpful": a["helpful"] + b["helpful"], "harmful": a["harmful"] + b["harmful"],
            "helpful_explicit": a["helpful_explicit"] + b["helpful_explicit"],
            "harmful_explicit": a["harmful_explicit"] + b["harmful_explicit"],
            "retrieval_count": a["retrieval_count"] + b["retrieval_count"],
            "domains": list(dict.fromkeys(a["domains"] + b["domains"])), "provenance": provenance,
            "content": text, "content_key": a["content_key"] if content is None else content_key(text),
        }
        fields["confidence"] = confidence(fields["helpful"], fields["harmful"], fields["helpful_explicit"],
                                          fields["harmful_explicit"])
        if text != a["content"]:
            self._hold_if_flagged(a, fields, source)
        else:
            self._hold_if_foreign(a, fields, source)
        fields["updated_at"] = now
        with self.store.transaction():
            self.store.update_bullet(a["id"], fields)
            self.store.update_bullet(b["id"], {"status": "archived", "updated_at": now})
            # The survivor is found in the moments either lesson served (retrieval/situations.py).
            moved = self.store.move_situations(b["id"], a["id"])
            self.store.log_change(a["id"], "MERGE", {"absorbed": b["id"], "content": text}, reason, source, session_id,
                                  now)
            self.store.log_change(b["id"], "REMOVE", {"merged_into": a["id"], "from": b["status"], "to": "archived"},
                                  reason, source, session_id, now)
        # Written again when its text changed or it gained situations: its vector, folded with them, follows.
        self._touch(a["project_id"], {**a, **fields} if text != a["content"] or moved else None)
        self._touch(b["project_id"])
        return {**a, **fields}
