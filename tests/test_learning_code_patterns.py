"""Code patterns the agent writes reach the curator: a harmful one repeated across sessions becomes
a lesson (once), and removing it later marks that lesson helpful."""

import json
import os
import subprocess
import sys

from learnutil import Session, bullets

BARE_EXCEPT = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        return None\n"
FIXED = "def load(path):\n    try:\n        return open(path).read()\n    except OSError:\n        return None\n"


def _learn(project):
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", "learn", "--project", str(project), "--json"],
                          capture_output=True, text=True, env=os.environ.copy(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _session(project, sid, content, message):
    s = Session(project, session_id=sid)
    s.start()
    s.prompt("add a loader for the settings file in src/loader.py and run the tests")
    s.write("src/loader.py", content)
    s.bash("python -m pytest -q", stdout="3 passed in 0.02s")
    s.stop(message)


def _pattern_lessons(ace_home):
    return [b for b in bullets(ace_home, "active") if "except" in b["content"].lower()
            and "code-patterns" not in b["content"]]


def test_repeated_harmful_pattern_becomes_one_lesson_then_removal_marks_it_helpful(ace_home, git_project, monkeypatch):
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)
    _session(git_project, "s-1", BARE_EXCEPT, "Added the loader; tests pass.")
    _learn(git_project)
    assert not _pattern_lessons(ace_home), "one session is not a lesson"

    _session(git_project, "s-2", BARE_EXCEPT, "Added the loader again; tests pass.")
    _learn(git_project)
    (lesson,) = _pattern_lessons(ace_home)
    assert lesson["section"] == "troubleshooting_and_pitfalls"
    assert "2 sessions" in lesson["provenance"], lesson["provenance"]

    _session(git_project, "s-3", BARE_EXCEPT, "Loader rewritten; tests pass.")
    _learn(git_project)
    assert [b["id"] for b in _pattern_lessons(ace_home)] == [lesson["id"]], "reinforced, never duplicated"

    s = Session(git_project, session_id="s-4")
    s.start()
    s.prompt("catch only OSError in src/loader.py")
    s.edit("src/loader.py", "    except:\n", "    except OSError:\n")
    s.bash("python -m pytest -q", stdout="3 passed in 0.02s")
    s.stop("Narrowed the except; tests pass.")
    _learn(git_project)
    (after,) = _pattern_lessons(ace_home)
    assert after["id"] == lesson["id"] and after["helpful"] > lesson["helpful"]
