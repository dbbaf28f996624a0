"""The embedded store: WAL, owner-only files, migrations, concurrency, spool, gc, log rotation."""

import io
import json
import multiprocessing
import os
import sqlite3
import time

import pytest

from ace_engine.core import log, paths
from ace_engine.store import schema, spool
from ace_engine.store.sqlite import SQLiteStore, StoreError


def record(n: int, session="s-1", at=None, **extra) -> dict:
    r = {"v": 1, "at": at or time.time(), "event": "PostToolUse", "session_id": session, "detail": "Bash",
         "project": {"key": "path:/p", "root": "/p", "remote": None, "name": "p"},
         "session": {"cwd": "/p"},
         "tool_event": {"tool_use_id": f"{session}-{n}", "tool_name": "Bash", "input": "{}",
                        "response": "ok " * 50, "success": True}}
    r.update(extra)
    return r


def test_new_store_is_wal_versioned_and_private(ace_home):
    with SQLiteStore() as store:
        assert store.schema_version() == schema.LATEST
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert os.stat(paths.db_path()).st_mode & 0o777 == 0o600
    assert os.stat(ace_home).st_mode & 0o777 == 0o700
    with SQLiteStore() as again:  # re-opening never re-migrates
        assert again.schema_version() == schema.LATEST


def test_newer_schema_is_refused(ace_home):
    SQLiteStore().close()
    con = sqlite3.connect(paths.db_path())
    con.execute(f"PRAGMA user_version={schema.LATEST + 1}")
    con.close()
    with pytest.raises(StoreError, match="upgrade ace-engine"):
        SQLiteStore()


def test_migrations_apply_in_order_from_any_version(ace_home):
    later = [*schema.MIGRATIONS, ("later_feature", "CREATE TABLE later_feature (id INTEGER PRIMARY KEY)")]
    SQLiteStore().close()
    with SQLiteStore(migrations=later) as store:  # a released store meets a newer ace-engine
        assert store.schema_version() == len(later) == schema.LATEST + 1
        store.conn.execute("SELECT * FROM later_feature")
    with pytest.raises(StoreError, match="upgrade ace-engine"):  # and the older one refuses it
        SQLiteStore()


def test_a_new_store_migrates_through_every_named_migration(ace_home):
    """The numbering stores in the wild rely on: migration N is the N-th (name, SQL) pair."""
    assert [name for name, _ in schema.MIGRATIONS] == ["capture", "playbook", "learning", "code_patterns", "meta",
                                                      "vector_packs", "team_sync", "session_summaries",
                                                      "lesson_situations", "agents", "experiments", "anchors",
                                                      "recent lessons"]
    assert schema.LATEST == 13
    with SQLiteStore(migrations=schema.MIGRATIONS[:2]) as store:  # a store an early ace-engine wrote
        assert store.schema_version() == 2
        assert store.conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='jobs'").fetchone()[0] == 0
    with SQLiteStore() as store:  # upgraded in place, rows kept
        assert store.schema_version() == schema.LATEST
        store.conn.execute("SELECT * FROM jobs, meta")


def test_every_write_goes_through_one_transaction(ace_home):
    """A record is all or nothing; a failing write inside `transaction()` leaves no trace."""
    with SQLiteStore() as store:
        with pytest.raises(StoreError):
            store.apply_many([record(1), {"at": time.time(), "event": "Stop", "session_id": "s-1",
                                          "message": {"role": None, "text": "a NOT NULL column left empty"}}])
        assert store.counts()["tool_events"] == 0 and store.counts()["projects"] == 0
        with store.transaction() as tx:
            store.apply(record(2))  # joins the outer transaction
            tx.discard()
        assert not store.conn.in_transaction and store.counts()["tool_events"] == 0
        store.apply(record(3))
        assert store.counts("path:/p")["tool_events"] == 1 and store.counts("path:/nowhere")["tool_events"] == 0
        assert store.ensure_project("path:/p", "/p", None, "p", time.time()) == store.project_id("path:/p")


def _hammer(home: str, worker: int, count: int, queue) -> None:
    """One process firing `count` PostToolUse hooks through the real engine, one connection each."""
    os.environ["ACE_HOME"] = home
    from ace_engine.hooks import engine

    for n in range(count):
        data = {"session_id": f"w{worker}", "cwd": "/", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_use_id": f"w{worker}-{n}", "tool_input": {"command": f"echo {n}"},
                "tool_response": {"stdout": "x" * 2000, "stderr": ""}}
        try:
            engine.main(["PostToolUse"], stdin=io.BytesIO(json.dumps(data).encode()), stdout=io.StringIO())
        except SystemExit:
            pass
    queue.put(worker)


@pytest.mark.slow  # 8 processes x 500 events racing for the store (10 s alone, 8-17 s in a loaded 2-core run)
def test_concurrent_hooks_lose_nothing(ace_home):
    SQLiteStore().close()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_hammer, args=(str(ace_home), w, 500, queue)) for w in range(8)]
    started = time.perf_counter()
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=600)
        assert p.exitcode == 0
    elapsed = time.perf_counter() - started
    con = sqlite3.connect(paths.db_path())
    stored = con.execute("SELECT COUNT(*) FROM tool_events").fetchone()[0]
    spooled = spool.count_pending()
    assert stored + spooled == 4000 and spooled == 0, (stored, spooled)
    assert con.execute("SELECT COUNT(DISTINCT session_id) FROM tool_events").fetchone()[0] == 8
    print(f"\n8 processes x 500 PostToolUse: {4000 / elapsed:.0f} events/s")


def test_spool_replays_once(ace_home):
    for n in range(3):
        assert spool.append(record(n))
    assert spool.count_pending() == 3
    with SQLiteStore() as store:
        assert spool.replay(store) == 3
        assert spool.replay(store) == 0
        assert store.counts()["tool_events"] == 3


def test_spool_skips_unreadable_lines(ace_home):
    spool.append(record(1))
    (path,) = spool.pending_files()
    with open(path, "a") as fh:
        fh.write("{not json\n")
    with SQLiteStore() as store:
        assert spool.replay(store) == 1


def test_gc_by_age_and_size(ace_home):
    old = time.time() - 400 * 86400
    with SQLiteStore() as store:
        store.apply_many([record(n, session="old", at=old) for n in range(50)])
        store.apply_many([record(n, session=f"new{n // 100}") for n in range(3000)])
        # All but the newest session ended; gc never removes a running one.
        store.apply_many([{"v": 1, "at": time.time(), "event": "SessionEnd", "session_id": f"new{k}",
                           "detail": "other"} for k in range(29)])
        removed = store.gc(max_bytes=10**9, max_age_days=180)
        assert removed["tool_events"] == 50 and removed["sessions"] == 1
        before = store.live_bytes()
        dry = store.gc(max_bytes=before // 2, max_age_days=180, dry_run=True)
        assert dry["sessions"] > 0 and store.counts()["tool_events"] == 3000
        result = store.gc(max_bytes=before // 2, max_age_days=180)
        assert result["bytes_after"] <= before // 2
        assert 0 < store.counts()["tool_events"] < 3000
        # Newest sessions survive.
        kept = {r[0] for r in store.conn.execute("SELECT DISTINCT session_id FROM tool_events")}
        assert "new29" in kept and "new0" not in kept
        # Even an impossible cap leaves the running session alone.
        store.gc(max_bytes=1, max_age_days=180)
        kept = {r[0] for r in store.conn.execute("SELECT DISTINCT session_id FROM tool_events")}
        assert kept == {"new29"}


def test_log_rotates_with_two_backups(ace_home, monkeypatch):
    monkeypatch.setattr(log, "MAX_BYTES", 2000)
    for n in range(200):
        log.error("test", f"problem number {n} " + "x" * 50)
    names = sorted(os.listdir(os.path.dirname(paths.log_path())))
    assert names == ["ace.log", "ace.log.1", "ace.log.2"]
    assert all(os.path.getsize(os.path.join(os.path.dirname(paths.log_path()), n)) < 2200 for n in names)
    assert "problem number 199" in log.tail(1)[0]


def test_session_start_starts_gc_past_the_size_cap(ace_home, tmp_path, monkeypatch):
    from hookutil import payload, run_hook

    with SQLiteStore() as store:
        store.apply_many([record(n, session=f"s{n // 200}", at=time.time() - 1000 + n / 10) for n in range(4000)])
        store.apply_many([{"v": 1, "at": time.time() - 500, "event": "SessionEnd", "session_id": f"s{k}",
                           "detail": "other"} for k in range(20)])  # finished: gc may remove them
        before = store.counts()["tool_events"]
    # The cap holds the empty schema (~0.32 MB with every table and index) and little more.
    monkeypatch.setenv("ACE_RETENTION_MAX_DB_MB", "0.4")
    code, _, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), session_id="fresh", source="startup"))
    assert code == 0
    from ace_engine.core.background import ProcessLock

    lock = ProcessLock(str(ace_home / "state" / "gc.lock"))  # held by the gc for as long as it runs
    deadline = time.time() + 30
    time.sleep(0.2)
    while lock.held_elsewhere() and time.time() < deadline:
        time.sleep(0.1)
    assert not lock.held_elsewhere(), "the background gc finished and released its lock"
    with SQLiteStore() as store:
        after = store.counts()["tool_events"]
        assert after < before and store.live_bytes() <= 0.4 * 1024 * 1024
        assert store.session("fresh"), "the newest session survives"
        # The space was given back: the file is within the cap, so no gc is started again.
        assert store.file_bytes() <= 0.4 * 1024 * 1024


def test_spool_is_bounded_oldest_day_first(ace_home, monkeypatch):
    spool.append(record(0))  # creates the directory and today's file
    directory = paths.spool_dir()
    old_day = os.path.join(directory, "20200101.jsonl")
    with open(old_day, "w") as fh:
        fh.writelines(json.dumps(record(n, session="old")) + "\n" for n in range(40))
    monkeypatch.setattr(spool, "MAX_BYTES", os.path.getsize(old_day) + 2000)
    for n in range(1, 6):
        assert spool.append(record(n)) == directory
    assert not os.path.exists(old_day), "the oldest day made room"
    assert any("dropped the oldest day's file 20200101.jsonl with 40 records" in line
               for line in log.tail(5)), log.tail(5)
    assert spool.count_pending() == 6


def test_spool_replay_resumes_after_a_partial_failure(ace_home, monkeypatch):
    for n in range(7):
        spool.append(record(n))
    monkeypatch.setattr(spool, "CHUNK_RECORDS", 3)
    calls = []

    class Flaky:
        def __init__(self, store):
            self.store = store

        def apply_many(self, records):
            calls.append(len(records))
            if len(calls) == 2:
                raise StoreError("database is locked")
            self.store.apply_many(records)

    with SQLiteStore() as store:
        with pytest.raises(StoreError):
            spool.replay(Flaky(store))
        assert store.counts()["tool_events"] == 3  # the first chunk is in
        assert spool.replay(store) == 4, "the rest, without the first chunk again"
        assert store.counts()["tool_events"] == 7 and store.counts()["hook_events"] == 7
        assert spool.pending_files() == []


def _spool_writer(home: str, worker: int, count: int) -> None:
    os.environ["ACE_HOME"] = home
    from ace_engine.store import spool as spool_mod

    for n in range(count):
        assert spool_mod.append(record(n, session=f"w{worker}"))


def test_spool_appends_racing_a_replayer_land_exactly_once(ace_home):
    SQLiteStore().close()
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_spool_writer, args=(str(ace_home), w, 300)) for w in range(4)]
    for p in writers:
        p.start()
    with SQLiteStore() as store:
        while any(p.is_alive() for p in writers):
            spool.replay(store)
        for p in writers:
            p.join(timeout=120)
            assert p.exitcode == 0
        spool.replay(store)
        assert store.counts()["tool_events"] == 1200
        assert store.counts()["hook_events"] == 1200, "no record applied twice"


def test_fallback_spool_outside_home_is_never_a_planted_directory(tmp_path, monkeypatch):
    """The fallback under a shared TMPDIR must be ours, private and not a symlink: a directory
    another user planted there (or a link to one) would collect the spooled records."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(shared))
    planted = tmp_path / "attacker"
    planted.mkdir()
    os.symlink(planted, shared / f"ace-engine-{os.geteuid()}")
    assert paths.fallback_dir() is None and os.listdir(planted) == []
    os.unlink(shared / f"ace-engine-{os.geteuid()}")
    (shared / f"ace-engine-{os.geteuid()}").mkdir()
    os.chmod(shared / f"ace-engine-{os.geteuid()}", 0o755)  # ours but readable by others (not via mkdir: umask)
    assert paths.fallback_dir() is None
    os.rmdir(shared / f"ace-engine-{os.geteuid()}")
    made = paths.fallback_dir()
    assert made and made.startswith(str(shared)) and os.stat(os.path.dirname(made)).st_mode & 0o777 == 0o700
