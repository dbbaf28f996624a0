"""Lessons that know what they rest on: anchors found when a lesson is written, re-checked when the
project changes (SessionStart hook processes on real git repositories), contradicted by a later
session's evidence (the real learning worker), and a staleness archive sent to the team."""

import json
import os
import subprocess
import sys
import time

import pytest

from ace_engine.core.project import identify
from ace_engine.playbook import anchor_files, anchors, staleness
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from hookutil import payload, run_hook
from learnutil import Session, wait_for_learning

MAKEFILE = ".PHONY: gen test\ngen:\n\tpython gen.py\n\ntest: gen\n\tpytest -q\n"
PACKAGE = {"name": "web", "scripts": {"build": "vite build", "type-check": "vue-tsc --noEmit"}}
GEN = "Run `make gen` before `make test`: the tests import the generated client."
BUILD = "`npm run build` writes dist/; run it before the e2e tests."
PLAIN = "Keep commit messages short and in the imperative mood."


def git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def commit(root, message, files):
    for name, text in files.items():
        path = root / name
        if text is None:
            git(root, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(root, "add", name)
    git(root, "commit", "-q", "-m", message)
    time.sleep(0.01)  # a new mtime even on a coarse clock


@pytest.fixture
def repo(git_project):
    commit(git_project, "init", {"Makefile": MAKEFILE, "package.json": json.dumps(PACKAGE),
                                 "gen.py": "print('gen')\n", "src/api/auth.py": "def refresh_token():\n    pass\n"})
    return git_project


def learn(store, root, *texts):
    """Lessons written as the learner writes them: added, then their anchors recorded."""
    pb = Playbook(store, identify(str(root)))
    out = []
    for text in texts:
        bullet, _ = pb.add(text, "strategies_and_hard_rules")
        staleness.record(store, dict(bullet), str(root), time.time())
        out.append(bullet["id"])
    return pb, out


def start(root, session):
    code, out, err, _ = run_hook("SessionStart", payload("SessionStart", str(root), session_id=session,
                                                         source="startup"))
    assert code == 0, err
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


def ace(*args):
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- extraction -------------------------------------------------------------------------------------

def test_a_lesson_anchors_what_the_project_holds_and_nothing_it_lacks(repo):
    (repo / "package-lock.json").write_text(json.dumps({"packages": {"node_modules/vite": {"version": "5.0.2"}}}))
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}')
    found = anchors.extract("Run `make gen` (not `make nothere`), `npm run type-check` with vite 5 and "
                            "`compilerOptions.strict`; `refresh_token()` in src/api/auth.py.", str(repo))
    got = {(a["kind"], a["name"], a["file"]): a["value"] for a in found}
    assert got[("make", "gen", "Makefile")] == "python gen.py"
    assert got[("script", "type-check", "package.json")] == "vue-tsc --noEmit"
    assert got[("dep", "vite", "package-lock.json")] == "5.0.2"
    assert got[("config", "compilerOptions.strict", "tsconfig.json")] == "true"
    assert ("symbol", "refresh_token", "src/api/auth.py") in got and ("file", "src/api/auth.py", "src/api/auth.py") in got
    assert ("command", "make gen", "") in got
    assert not any(k[0] == "make" and k[1] == "nothere" for k in got), "a target the Makefile lacks is no anchor"
    assert anchors.extract(PLAIN, str(repo)) == []


def test_the_projects_own_package_in_its_lockfile_is_no_dependency(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "wakil"\n')
    (tmp_path / "uv.lock").write_text('[[package]]\nname = "wakil"\nversion = "0.1.0"\n\n'
                                      '[[package]]\nname = "httpx"\nversion = "0.27.0"\n')
    found = anchors.extract("Run the CLI with `uv run wakil`; it talks over `httpx`.", str(tmp_path))
    assert [a["name"] for a in found if a["kind"] == "dep"] == ["httpx"]


def test_files_outside_the_repository_are_never_read(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "Makefile").write_text("secret:\n\techo hi\n")
    (repo / "sub").symlink_to(outside)
    (repo / "Makefile").unlink()
    (repo / "Makefile").symlink_to(outside / "Makefile")
    assert anchor_files.read(str(repo), "Makefile") is None
    assert anchor_files.read(str(repo), "sub/Makefile") is None
    assert anchor_files.read(str(repo), "../elsewhere/Makefile") is None
    assert anchors.extract("Run `make secret` and `make -C sub secret`.", str(repo)) == [
        {"kind": "command", "name": "make secret", "file": "", "value": None, "state": "unchecked"},
        {"kind": "command", "name": "make -C sub secret", "file": "", "value": None, "state": "unchecked"}]


def test_the_parsers_read_each_kind(tmp_path):
    assert anchor_files.make_targets("X := 1\nall build: ; cc\n%.o: %.c\n\tcc\n") == {"all": "cc", "build": "cc"}
    assert anchor_files.just_recipes("set shell := ['bash']\ntest *args:\n  pytest\n") == {"test": "pytest"}
    assert set(anchor_files.mix_aliases('defp aliases do\n  [\n    "ecto.reset": ["ecto.drop"],\n'
                                        '    setup: ["deps.get"]\n  ]\nend\n')) == {"ecto.reset", "setup"}
    assert set(anchor_files.ci_jobs("on: push\njobs:\n  lint:\n    runs-on: x\n  e2e:\n    steps: []\n")) == \
        {"lint", "e2e"}
    assert set(anchor_files.ci_jobs("stages: [t]\n.tpl:\n  image: x\nunit:\n  script: make\n", gitlab=True)) == \
        {"unit"}
    assert anchor_files.lock_versions("yarn.lock", 'vite@^5.0.0:\n  version "5.0.2"\n') == {"vite": "5.0.2"}
    assert anchor_files.lock_versions("mix.lock", '  "phoenix": {:hex, :phoenix, "1.7.10", "x"},\n') == \
        {"phoenix": "1.7.10"}
    assert (anchor_files.major("5.0.2"), anchor_files.major("0.14.1")) == ("5", "0.14")


def test_a_value_that_only_grew_kept_what_it_was():
    kept = anchor_files.kept
    assert kept("vitest run", "vitest run --exclude tests/a.test.ts") and kept('["a", "b"]', '["a", "x", "b"]')
    assert not kept("vitest run", "vitest") and not kept("jest", "vitest run") and not kept("true", "false")
    assert not kept('{"strict": true}', '{"strict": false, "x": 1}') and not kept("", "x")
    cut = '["' + '", "'.join(f"item{i}" for i in range(40)) + '"]'
    grown = cut.replace('"item3"', '"item3", "new"')
    assert kept(cut[:300], grown[:300]), "an addition that pushed the old tail past the 300-character cut"
    assert not kept(cut[:300], cut.replace('"item3", ', "")[:300]), "an item taken out is seen before the cut"


# -- the check at SessionStart: real hook processes on a real repository's commits -----------------

TYPECHECK = "`npm run type-check` takes a minute: run it once before pushing, not after each edit."


def test_session_start_archives_a_gone_target_caveats_a_changed_script_and_keeps_a_grown_one(ace_home, repo):
    with SQLiteStore() as store:
        pb, (gen, build, typecheck, plain) = learn(store, repo, GEN, BUILD, TYPECHECK, PLAIN)
        assert {a["kind"] for a in store.anchors_of(gen)} == {"make", "command"}
    first = start(repo, "s1")
    assert "make gen" in first and "npm run build" in first and "to re-check" not in first

    commit(repo, "drop gen, build with a mode, type-check with tsc", {
        "Makefile": ".PHONY: test\ntest:\n\tpytest -q\n",
        "package.json": json.dumps({**PACKAGE, "scripts": {"build": "vite build --mode ci", "type-check": "tsc -b"}})})
    second = start(repo, "s2")
    assert "make gen" not in second and "imperative" in second
    # Grown (an option appended): nothing the lesson says can have become untrue: shown as it is.
    build_line = next(line for line in second.splitlines() if "npm run build" in line)
    assert "to re-check" not in build_line
    # Changed: shown with what changed (inject.recheck = caveat, the default).
    tc_line = next(line for line in second.splitlines() if "npm run type-check" in line)
    assert "(to re-check, the `type-check` script changed in package.json" in tc_line and "tsc -b" in tc_line
    with SQLiteStore() as store:
        status = {b["id"]: b["status"] for b in store.get_bullets([gen, build, typecheck, plain])}
        assert status == {gen: "archived", build: "active", typecheck: "active", plain: "active"}
        removed = store.changes(bullet_id=gen)[0]
        assert (removed["op"], removed["source"]) == ("REMOVE", "anchors")
        assert "`gen` is no longer a Makefile target" in removed["reason"]
        script = next(a for a in store.anchors_of(build) if a["kind"] == "script")
        assert script["state"] == "recheck" and "`vite build` → `vite build --mode ci`" in script["detail"]
        assert set(store.rechecks([build, typecheck, plain])) == {typecheck}

    shown = ace("show", typecheck)
    assert "Rests on" in shown and "changed" in shown and "tsc -b" in shown
    # The lessons to re-check, listed with what changed: the changed one and the grown one, nothing else.
    listed = json.loads(ace("patterns", "--to-recheck", "--json", "--project", str(repo)))
    assert {p["id"] for p in listed["patterns"]} == {typecheck, build} and "waiting" not in listed
    notes = {p["id"]: p["to_recheck"] for p in listed["patterns"]}
    assert any("tsc -b" in n for n in notes[typecheck]) and any("--mode ci" in n for n in notes[build])
    human = ace("patterns", "--to-recheck", "--project", str(repo))
    assert "2 lessons to re-check" in human and "ace keep ID" in human and "tsc -b" in human
    assert json.loads(ace("show", gen, "--json"))["anchors"][0]["state"] in ("gone", "unchecked")
    ace("keep", typecheck)  # the user confirms it: its anchors as the project holds them now, no caveat
    with SQLiteStore() as store:
        script = next(a for a in store.anchors_of(typecheck) if a["kind"] == "script")
        assert (script["state"], script["value"]) == ("ok", "tsc -b")
    third = start(repo, "s3")
    assert "npm run type-check" in third and "to re-check" not in third
    assert {p["id"] for p in json.loads(ace("patterns", "--to-recheck", "--json", "--project", str(repo)))["patterns"]} == {build}


def test_withhold_demotes_a_changed_lesson_until_confirmed(ace_home, repo, monkeypatch):
    monkeypatch.setenv("ACE_INJECT_RECHECK", "withhold")
    with SQLiteStore() as store:
        pb, (typecheck,) = learn(store, repo, TYPECHECK)
    commit(repo, "type-check with tsc", {"package.json": json.dumps({**PACKAGE, "scripts": {"type-check": "tsc -b"}})})
    assert "npm run type-check" not in start(repo, "s1")
    with SQLiteStore() as store:
        demoted = store.changes(bullet_id=typecheck)[0]
        assert store.get_bullet(typecheck)["status"] == "candidate"
        assert demoted["op"] == "DEMOTE" and "`vue-tsc --noEmit` → `tsc -b`" in demoted["reason"]
    ace("keep", typecheck)
    assert "npm run type-check" in start(repo, "s2")


def test_nothing_changed_reads_no_file_and_a_revert_brings_the_lesson_back(ace_home, repo):
    with SQLiteStore() as store:
        pid = identify(str(repo))
        pb, (build,) = learn(store, repo, BUILD)
        project_id = pb.project_id
        assert staleness.check(store, project_id, str(repo), time.time())["changed_files"] == 0
        (repo / "package.json").write_text(json.dumps({**PACKAGE, "scripts": {"build": "rollup -c"}}))
        assert staleness.check(store, project_id, str(repo), time.time(), withhold=True)["demoted"] == 1
        time.sleep(0.01)
        (repo / "package.json").write_text(json.dumps(PACKAGE))
        assert staleness.check(store, project_id, str(repo), time.time(), withhold=True)["restored"] == 1
        assert store.get_bullet(build)["status"] == "active" and pid.key


def test_a_dependency_upgrade_rechecks_only_on_a_major_version(ace_home, repo):
    lock = lambda v: json.dumps({"packages": {"node_modules/vite": {"version": v}}})  # noqa: E731
    commit(repo, "lock", {"package-lock.json": lock("4.5.0")})
    with SQLiteStore() as store:
        pb, (lesson,) = learn(store, repo, "With `vite` the dev server needs --host inside Docker.")
        commit(repo, "patch", {"package-lock.json": lock("4.5.3")})
        assert staleness.check(store, pb.project_id, str(repo), time.time())["caveated"] == 0
        commit(repo, "major", {"package-lock.json": lock("5.0.0")})
        assert staleness.check(store, pb.project_id, str(repo), time.time())["caveated"] == 1
        assert "`vite` went 4.5.0 → 5.0.0" in store.rechecks([lesson])[lesson][0]


def test_a_removed_file_archives_and_a_symbol_rechecks_by_its_definition_line(ace_home, repo):
    commit(repo, "cache", {"src/api/cache.py": "class TokenCache:\n    pass\n\n\ndef evict_all(cache):\n    pass\n"})
    with SQLiteStore() as store:
        pb, (file_lesson, symbol_lesson, kept, changed) = learn(
            store, repo, "gen.py writes the client; never edit the output by hand.",
            "`refresh_token()` in src/api/auth.py retries once on a 401.",
            "`TokenCache` in src/api/cache.py is per process: never share it across workers.",
            "`evict_all()` in src/api/cache.py drops every token: call it on logout.")
        assert next(a for a in store.anchors_of(changed) if a["kind"] == "symbol")["value"] == "def evict_all(cache):"
        commit(repo, "move", {"gen.py": None, "src/api/auth.py": "def renew():\n    pass\n",
                              "src/api/cache.py": "# tokens\nclass TokenCache:\n    ttl = 60\n\n\n"
                                                  "def evict_all(cache, user):\n    pass\n"})
        result = staleness.check(store, pb.project_id, str(repo), time.time())
        assert (result["archived"], result["caveated"]) == (1, 2)
        assert "`gen.py` no longer exists" in store.changes(bullet_id=file_lesson)[0]["reason"]
        assert "`refresh_token` is no longer in src/api/auth.py" in store.rechecks([symbol_lesson])[symbol_lesson][0]
        # The file changed around `TokenCache`, its definition line did not: nothing to re-check.
        assert {a["state"] for a in store.anchors_of(kept) if a["kind"] == "symbol"} == {"ok"}
        assert not store.rechecks([kept])
        # `evict_all`'s signature changed: the thing the lesson names changed.
        assert "`def evict_all(cache):` → `def evict_all(cache, user):`" in store.rechecks([changed])[changed][0]
        assert {b["status"] for b in store.get_bullets([symbol_lesson, kept, changed])} == {"active"}


# -- team: a staleness archive is a delta like any other --------------------------------------------

def test_a_staleness_archive_is_pushed_to_the_team_with_its_reason(ace_home, repo):
    from ace_engine.team_client import outbox

    with SQLiteStore() as store:
        pb, (gen,) = learn(store, repo, GEN)
        commit(repo, "drop gen", {"Makefile": ".PHONY: test\ntest:\n\tpytest -q\n"})
        staleness.check(store, pb.project_id, str(repo), time.time())
        deltas = outbox.next_batch(store, pb.project_id, 0).deltas
    removal = [d for d in deltas if d["op"] == "REMOVE"]
    assert removal and removal[0]["lesson_id"] == gen and "`gen` is no longer a Makefile target" in removal[0]["reason"]


# -- contradiction by evidence: the learning worker, on a later session ------------------------------

def test_a_later_session_where_the_lessons_command_is_broken_demotes_it(ace_home, repo):
    with SQLiteStore() as store:
        pb, (gen, plain) = learn(store, repo, GEN, PLAIN)
    s = Session(repo, session_id="later")
    s.start()
    s.prompt("regenerate the API client and run the tests")
    s.bash("make gen", error="Exit code 2\nmake: *** No rule to make target 'gen'.  Stop.")
    s.bash("make test", error="Exit code 2\nFAILED tests/test_api.py::test_get - ImportError: client")
    s.stop("make gen no longer exists; the tests fail on the missing client.")
    s.end()
    wait_for_learning(ace_home)
    with SQLiteStore() as store:
        assert store.get_bullet(gen)["status"] == "candidate" and store.get_bullet(plain)["status"] == "active"
        change = store.changes(bullet_id=gen)[0]
        assert change["op"] == "DEMOTE" and change["session_id"] == "later"
        assert "`make gen` failed" in change["reason"] and "No rule to make target" in change["reason"]
        command = next(a for a in store.anchors_of(gen) if a["kind"] == "command" and a["name"] == "make gen")
        assert command["state"] == "changed"


def test_a_failing_test_run_contradicts_nothing():
    from ace_engine.learning import contradiction

    steps = [{"step": 1, "command": "make test", "success": False, "exit_code": 2,
              "error": "FAILED tests/test_x.py::test_y - AssertionError", "output": "1 failed"},
             {"step": 2, "command": "make gen", "success": False, "exit_code": 2,
              "output": "make: *** No rule to make target 'gen'.  Stop."},
             {"step": 3, "command": "make gen", "success": True}]
    assert contradiction.failures({"trajectory": steps}) == [], "broken then passing: not contradicted"
    assert contradiction.failures({"trajectory": steps[:2]})[0][1] == "gen"
    assert not contradiction._covers("pytest", "pytest --nope", "--nope"), "a bare program's flags are the run's"
    assert contradiction._covers("./scripts/test.sh --fast", "./scripts/test.sh --fast -k x", "--fast")


REFIX = "Run `make gen` before `make test`: without it, it fails with `ImportError: cannot import name 'Client'`."


def test_a_later_session_where_the_lessons_fix_no_longer_fixes_demotes_it(ace_home, repo):
    with SQLiteStore() as store:
        pb, (refix, plain) = learn(store, repo, REFIX, PLAIN)
    s = Session(repo, session_id="refix")
    s.start()
    s.prompt("the api tests fail on an import again")
    s.bash("make gen", "python gen.py\ngen")  # the lesson's fix, applied: it runs fine
    s.bash("make test", error="Exit code 2\nE   ImportError: cannot import name 'Client' from 'api.client'\n"
                              "make: *** [Makefile:6: test] Error 1")
    s.stop("make gen runs but the client is no longer generated; the import still fails.")
    s.end()
    wait_for_learning(ace_home)
    with SQLiteStore() as store:
        assert store.get_bullet(refix)["status"] == "candidate" and store.get_bullet(plain)["status"] == "active"
        change = store.changes(bullet_id=refix)[0]
        assert change["op"] == "DEMOTE" and change["session_id"] == "refix"
        assert "its fix no longer fixes" in change["reason"] and "`make gen` ran" in change["reason"]
        assert "`make test` failed again with `ImportError: cannot import name 'Client'`" in change["reason"]
        fix = next(a for a in store.anchors_of(refix) if a["kind"] == "command" and a["name"] == "make gen")
        assert fix["state"] == "changed"


def test_a_fix_that_still_fixes_or_another_failure_contradicts_nothing(ace_home, repo):
    from ace_engine.learning import contradiction

    with SQLiteStore() as store:
        pb, (refix, path_lesson) = learn(store, repo, REFIX, "Run `make gen` after editing `src/api/auth.py`.")

        def run(*steps):
            trajectory = {"session_id": "t", "trajectory": [{"step": n + 1, "tool_event_id": n + 1, **step}
                                                            for n, step in enumerate(steps)]}
            return contradiction.check(store, pb, trajectory, time.time())

        gen = {"command": "make gen", "success": True, "output": "gen"}
        assert run(gen, {"command": "make test", "success": True, "output": "3 passed"}) == []
        assert run(gen, {"command": "make test", "success": False, "exit_code": 2,
                         "error": "E   AssertionError: assert 2 == 3 (src/api/auth.py:4)"}) == [], \
            "another failure, and a file the lesson names is no failure it promised away"
        assert run({"command": "make test", "success": False, "exit_code": 2,
                    "error": "ImportError: cannot import name 'Client'"}, gen) == [], "the fix came after"
        assert store.get_bullet(refix)["status"] == store.get_bullet(path_lesson)["status"] == "active"
        assert run(gen, {"command": "make test", "success": False, "exit_code": 2,
                         "error": "ImportError: cannot import name 'Client' from 'api'"}) == [refix]


def test_the_steps_a_lesson_was_written_from_do_not_contradict_it(ace_home, repo):
    """The session that taught a two-command fix ran the first command, failed again, then ran the
    second and passed: the lesson cites that whole stretch, so its own failure does not demote it. The
    same failure after the stretch it cites still does."""
    from ace_engine.learning import contradiction

    lesson = ("Run `make deps` then `make gen` before `make test`: without both it fails with "
              "`ImportError: cannot import name 'Client'`.")
    steps = [{"command": "make test", "success": False, "exit_code": 2, "error": "ImportError: cannot import name 'Client'"},
             {"command": "make deps", "success": True, "output": "ok"},
             {"command": "make test", "success": False, "exit_code": 2, "error": "ImportError: cannot import name 'Client'"},
             {"command": "make gen", "success": True, "output": "gen"},
             {"command": "make test", "success": True, "output": "3 passed"}]
    trajectory = {"session_id": "t", "trajectory": [{"step": n + 1, "tool_event_id": 100 + n, **step}
                                                    for n, step in enumerate(steps)]}
    with SQLiteStore() as store:
        pb = Playbook(store, identify(str(repo)))
        taught, _ = pb.add(lesson, "troubleshooting_and_pitfalls", source="learning",
                           provenance={"source": "learning", "tool_event_ids": [100, 101, 102, 103, 104]})
        staleness.record(store, dict(taught), str(repo), time.time())
        assert any(a["kind"] == "command" and a["name"] == "make deps" for a in store.anchors_of(taught["id"]))
        assert contradiction.check(store, pb, trajectory, time.time()) == []
        assert store.get_bullet(taught["id"])["status"] == "active"
        store.update_bullet(taught["id"], {"provenance": {"source": "learning", "tool_event_ids": [100, 101]}})
        assert contradiction.check(store, pb, trajectory, time.time()) == [taught["id"]], \
            "cited only up to the first fix: the failure after it is a later step's evidence"



# -- confirmation by the model: one call for a batch, through the budgets ------------------------------

def model_cfg(server, **extra):
    from ace_engine.core import config as config_mod

    return {**config_mod.DEFAULTS, "llm.provider": "openai", "llm.model": "m", "llm.base_url": server.url + "/v1",
            "llm.timeout_s": 5.0, **extra}


def test_the_model_confirms_a_batch_of_lessons_to_recheck_in_one_call(ace_home, repo, scripted_chat):
    from ace_engine.learning import recheck

    test_lesson = "`make test` runs the suite quietly; pass `ARGS=-k name` for one test."
    with SQLiteStore() as store:
        pb, (build, typecheck, tests) = learn(store, repo, BUILD, TYPECHECK, test_lesson)
        commit(repo, "new tools", {"package.json": json.dumps({**PACKAGE, "scripts": {"build": "rollup -c",
                                                                                      "type-check": "tsc -b"}}),
                                   "Makefile": ".PHONY: gen test\ngen:\n\tpython gen.py\n\ntest: gen\n\ttox\n"})
        assert staleness.check(store, pb.project_id, str(repo), time.time())["caveated"] == 3
        server = scripted_chat([json.dumps({"verdicts": [
            {"id": build, "verdict": "still_true", "why": "rollup still writes dist/"},
            {"id": typecheck, "verdict": "wrong", "why": "tsc -b builds, it does not only type-check"},
            {"id": tests, "verdict": "unsure"},
            {"id": "ctx-invented", "verdict": "wrong"}]})])
        done = recheck.confirm(store, pb, model_cfg(server), str(repo), time.time())
        assert (done["asked"], done["confirmed"], done["demoted"], done["skipped"]) == (3, 1, 1, None)
        (request,) = server.requests
        sent = json.dumps(request["body"])
        assert "<lessons>" in sent and "rollup -c" in sent and "`npm run type-check` takes a minute" in sent
        assert not store.rechecks([build]), "confirmed: its anchors are the project's now, no caveat"
        assert store.get_bullet(build)["status"] == "active"
        demoted = store.changes(bullet_id=typecheck)[0]
        assert (demoted["op"], demoted["source"]) == ("DEMOTE", "model") and "does not only type-check" in \
            demoted["reason"]
        assert store.get_bullet(tests)["status"] == "active" and store.rechecks([tests]), "unsure: still to re-check"
        # Asked once per change: nothing new since, no call.
        assert recheck.confirm(store, pb, model_cfg(server), str(repo), time.time())["asked"] == 0
        assert len(server.requests) == 1


def test_over_budget_or_offline_the_lessons_stay_to_recheck(ace_home, repo, scripted_chat):
    from ace_engine.learning import recheck
    from ace_engine.llm.budget import UsageLedger

    with SQLiteStore() as store:
        pb, (typecheck,) = learn(store, repo, TYPECHECK)
        commit(repo, "tsc", {"package.json": json.dumps({**PACKAGE, "scripts": {"type-check": "tsc -b"}})})
        staleness.check(store, pb.project_id, str(repo), time.time())
        server = scripted_chat([json.dumps({"verdicts": [{"id": typecheck, "verdict": "wrong"}]})])
        UsageLedger().record("openai", 10, 10, 0.0)  # today's one call is spent
        over = recheck.confirm(store, pb, model_cfg(server, **{"llm.max_calls_per_day": 1}), str(repo), time.time())
        assert over["asked"] == 0 and "budget" in over["skipped"] and server.requests == []
        offline = model_cfg(server, **{"llm.base_url": "http://127.0.0.1:9/v1", "llm.timeout_s": 2.0})
        assert recheck.confirm(store, pb, offline, str(repo), time.time())["skipped"]
        assert store.get_bullet(typecheck)["status"] == "active" and store.rechecks([typecheck])
        assert recheck.confirm(store, pb, model_cfg(server), str(repo), time.time())["demoted"] == 1, \
            "what was skipped is asked about next time"


def test_a_check_past_its_deadline_leaves_the_rest_to_the_next_one(ace_home, repo):
    with SQLiteStore() as store:
        pb, ids = learn(store, repo, *[f"gen.py writes client {n}; never edit its output by hand." for n in range(3)],
                        BUILD)
        commit(repo, "drop gen.py, rewrite build", {
            "gen.py": None, "package.json": json.dumps({**PACKAGE, "scripts": {"build": "rollup -c"}})})
        late = lambda: staleness.check(store, pb.project_id, str(repo), time.time(),  # noqa: E731
                                       deadline=time.perf_counter() - 1)
        first = late()
        assert (first["changed_files"], first["archived"]) == (1, 1), "one file read, one lesson acted on"
        from types import SimpleNamespace

        from ace_engine.hooks.inject import caveated

        live = [b for b in store.get_bullets(ids) if b["status"] == "active"]
        assert len(live) == 3 and [b["id"] for b in caveated(SimpleNamespace(store=store), live)] == [ids[3]], \
            "found gone, not archived yet: not injected either"
        second = late()  # the other file, and of the lessons left one more
        assert (second["changed_files"], second["archived"], second["caveated"]) == (1, 1, 1)
        rest = staleness.check(store, pb.project_id, str(repo), time.time())
        assert rest["archived"] == 1 and rest["changed_files"] == 0
        assert {b["status"] for b in store.get_bullets(ids[:3])} == {"archived"}
        assert staleness.check(store, pb.project_id, str(repo), time.time())["archived"] == 0
        assert store.rechecks([ids[3]]), "the rewritten build script: to re-check"


def test_an_edited_file_keeps_being_watched_though_only_its_presence_is_anchored(ace_home, repo):
    with SQLiteStore() as store:
        pb, (lesson,) = learn(store, repo, "gen.py writes the client; never edit the output by hand.")
        commit(repo, "edit gen.py", {"gen.py": "print('gen v2')\n"})
        assert staleness.check(store, pb.project_id, str(repo), time.time())["changed_files"] == 1
        assert "gen.py" in store.anchor_stamps(pb.project_id), "still watched: its deletion is news"
        assert staleness.check(store, pb.project_id, str(repo), time.time())["changed_files"] == 0, "its new stamp"
        commit(repo, "drop gen.py", {"gen.py": None})
        assert staleness.check(store, pb.project_id, str(repo), time.time())["archived"] == 1

