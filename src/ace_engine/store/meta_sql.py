"""Store-wide facts behind the store interface: the schema version and the table `meta`.

Contract: `policy_version()` is the lesson safety policy version the active lessons were last
screened under (see `policy_version.py`), 0 when none was recorded; `set_policy_version` records
it after a re-screen. `schema_version()` is the migration the store is at (`PRAGMA user_version`).

Cost: `policy_version()` is one primary-key lookup — the injecting hooks ask it every time.
"""

from __future__ import annotations

from ._base import StoreBase
from .policy_version import META_KEY


class MetaSQL(StoreBase):
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def policy_version(self) -> int:
        """The version recorded by the last re-screen (or at creation); 0 when none was."""
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
        try:
            return int(row[0]) if row else 0
        except (TypeError, ValueError):  # unreadable: as if never screened
            return 0

    def set_policy_version(self, version: int) -> None:
        with self.transaction():
            self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)"
                              " ON CONFLICT(key) DO UPDATE SET value=excluded.value", (META_KEY, str(int(version))))
