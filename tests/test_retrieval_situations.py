"""Situations (issue 24): the prompts, errors and files a lesson was learned and confirmed in, kept
beside it as search keys. Real SQLite stores, the shipped embedding table, the real learning
pipeline; nothing stood in."""

import json

from ace_engine.core.config import DEFAULTS
from ace_engine.core.project import Project
from ace_engine.embed import vectors
from ace_engine.learning import pipeline
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval import situations
from ace_engine.retrieval.search import search
from ace_engine.store import schema
from ace_engine.store.sqlite import SQLiteStore

PUSH = ("Branches created with `git worktree add -b` have no upstream: the first push needs "
        "`git push -u origin HEAD`.")
FILLER = [f"Keep the {word} settings in `config/{word}.exs` and document every key."
          for word in ("runtime", "dev", "prod", "test", "releases", "logger", "endpoint", "repo")]
# Shares no word with PUSH: only its situation can tie this prompt to it.
ASKED = "publishing my work to the shared remote is rejected"
SITUATION = "publishing my work to the shared remote gets rejected, can you sort it out"
FAKE_KEY = "sk-ant-api03-" + "Q" * 40


def test_situations_are_cleaned_deduplicated_and_capped(playbook, store):
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    items = [("prompt", f"please fix failing job number {i} in the deploy pipeline") for i in range(12)]
    items += [("prompt", f"deploy with ANTHROPIC_API_KEY={FAKE_KEY} set, it still fails"),
              ("prompt", "the secret part <private>my home address</private> is here and the push failed"),
              ("prompt", "ok"),  # says nothing about any lesson
              ("prompt", "Please FIX failing job number 0 in the deploy pipeline!")]  # the first one again
    situations.add(store, bullet["id"], items, session_id="s1", now=1000.0)
    kept = store.situations(bullet["id"])
    assert len(kept) == situations.MAX_PER_LESSON
    texts = " ".join(s["text"] for s in kept)
    assert FAKE_KEY not in texts and "home address" not in texts
    assert not any(s["text"] == "ok" for s in kept)
    # Seen again in a later session: refreshed and counted, so it outlives the ones seen once.
    situations.add(store, bullet["id"], [("prompt", "please fix failing job number 11 in the deploy pipeline")],
                   session_id="s2", now=2000.0)
    first = store.situations(bullet["id"])[0]
    assert (first["text"], first["seen"], first["last_seen_at"]) == (
        "please fix failing job number 11 in the deploy pipeline", 2, 2000.0)
    assert len(store.situations(bullet["id"])) == situations.MAX_PER_LESSON


def test_a_lesson_is_found_by_the_prompt_it_was_learned_in(playbook, store):
    with playbook:
        bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
        for text in FILLER:
            playbook.add(text, "strategies_and_hard_rules")
    off = {**DEFAULTS, "retrieval.situations": False}
    assert bullet["id"] not in [h["id"] for h in search(store, playbook.project_id, ASKED, cfg=off)]
    situations.add(store, bullet["id"], [("prompt", SITUATION)], session_id="s1", now=1000.0)
    hits = search(store, playbook.project_id, ASKED, cfg=dict(DEFAULTS))
    assert hits and hits[0]["id"] == bullet["id"]
    assert hits[0]["content"] == PUSH  # what is injected stays the lesson
    # The same store, situations switched off: not found, so it was the situation that found it.
    assert bullet["id"] not in [h["id"] for h in search(store, playbook.project_id, ASKED, cfg=off)]


def test_the_folded_vector_follows_the_lesson_and_goes_with_it(playbook, store):
    key = vectors.model_key(vectors.table())
    fold = vectors.fold_key(key)
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    situations.add(store, bullet["id"], [("prompt", SITUATION)], session_id="s1", now=1000.0)
    before = store.vectors_of(fold, [bullet["id"]])
    assert before
    changed = playbook.update(bullet["id"], content=PUSH + " Then open the pull request.")
    after = store.vectors_of(fold, [bullet["id"]])
    assert after and after[0][1] != before[0][1]
    assert store.bullets_missing_folds(key, fold) == []
    store.purge_bullets([changed["id"]])
    assert store.situations(bullet["id"]) == [] and store.vectors_of(fold, [bullet["id"]]) == []


def test_ace_embed_fills_in_situations_and_folds_written_without_vectors(playbook, store):
    key = vectors.model_key(vectors.table())
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    store.add_situations(bullet["id"], [("prompt", SITUATION, situations.key(SITUATION))], session_id="s1",
                         now=1000.0, cap=8)
    assert store.situations_missing_vectors(key) and store.bullets_missing_folds(key, vectors.fold_key(key)) == []
    vectors.embed_missing(store)
    assert store.situations_missing_vectors(key) == []
    assert store.vectors_of(vectors.fold_key(key), [bullet["id"]])


def test_a_v8_store_gains_the_situations_table_through_migration_9(tmp_path):
    """A store the release before situations wrote — its tables made by migrations 1-8 alone, a
    lesson written by plain SQL (today's code would read later columns) — opens at the latest
    version and takes situations."""
    import sqlite3

    path = str(tmp_path / "old.db")
    assert schema.MIGRATIONS[8][0] == "lesson_situations"
    con = sqlite3.connect(path, isolation_level=None)
    try:
        for _name, script in schema.MIGRATIONS[:8]:  # released migrations never change
            con.executescript(script)
        con.execute("PRAGMA user_version=8")
        con.execute("INSERT INTO bullets(id, project_id, section, content, domains, status, provenance,"
                    " content_key, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    ("ctx-old0001", None, "strategies_and_hard_rules", PUSH, "git", "active",
                     json.dumps({"source": "learning"}), "k-old", 900.0, 900.0))
    finally:
        con.close()
    with SQLiteStore(path) as new:
        assert new.schema_version() == schema.LATEST
        (bullet,) = new.list_bullets(None)
        situations.add(new, bullet["id"], [("prompt", SITUATION)], session_id="s1", now=1000.0)
        assert [s["text"] for s in new.situations(bullet["id"])] == [SITUATION]


def test_learning_records_the_task_prompt_as_a_situation_of_what_it_learned(ace_home, tmp_path):
    root = str(tmp_path / "widget")
    prompt = "make the slugify tests pass, they cannot import textutil"
    payload = {
        "task": prompt,
        "trajectory": [
            {"step": 1, "tool": "Bash", "action": "$ python -m pytest -q tests/test_slug.py", "success": False,
             "result": "ModuleNotFoundError: No module named 'textutil'"},
            {"step": 2, "tool": "Bash", "action": "$ pip install -e .", "result": "Successfully installed widget"},
            {"step": 3, "tool": "Bash", "action": "$ python -m pytest -q tests/test_slug.py",
             "result": "3 passed in 0.12s"},
        ],
        "result": {"success": True, "output": "Installed the package in editable mode; tests pass.",
                   "summary": "tests pass"},
        "session_id": "sess-1",
    }
    project = Project(root, "github.com/acme/widget")
    with SQLiteStore() as store:
        result = pipeline.learn_payload(store, project, payload, cfg=dict(DEFAULTS))
        assert result["success"] is True
        learned = Playbook(store, project).bullets(statuses=("active", "candidate"))
        assert learned, json.dumps(result)
        for bullet in learned:
            assert prompt in [s["text"] for s in store.situations(bullet["id"])], bullet["content"]


def test_situations_age_out_with_the_captured_prompts(playbook, store):
    key = vectors.model_key(vectors.table())
    old, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    new, _ = playbook.add(FILLER[0], "strategies_and_hard_rules")
    situations.add(store, old["id"], [("prompt", SITUATION)], session_id="s1", now=1000.0)
    situations.add(store, new["id"], [("prompt", "where do the runtime settings live again")], session_id="s2",
                   now=100 * 86400.0)
    store.gc(max_bytes=1 << 30, max_age_days=30, now=110 * 86400.0)
    assert store.situations(old["id"]) == [] and store.vectors_of(vectors.fold_key(key), [old["id"]]) == []
    assert store.situations(new["id"]) and store.vectors_of(vectors.fold_key(key), [new["id"]])
    assert store.get_bullet(old["id"])["status"] == "active"  # the lesson stays; only its old situations go


def test_the_pack_holds_the_folded_code_so_situations_reach_the_nearest(playbook, store):
    key = vectors.model_key(vectors.table())
    with playbook:
        bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
        for text in FILLER:
            playbook.add(text, "strategies_and_hard_rules")
    situations.add(store, bullet["id"], [("prompt", SITUATION)], session_id="s1", now=1000.0)
    assert vectors.cosines(store, playbook.project_id, ASKED, cfg=dict(DEFAULTS), top=2)
    _, rowids, codes = store.vector_pack(key, playbook.project_id)
    width = vectors.table().dim // 8
    (folded,) = store.vectors_of(vectors.fold_key(key), [bullet["id"]])
    (own,) = store.vectors_of(key, [bullet["id"]])
    assert folded[1][:width] != own[1][:width]
    assert folded[1][:width] in [codes[i:i + width] for i in range(0, len(codes), width)]
    assert own[1][:width] not in [codes[i:i + width] for i in range(0, len(codes), width)]


def test_a_merged_away_lessons_situations_find_the_lesson_that_absorbed_it(playbook, store):
    with playbook:
        kept, _ = playbook.add(PUSH, "strategies_and_hard_rules")
        absorbed, _ = playbook.add("The first `git push` of a new worktree branch fails: it has no upstream yet.",
                                   "strategies_and_hard_rules")
        for text in FILLER:
            playbook.add(text, "strategies_and_hard_rules")
    shared = "the worktree branch push says no upstream branch, fix it"
    situations.add(store, absorbed["id"], [("prompt", SITUATION), ("prompt", shared)], session_id="s1", now=1000.0)
    situations.add(store, kept["id"], [("prompt", shared)], session_id="s2", now=2000.0)
    before = search(store, playbook.project_id, ASKED, cfg=dict(DEFAULTS))
    assert before and before[0]["id"] == absorbed["id"]

    playbook.merge(kept["id"], absorbed["id"], now=3000.0)
    rows = {s["text"]: s for s in store.situations(kept["id"])}
    assert set(rows) == {SITUATION, shared} and store.situations(absorbed["id"]) == []
    assert (rows[shared]["seen"], rows[shared]["last_seen_at"]) == (2, 2000.0)  # one row, both sightings
    hits = search(store, playbook.project_id, ASKED, cfg=dict(DEFAULTS))
    assert hits and hits[0]["id"] == kept["id"]  # the folded vector followed the situations
    assert absorbed["id"] not in [h["id"] for h in hits]


def test_a_merge_keeps_the_survivor_within_the_cap(playbook, store):
    kept, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    absorbed, _ = playbook.add(FILLER[0], "strategies_and_hard_rules")
    for bullet, session in ((kept, "s1"), (absorbed, "s2")):
        situations.add(store, bullet["id"], [("prompt", f"{session} please fix failing job number {i} in the pipeline")
                                             for i in range(situations.MAX_PER_LESSON)], session_id=session, now=1000.0)
    situations.add(store, absorbed["id"], [("prompt", "s2 please fix failing job number 0 in the pipeline")],
                   session_id="s3", now=2000.0)  # seen twice: outranks every row seen once
    playbook.merge(kept["id"], absorbed["id"], now=3000.0)
    rows = store.situations(kept["id"])
    assert len(rows) == situations.MAX_PER_LESSON
    assert rows[0]["text"] == "s2 please fix failing job number 0 in the pipeline" and rows[0]["seen"] == 2


def test_a_lesson_shown_and_confirmed_is_found_by_the_new_words_of_that_session(ace_home, tmp_path):
    """The reinforcement path: a lesson shown in a later session whose command then worked is marked
    helpful, and that session's prompt, in words the lesson never used, becomes one of its situations."""
    project = Project(str(tmp_path / "widget"), "github.com/acme/widget")
    lesson = "Install the package in editable mode first: `pip install -e .` (the tests import `widget`)."
    later = "my imports of the app break whenever I launch the checks on a fresh checkout"
    with SQLiteStore() as store:
        playbook = Playbook(store, project)
        with playbook:
            bullet, _ = playbook.add(lesson, "strategies_and_hard_rules")
            for text in FILLER:
                playbook.add(text, "strategies_and_hard_rules")
        before = [h["id"] for h in search(store, playbook.project_id, later, cfg=dict(DEFAULTS))]
        payload = {
            "task": later, "session_id": "sess-2", "playbook_used": [bullet["id"]],
            "trajectory": [
                {"step": 1, "tool": "Bash", "action": "$ pip install -e .", "result": "Successfully installed widget"},
                {"step": 2, "tool": "Bash", "action": "$ python -m pytest -q", "result": "5 passed in 0.20s"},
            ],
            "result": {"success": True, "output": "Installed it editable; the checks pass.", "summary": "pass"},
        }
        pipeline.learn_payload(store, project, payload, cfg=dict(DEFAULTS))
        assert store.get_bullets([bullet["id"]])[0]["helpful"] >= 1
        assert later in [s["text"] for s in store.situations(bullet["id"])]
        after = search(store, playbook.project_id, later, cfg=dict(DEFAULTS))
        assert after and after[0]["id"] == bullet["id"] and bullet["id"] not in before[:1]
