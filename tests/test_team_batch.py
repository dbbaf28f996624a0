"""The batched push (`server/storage/batch.py`) and the pull's JSON text, held to the delta-by-delta path
they replace: the same pushes applied to two databases, one batched and one not, give the same
results, seqs and rows in every table; a pull page's JSON text says what `deltas_after` says. Both
engines: a real SQLite file and the real PostgreSQL (a schema per test, as in test_team_store)."""

import contextlib
import json
import random

from ace_engine.server.storage.batch import Push
from ace_engine.server.storage.db import ClientTaken, Rules, TeamDB, TeamDBError
from ace_engine.server.storage.ops import MARKS_PER_DAY
from test_team_store import pg_admin, url  # noqa: F401  (fixtures: both engines, a schema per test)

T0 = 1_700_000_000.0
TABLES = {
    "lessons": "project_id, lesson_id, section, content, domains, status, origin_client, version, concerns, "
               "held_status, held_version, client_note, created_at, updated_at",
    "lesson_versions": "project_id, lesson_id, version, content, section, domains, client_id, seq, created_at",
    "deltas": "project_id, seq, client_id, idem_key, op, lesson_id, body, created_at",
    "delta_keys": "project_id, client_id, idem_key, seq, status, created_at",
    "counters": "project_id, lesson_id, client_id, helpful, harmful, updated_at",
    "mark_budget": "project_id, lesson_id, holder, day, helpful, harmful",
}


def pushes(seed: int) -> list[tuple[str, list[tuple]]]:
    """Random pushes (client, items) mixing new ADDs, TAGs, repeated keys, held and malformed ADDs, TAGs of
    unknown lessons, and now and then an UPDATE (which sends that push delta by delta). Every tenth push
    is large (45-90 deltas, no UPDATE): its reads take PostgreSQL's array form (`Tx.among`)."""
    rng = random.Random(seed)
    ids: list[str] = []
    out = []
    for p in range(40):
        client = rng.choice(["c1", "c2", "c3"])
        items = []
        big = p % 10 == 9
        for i in range(rng.randint(45, 90) if big else rng.randint(1, 12)):
            roll = rng.random() * (0.9 if big else 1.0)
            key = f"{client}:{p}:{i}" if rng.random() > 0.1 or not out else rng.choice(out)[1][0][0]
            if roll < 0.45 or not ids:
                lesson_id = f"ctx-{rng.getrandbits(64):016x}"
                ids.append(lesson_id)
                body = {"content": f"Lesson {lesson_id}: run the migrations first", "section": "strategies",
                        "domains": ["python", "db"]}
                status = "active"
                if rng.random() < 0.1:
                    status, body["concerns"] = "quarantined", ["pipes a download into a shell"]
                if rng.random() < 0.05:
                    body.pop("content")
                items.append((key, "ADD", lesson_id, body, status))
            elif roll < 0.9:
                target = rng.choice(ids) if rng.random() > 0.05 else "ctx-ffffffffffffffff"
                items.append((key, "TAG", target, {"helpful": rng.randint(0, 12), "harmful": rng.randint(0, 3)},
                              "active"))
            else:
                items.append((key, "UPDATE", rng.choice(ids), {"content": f"Edited in push {p}"}, "active"))
        out.append((client, items))
    return out


def state(db: TeamDB) -> dict[str, list]:
    out = {}
    with db._d.read() as tx:
        for table, columns in TABLES.items():
            rows = tx.all(f"SELECT {columns} FROM {table} ORDER BY {columns}")
            out[table] = [{k: tx.json(v) if k in ("domains", "concerns", "body") else v for k, v in r.items()}
                          for r in rows]
    return out


@contextlib.contextmanager
def two_databases(first_url):
    """The fixture's database and a second, empty one on the same engine (PostgreSQL: another
    schema, dropped afterwards), both open: the same work done two ways is compared on them."""
    other = first_url.replace("team-server.db", "other.db") if first_url.startswith("sqlite") else None
    schema = None
    if other is None:  # PostgreSQL: a second schema beside the fixture's
        import secrets

        import psycopg

        from conftest import PG_URL
        schema = f"ace_t_{secrets.token_hex(6)}"
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        other = f"{PG_URL}?options=-csearch_path%3D{schema}"
    first, second = TeamDB.open(first_url, now=T0), TeamDB.open(other, now=T0)
    try:
        yield first, second
    finally:
        first.close()
        second.close()
        if schema:
            import psycopg

            from conftest import PG_URL
            with psycopg.connect(PG_URL, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_batched_push_does_what_the_delta_by_delta_path_does(url, tmp_path):  # noqa: F811
    with two_databases(url) as (fast, slow):
        slow.batched = False
        projects = [db.ensure_project(db.default_org, "widget", T0)["id"] for db in (fast, slow)]
        rules = Rules(token_id=None, marks_per_day=MARKS_PER_DAY)
        batched = large = 0
        for n, (client, items) in enumerate(pushes(7)):
            now = T0 + n * 3600  # the pushes span days: the mark budget turns over
            a = fast.apply_push(projects[0], client, items, now, rules)
            b = slow.apply_push(projects[1], client, items, now, rules)
            assert a == b, (n, items)
            batched += all(op in ("ADD", "TAG") for _, op, *_ in items)
            large += len(items) > 40 and all(op in ("ADD", "TAG") for _, op, *_ in items)
        assert batched > 10 and large >= 3  # the batched path did run, and often, small and large
        assert state(fast) == state(slow)
        page, rows = fast.pull_page(projects[0], 3, 1000), fast.deltas_after(projects[0], 3, 1000)
        assert [json.loads(text) for text in page["deltas"]] == rows and rows
        assert page["last_seq"] == rows[-1]["seq"] and page["more"] is False
        assert any(r["op"] == "TAG" and r["counts"] for r in rows)
        short = fast.pull_page(projects[0], 0, 5)
        assert short["more"] is True and [json.loads(t)["seq"] for t in short["deltas"]] == [1, 2, 3, 4, 5]


def test_pushes_applied_as_a_group_do_what_each_alone_does(url, tmp_path):  # noqa: F811
    """`TeamDB.apply_pushes` (a server process's queued pushes to one project in one transaction)
    against the same pushes one at a time on the delta-by-delta path: the same results, seqs and
    rows. Two clients share a token (their marks share one budget within a group), keys repeat
    across pushes and clients, TAGs name lessons an earlier push of the group added; a group with
    an UPDATE, or a client id another token owns, goes push by push and still answers each."""
    with two_databases(url) as (grouped, alone):
        alone.batched = False
        projects, tokens = [], []
        for db in (grouped, alone):
            projects.append(db.ensure_project(db.default_org, "widget", T0)["id"])
            tokens.append([db.create_token(f"hash-{n}", f"p{n}", db.default_org, None, "write", None, T0)
                           for n in range(3)])
        owner = {"c1": 0, "c2": 0, "c3": 1}
        rng = random.Random(11)
        todo = pushes(5)
        for n, (client, items) in enumerate(todo):
            if n % 5:  # most groups can go together: no UPDATE; every fifth push keeps its UPDATEs
                todo[n] = (client, [i for i in items if i[1] != "UPDATE"] or items[:1])
        todo.append(("c1", [("c1:stolen", "ADD", "ctx-stolen0000000000", {"content": "Stolen", "section": "s"},
                             "active")]))
        at = 0
        while at < len(todo):
            size = rng.randint(1, 6)
            group = todo[at:at + size]
            now = T0 + at * 3600
            for db, project, ids in ((grouped, projects[0], tokens[0]), (alone, projects[1], tokens[1])):
                steal = at + size >= len(todo)  # the last group: c1 pushes with the third token (ClientTaken)
                batch = [Push(client, items, now, Rules(token_id=ids[2 if steal and client == "c1" and
                                                                  items[0][0] == "c1:stolen" else owner[client]],
                                                        marks_per_day=MARKS_PER_DAY))
                         for client, items in group]
                if db is grouped:
                    got = db.apply_pushes(project, batch)
                else:
                    want = []
                    for push in batch:
                        try:
                            want.append(db.apply_push(project, *push))
                        except TeamDBError as exc:
                            want.append(exc)
            assert [r[0] if isinstance(r, tuple) else type(r) for r in got] == \
                   [r[0] if isinstance(r, tuple) else type(r) for r in want], (at, group)
            assert [r[1] for r in got if isinstance(r, tuple)][-1:] == [r[1] for r in want if isinstance(r, tuple)][-1:]
            at += size
        assert isinstance(got[-1], ClientTaken)
        assert state(grouped) == state(alone)
