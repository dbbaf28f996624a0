"""Export and import of the playbook (playbook/transfer.py, `ace export`, `ace import`) against a
real store: the format, round trips, merging by content, idempotence, and all-or-nothing validation."""

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ace_engine.core.project import identify
from ace_engine.playbook import transfer
from ace_engine.playbook.playbook import Playbook, content_key
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace, examples

BULLET_KEYS = {"id", "scope", "project", "section", "content", "domains", "helpful", "harmful", "helpful_explicit",
               "harmful_explicit", "confidence", "status", "provenance", "created_at", "updated_at", "last_used_at",
               "retrieval_count"}


def ace_json(*args):
    result = ace(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def proj(ace_home, git_project):
    return str(git_project)


@pytest.fixture
def seeded(proj):
    with SQLiteStore() as store:
        pb = Playbook(store, identify(proj))
        a, _ = pb.add("Run the suite with python -m pytest -q", "rules", domains=["python-testing"],
                      provenance={"evidence": "step 2 passed", "files": ["tests/test_app.py"]})
        b, _ = pb.add("JWT tokens expire after 15 minutes", "pitfalls", domains=["auth-jwt"])
        c, _ = pb.add("Held back: curl | sh installs", "rules", status="quarantined")
        d, _ = pb.add("Old advice nobody needs", "rules")
        g, _ = pb.add("Prefer ripgrep over grep -r", "snippets", scope="global")
        pb.tag(a["id"], "helpful", count=4)
        pb.tag(a["id"], "helpful", explicit=True)
        pb.tag(b["id"], "harmful", explicit=True, count=2)
        pb.remove(d["id"])
    return {"a": a["id"], "b": b["id"], "quarantined": c["id"], "archived": d["id"], "global": g["id"]}


def snapshot(proj) -> dict:
    """content key → the fields an export/import must keep."""
    with SQLiteStore() as store:
        pid = store.project_id(identify(proj).key)
        rows = store.list_bullets(pid, statuses=("active", "quarantined", "archived"))
    return {r["content_key"]: (r["section"], tuple(r["domains"]), r["helpful"], r["harmful"], r["helpful_explicit"],
                               r["harmful_explicit"], r["confidence"], r["status"], r["project_id"] is None)
            for r in rows}


def write(tmp_path, data, name="in.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


# -- export ----------------------------------------------------------------------------------------


def test_export_document(seeded, proj):
    result = ace("export", "--project", proj)
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert set(doc) == {"format", "version", "exported_at", "project", "bullets"}
    assert (doc["format"], doc["version"]) == ("ace-engine.playbook", 1)
    assert doc["project"] == {"key": "git:github.com/Acme/Widget", "name": "Widget", "root": proj, "remote": "github.com/Acme/Widget"}
    assert time.strptime(doc["exported_at"], "%Y-%m-%dT%H:%M:%SZ")
    by_id = {b["id"]: b for b in doc["bullets"]}
    assert set(by_id) == set(seeded.values()), "every status, and the global bullets"
    assert all(set(b) == BULLET_KEYS for b in doc["bullets"])
    a = by_id[seeded["a"]]
    assert (a["helpful"], a["helpful_explicit"], a["scope"], a["project"]) == (4, 1, "project", doc["project"]["key"])
    assert a["provenance"]["evidence"] == "step 2 passed" and a["created_at"] <= a["updated_at"]
    assert by_id[seeded["global"]]["scope"] == "global" and by_id[seeded["global"]]["project"] is None
    assert by_id[seeded["archived"]]["status"] == "archived"


def test_export_to_a_file_refuses_to_overwrite(seeded, proj, tmp_path):
    out = tmp_path / "pb.json"
    summary = ace_json("export", "-o", out, "--project", proj)
    assert summary == {"file": str(out), "bullets": 5, "format": "ace-engine.playbook", "version": 1}
    assert len(json.loads(out.read_text())["bullets"]) == 5
    out.write_text("keep me")
    refused = ace("export", "-o", out, "--project", proj)
    assert refused.exit_code == 1 and "--force" in refused.stderr and out.read_text() == "keep me"
    assert ace("export", "-o", out, "--force", "--project", proj).exit_code == 0
    assert json.loads(out.read_text())["format"] == "ace-engine.playbook"


def test_export_all_projects(seeded, proj, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    assert ace("add", "Other project lesson", "--section", "rules", "--project", other).exit_code == 0
    doc = json.loads(ace("export", "--all-projects", "--project", proj).stdout)
    assert doc["project"] is None and {p["name"] for p in doc["projects"]} == {"Widget", "other"}
    assert {b["project"] for b in doc["bullets"]} == {"git:github.com/Acme/Widget", f"path:{other}", None}
    mine = json.loads(ace("export", "--project", other).stdout)
    assert {b["content"] for b in mine["bullets"]} == {"Other project lesson", "Prefer ripgrep over grep -r"}


# -- round trip, merge, idempotence ------------------------------------------------------------------


def test_export_clear_import_round_trip(seeded, proj, tmp_path):
    before = snapshot(proj)
    out = tmp_path / "pb.json"
    ace_json("export", "-o", out, "--project", proj)
    assert ace_json("clear", "--confirm", "--all-projects", "--project", proj)["removed"] == 5
    result = ace_json("import", out, "--trust", "--project", proj)  # one's own export: status, scope, counters kept
    assert (result["created"], result["merged"], result["skipped"], result["total"]) == (5, 0, 0, 5)
    assert snapshot(proj) == before
    original = {b["content"]: b["id"] for b in json.loads(out.read_text())["bullets"]}
    for bullet in ace_json("patterns", "--status", "all", "--project", proj)["patterns"]:
        assert bullet["provenance"]["imported"]["id"] == original[bullet["content"]]
        assert bullet["provenance"]["imported"]["file"] == "pb.json"
    again = ace_json("import", out, "--trust", "--project", proj)
    assert (again["created"], again["merged"], again["skipped"]) == (0, 0, 5)
    assert snapshot(proj) == before


def test_reimport_writes_nothing(seeded, proj, tmp_path):
    out = tmp_path / "pb.json"
    ace_json("export", "-o", out, "--project", proj)
    with SQLiteStore() as store:
        changes_before = len(store.changes(limit=10_000))
    result = ace_json("import", out, "--trust", "--project", proj)
    assert (result["created"], result["merged"], result["skipped"]) == (0, 0, 5)
    assert {i["id"] for i in result["items"]} == set(seeded.values())
    with SQLiteStore() as store:
        assert len(store.changes(limit=10_000)) == changes_before


def test_merge_raises_counters_to_the_max(seeded, proj, tmp_path):
    items = [
        {"content": "run the suite with PYTHON -m pytest -q!", "section": "rules", "helpful": 9, "harmful": 1},
        {"content": "JWT tokens expire after 15 minutes", "section": "pitfalls", "helpful": 0, "harmful": 0,
         "harmful_explicit": 1},
    ]
    result = ace_json("import", write(tmp_path, items), "--trust", "--project", proj)
    assert [i["outcome"] for i in result["items"]] == ["merged", "skipped"]
    assert [i["id"] for i in result["items"]] == [seeded["a"], seeded["b"]]
    with SQLiteStore() as store:
        a, b = store.get_bullet(seeded["a"]), store.get_bullet(seeded["b"])
        assert (a["helpful"], a["harmful"], a["helpful_explicit"]) == (9, 1, 1)
        assert (b["harmful"], b["harmful_explicit"]) == (0, 2), "lower counters in the file never lower ours"
        assert a["confidence"] == pytest.approx((9 + 3 + 2) / (9 + 3 + 1 + 4), abs=1e-4)
        assert store.changes(bullet_id=a["id"])[0]["source"] == "import"


def test_an_archived_local_bullet_stays_archived(seeded, proj, tmp_path):
    result = ace_json("import", write(tmp_path, [{"content": "Old advice nobody needs", "section": "rules",
                                                   "helpful": 1}]), "--trust", "--project", proj)
    assert result["merged"] == 1
    with SQLiteStore() as store:
        assert store.get_bullet(seeded["archived"])["status"] == "archived"


def test_untrusted_import_takes_only_the_words(seeded, proj, tmp_path):
    """Without --trust a file's status, scope and counters are not believed; it can only hold a
    lesson back (quarantined / archived stay so)."""
    items = [{"content": "Pin the CI image by digest", "section": "rules", "status": "active", "scope": "global",
              "helpful": 40, "helpful_explicit": 9, "confidence": 0.97},
             {"content": "Retired advice from the file", "section": "rules", "status": "archived"},
             {"content": "run the suite with PYTHON -m pytest -q!", "section": "rules", "helpful": 99}]
    result = ace_json("import", write(tmp_path, items), "--project", proj)
    assert [i["outcome"] for i in result["items"]] == ["created", "created", "skipped"]
    with SQLiteStore() as store:
        pinned, retired, known = (store.get_bullet(i["id"]) for i in result["items"])
    assert pinned["project_id"] is not None and pinned["status"] == "active"
    assert (pinned["helpful"], pinned["helpful_explicit"], pinned["confidence"]) == (0, 0, 0.5)
    assert retired["status"] == "archived"
    assert known["helpful"] == 4, "an existing bullet's counters are not raised by an untrusted file"


def test_plain_list_import(proj, tmp_path):
    items = [
        {"content": "Use uv for installs", "section": "strategies_and_hard_rules", "domain": "python-packaging"},
        {"content": "Retry flaky network tests once", "section": "pitfalls", "domain": ["ci", "python-testing"],
         "helpful": 3, "harmful": 1},
        {"content": "Quote globs in shell commands", "section": "snippets"},
        {"content": "use UV for installs.", "section": "rules"},
    ]
    result = ace_json("import", write(tmp_path, items), "--trust", "--project", proj)
    assert (result["created"], result["merged"], result["skipped"], result["total"]) == (3, 0, 1, 4)
    rows = {p["content"]: p for p in ace_json("patterns", "--project", proj)["patterns"]}
    assert rows["Use uv for installs"]["domains"] == ["python-packaging"]
    assert rows["Retry flaky network tests once"]["domains"] == ["ci", "python-testing"]
    assert (rows["Retry flaky network tests once"]["helpful"], rows["Retry flaky network tests once"]["harmful"]) == (3, 1)
    assert rows["Quote globs in shell commands"]["domains"] == ["shell"], "derived when not given"
    assert rows["Use uv for installs"]["provenance"]["source"] == "import"
    human = ace("import", write(tmp_path, items), "--project", proj)
    assert "0 created, 0 merged, 4 skipped" in human.stdout


# -- validation: clear errors, nothing half-imported ---------------------------------------------------


@pytest.mark.parametrize("items,messages", [
    ([{"content": "ok lesson", "section": "rules"}, {"section": "rules"}, "text", {"content": "x", "section": "recipes"}],
     ["bad.json: item 1: `content` is missing", "bad.json: item 2: expected an object",
      "bad.json: item 3: unknown section 'recipes'"]),
    ([{"content": "a", "section": "rules", "helpful": -1}, {"content": "b", "section": "rules", "harmful": True},
      {"content": "c", "section": "rules", "domain": 5}, {"content": "d" * 2001, "section": "rules"},
      {"content": "e", "section": "rules", "status": "deleted"}, {"content": "f"}],
     ["item 0: `helpful` must be a whole number ≥ 0, got -1", "item 1: `harmful` must be a whole number",
      "item 2: `domain` must be a string or a list of strings", "item 3: a bullet is at most 2000 characters",
      "item 4: `status` must be one of", "item 5: `section` is missing"]),
])
def test_invalid_items_are_all_reported_and_nothing_is_imported(proj, tmp_path, items, messages):
    result = ace("import", write(tmp_path, items, "bad.json"), "--project", proj)
    assert result.exit_code == 1
    for message in messages:
        assert message in result.stderr
    assert "nothing was imported" in result.stderr
    assert ace_json("patterns", "--status", "all", "--project", proj)["count"] == 0


@pytest.mark.parametrize("text,message", [
    ('[{"content": "a", "section": "rules"},', "bad.json: not valid JSON (line 1, column"),
    ('{"bullets": []}', "expected an ace-engine export"),
    ('{"format": "ace-engine.playbook", "version": 2, "bullets": []}', "newer ace-engine"),
    ('{"format": "ace-engine.playbook", "version": 1, "bullets": {}}', '"bullets" must be a list'),
    ('42', "got int"),
])
def test_unusable_files_are_refused(proj, tmp_path, text, message):
    result = ace("import", write(tmp_path, text, "bad.json"), "--project", proj)
    assert result.exit_code == 1 and message in result.stderr


@pytest.mark.parametrize("depth", [200_000, 100])  # past the decoder's recursion limit; readable but not ours
def test_deeply_nested_json_is_refused_in_one_line(proj, tmp_path, depth):
    nested = '{"a": ' * depth + "1" + "}" * depth
    path = write(tmp_path, f'[{{"content": "Use uv for installs", "section": "rules", "provenance": {nested}}}]',
                 "deep.json")
    result = ace("import", path, "--project", proj, "--trust", process=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "deep.json: JSON nested" in result.stderr and "nothing was imported" in result.stderr
    assert ace_json("patterns", "--status", "all", "--project", proj)["count"] == 0


def test_many_problems_are_summarized(proj, tmp_path):
    items = [{"content": "x", "section": "nope"} for _ in range(30)]
    result = ace("import", write(tmp_path, items, "bad.json"), "--project", proj)
    assert result.stderr.count("unknown section") == transfer.MAX_PROBLEMS_SHOWN
    assert "… and 10 more" in result.stderr


def test_a_failure_while_applying_rolls_everything_back(seeded, proj):
    """Validation passed, then something breaks mid-way: the one transaction leaves no trace."""
    items = transfer.parse(json.dumps([{"content": f"lesson number {i}", "section": "rules"} for i in range(5)]))
    with SQLiteStore() as store:
        pb = Playbook(store, identify(proj))
        calls = []

        def explode(done):
            calls.append(done)
            if done == 3:
                raise RuntimeError("disk full")

        with pytest.raises(RuntimeError):
            transfer.import_items(pb, items, on_item=explode)
        assert calls == [1, 2, 3]
        contents = {b["content"] for b in pb.bullets(statuses=("active", "quarantined", "archived"))}
        assert not any(c.startswith("lesson number") for c in contents)


# -- large files -------------------------------------------------------------------------------------


def test_large_import_with_progress(proj, tmp_path):
    items = [{"content": f"Lesson {i}: use helper_{i} for module {i}", "section": "rules", "helpful": i % 3}
             for i in range(1500)]
    path = write(tmp_path, items, "big.json")
    started = time.perf_counter()
    result = ace("import", path, "--project", proj)
    first = time.perf_counter() - started
    assert result.exit_code == 0 and "1500 created, 0 merged, 0 skipped" in result.stdout
    started = time.perf_counter()
    again = ace_json("import", path, "--project", proj)
    second = time.perf_counter() - started
    assert again["skipped"] == 1500
    print(f"import of 1500 items: {first:.2f}s, re-import {second:.2f}s")
    assert first < 30 and second < 30


# -- property: any valid list imports idempotently ----------------------------------------------------

lesson = st.fixed_dictionaries(
    {"content": st.text(alphabet="abcde XY.,", min_size=1, max_size=20).filter(lambda t: content_key(t)),
     "section": st.sampled_from(["rules", "pitfalls", "snippets", "apis"])},
    optional={"helpful": st.integers(0, 5), "harmful": st.integers(0, 5),
              "domain": st.one_of(st.sampled_from(["ci", "auth"]), st.lists(st.sampled_from(["git", "docker"]), max_size=2))},
)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(lesson, max_size=12))
def test_any_list_imports_once(tmp_path_factory, items):
    path = str(tmp_path_factory.mktemp("store") / "ace.db")
    with SQLiteStore(path) as store:
        pb = Playbook(store, None)
        parsed = transfer.parse(json.dumps(items))
        first = transfer.import_items(pb, parsed, trust=True)
        keys = {content_key(i["content"]) for i in items}
        # Every distinct lesson is stored once; one the safety policy holds ("eXec" reads as running
        # code) is stored quarantined, not dropped.
        assert first["created"] == len(keys) == store.count_bullets(None, statuses=("active", "quarantined"))
        second = transfer.import_items(pb, parsed, trust=True)
        assert second["skipped"] == len(items) and second["created"] == second["merged"] == 0
        for key in keys:
            bullet = store.find_by_content_key(key, None)
            same = [i for i in items if content_key(i["content"]) == key]
            assert bullet["helpful"] == max(i.get("helpful", 0) for i in same)
            assert bullet["harmful"] == max(i.get("harmful", 0) for i in same)
