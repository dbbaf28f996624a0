"""Retrieval against a real store: query building, FTS safety, hybrid scoring, filters, scopes."""

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ace_engine.core import config as config_mod
from ace_engine.core.project import Project, identify
from ace_engine.playbook.playbook import Playbook
from ace_engine.retrieval import query as q
from ace_engine.retrieval.search import search, top
from ace_engine.store.sqlite import SQLiteStore
from conftest import examples

NOW = 1_750_000_000.0
DAY = 86400.0

BULLETS = {
    "jwt": ("JWT access tokens expire after 15 minutes; decode with `leeway=30` in app/auth/tokens.py",
            "troubleshooting_and_pitfalls", ["auth-jwt"]),
    "pytest": ("Run the tests with `python -m pytest` from the repo root; plain pytest misses the src layout",
               "strategies_and_hard_rules", ["python-testing"]),
    "alembic": ("Alembic autogenerate misses server_default changes; read every migration before committing",
                "troubleshooting_and_pitfalls", ["database"]),
    "docker": ("Docker builds on Apple silicon need `--platform linux/amd64` to match the CI image",
               "strategies_and_hard_rules", ["docker"]),
    "camel": ("`getUserToken()` returns None for service accounts; call `getServiceToken()` instead",
              "apis_to_use", ["auth"]),
    "refresh": ("Refresh tokens are single-use: src/auth/jwt_refresh.py revokes the old jti in Redis",
                "troubleshooting_and_pitfalls", ["auth-jwt"]),
    "db": ("The DB pool holds 5 connections; release the session before calling slow external APIs",
           "troubleshooting_and_pitfalls", ["database"]),
    "snippet": ("Reset the local database: `docker compose down -v && alembic upgrade head`",
                "useful_code_snippets", ["database", "docker"]),
}


@pytest.fixture
def store(ace_home):
    with SQLiteStore() as s:
        yield s


@pytest.fixture
def seeded(store, git_project):
    """(store, project id, {name: bullet id}) with BULLETS in the git project."""
    playbook = Playbook(store, identify(str(git_project)))
    ids = {}
    with playbook:
        for name, (content, section, domains) in BULLETS.items():
            bullet, _ = playbook.add(content, section, domains=domains, now=NOW - 10 * DAY)
            ids[name] = bullet["id"]
    return store, playbook.project_id, ids


def names(hits, ids):
    by_id = {v: k for k, v in ids.items()}
    return [by_id.get(h["id"], h["id"]) for h in hits]


# -- query building --------------------------------------------------------------------------------


def test_identifiers_are_split_and_kept_joined():
    parsed = q.parse("why does getUserToken fail in snake_case_helper?")
    flat = [alt for group in parsed.groups for alt in group]
    assert "getusertoken" in flat  # FTS5 indexes camelCase as one token
    assert {"user", "token", "snake", "case", "helper"} <= set(flat)
    assert "getusertoken" in parsed.identifiers and "snake_case_helper" in parsed.identifiers
    assert "why" not in flat and "does" not in flat  # stop words


def test_fix_error_and_fail_are_kept_as_terms():
    words = q.parse("please fix the error, the build fails").words
    assert {"fix", "error", "fails", "build"} <= set(words) and "please" not in words


@pytest.mark.parametrize("text,expected", [
    ("jwt expired", ["jwt", "json web token"]),
    ("the json web token expired", ["json web token", "jwt"]),
    ("DB pool", ["db", "database"]),
    ("database pool", ["database", "db"]),
    ("env vars", ["env", "environment"]),
    ("auth is broken", ["auth", "authentication", "authorization"]),
])
def test_abbreviations_expand_both_ways(text, expected):
    assert expected in q.parse(text).groups


def test_configured_abbreviations_extend_the_table():
    table = q.normalize_abbreviations({"k8s": "kubernetes|kube", "tf": "terraform"})
    assert table["tf"] == ("terraform",) and "kube" in table["k8s"]
    assert ["terraform", "tf"] in q.parse("terraform state lock", abbreviations=table).groups
    assert q.normalize_abbreviations("tf=terraform, gql=graph ql")["gql"] == ("graph ql",)


def test_stem_and_contains():
    text = q.normalized_text("Tests are failing; the queries retried, see configureLogging()")
    for term in ("testing", "tests", "fail", "query", "retry", "configuration", "logging"):
        assert q.contains(text, q.term_key(term)), term
    assert not q.contains(text, q.term_key("db"))
    assert q.contains(q.normalized_text("the DB is down"), q.term_key("db"))
    assert not q.contains(q.normalized_text("a dbx thing"), q.term_key("db"))


def test_long_prompts_are_capped():
    prompt = " ".join(f"word{i} identifier_{i} CamelCase{i}" for i in range(20_000))  # ~500 KB
    parsed = q.parse(prompt, max_terms=32)  # its time: bench/budgets_bench.py
    assert sum(len(g) for g in parsed.groups) <= 32
    assert len(q.fts_terms(parsed)) <= 32


_FTS_PART = r'^"[^"]*"\*?$'


@settings(max_examples=examples(300), deadline=None)
@given(st.text())
def test_fts_expression_is_only_quoted_terms(text):
    import re

    expression = q.fts_expression(q.parse(text))
    if expression:
        for part in expression.split(" OR "):
            assert re.match(_FTS_PART, part), part
            assert '"' not in part.strip("*")[1:-1]


HOSTILE = [
    "", "   ", '"', '""', "AND", "OR NOT AND", "NEAR(a b, 2)", "col:value", "content:jwt", "-", "--force",
    "*", "a*", "^start", "(unbalanced", "a OR", "'; DROP TABLE bullets; --", "\x00\x01", "🙂 emoji ✓",
    "naïve café résumé", "日本語のテキスト", "x" * 5000, "a-b-c:d/e.f::g", '"quoted" AND "more"', "{}[]<>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise(seeded, text):
    store, pid, _ = seeded
    hits = search(store, pid, text, k=5)
    assert isinstance(hits, list) and len(hits) <= 5
    assert isinstance(top(store, pid, 5), list)


def test_only_stop_words_give_nothing(seeded):
    store, pid, _ = seeded
    assert search(store, pid, "could you please help me with this?") == []


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300), files=st.lists(st.text(max_size=40), max_size=3))
def test_arbitrary_text_and_files_never_raise(seeded, text, files):
    store, pid, _ = seeded
    hits = search(store, pid, text, k=3, files=files, threshold=0.0)
    assert len(hits) <= 3
    assert all(0.0 <= h["score"] <= 1.0 and h["why"] for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_a_100kb_prompt_is_safe(seeded):
    store, pid, _ = seeded
    prompt = ("Traceback: ExpiredSignatureError in tokens.py line 42 -- AND OR NOT \"x\" " * 1500)[:100_000]
    hits = search(store, pid, prompt, k=5)  # its time: bench/budgets_bench.py
    assert isinstance(hits, list)


# -- relevance -------------------------------------------------------------------------------------


def test_abbreviation_finds_bullets_both_ways(seeded, git_project):
    store, pid, ids = seeded
    assert names(search(store, pid, "json web token expired again"), ids)[0] == "jwt"
    playbook = Playbook(store, identify(str(git_project)))
    spelled, _ = playbook.add("A json web token signed with HS256 must be decoded with algorithms=['HS256']",
                              "troubleshooting_and_pitfalls")
    hits = search(store, pid, "jwt decode error")
    assert spelled["id"] in [h["id"] for h in hits]
    assert names(search(store, pid, "DB connections run out"), ids)[0] == "db"


def test_stemming_tests_testing(seeded):
    store, pid, ids = seeded
    assert names(search(store, pid, "testing from the root"), ids)[0] == "pytest"
    assert names(search(store, pid, "how do I run tests"), ids)[0] == "pytest"


def test_camel_case_identifier(seeded):
    store, pid, ids = seeded
    hits = search(store, pid, "getUserToken gives None")
    assert names(hits, ids)[0] == "camel"
    assert hits[0]["score_parts"]["fuzzy"] == 1.0
    assert names(search(store, pid, "getUser returns nothing"), ids)[0] == "camel"  # prefix match


def test_file_path_fuzzy_and_domain_match(seeded):
    store, pid, ids = seeded
    hits = search(store, pid, "token refresh fails", files=("src/auth/jwt_refresh.py",), threshold=0.0)
    assert names(hits, ids)[0] == "refresh"
    parts = hits[0]["score_parts"]
    assert parts["fuzzy"] == 1.0 and parts["domain"] == 1.0  # auth-jwt: both words in the path
    assert "fuzzy" in hits[0]["why"] and "domain auth-jwt" in hits[0]["why"]
    # A typo'd file name still matches fuzzily.
    hits = search(store, pid, "token refresh fails", files=("src/auth/jwt_refesh.py",), threshold=0.0)
    assert names(hits, ids)[0] == "refresh" and 0.5 <= hits[0]["score_parts"]["fuzzy"] < 1.0


def test_domain_shift_query_with_allowed_domain(seeded):
    store, pid, ids = seeded
    hits = search(store, pid, "alembic migrations database", files=("migrations/versions/0042_add_paid_at.py",),
                  domains_allowed=["database"], k=3)
    assert hits and all("database" in h["domains"] for h in hits)
    # Both name alembic and the database; by meaning the reset snippet is as close as the pitfall.
    assert "alembic" in names(hits, ids)[:2]


def test_blocked_domains(seeded):
    store, pid, ids = seeded
    assert "snippet" in names(search(store, pid, "reset the local database with docker", threshold=0.0), ids)
    hits = search(store, pid, "reset the local database with docker", domains_blocked=["docker"], threshold=0.0)
    assert hits and all("docker" not in h["domains"] for h in hits)


def test_threshold_cuts_noise_and_empty_results_are_normal(seeded):
    store, pid, _ = seeded
    assert search(store, pid, "write a haiku about autumn leaves") == []
    assert search(store, pid, "jwt tokens expire", threshold=1.01) == []
    hits = search(store, pid, "jwt tokens expire", threshold=0.0, k=8)
    assert hits and all(h["score"] >= 0.0 for h in hits)
    strict = search(store, pid, "jwt tokens expire", threshold=hits[0]["score"], k=8)
    assert [h["id"] for h in strict] == [hits[0]["id"]]


def test_threshold_and_weights_come_from_config(seeded, git_project):
    store, pid, _ = seeded
    assert search(store, pid, "jwt tokens expire", cfg={"retrieval.threshold": 1.01}) == []
    root = str(git_project)
    with open(f"{root}/.ace.toml", "w") as fh:
        fh.write('[retrieval]\nthreshold = 0.05\n[retrieval.weights]\nrecency = 0.5\n'
                 '[retrieval.abbreviations]\ntf = "terraform"\n')
    cfg = config_mod.load(root, strict=True)
    assert cfg["retrieval.threshold"] == 0.05 and cfg["retrieval.weights.recency"] == 0.5
    assert cfg["retrieval.abbreviations"] == {"tf": "terraform"}
    Playbook(store, identify(root)).add("Terraform state is locked in DynamoDB; never force-unlock", "strategies")
    hits = search(store, pid, "is tf broken again", cfg=cfg)
    assert hits and "Terraform" in hits[0]["content"]
    # Without the abbreviation no word matches (meaning may still find it: that is not this test).
    assert search(store, pid, "is tf broken again", threshold=0.0, mode="lexical") == []


def test_abbreviations_from_the_environment(ace_home, monkeypatch):
    monkeypatch.setenv("ACE_RETRIEVAL_ABBREVIATIONS", "tf=terraform,gql=graphql")
    cfg = config_mod.load(None, strict=True)
    assert cfg["retrieval.abbreviations"] == {"tf": "terraform", "gql": "graphql"}
    monkeypatch.setenv("ACE_RETRIEVAL_ABBREVIATIONS", "no equals sign")
    with pytest.raises(config_mod.ConfigError):
        config_mod.load(None, strict=True)


def test_low_quality_bullets_give_way_when_enough_good_ones_exist(store, git_project):
    playbook = Playbook(store, identify(str(git_project)))
    good = [playbook.add(f"Redis cache key prefix {i}: use `cache:{i}:` for the invoice cache", "apis")[0]
            for i in range(3)]
    bad, _ = playbook.add("Redis cache keys for invoices: flush the whole cache with FLUSHALL", "apis")
    playbook.tag(bad["id"], "harmful", count=4)
    pid = playbook.project_id
    hits = search(store, pid, "redis invoice cache keys", k=3, threshold=0.0)
    assert bad["id"] not in [h["id"] for h in hits] and len(hits) == 3
    hits = search(store, pid, "redis invoice cache keys", k=5, threshold=0.0)  # not enough good ones
    assert bad["id"] in [h["id"] for h in hits]
    playbook.tag(bad["id"], "helpful", count=2)  # helpful ≥ 2: no longer "low quality"
    assert bad["id"] in [h["id"] for h in search(store, pid, "redis invoice cache keys", k=3, threshold=0.0)]
    assert good


def test_confidence_helpfulness_and_recency_break_ties(store, git_project):
    playbook = Playbook(store, identify(str(git_project)))
    pid = playbook.project_id
    old, _ = playbook.add("Celery workers need `--pool=solo` on Windows", "pitfalls", now=NOW - 300 * DAY)
    new, _ = playbook.add("Celery workers need `--pool=solo` on Windows hosts", "pitfalls", now=NOW - 1 * DAY)
    hits = search(store, pid, "celery worker windows pool", now=NOW, threshold=0.0)
    assert [h["id"] for h in hits[:2]] == [new["id"], old["id"]]
    playbook.tag(old["id"], "helpful", explicit=True, count=3, now=NOW - 300 * DAY)
    hits = search(store, pid, "celery worker windows pool", now=NOW, threshold=0.0)
    assert hits[0]["id"] == old["id"]
    assert hits[0]["score_parts"]["helpful"] > 0 and hits[0]["score_parts"]["confidence"] > 0.5


def test_global_and_project_scopes(store, git_project, tmp_path):
    mine = Playbook(store, identify(str(git_project)))
    other = Playbook(store, Project(str(tmp_path / "other"), None))
    shared, _ = mine.add("Never run `git push --force` on main; use --force-with-lease", "strategies", scope="global")
    local, _ = mine.add("The staging deploy needs `make deploy ENV=staging` from a clean tree", "strategies")
    foreign, _ = other.add("The staging deploy of the other repo uses helm upgrade", "strategies")
    found = [h["id"] for h in search(store, mine.project_id, "force push to main", threshold=0.0)]
    assert shared["id"] in found
    found = [h["id"] for h in search(store, mine.project_id, "staging deploy", threshold=0.0)]
    assert local["id"] in found and foreign["id"] not in found
    assert shared["id"] not in [h["id"] for h in search(store, mine.project_id, "force push to main",
                                                       include_global=False, threshold=0.0)]
    assert shared["id"] in [h["id"] for h in search(store, None, "force push to main", threshold=0.0)]


def test_excluded_archived_and_quarantined_bullets_are_not_returned(seeded, git_project):
    store, pid, ids = seeded
    assert names(search(store, pid, "jwt tokens expire", exclude_ids={ids["jwt"]}, threshold=0.0), ids)[:1] != ["jwt"]
    playbook = Playbook(store, identify(str(git_project)))
    playbook.remove(ids["jwt"])
    playbook.quarantine(ids["refresh"])
    found = names(search(store, pid, "jwt tokens expire refresh", threshold=0.0, k=10), ids)
    assert "jwt" not in found and "refresh" not in found


def test_k_limits_results(seeded):
    store, pid, _ = seeded
    assert len(search(store, pid, "database docker alembic tokens tests", k=2, threshold=0.0)) == 2
    assert search(store, pid, "database docker", k=0) == []


def test_top_orders_by_value_and_filters_sections(store, git_project):
    playbook = Playbook(store, identify(str(git_project)))
    a, _ = playbook.add("Prefer small focused commits", "strategies", now=NOW - 5 * DAY)
    b, _ = playbook.add("Use `rg` to search code", "snippets", now=NOW - 5 * DAY)
    c, _ = playbook.add("Deprecated: use nose for tests", "strategies", now=NOW - 5 * DAY)
    playbook.tag(b["id"], "helpful", explicit=True, count=2, now=NOW - 5 * DAY)
    playbook.tag(c["id"], "harmful", count=5, now=NOW - 5 * DAY)
    ranked = top(store, playbook.project_id, 3, now=NOW)
    assert [x["id"] for x in ranked] == [b["id"], a["id"], c["id"]]
    assert all("score" in x and "confidence" in x["why"] for x in ranked)
    assert [x["id"] for x in top(store, playbook.project_id, 1, now=NOW)] == [b["id"]]
    assert [x["id"] for x in top(store, playbook.project_id, 5, sections=["strategies_and_hard_rules"], now=NOW)] \
        == [a["id"], c["id"]]
    assert top(store, playbook.project_id, 0) == []


# -- the hook path stays light and fast ------------------------------------------------------------


def test_lexical_path_imports_nothing_heavy():
    code = (
        "import sys\n"
        "import ace_engine.retrieval.search, ace_engine.retrieval.render, ace_engine.retrieval.query\n"
        "heavy = {'numpy', 'difflib', 'logging', 'dataclasses', 'pathlib', 'subprocess', 'click', 'rich',\n"
        "         'typing', 'ace_engine.embed.semantic', 'sqlite3', 'json'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_prompts_of_common_words_only_skip_bm25_but_keep_the_best_match(store, git_project, tmp_path, monkeypatch):
    """When even the kept terms match `BM25_MATCHES` bullets or more, BM25 over all of them would
    cost milliseconds per thousand: the bullets with every term come first (newest first), then a
    few of the newest with any term; scope and status still apply."""
    from ace_engine.retrieval import lexical

    playbook = Playbook(store, identify(str(git_project)))
    other = Playbook(store, Project(str(tmp_path / "other"), None))
    best, _ = playbook.add("Celery retry with a timeout: set `soft_time_limit` below the broker's visibility "
                           "timeout or the retry runs twice", "pitfalls", now=NOW - 50 * DAY)
    foreign, _ = other.add("Celery retry timeout in the other repository", "pitfalls")
    noise = [playbook.add(f"{word} note {i}: nothing else in common with the others (case {i * 7})", "pitfalls",
                          now=NOW - i * DAY)[0]
             for i, word in enumerate(["Celery", "retry", "timeout"] * 4)]
    pid = playbook.project_id
    terms = lexical.terms(store, q.parse("celery retry timeout"))
    assert len(terms) == 3
    ranked = lexical.candidates(store, terms, pid, True, 8)
    assert ranked[0]["id"] == best["id"] and len(ranked) == 8  # BM25: every match ranked
    monkeypatch.setattr(lexical, "BM25_MATCHES", 5)
    cheap = lexical.candidates(store, terms, pid, True, 8)
    assert cheap[0]["id"] == best["id"] and len(cheap) == 4  # the AND match, then 3 of the newest
    assert [b["id"] for b in cheap[1:]] == [b["id"] for b in store.fts_candidates(
        " OR ".join(terms), pid, limit=3, order="newest") if b["id"] != best["id"]][:3]
    assert foreign["id"] not in {b["id"] for b in cheap} and noise
    hits = search(store, pid, "celery retry timeout", threshold=0.0, mode="lexical", now=NOW)
    assert hits[0]["id"] == best["id"]


def test_newest_order_reads_the_index_backwards(store, git_project):
    playbook = Playbook(store, identify(str(git_project)))
    made = [playbook.add(f"Gradle daemon note {i}: restart it after changing the JDK ({i})", "pitfalls")[0]
            for i in range(5)]
    newest = store.fts_candidates('"gradle"', playbook.project_id, limit=3, order="newest")
    assert [b["id"] for b in newest] == [b["id"] for b in made[::-1][:3]]
    assert all("bm25" in b for b in newest)


def test_the_cut_lets_the_best_hit_alone_pass_on_its_cosine():
    """A paraphrase sharing no word with its lesson scores under the threshold in the fused score; its
    cosine lets it through when it is the best hit, never a second hit, and never under `semantic_threshold`."""
    from ace_engine.retrieval.search import SEMANTIC_ALLOWANCE, _cut

    def hit(score, bid, cosine):
        return (score, {"id": bid, "content": bid}, (0.0, 0.0, 0, 1, 0.0, 0.0, "", cosine, {}))

    low = 0.28 - SEMANTIC_ALLOWANCE + 0.01  # under the threshold, within the allowance
    paraphrase, other = hit(low, "a", 0.40), hit(low - 0.02, "b", 0.39)
    assert [h[1]["id"] for h in _cut([other, paraphrase], 0.28, 0.36, 0.85)] == ["a"]
    assert _cut([other, paraphrase], 0.28, 0.41, 0.85) == []  # its cosine is not enough
    assert _cut([hit(low, "a", None)], 0.28, 0.36, 0.85) == []  # lexical only: no semantic key
    strong, weak = hit(0.5, "s", 0.2), hit(0.3, "w", 0.6)
    assert [h[1]["id"] for h in _cut([weak, strong], 0.28, 0.36, 0.85)] == ["s"]  # relative cut
    assert [h[1]["id"] for h in _cut([weak, strong], 0.28, 0.36, 0.5)] == ["w", "s"]
    assert len(_cut([weak, strong, paraphrase], -1.0, 0.36, 0.85)) == 3  # threshold ≤ 0: the ranking itself
    assert _cut([paraphrase], low + SEMANTIC_ALLOWANCE + 0.01, 0.36, 0.85) == []  # stricter stays stricter
