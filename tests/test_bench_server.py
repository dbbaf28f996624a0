"""`bench/server_load.py` keeps working: a few clients for a few seconds on a temporary SQLite
server database, through the real `ace server run` process; the audit must find nothing lost or
duplicated. (The 50-client, 60-second PostgreSQL run is the benchmark itself, not a test.)"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow  # the load bench itself: servers and clients in processes for seconds (5 s each, loaded)
@pytest.mark.parametrize("projects", [1, 2])
def test_the_load_bench_runs_and_its_audit_passes(tmp_path, ace_home, projects):
    out = tmp_path / "load.json"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "server_load.py"), "--clients", "4",
                           "--seconds", "2", "--database", "sqlite", "--no-access-log", "--projects", str(projects),
                           "--out", str(out)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    report = json.loads(out.read_text())
    audit = report["audit"]
    assert audit["ok"] and audit["problems"] == []
    assert audit["deltas_applied"] == audit["deltas_logged"] > 0 and audit["retried_deltas"] > 0
    assert report["access_log"] is False  # the servers ran as compose.yaml runs them
    assert report["projects"] == projects  # each project's log audited on its own
    assert report["push"]["n"] > 0 and report["pull"]["n"] > 0 and report["deltas_per_second"] > 0
