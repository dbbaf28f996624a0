"""The store-side redaction choke point: a connection whose writes cannot carry a secret.

Contract: `RedactingConnection` wraps a DB-API connection (the `_sqlite3` one of `SQLiteStore`)
and behaves exactly like it, except that every `str` parameter of a writing statement
(`INSERT`, `UPDATE`, `REPLACE`, `UPSERT`, also behind a `WITH` clause) is passed through
`redact.redactor.redact` first — content, ids and names alike — so no write path (hooks, `ace add`,
`ace import`, `ace learn --stdin`, learning runs, job errors, a path added tomorrow) can forget
it. Integers outside SQLite's 64-bit range, which would make the driver raise `OverflowError`
and lose the whole record, are stored as text with a marker instead. Reads are untouched.
Because every string written is redacted, a lookup by a raw value must redact it too:
`redact` is idempotent, so `redact(raw)` finds what was stored.

Cost: one dict lookup per statement to classify its SQL (cached by string), then one `redact`
per str parameter; the hook's records arrive already redacted, and a string the redactor
produced is recognised by identity (`redact.redactor.is_clean`) and not scanned again.
"""

from __future__ import annotations

from ..redact.redactor import redact

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import Any

    Params = Sequence[Any] | Mapping[str, Any]

_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
_WRITES = ("INSERT", "UPDATE", "REPLACE", "UPSERT")
_kinds: dict[str, bool] = {}  # SQL text → is it a write? (statements are mostly constants)


def is_write(sql: str) -> bool:
    known = _kinds.get(sql)
    if known is None:
        head = sql.lstrip(" \t\r\n(").upper()
        if head.startswith("WITH"):
            known = any(w in head for w in _WRITES)
        else:
            known = head.startswith(_WRITES)
        if len(_kinds) < 4096:
            _kinds[sql] = known
    return known


def clean_param(value: Any) -> Any:
    """A parameter as it may be stored: str redacted, out-of-range int as marked text."""
    if value.__class__ is str:
        return redact(value)
    if value.__class__ is int and not _INT_MIN <= value <= _INT_MAX:
        digits = str(value) if value.bit_length() < 4000 else f"{value.bit_length()}-bit integer"
        return f"{digits[:60]} [ace: integer out of range, stored as text]"
    return value


def clean_params(params: Params) -> Params:
    if params is None:
        return params
    if isinstance(params, dict):
        return {k: clean_param(v) for k, v in params.items()}
    return tuple(clean_param(v) for v in params)


class RedactingConnection:
    """Delegates everything to `conn`; writing statements get redacted parameters."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        if params and is_write(sql):
            params = clean_params(params)
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, seq: Iterable[Params]) -> sqlite3.Cursor:
        if is_write(sql):
            seq = (clean_params(p) for p in seq)
        return self._conn.executemany(sql, seq)

    def executescript(self, script: str) -> sqlite3.Cursor:
        # Scripts carry no parameters; literals in them are written by our own migrations.
        return self._conn.executescript(script)

    def cursor(self, *args: Any, **kwargs: Any) -> _RedactingCursor:
        # A raw cursor would bypass the choke point: hand out one that also redacts.
        return _RedactingCursor(self._conn.cursor(*args, **kwargs))

    # Named here (not only through `__getattr__`) so the type checker knows what the store uses.
    @property
    def in_transaction(self) -> bool:
        return self._conn.in_transaction

    def close(self) -> None:
        self._conn.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in RedactingConnection.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._conn, name, value)

    def __enter__(self) -> RedactingConnection:
        self._conn.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._conn.__exit__(*exc)


class _RedactingCursor:
    __slots__ = ("_cur",)

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Params = ()) -> _RedactingCursor:
        if params and is_write(sql):
            params = clean_params(params)
        self._cur.execute(sql, params)
        return self

    def executemany(self, sql: str, seq: Iterable[Params]) -> _RedactingCursor:
        if is_write(sql):
            seq = (clean_params(p) for p in seq)
        self._cur.executemany(sql, seq)
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cur)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)
