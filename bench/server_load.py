"""Team server load test: N clients pushing and pulling on loopback for a while, then an audit.

    python bench/server_load.py [--clients 50] [--seconds 60] [--database postgresql://…|sqlite]
                                [--replicas 1] [--workers 1] [--projects 1] [--no-access-log]
                                [--out bench/results/server_load.json]

Starts real `ace server run` processes (uvicorn) on free ports (`--replicas`, each with `--workers`),
on a fresh PostgreSQL database (created on 127.0.0.1:5432 and dropped afterwards) unless `--database`
says otherwise; clients are spread over the replicas round-robin, as a proxy would, and over
`--projects` projects (each with its own write token) round-robin too: a server hosts many projects,
and pushes of different projects go to the database side by side (group commit is per project).
Each client is an asyncio task with its own HTTP connection and client id; in a loop it pushes a
batch of ADD and TAG deltas, now and then pushes the same batch again (a retry: every delta must
come back `duplicate` with its first seq), and pulls everything after its cursor.

Then the audit, per project, which makes the run fail on any loss or duplication:
- every delta answered `applied` has a seq, and no two share one;
- the project's log, pulled from 0, is exactly seqs 1..N without a gap, N = deltas applied;
- every client's pulls, put together, saw each seq exactly once;
- every retried delta answered `duplicate` with the seq of its first push.

Reports throughput (requests and deltas per second), latency percentiles per route, and the CPU
the server processes (and this database's PostgreSQL backends, and the clients) used during the
run, read from /proc: on a machine shared with other work, deltas per server CPU-second is the
figure that does not move with the neighbours' load (wall-clock throughput does).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 10  # deltas per push
RETRY_EVERY = 7  # every 7th push is sent twice
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lesson_id(rng: random.Random) -> str:
    alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
    return "ctx-" + "".join(rng.choice(alphabet) for _ in range(20))


def ace(env: dict, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "ace_engine.cli", *args], env=env, capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"ace {' '.join(args)} failed: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


def _cpu_of(pid: int) -> float:
    """utime + stime of one process, in seconds (0 when it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> list[int]:
    """`root` and its descendants (uvicorn's workers)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def cpu_seconds(roots: list[int]) -> dict[int, float]:
    """CPU seconds so far of every process under `roots`, by pid."""
    return {pid: _cpu_of(pid) for root in roots for pid in _tree(root)}


def postgres_cpu(database: str) -> dict[int, float]:
    """CPU seconds of the PostgreSQL backends serving `database` (their process title names it;
    other databases' backends, e.g. other benches on a shared machine, are left out)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    title = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            if title.startswith("postgres:") and f" {database} " in title:
                out[int(name)] = _cpu_of(int(name))
    return out


def used(before: dict[int, float], after: dict[int, float]) -> float:
    return round(sum(v - before.get(pid, 0.0) for pid, v in after.items()), 2)


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {"n": len(values), "p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99),
            "max_ms": round(ordered[-1] * 1000, 2), "mean_ms": round(statistics.fmean(ordered) * 1000, 2)}


class Client:
    def __init__(self, n: int, http, base: str, token: str, project: str, seed: int):
        self.name = f"load-client-{n:03d}"
        self.http, self.base, self.project = http, base, project
        self.headers = {"Authorization": f"Bearer {token}"}
        self.rng = random.Random(seed)
        self.cursor = 0
        self.seen: list[int] = []  # seqs pulled
        self.applied: dict[str, int] = {}  # key -> seq
        self.retried: list[tuple[str, int, int | None, str]] = []  # (key, first seq, retry seq, retry status)
        self.latency: dict[str, list[float]] = {"push": [], "pull": []}
        self.errors: list[str] = []
        self.pushes = 0
        self.lessons: list[str] = []

    async def _call(self, route: str, method: str, url: str, **kw):
        started = time.perf_counter()
        r = await self.http.request(method, url, headers=self.headers, **kw)
        self.latency[route].append(time.perf_counter() - started)
        if r.status_code == 429:
            await asyncio.sleep(float(r.headers.get("Retry-After", "0.2")))
            return None
        if r.status_code >= 400:
            self.errors.append(f"{route} {r.status_code}: {r.text[:200]}")
            return None
        return r.json()

    def _batch(self) -> list[dict]:
        deltas = []
        for i in range(BATCH):
            if self.lessons and i % 3 == 2:
                target = self.rng.choice(self.lessons)
                deltas.append({"key": f"{self.name}:{self.pushes}:{i}", "op": "TAG", "lesson_id": target,
                               "helpful": self.pushes + i, "harmful": 0})
            else:
                new = lesson_id(self.rng)
                self.lessons.append(new)
                deltas.append({"key": f"{self.name}:{self.pushes}:{i}", "op": "ADD", "lesson_id": new,
                               "section": "troubleshooting_and_pitfalls", "domains": ["load"],
                               "content": f"Load lesson {new} from {self.name}: run the migration before the "
                                          f"seed step or the fixtures miss table {self.rng.randrange(10**6)}"})
        return deltas

    async def push(self) -> None:
        deltas = self._batch()
        url = f"{self.base}/v1/projects/{self.project}/deltas"
        body = {"client_id": self.name, "deltas": deltas}
        answer = await self._call("push", "POST", url, json=body)
        if answer is None:
            return
        for result in answer["results"]:
            if result["status"] == "applied":
                self.applied[result["key"]] = result["seq"]
            elif result["status"] != "duplicate":
                self.errors.append(f"push result {result}")
        if self.pushes % RETRY_EVERY == 0:  # the same batch again, as after a lost answer
            again = await self._call("push", "POST", url, json=body)
            if again is not None:
                for result in again["results"]:
                    self.retried.append((result["key"], self.applied.get(result["key"], -1), result.get("seq"),
                                         result["status"]))
        self.pushes += 1

    async def pull(self) -> None:
        while True:
            answer = await self._call("pull", "GET", f"{self.base}/v1/projects/{self.project}/deltas",
                                      params={"after": self.cursor, "limit": 1000})
            if answer is None:
                return
            for delta in answer["deltas"]:
                self.seen.append(delta["seq"])
                self.cursor = delta["seq"]
            if not answer.get("more"):
                return

    async def run(self, until: float) -> None:
        while time.monotonic() < until:
            await self.push()
            await self.pull()


async def drive(bases: list[str], projects: list[tuple[str, str]], clients: int,
                seconds: float) -> tuple[list[Client], float]:
    """Run `clients` clients for `seconds`; client n works in `projects[n % len(projects)]` (project, token)."""
    import httpx

    # One pool of one connection per client: a pool shared by all of them costs the bench's own process
    # O(connections) Python per request (httpcore scans every connection of its pool each time a request
    # starts or ends): ~45% of this process's CPU with 50 clients whose requests arrive together.
    https = [httpx.AsyncClient(limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(60.0))
             for _ in range(clients)]
    try:
        workers = [Client(n, https[n], bases[n % len(bases)], projects[n % len(projects)][1],
                          projects[n % len(projects)][0], seed=n) for n in range(clients)]
        started = time.monotonic()
        await asyncio.gather(*(w.run(started + seconds) for w in workers))
        elapsed = time.monotonic() - started
        for w in workers:  # everyone catches up on what the others pushed last
            await w.pull()
        return workers, elapsed
    finally:
        for http in https:
            await http.aclose()


async def full_log(base: str, token: str, project: str) -> list[int]:
    import httpx

    seqs, cursor = [], 0
    async with httpx.AsyncClient(timeout=60.0, headers={"Authorization": f"Bearer {token}"}) as http:
        while True:
            r = await http.get(f"{base}/v1/projects/{project}/deltas", params={"after": cursor, "limit": 1000})
            r.raise_for_status()
            answer = r.json()
            seqs += [d["seq"] for d in answer["deltas"]]
            if answer["deltas"]:
                cursor = answer["deltas"][-1]["seq"]
            if not answer.get("more"):
                return seqs


def audit(workers: list[Client], log: list[int]) -> dict:
    applied = [seq for w in workers for seq in w.applied.values()]
    problems = []
    if len(set(applied)) != len(applied):
        problems.append(f"{len(applied) - len(set(applied))} seqs given to two deltas")
    if log != list(range(1, len(log) + 1)):
        problems.append("the log has gaps or is out of order")
    if len(log) != len(applied):
        problems.append(f"{len(applied)} deltas applied but {len(log)} logged")
    for w in workers:
        if sorted(w.seen) != log:
            missing, extra = set(log) - set(w.seen), len(w.seen) - len(set(w.seen))
            problems.append(f"{w.name} pulled {len(w.seen)} deltas: {len(missing)} missing, {extra} twice")
            break
    bad_retries = [r for r in (r for w in workers for r in w.retried) if r[3] != "duplicate" or r[1] != r[2]]
    if bad_retries:
        problems.append(f"{len(bad_retries)} retried deltas not answered duplicate with their first seq: "
                        f"{bad_retries[:3]}")
    errors = [e for w in workers for e in w.errors]
    if errors:
        problems.append(f"{len(errors)} failed requests, e.g. {errors[:3]}")
    return {"deltas_applied": len(applied), "deltas_logged": len(log),
            "retried_deltas": sum(len(w.retried) for w in workers), "problems": problems, "ok": not problems}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--database", default=None,
                        help="a server database URL, or `sqlite` for a temporary file (default: a fresh "
                             "PostgreSQL database on 127.0.0.1:5432, dropped afterwards)")
    parser.add_argument("--replicas", type=int, default=1, help="server processes on one database")
    parser.add_argument("--workers", type=int, default=1, help="`ace server run --workers` of each replica")
    parser.add_argument("--projects", type=int, default=1, help="projects the clients are spread over")
    parser.add_argument("--no-access-log", action="store_true",
                        help="run the servers as compose.yaml does (the proxy logs): ~5%% of server CPU")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "server_load.json"))
    args = parser.parse_args()

    created_db = None
    with tempfile.TemporaryDirectory(prefix="ace-load-") as tmp:
        env = {**os.environ, "ACE_HOME": os.path.join(tmp, "home"), "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"),
               "PYTHONPATH": os.path.join(ROOT, "src")}
        if args.database == "sqlite":
            database = "sqlite:///" + os.path.join(tmp, "server.db")
        elif args.database:
            database = args.database
        else:
            import psycopg

            created_db = f"ace_load_{os.getpid()}_{int(time.time())}"
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{created_db}"')
            database = f"postgresql://postgres@127.0.0.1:5432/{created_db}"
        servers: list[subprocess.Popen] = []
        try:
            names = ["load"] if args.projects <= 1 else [f"load-{i}" for i in range(args.projects)]
            projects = [(name, json.loads(ace(env, "server", "token", "create", "--project", name, "--scope", "write",
                                              "--database", database, "--json"))["token"]) for name in names]
            bases = []
            for _ in range(args.replicas):
                port = free_port()
                extra = ["--workers", str(args.workers)] if args.workers > 1 else []
                extra += ["--no-access-log"] if args.no_access_log else []
                servers.append(subprocess.Popen(
                    [sys.executable, "-m", "ace_engine.cli", "server", "run", "--database", database,
                     "--port", str(port), "--rate", "100000", *extra],
                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
                bases.append(f"http://127.0.0.1:{port}")
                deadline = time.monotonic() + 30
                while True:
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                            break
                    except OSError:
                        if servers[-1].poll() is not None or time.monotonic() > deadline:
                            why = servers[-1].stderr.read().decode()[-2000:] if servers[-1].stderr else ""
                            raise SystemExit(f"the server did not start: {why}") from None
                        time.sleep(0.2)
            time.sleep(1.0)  # workers past the first bind late: let them all start before counting CPU
            dbname = database.rsplit("/", 1)[-1].split("?")[0]
            cpu0, pg0 = cpu_seconds([s.pid for s in servers]), postgres_cpu(dbname)
            own0 = _cpu_of(os.getpid())
            workers, elapsed = asyncio.run(drive(bases, projects, args.clients, args.seconds))
            server_cpu = used(cpu0, cpu_seconds([s.pid for s in servers]))
            db_cpu = used(pg0, postgres_cpu(dbname))
            bench_cpu = round(_cpu_of(os.getpid()) - own0, 2)
            logs = {name: asyncio.run(full_log(bases[0], token, name)) for name, token in projects}
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(timeout=30)
            if created_db:
                import psycopg

                with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{created_db}" WITH (FORCE)')

    audits = {name: audit([w for w in workers if w.project == name], log) for name, log in logs.items()}
    checked = {"deltas_applied": sum(a["deltas_applied"] for a in audits.values()),
               "deltas_logged": sum(a["deltas_logged"] for a in audits.values()),
               "retried_deltas": sum(a["retried_deltas"] for a in audits.values()),
               "problems": [f"{name}: {p}" if len(audits) > 1 else p for name, a in audits.items()
                            for p in a["problems"]]}
    checked["ok"] = not checked["problems"]
    pushes = [x for w in workers for x in w.latency["push"]]
    pulls = [x for w in workers for x in w.latency["pull"]]
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
        "database": "postgresql" if database.startswith("postgresql") else "sqlite",
        "clients": args.clients, "projects": len(logs), "replicas": args.replicas, "workers": args.workers,
        "access_log": not args.no_access_log,
        "seconds": round(elapsed, 1), "batch": BATCH,
        "requests_per_second": round((len(pushes) + len(pulls)) / elapsed, 1),
        "deltas_per_second": round(checked["deltas_applied"] / elapsed, 1),
        # CPU during the run: the server processes', this database's PostgreSQL backends', and this
        # script's own (the clients).
        "server_cpu_s": server_cpu, "postgres_cpu_s": db_cpu, "bench_clients_cpu_s": bench_cpu,
        "server_cpu_s_per_1000_deltas": round(1000 * server_cpu / max(1, checked["deltas_applied"]), 3),
        "deltas_per_server_cpu_s": round(checked["deltas_applied"] / max(0.01, server_cpu), 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "push": percentiles(pushes), "pull": percentiles(pulls), "audit": checked,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)
    print(json.dumps(report, indent=2))
    if not checked["ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
