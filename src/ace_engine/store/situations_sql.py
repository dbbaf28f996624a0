"""Lesson situations (schema migration 9): the moments a lesson serves, kept beside it as search keys.

Contract: `add_situations` records (kind, text, key) items for one lesson — a text already seen for
that lesson is refreshed (seen + 1, last seen now), not duplicated — and keeps at most `cap` per
lesson, the most often and most recently seen; every text passes the store's redacting connection
like any other write. `situation_vectors` / `situation_texts` read them back for the lessons a
search is scoring; `situations_missing_vectors` / `put_situation_vectors` let the embedder fill
them in; `move_situations` hands a merged-away lesson's situations to the one that absorbed it.
`purge_bullets` (playbook_sql) deletes a lesson's situations with it. SQL stays here.

Cost: each write is a few statements on an index of (bullet_id, text_key); a search reads the rows
of its ≤ ~50 candidate lessons by primary-key lookups (≤ 8 each), well under a millisecond.
"""

from __future__ import annotations

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .records import SituationRow

_CHUNK = 500


class SituationsSQL(StoreBase):
    def add_situations(self, bullet_id: str, items: Iterable[tuple[str, str, str]], *, session_id: str | None,
                       now: float, cap: int) -> int:
        """Record (kind, text, text_key) situations of a lesson; returns how many rows are new.
        Afterwards the lesson keeps its `cap` situations seen most often, then most recently."""
        added = 0
        with self.transaction():
            for kind, text, key in items:
                cur = self.conn.execute(
                    "UPDATE lesson_situations SET seen = seen + 1, last_seen_at = ?,"
                    " session_id = coalesce(?, session_id) WHERE bullet_id = ? AND text_key = ?"
                    " AND coalesce(session_id, '') != coalesce(?, '')",
                    (now, session_id, bullet_id, key, session_id))
                if cur.rowcount:
                    continue
                cur = self.conn.execute(
                    "INSERT OR IGNORE INTO lesson_situations(bullet_id, kind, text, text_key, session_id, seen,"
                    " created_at, last_seen_at) VALUES (?,?,?,?,?,1,?,?)",
                    (bullet_id, kind, text, key, session_id, now, now))
                added += cur.rowcount
            self._keep_at_most(bullet_id, cap)
        return added

    def move_situations(self, from_id: str, to_id: str) -> int:
        """Give lesson `to_id` the situations of `from_id` (a MERGE: the survivor is found in the
        moments either lesson served). A text both have is one row seen as often as both together;
        afterwards `to_id` keeps as many as the larger of the two had (each within its writer's cap, so
        the survivor is too), those seen most often, then most recently. Returns how many of
        `from_id`'s rows moved or were counted."""
        with self.transaction():
            cap = self.conn.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM lesson_situations"
                                    " WHERE bullet_id IN (?, ?) GROUP BY bullet_id)", (from_id, to_id)).fetchone()[0]
            if not cap:
                return 0
            theirs = ("(SELECT {} FROM lesson_situations o WHERE o.bullet_id = ?"
                      " AND o.text_key = lesson_situations.text_key)")
            self.conn.execute(
                f"UPDATE lesson_situations SET seen = seen + {theirs.format('o.seen')},"
                f" last_seen_at = max(last_seen_at, {theirs.format('o.last_seen_at')})"
                " WHERE bullet_id = ? AND text_key IN (SELECT text_key FROM lesson_situations WHERE bullet_id = ?)",
                (from_id, from_id, to_id, from_id))
            counted = self.conn.execute(
                "DELETE FROM lesson_situations WHERE bullet_id = ? AND text_key IN"
                " (SELECT text_key FROM lesson_situations WHERE bullet_id = ?)", (from_id, to_id)).rowcount
            moved = self.conn.execute("UPDATE lesson_situations SET bullet_id = ? WHERE bullet_id = ?",
                                      (to_id, from_id)).rowcount
            self._keep_at_most(to_id, cap)
        return counted + moved

    def _keep_at_most(self, bullet_id: str, cap: int) -> None:
        self.conn.execute(
            "DELETE FROM lesson_situations WHERE bullet_id = ? AND id NOT IN (SELECT id FROM lesson_situations"
            " WHERE bullet_id = ? ORDER BY seen DESC, last_seen_at DESC, id DESC LIMIT ?)",
            (bullet_id, bullet_id, max(0, int(cap))))

    def situations(self, bullet_id: str) -> list[SituationRow]:
        """A lesson's situations, most often and most recently seen first."""
        return self._rows(
            "SELECT id, bullet_id, kind, text, session_id, seen, created_at, last_seen_at FROM lesson_situations"
            " WHERE bullet_id = ? ORDER BY seen DESC, last_seen_at DESC, id DESC", (bullet_id,))

    def situation_texts(self, bullet_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(bullet id, text) of those lessons' situations."""
        out: list[tuple[str, str]] = []
        for start in range(0, len(bullet_ids), _CHUNK):
            chunk = list(bullet_ids[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            out += self.conn.execute(f"SELECT bullet_id, text FROM lesson_situations WHERE bullet_id IN ({marks})",
                                     chunk).fetchall()
        return out

    def situation_vectors(self, model: str, bullet_ids: Sequence[str]) -> list[tuple[str, bytes]]:
        """(bullet id, vector) of those lessons' situations embedded by `model`."""
        out: list[tuple[str, bytes]] = []
        for start in range(0, len(bullet_ids), _CHUNK):
            chunk = list(bullet_ids[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            out += self.conn.execute(
                f"SELECT bullet_id, vector FROM lesson_situations WHERE model = ? AND bullet_id IN ({marks})"
                " AND vector IS NOT NULL", [model, *chunk]).fetchall()
        return out

    def situations_missing_vectors(self, model: str, limit: int = 1000) -> list[tuple[int, str]]:
        """(situation id, text) of situations without a vector of `model`."""
        return self.conn.execute(
            "SELECT id, text FROM lesson_situations WHERE model IS NULL OR model != ? OR vector IS NULL"
            " ORDER BY id LIMIT ?", (model, limit)).fetchall()

    def put_situation_vectors(self, model: str, items: Iterable[tuple[int, bytes]]) -> None:
        with self.transaction():
            self.conn.executemany("UPDATE lesson_situations SET model = ?, vector = ? WHERE id = ?",
                                  [(model, blob, sid) for sid, blob in items])

    def bullets_missing_folds(self, model: str, fold_model: str, written: str | None = None) -> list[str]:
        """Active lessons with embedded situations (or a current `written` vector: the full model's,
        embed/write_time.py) and a current `model` vector but no current `fold_model` one (their
        content changed since, or the fold was never written)."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT b.id FROM bullets b"
            " JOIN bullet_vectors v ON v.bullet_id = b.id AND v.model = ? AND v.content_key = b.content_key"
            " LEFT JOIN bullet_vectors f ON f.bullet_id = b.id AND f.model = ? AND f.content_key = b.content_key"
            " WHERE b.status = 'active' AND f.bullet_id IS NULL AND (EXISTS (SELECT 1 FROM lesson_situations s"
            " WHERE s.bullet_id = b.id AND s.model = ?) OR EXISTS (SELECT 1 FROM bullet_vectors w"
            " WHERE w.bullet_id = b.id AND w.model = ? AND w.content_key = b.content_key))",
            (model, fold_model, model, written or ""))]
