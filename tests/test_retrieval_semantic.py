"""Optional semantic search: lexical fallback when the extra or the vectors are missing, embeddings
stored per content, paraphrases found, and our numpy encoder equal to sentence-transformers."""

import importlib.util
import subprocess
import sys

import pytest

from ace_engine.core import log
from ace_engine.core.project import identify
from ace_engine.embed import semantic, vectors
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval.search import search
from ace_engine.store.sqlite import SQLiteStore

MINILM = {"retrieval.embedder": "minilm"}  # the optional full model instead of the built-in table

needs_extra = pytest.mark.skipif(not semantic.available(), reason="semantic extra not installed")

LESSONS = [
    ("Freeze time in tests with time_machine.travel('2024-01-31', tick=False); freezegun breaks asyncpg",
     "useful_code_snippets"),
    ("Run the suite with `python -m pytest` from the repository root", "strategies_and_hard_rules"),
    ("Alembic autogenerate misses server_default changes; review each migration", "troubleshooting_and_pitfalls"),
    ("Stripe webhooks must be verified on the raw request body bytes", "strategies_and_hard_rules"),
]


@pytest.fixture
def seeded(ace_home, git_project, monkeypatch):
    monkeypatch.setattr(semantic, "_warned", set())  # each test sees its own first warning
    with SQLiteStore() as store:
        playbook = Playbook(store, identify(str(git_project)))
        ids = [playbook.add(content, section)[0]["id"] for content, section in LESSONS]
        yield store, playbook, ids


def warnings():
    return [line for line in log.tail(50, level="WARN") if "semantic" in line]


def test_missing_extra_falls_back_to_lexical_and_warns_once(seeded, monkeypatch):
    store, playbook, _ = seeded
    monkeypatch.setitem(sys.modules, semantic.PACKAGE, None)  # as if the package were not installed
    assert "pip install" in semantic.missing() and not semantic.available()
    lexical = search(store, playbook.project_id, "run pytest from the repository root", mode="lexical")
    for mode in ("hybrid", "semantic", "auto"):
        hits = search(store, playbook.project_id, "run pytest from the repository root", mode=mode,
                      cfg={"retrieval.semantic": True, "retrieval.embedder": "minilm"})
        assert [h["id"] for h in hits] == [h["id"] for h in lexical] and hits
    assert len(warnings()) == 1 and "pip install" in warnings()[0]
    monkeypatch.setattr(semantic, "_encoder", None)  # nothing loaded yet in this process
    with pytest.raises(RuntimeError, match="pip install"):
        semantic.encoder()


def test_no_vectors_yet_falls_back_to_lexical(seeded):
    store, playbook, _ = seeded
    if not semantic.available():
        pytest.skip("semantic extra not installed")
    lexical = search(store, playbook.project_id, "stripe webhook raw body", mode="lexical")
    hybrid = search(store, playbook.project_id, "stripe webhook raw body", mode="hybrid",
                    cfg={"retrieval.embedder": "minilm"})
    assert [h["id"] for h in hybrid] == [h["id"] for h in lexical] and hybrid
    assert any("ace embed" in line for line in warnings())


def test_the_default_search_never_loads_numpy_or_the_model(seeded):
    """Semantic search is on by default through the built-in table: no NumPy, no model weights in
    the process; with it off, not even the vectors module loads."""
    store, playbook, _ = seeded
    code = (
        "import sys\n"
        "from ace_engine.store.sqlite import SQLiteStore\n"
        "from ace_engine.retrieval.search import search\n"
        f"hits = search(SQLiteStore(), {playbook.project_id}, 'stripe webhook raw body', cfg=CFG)\n"
        "assert hits, 'expected a hit'\n"
        "print('cosine' in hits[0]['score_parts'], sorted({'numpy', 'ace_engine.embed.vectors'} & set(sys.modules)),"
        " semantic_loaded())\n"
    )
    helpers = ("def semantic_loaded():\n"
               "    from ace_engine.embed import semantic\n"
               "    return semantic._encoder is not None\n")
    default = subprocess.run([sys.executable, "-c", helpers + "CFG = None\n" + code], capture_output=True, text=True,
                             check=True).stdout
    assert default.strip() == "True ['ace_engine.embed.vectors'] False"
    off = subprocess.run([sys.executable, "-c", helpers + "CFG = {'retrieval.semantic': False}\n" + code],
                         capture_output=True, text=True, check=True).stdout
    assert off.strip() == "False [] False"


@needs_extra
def test_embed_missing_stores_one_vector_per_content(seeded):
    store, playbook, ids = seeded
    assert vectors.embed_missing(store, cfg=MINILM) == len(LESSONS)
    assert vectors.embed_missing(store, cfg=MINILM) == 0
    stored = dict(store.vectors(semantic.MODEL, playbook.project_id))
    assert set(stored) == set(ids) and all(len(v) == semantic.DIM * 4 for v in stored.values())
    playbook.update(ids[0], content="Freeze the clock in tests with time_machine; freezegun breaks asyncpg")
    assert ids[0] not in dict(store.vectors(semantic.MODEL, playbook.project_id))  # stale vector ignored
    assert vectors.embed_missing(store, cfg=MINILM) == 1


@needs_extra
def test_semantic_finds_a_paraphrase_lexical_misses(seeded):
    store, playbook, ids = seeded
    vectors.embed_missing(store, cfg=MINILM)
    prompt = "how can my unit tests pretend it is a different date?"
    assert ids[0] not in [h["id"] for h in search(store, playbook.project_id, prompt, mode="lexical")]
    for mode in ("semantic", "hybrid"):
        hits = search(store, playbook.project_id, prompt, mode=mode, threshold=0.1)
        assert hits and hits[0]["id"] == ids[0] and "cosine" in hits[0]["why"]
    cos = semantic.cosines(store, playbook.project_id, prompt)
    assert max(cos, key=cos.get) == ids[0] and all(-1.0 <= c <= 1.0 for c in cos.values())


@needs_extra
def test_encoder_output_is_normalized_and_handles_odd_text():
    vectors = semantic.encoder().encode(["", "x" * 5000, "naïve café 日本語 ✓", "ModuleNotFoundError: app"])
    norms = (vectors ** 2).sum(axis=1)
    assert vectors.shape == (4, semantic.DIM) and all(abs(n - 1.0) < 1e-4 for n in norms)


@needs_extra
@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="sentence-transformers not installed (reference implementation)")
def test_numpy_encoder_matches_sentence_transformers():
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    texts = ["pytest fails with ModuleNotFoundError", "JWT refresh token expired after 15 minutes",
             "Ünïcödé naïve café 日本語!!", "Use `python -m pytest` from the repo root; conftest.py adds src/"]
    reference = SentenceTransformer(semantic.model_dir(), device="cpu")
    for text in texts:
        assert reference.tokenizer(text)["input_ids"] == semantic.encoder().tokenizer.encode(text)
    ours = semantic.encoder().encode(texts)
    theirs = reference.encode(texts, normalize_embeddings=True)
    assert ((ours * theirs).sum(axis=1) > 0.9999).all()
