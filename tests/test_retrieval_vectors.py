"""Semantic search as installed: the shipped static table, vectors written with the lessons, the
per-scope pack, and the way search degrades when the table is missing. Real SQLite stores, the
real shipped table, no stand-ins."""

import os

import pytest

from ace_engine.cli import diagnostics
from ace_engine.core.config import DEFAULTS
from ace_engine.core.project import Project
from ace_engine.embed import static_embed, vectors
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval.search import search
from ace_engine.store import schema
from ace_engine.store.sqlite import SQLiteStore

PUSH = ("Push a new branch with `git push --set-upstream origin <branch>`: a plain `git push` from a fresh "
        "worktree branch fails because it has no upstream yet.")
CACHE = "Invalidate the cached report entry whenever an order is saved, or the dashboard serves stale totals."
TESTS = "Run the whole test suite with `mix test` from the repository root."
FILLER = [f"Lesson {i}: keep the {word} configuration in `config/{word}.exs` and document every key."
          for i, word in enumerate(("runtime", "dev", "prod", "test", "releases", "logger", "endpoint", "repo"))]


def stored_models(store):
    return {m for (m,) in store.conn.execute("SELECT model FROM bullet_vectors")}


def test_the_shipped_table_loads_and_is_the_default(store):
    t = vectors.table()
    assert t is not None, f"the package must ship its table at {vectors.table_dir()}"
    assert (t.dim, t.dtype, t.rows) == (256, "int8", 30522)
    assert DEFAULTS["retrieval.semantic"] is True and DEFAULTS["retrieval.embedder"] == "static"
    assert vectors.status(store)["mode"] == "semantic + lexical"
    assert os.path.isfile(os.path.join(vectors.DATA_DIR, "NOTICE"))  # the model's licence travels with it


def test_lessons_are_embedded_when_written_and_again_when_their_content_changes(playbook, store):
    key = vectors.model_key(vectors.table())
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    with playbook:  # a batch embeds at its end
        other, _ = playbook.add(CACHE, "strategies_and_hard_rules")
        assert store.vectors_of(key, [other["id"]]) == []
    assert {b for b, _ in store.vectors_of(key, [bullet["id"], other["id"]])} == {bullet["id"], other["id"]}
    before = store.vectors_of(key, [bullet["id"]])[0][1]
    playbook.update(bullet["id"], content=PUSH + " Then open the pull request.")
    after = store.vectors_of(key, [bullet["id"]])
    assert after and after[0][1] != before
    assert store.bullets_missing_vectors(key) == []


def test_a_paraphrase_with_no_shared_word_is_found_only_with_meaning(playbook, store):
    pid = playbook.project_id
    for text in [PUSH, CACHE, TESTS] + FILLER:
        playbook.add(text, "strategies_and_hard_rules")
    prompt = "the charts keep showing outdated figures right after I store a purchase"
    assert search(store, pid, prompt, mode="lexical") == []  # no word in common worth showing
    meaning = search(store, pid, prompt, mode="semantic", threshold=-1.0)
    assert meaning and meaning[0]["content"] == CACHE
    hits = search(store, pid, prompt, threshold=-1.0, k=3)  # the default configuration: both signals
    assert CACHE in [h["content"] for h in hits] and "cosine" in hits[0]["score_parts"]


def test_cosines_do_not_depend_on_the_size_of_the_store(tmp_path):
    """The semantic part of a score is absolute: the same prompt and lesson score the same in a
    store of 3 lessons and one of 300."""
    prompt = "the dashboard keeps showing old numbers after I save"
    scores = []
    for n, extra in (("small", 0), ("large", 300)):
        with SQLiteStore(str(tmp_path / f"{n}.db")) as s:
            pb = Playbook(s, Project(str(tmp_path / "repo"), "github.com/acme/repo"))
            with pb:
                target, _ = pb.add(CACHE, "strategies_and_hard_rules")
                pb.add(PUSH, "strategies_and_hard_rules")
                for i in range(extra):
                    pb.add(f"Note {i}: the {FILLER[i % len(FILLER)]}", "strategies_and_hard_rules")
            cos = vectors.cosines(s, pb.project_id, prompt, also=[target["id"]])
            scores.append(cos[target["id"]])
    # (1e-6: a large batch is embedded by the NumPy path in float32, a single lesson in Python floats)
    assert scores[0] == pytest.approx(scores[1], abs=1e-6) and scores[0] > 0.2


def test_the_pack_is_reused_until_the_store_changes_and_skips_archived_and_deleted(playbook, store):
    pid = playbook.project_id
    key = vectors.model_key(vectors.table())
    first, _ = playbook.add(CACHE, "strategies_and_hard_rules")
    assert first["id"] in vectors.cosines(store, pid, "stale totals on the dashboard")
    stamp, rowids, codes = store.vector_pack(key, pid, True)
    assert stamp == store.vector_stamp() and len(rowids) == 4 and len(codes) == 32
    second, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    found = vectors.cosines(store, pid, "push my branch")
    assert second["id"] in found and len(store.vector_pack(key, pid, True)[1]) == 8  # rebuilt with both
    playbook.remove(second["id"])
    assert second["id"] not in vectors.cosines(store, pid, "push my branch")  # filtered at rescoring
    store.purge_bullets([first["id"]])
    assert store.conn.execute("SELECT COUNT(*) FROM vector_packs").fetchone()[0] == 0  # no trace of it
    assert first["id"] not in (vectors.cosines(store, pid, "stale totals on the dashboard") or {})


def test_a_lesson_written_without_a_vector_is_embedded_lazily_by_search(playbook, store):
    pid = playbook.project_id
    bullet, _ = playbook.add(CACHE, "strategies_and_hard_rules")
    store.conn.execute("DELETE FROM bullet_vectors")  # as a store from before this version holds it
    key = vectors.model_key(vectors.table())
    assert [b["id"] for b in store.bullets_missing_vectors(key)] == [bullet["id"]]
    assert bullet["id"] in vectors.cosines(store, pid, "stale totals")
    assert store.bullets_missing_vectors(key) == []


def test_without_the_table_search_stays_lexical_and_doctor_says_why(playbook, store, tmp_path, monkeypatch):
    playbook.add(TESTS, "strategies_and_hard_rules")
    monkeypatch.setattr(vectors, "DATA_DIR", str(tmp_path / "nowhere"))
    assert vectors.table() is None and vectors.cosines(store, playbook.project_id, "run the tests") is None
    hits = search(store, playbook.project_id, "run the mix test suite")
    assert hits and "cosine" not in hits[0]["score_parts"]
    state = vectors.status(store)
    assert state["mode"] == "lexical" and "missing or unusable" in state["problem"]


def test_doctor_reports_the_search_mode(monkeypatch, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    with SQLiteStore() as s:
        Playbook(s, Project(str(repo), None)).add(TESTS, "strategies_and_hard_rules")
    check = next(c for c in diagnostics.doctor(str(repo)) if c.name == "search")
    assert check.ok and "semantic + lexical" in check.detail and "every lesson embedded" in check.detail
    monkeypatch.setattr(vectors, "DATA_DIR", str(tmp_path / "nowhere"))
    check = next(c for c in diagnostics.doctor(str(repo)) if c.name == "search")
    assert not check.ok and check.detail.startswith("lexical only") and check.fix


def test_a_v5_store_keeps_its_vectors_through_migration_6(tmp_path):
    path = str(tmp_path / "old.db")
    with SQLiteStore(path, migrations=schema.MIGRATIONS[:5]) as old:
        old.conn.execute("INSERT INTO bullet_vectors(bullet_id, model, content_key, vector) VALUES ('b1','m','k',x'00')")
    with SQLiteStore(path) as new:
        assert new.schema_version() == schema.LATEST
        assert new.conn.execute("SELECT bullet_id, model FROM bullet_vectors").fetchall() == [("b1", "m")]
        new.put_vectors("other", [("b1", "k", b"\x01")])  # a second model's vector lives beside it
        assert new.conn.execute("SELECT COUNT(*) FROM bullet_vectors").fetchone()[0] == 2


def test_the_stored_form_keeps_the_cosine(store):
    t = vectors.table()
    a, b = t.embed(CACHE), t.embed("stale totals on the dashboard after saving an order")
    exact = sum(x * y for x, y in zip(a, b, strict=True))
    blob = vectors.to_blob(b)
    assert len(blob) == t.dim // 8 + 4 + t.dim and blob[: t.dim // 8] == static_embed.pack_code(b)
    assert vectors._dot(a, blob, t.dim) == pytest.approx(exact, abs=0.01)


def test_the_table_is_what_the_distillation_script_writes(tmp_path):
    """The shipped table is generated, not hand-made: its metadata names the model it came from
    and the hash of its rows, and the vocabulary is the model's own."""
    t = vectors.table()
    import hashlib
    import json

    meta = json.loads(open(os.path.join(vectors.table_dir(), "meta.json"), encoding="utf-8").read())
    with open(os.path.join(vectors.table_dir(), "table.npy"), "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == meta["table_sha256"]
    assert meta["model"] == "all-MiniLM-L6-v2" and t.meta["name"] == static_embed.DEFAULT_NAME
    from ace_engine.embed import semantic

    model = semantic.model_dir()
    if model is None:
        pytest.skip("the full model is not installed here")
    with open(os.path.join(model, "vocab.txt"), "rb") as a, open(os.path.join(vectors.table_dir(), "vocab.txt"),
                                                                  "rb") as b:
        assert a.read() == b.read()


def test_fusion_lets_either_signal_carry_a_lesson_and_rewards_agreement():
    from ace_engine.retrieval import search as search_mod

    share, top = 0.6, search_mod.COSINE_FLOOR + search_mod.COSINE_SPAN
    lexical_only = search_mod.fuse(0.8, 0.0, share)  # a verbatim match whose embedding is diluted
    semantic_only = search_mod.fuse(0.0, top, share)  # a paraphrase sharing no word
    threshold = DEFAULTS["retrieval.threshold"]
    assert lexical_only >= threshold and semantic_only >= threshold
    assert search_mod.fuse(0.8, top, share) > max(lexical_only, semantic_only)  # both: above either
    assert search_mod.fuse(0.0, 0.0, share) == 0.0 and search_mod.fuse(1.0, 1.0, 1.0) == 1.0
    least = search_mod._least_cosine(threshold, search_mod._weights(None), share)
    assert search_mod.fuse(0.1, least + 1e-3, share) >= threshold > search_mod.fuse(0.1, least - 0.02, share)
