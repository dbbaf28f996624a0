"""Several `ace server run` processes on one PostgreSQL answer as one server (docs/team-server.md,
"Running several replicas"): REAL processes on two ports, over a fresh schema of the test database.

What it holds them to: a dashboard session opened on one replica is served (and ended) by the other;
a token's burst is spent once whatever the replica; concurrent pushes to both lose and duplicate
nothing and leave a gap-free log; a replica SIGKILLed in the middle of a push's transaction loses
nothing, and the client's retry (same idempotency keys) on the other replica applies each delta once;
`--workers 2` serves from two processes on one port. `compose.yaml` runs two replicas behind a proxy
with PostgreSQL (its structure is checked here: docker cannot run on the test machines).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

pytest.importorskip("jinja2", reason="the dashboard needs the `server` extra (Starlette, uvicorn, Jinja2)")
import yaml  # noqa: E402

from ace_engine.playbook.ids import new_id  # noqa: E402
from ace_engine.server.storage.db import TeamDB  # noqa: E402
from test_server_api import database, mint  # noqa: E402

# Real server processes, several per test, killed and restarted (15-30 s for the file in a loaded 2-core run).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BURST = 20
RATE = 0.01  # one token per 100 s: nothing refills while a test runs
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')
LESSON = "Run the migrations before seeding, or the fixtures miss table {n} and every test after fails"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def with_app_name(url: str, name: str) -> str:
    """`url` whose connections show `name` in pg_stat_activity (so a test can watch one replica)."""
    return url + ("&" if "?" in url else "?") + f"application_name={name}"


class Replica:
    """One real `ace server run` process on a free port."""

    def __init__(self, db_url: str, name: str, *extra: str) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ace_engine.cli", "server", "run", "--database", with_app_name(db_url, name),
             "--port", str(self.port), "--rate", str(RATE), "--burst", str(BURST), *extra],
            env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_up(self) -> Replica:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise AssertionError(f"replica {self.name} exited: {self.proc.stderr.read().decode()[-2000:]}")
            assert time.monotonic() < deadline, f"replica {self.name} did not come up"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@dataclass
class Cluster:
    db_url: str
    db: TeamDB
    a: Replica
    b: Replica
    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, scope: str, project: str) -> str:
        return mint(self.db, scope, project)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    with database("postgresql", tmp_path_factory.mktemp("replicas")) as db_url:
        db = TeamDB.open(db_url)  # migrated once here; the replicas find it current
        a = b = None
        try:
            a, b = Replica(db_url, "ace-replica-a"), Replica(db_url, "ace-replica-b")
            a.wait_up(), b.wait_up()
            yield Cluster(db_url, db, a, b)
        finally:
            for replica in (a, b):
                if replica is not None:
                    replica.stop()
            db.close()


def call(base: str, method: str, path: str, token: str, **kw) -> httpx.Response:
    return httpx.request(method, base + path, headers={"Authorization": f"Bearer {token}"}, timeout=60, **kw)


def add(n: int, client: str, i: int) -> dict:
    lesson_id = new_id()
    return {"key": f"{client}:{i}", "op": "ADD", "lesson_id": lesson_id, "section": "troubleshooting_and_pitfalls",
            "domains": ["python-testing"], "content": LESSON.format(n=n)}


def full_log(base: str, token: str, project: str) -> list[dict]:
    out: list[dict] = []
    after = 0
    while True:
        answer = call(base, "GET", f"/v1/projects/{project}/deltas", token, params={"after": after, "limit": 1000})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        out += body["deltas"]
        if body["deltas"]:
            after = body["deltas"][-1]["seq"]
        if not body["more"]:
            return out


# -- sessions and limits ----------------------------------------------------------------------------------


def test_signed_in_on_one_replica_served_by_the_other(cluster):
    token = cluster.token("admin", "alpha")
    jar = httpx.Client(timeout=30, follow_redirects=False)  # one browser: cookies do not tell ports apart
    first = jar.get(f"{cluster.a.url}/ui/")
    assert first.status_code == 200 and 'name="token"' in first.text  # the sign-in form
    signed = jar.post(f"{cluster.a.url}/ui/signin", data={"token": token}, headers={"Origin": cluster.a.url})
    assert signed.status_code == 303, signed.text
    cookie = jar.cookies.get("ace_team_ui")
    assert cookie

    page = jar.get(f"{cluster.b.url}/ui/p/alpha")  # the other process, never told of this session
    assert page.status_code == 200, page.text
    assert 'name="token"' not in page.text and "alpha" in page.text
    csrf = CSRF_META.search(page.text)
    assert csrf and csrf.group(1)

    out = jar.post(f"{cluster.b.url}/ui/signout", data={"csrf": csrf.group(1)}, headers={"Origin": cluster.b.url})
    assert out.status_code == 303, out.text
    jar.cookies.set("ace_team_ui", cookie)  # a copy of the cookie kept after signing out: dead everywhere
    again = jar.get(f"{cluster.a.url}/ui/p/alpha")
    assert again.status_code == 303 and again.headers["location"].startswith("/ui/?next=")


def test_a_tokens_burst_is_shared_by_the_replicas(cluster):
    token = cluster.token("read", "alpha")
    answers = [call(replica.url, "GET", "/v1/projects/alpha", token).status_code
               for _ in range(BURST // 2) for replica in (cluster.a, cluster.b)]
    assert answers == [200] * BURST  # half the burst spent on each
    for replica in (cluster.a, cluster.b):  # each replica alone would still allow half of it
        over = call(replica.url, "GET", "/v1/projects/alpha", token)
        assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
    other = cluster.token("read", "alpha")  # another token has its own bucket
    assert call(cluster.b.url, "GET", "/v1/projects/alpha", other).status_code == 200


# -- pushes --------------------------------------------------------------------------------------------------


def test_concurrent_pushes_to_both_replicas_lose_and_duplicate_nothing(cluster):
    project, clients, pushes, per_push = "gamma", 6, 6, 25
    tokens = [cluster.token("write", project) for _ in range(clients)]
    applied: dict[str, int] = {}
    retried: list[tuple[str, str, int | None, int | None]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        name = f"replica-client-{n}"
        for p in range(pushes):
            body = {"client_id": name, "deltas": [add(n, f"{name}:{p}", i) for i in range(per_push)]}
            first, second = (cluster.a, cluster.b) if (n + p) % 2 else (cluster.b, cluster.a)
            answer = call(first.url, "POST", f"/v1/projects/{project}/deltas", tokens[n], json=body)
            if answer.status_code != 200:
                with lock:
                    errors.append(answer.text)
                continue
            results = answer.json()["results"]
            with lock:
                for r in results:
                    if r["status"] == "applied":
                        applied[r["key"]] = r["seq"]
                    else:
                        errors.append(str(r))
            if p % 2 == 0:  # the same push again on the other replica, as after a lost answer
                again = call(second.url, "POST", f"/v1/projects/{project}/deltas", tokens[n], json=body).json()
                with lock:
                    retried.extend((r["key"], r["status"], applied.get(r["key"]), r["seq"]) for r in again["results"])

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[:3]
    total = clients * pushes * per_push
    assert len(applied) == total and sorted(applied.values()) == list(range(1, total + 1))
    assert retried and all(status == "duplicate" and first == seq for _, status, first, seq in retried)
    reader = cluster.token("read", project)
    for replica in (cluster.a, cluster.b):
        log = full_log(replica.url, reader, project)
        assert [d["seq"] for d in log] == list(range(1, total + 1))  # gap-free, in order, each once
        assert {d["key"]: d["seq"] for d in log} == applied


def _waiting_on_a_lock(app_name: str) -> bool:
    import psycopg

    from conftest import PG_URL
    with psycopg.connect(PG_URL, autocommit=True) as con:
        row = con.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                          "AND wait_event_type = 'Lock'", (app_name,)).fetchone()
    return bool(row and row[0])


def test_a_replica_killed_mid_push_loses_nothing_and_the_retry_applies_once(cluster):
    import psycopg

    project, name = "delta-kill", "kill-client"
    token = cluster.token("write", project)
    seed = add(0, name, 0)  # a lesson the big push will change half-way through
    first = call(cluster.a.url, "POST", f"/v1/projects/{project}/deltas", token,
                 json={"client_id": name, "deltas": [seed]})
    assert first.json()["results"][0]["status"] == "applied"
    deltas = [add(n, f"{name}:big", n) for n in range(1, 200)]
    deltas.append({"key": f"{name}:big:edit", "op": "UPDATE", "lesson_id": seed["lesson_id"],
                   "content": LESSON.format(n="edited") + " (edited)"})
    deltas += [add(n, f"{name}:big", n) for n in range(200, 300)]
    body = {"client_id": name, "deltas": deltas}

    victim = Replica(cluster.db_url, "ace-replica-victim").wait_up()
    parts = urlsplit(cluster.db_url)
    schema = re.search(r"search_path%3D(\w+)", cluster.db_url)
    assert schema
    holder = psycopg.connect(f"{parts.scheme}://{parts.netloc}{parts.path}", autocommit=False)
    try:
        # Hold the seed lesson's row: the push's transaction gets past its first 199 deltas (written,
        # not committed) and waits there, so the SIGKILL lands in the middle of the push.
        holder.execute(f"SELECT 1 FROM {schema.group(1)}.lessons WHERE lesson_id = %s FOR UPDATE",
                       (seed["lesson_id"],))
        pushing = threading.Thread(target=lambda: _swallow(call, victim.url, "POST",
                                                           f"/v1/projects/{project}/deltas", token, json=body))
        pushing.start()
        deadline = time.monotonic() + 60
        while not _waiting_on_a_lock("ace-replica-victim"):
            assert time.monotonic() < deadline, "the push never reached the held row"
            time.sleep(0.05)
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(20)
        pushing.join(60)
    finally:
        holder.rollback()  # the dead replica's transaction now ends: rolled back, never committed
        holder.close()
        victim.stop()

    retry = call(cluster.b.url, "POST", f"/v1/projects/{project}/deltas", token, json=body)
    assert retry.status_code == 200, retry.text
    statuses = {r["status"] for r in retry.json()["results"]}
    assert statuses == {"applied"}  # nothing of the killed push had stuck: everything applies now, once
    again = call(cluster.a.url, "POST", f"/v1/projects/{project}/deltas", token, json=body).json()["results"]
    assert {r["status"] for r in again} == {"duplicate"}
    log = full_log(cluster.a.url, token, project)
    keys = [d["key"] for d in log]
    assert [d["seq"] for d in log] == list(range(1, len(log) + 1)) and len(keys) == len(set(keys))
    assert set(keys) == {seed["key"]} | {d["key"] for d in deltas}


def _swallow(fn, *args, **kw) -> None:
    try:
        fn(*args, **kw)
    except httpx.TransportError:
        pass  # the replica died under the request: that is the point


def test_a_long_poll_on_one_replica_wakes_for_a_push_on_the_other(cluster):
    from ace_engine.team_client.client import TeamClient

    project, name = "long-poll", "poll-client"
    token = cluster.token("write", project)
    first = call(cluster.a.url, "POST", f"/v1/projects/{project}/deltas", token,
                 json={"client_id": name, "deltas": [add(0, name, 0)]})
    assert first.status_code == 200, first.text
    got: list[dict] = []
    with TeamClient(cluster.a.url, token) as client:
        # Nothing after seq 1: the pull waits on replica A; the push goes to replica B a moment later.
        waiting = threading.Thread(target=lambda: got.append(client.pull(project, after=1, wait=25)))
        waiting.start()
        time.sleep(1.0)
        pushed = call(cluster.b.url, "POST", f"/v1/projects/{project}/deltas", token,
                      json={"client_id": name, "deltas": [add(1, name, 1)]})
        assert pushed.status_code == 200, pushed.text
        waiting.join(60)
        assert got and [d["seq"] for d in got[0]["deltas"]] == [2] and got[0]["last_seq"] == 2
        idle = client.pull(project, after=2, wait=1)  # nothing comes: the wait ends empty
        assert idle["deltas"] == [] and idle["last_seq"] == 2 and idle["more"] is False
    too_long = call(cluster.a.url, "GET", f"/v1/projects/{project}/deltas", token, params={"after": 0, "wait": 31})
    assert too_long.status_code == 400


def test_workers_serve_one_port_from_several_processes(cluster):
    server = Replica(cluster.db_url, "ace-replica-workers", "--workers", "2").wait_up()
    try:
        deadline = time.monotonic() + 60
        workers: list[str] = []
        while len(workers) < 2 and time.monotonic() < deadline:  # the supervisor starts both
            children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
            workers = [c for c in children if b"spawn_main" in _cmdline(c)]  # not multiprocessing's tracker
            time.sleep(0.1)
        assert len(workers) == 2
        token = cluster.token("write", "workers")
        name = "workers-client"
        results = []
        for n in range(8):
            answer = call(server.url, "POST", "/v1/projects/workers/deltas", token,
                          json={"client_id": name, "deltas": [add(n, name, n)]})
            assert answer.status_code == 200, answer.text
            results += answer.json()["results"]
        assert [r["seq"] for r in results] == list(range(1, 9))
    finally:
        server.stop()
    assert server.proc.returncode == 0 or server.proc.returncode == -signal.SIGTERM


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


# -- compose.yaml -------------------------------------------------------------------------------------------


def test_compose_runs_two_replicas_behind_a_proxy_with_postgresql():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    replicas = [name for name, s in services.items() if "ace" in " ".join(map(str, s.get("command") or []))
                and "run" in (s.get("command") or [])]
    assert len(replicas) >= 2, services.keys()
    assert services["db"]["image"].startswith("postgres:")
    urls = {next(str(c) for c in services[r]["command"] if str(c).startswith("postgresql://")) for r in replicas}
    assert len(urls) == 1 and "@db:5432/" in urls.pop()  # one database for every replica
    for r in replicas:
        assert "ports" not in services[r]  # reached through the proxy only
        assert services[r]["depends_on"]["db"]["condition"] == "service_healthy"
    proxy = services["proxy"]
    assert proxy["image"].startswith(("caddy:", "nginx:"))
    assert all(p.startswith("127.0.0.1:") for p in proxy["ports"])  # TLS belongs in front of it
    config = str(proxy.get("configs") or proxy.get("command") or "") + str(compose.get("configs") or "")
    for r in replicas:
        assert f"{r}:8765" in config  # the proxy balances over every replica
    assert set(proxy["depends_on"]) >= set(replicas)
