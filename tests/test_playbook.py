"""The playbook domain model against a real store: ids, sections, confidence, domains, and each
delta operation (ADD / UPDATE / TAG / REMOVE / MERGE / QUARANTINE / RESTORE / PROMOTE) with its change
log, and the candidate status."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.core.project import identify
from ace_engine.playbook import confidence as conf_mod
from ace_engine.playbook import domains, sections
from ace_engine.playbook.ids import looks_like_id, new_id
from ace_engine.playbook.playbook import (
    MAX_CONTENT_CHARS,
    STATUSES,
    Playbook,
    PlaybookError,
    clean_content,
    content_key,
)
from ace_engine.store.sqlite import SQLiteStore
from conftest import examples


@pytest.fixture
def store(ace_home):
    with SQLiteStore() as s:
        yield s


@pytest.fixture
def pb(store, git_project):
    return Playbook(store, identify(str(git_project)))


def ops(store, bullet_id):
    return [c["op"] for c in reversed(store.changes(bullet_id=bullet_id))]


# -- ids -------------------------------------------------------------------------------------------


def test_ids_are_prefixed_unique_and_sort_by_creation():
    ids = [new_id(1_700_000_000 + i) for i in range(50)]
    assert all(i.startswith("ctx-") and len(i) == 24 and looks_like_id(i) for i in ids)
    assert ids == sorted(ids)
    same_ms = [new_id(1_700_000_000.0) for _ in range(2000)]
    assert len(set(same_ms)) == 2000, "random part must separate ids made in the same millisecond"
    # …and, made by one process, keep the order they were made in (ranking breaks ties by id).
    assert same_ms == sorted(same_ms)
    again = [new_id(1_700_000_000.0) for _ in range(2)]
    assert again[0] not in same_ms and again == sorted(again)


@pytest.mark.parametrize("text,ok", [("ctx-01abc", True), ("ctx-", False), ("abc", False), ("ctx-a b", False),
                                     ("ctx-a%", False)])
def test_looks_like_id(text, ok):
    assert looks_like_id(text) is ok


# -- sections --------------------------------------------------------------------------------------


@pytest.mark.parametrize("given_name,canonical", [
    ("strategies_and_hard_rules", "strategies_and_hard_rules"), ("Rules", "strategies_and_hard_rules"),
    ("pitfalls", "troubleshooting_and_pitfalls"), ("useful-code-snippets", "useful_code_snippets"),
    ("APIs To Use", "apis_to_use"), (" api ", "apis_to_use"),
])
def test_section_normalize(given_name, canonical):
    assert sections.normalize(given_name) == canonical


def test_unknown_section_lists_the_allowed_ones_and_extra_sections_count():
    with pytest.raises(sections.SectionError, match="strategies_and_hard_rules"):
        sections.normalize("recipes")
    assert sections.normalize("recipes", ("recipes",)) == "recipes"
    assert sections.title("apis_to_use") == "APIs to use"
    assert sections.title("house_style") == "House style"


# -- confidence ------------------------------------------------------------------------------------


def test_confidence_documented_values():
    assert conf_mod.confidence(0, 0) == 0.5
    assert conf_mod.confidence(0, 10) == pytest.approx(0.1429, abs=1e-4)
    assert conf_mod.confidence(10, 0) == pytest.approx(12 / 14, abs=1e-4)
    # one explicit mark is worth three implicit ones
    assert conf_mod.confidence(0, 0, 1, 0) == conf_mod.confidence(3, 0)
    assert conf_mod.confidence(0, 0, 0, 1) == conf_mod.confidence(0, 3)
    assert conf_mod.observations(1, 2, 3, 4) == 10


counts = st.integers(min_value=0, max_value=10_000)


@given(counts, counts, counts, counts)
def test_confidence_is_bounded_and_monotonic(h, x, he, xe):
    c = conf_mod.confidence(h, x, he, xe)
    assert 0 < c < 1
    assert conf_mod.confidence(h + 1, x, he, xe) >= c
    assert conf_mod.confidence(h, x + 1, he, xe) <= c
    assert conf_mod.confidence(h, x, he + 1, xe) >= conf_mod.confidence(h + 1, x, he, xe)


# -- domains ---------------------------------------------------------------------------------------


def test_domain_normalize():
    assert domains.normalize("  Auth / JWT  tokens refresh extra") == "auth-jwt-tokens-refresh"
    assert domains.normalize("Python_Testing") == "python-testing"
    assert domains.normalize("!!!") == ""


def test_derive_from_content_files_and_fallback():
    assert domains.derive("Run pytest with a conftest fixture")[0] == "python-testing"
    assert domains.derive("Use alembic for the sqlite migrations") == ["database"]
    assert domains.derive("Nothing technical here") == ["general"]
    assert "python" in domains.derive("Keep it small", files=["src/app/main.py"])
    assert domains.derive("docker compose with jest and npm and ruff", limit=2).__len__() == 2


@pytest.mark.parametrize("text,domain", [
    ("Never commit node_modules", "node-packaging"),
    ("Decode the file as utf-8 explicitly", "unicode-text"),
    ("cherry-pick the fix onto the release branch", "git"),
    ("The github-actions runner has no GPU", "ci"),
])
def test_derive_matches_keywords_with_punctuation(text, domain):
    # The keyword table has entries like `node_modules` and `utf-8`; they must be found whole.
    assert domain in domains.derive(text)


def test_path_words_and_match_path():
    assert domains.path_words("src/auth/jwt_refresh.py") == ["auth", "jwt", "refresh"]
    assert domains.match_path("src/db/models.py", ["database", "auth"]) == ("database", 1)
    assert domains.match_path("app/migrations/0001.py", ["database", "docker"])[0] == "database"
    assert domains.match_path("src/auth/jwt_refresh.py", ["auth-jwt", "auth"]) == ("auth-jwt", 2)  # auth and jwt, each counted once
    assert domains.match_path("README", ["database"]) is None
    assert domains.words_match("testing", "tests") and not domains.words_match("ci", "cli")


# -- content ---------------------------------------------------------------------------------------


def test_clean_content_and_key():
    assert clean_content("  Run   pytest\n\tfirst ") == "Run pytest first"
    with pytest.raises(PlaybookError, match="needs some content"):
        clean_content(" \n ")
    with pytest.raises(PlaybookError, match=f"at most {MAX_CONTENT_CHARS}"):
        clean_content("x" * (MAX_CONTENT_CHARS + 1))
    assert content_key("Run `pytest`, FIRST!") == content_key("run pytest first")


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=80))
def test_content_key_ignores_case_punctuation_and_spacing(text):
    key = content_key(text)
    assert content_key(key) == key
    assert content_key(text.upper()) == key
    assert content_key("  " + text.replace(" ", "  ") + " .") == key


# -- ADD -------------------------------------------------------------------------------------------


def test_add_persists_a_bullet_and_logs_it(pb, store):
    bullet, created = pb.add("Run the suite with `python -m pytest`", "rules", domains=["Python Testing", "python-testing"])
    assert created
    stored = store.get_bullet(bullet["id"])
    assert stored["section"] == "strategies_and_hard_rules"
    assert stored["domains"] == ["python-testing"]
    assert (stored["helpful"], stored["harmful"], stored["confidence"], stored["status"]) == (0, 0, 0.5, "active")
    assert stored["provenance"] == {"source": "user"}
    assert stored["project_id"] == pb.project_id
    assert ops(store, bullet["id"]) == ["ADD"]
    assert store.domain_counts(pb.project_id) == {"python-testing": 1}


def test_add_deduplicates_exact_content_per_scope(pb, store):
    first, _ = pb.add("Always run ruff before committing", "rules")
    again, created = pb.add("always run RUFF before committing!", "pitfalls")
    assert not created and again["id"] == first["id"]
    global_copy, created = pb.add("Always run ruff before committing", "rules", scope="global")
    assert created and global_copy["id"] != first["id"] and global_copy["project_id"] is None
    assert store.count_bullets(pb.project_id, statuses=("active",)) == 2


def test_add_derives_domains_and_validates(pb):
    bullet, _ = pb.add("Pin the docker base image digest", "strategies")
    assert bullet["domains"] == ["docker"]
    with pytest.raises(PlaybookError, match="status"):
        pb.add("x y z", "rules", status="deleted")
    with pytest.raises(PlaybookError, match="scope"):
        pb.add("x y z", "rules", scope="team")
    with pytest.raises(sections.SectionError):
        pb.add("x y z", "recipes")


def test_add_with_unusable_domains_still_gets_some(pb):
    bullet, _ = pb.add("Pin the docker base image digest", "rules", domains=["!!!", "  "])
    assert bullet["domains"] == ["docker"]


def test_domains_given_as_one_string_are_one_domain(pb):
    bullet, _ = pb.add("Refresh tokens before they expire", "rules", domains="auth-jwt")
    assert bullet["domains"] == ["auth-jwt"]
    updated = pb.update(bullet["id"], domains="database")
    assert updated["domains"] == ["database"]


# -- UPDATE ----------------------------------------------------------------------------------------


def test_update_content_reindexes_and_logs_before_after(pb, store):
    bullet, _ = pb.add("Use the staging database for load tests", "rules")
    updated = pb.update(bullet["id"], content="Use the replica database for load tests", section="pitfalls")
    stored = store.get_bullet(bullet["id"])
    assert stored["content"] == updated["content"] == "Use the replica database for load tests"
    assert stored["content_key"] == content_key(stored["content"])
    assert stored["section"] == "troubleshooting_and_pitfalls"
    assert [b["id"] for b in store.fts_candidates("replica", pb.project_id)] == [bullet["id"]]
    assert store.fts_candidates("staging", pb.project_id) == []
    change = store.changes(bullet_id=bullet["id"])[0]
    assert change["op"] == "UPDATE"
    assert change["detail"]["before"] == {"content": "Use the staging database for load tests",
                                          "section": "strategies_and_hard_rules"}
    assert change["detail"]["after"]["section"] == "troubleshooting_and_pitfalls"


def test_update_without_a_change_writes_nothing(pb, store):
    bullet, _ = pb.add("Use the staging database for load tests", "rules")
    same = pb.update(bullet["id"], content="Use  the staging database for load tests ", section="rules")
    assert same["updated_at"] == bullet["updated_at"]
    assert ops(store, bullet["id"]) == ["ADD"]


def test_update_domains_and_provenance(pb, store):
    bullet, _ = pb.add("Use the staging database for load tests", "rules", domains=["database"])
    assert pb.update(bullet["id"], domains=[])["domains"] == ["general"]
    pb.update(bullet["id"], provenance={"source": "user", "evidence": "seen twice"})
    assert store.get_bullet(bullet["id"])["provenance"]["evidence"] == "seen twice"
    change = store.changes(bullet_id=bullet["id"])[0]
    assert change["detail"] == {"before": {}, "after": {}, "provenance": "updated"}
    assert store.domain_counts(pb.project_id) == {"general": 1}


# -- TAG -------------------------------------------------------------------------------------------


def test_tag_counts_and_confidence(pb, store):
    bullet, _ = pb.add("Use the staging database for load tests", "rules")
    pb.tag(bullet["id"], "helpful")
    pb.tag(bullet["id"], "helpful", explicit=True)
    tagged = pb.tag(bullet["id"], "HARMFUL", count=2)
    stored = store.get_bullet(bullet["id"])
    assert (stored["helpful"], stored["helpful_explicit"], stored["harmful"], stored["harmful_explicit"]) == (1, 1, 2, 0)
    assert stored["confidence"] == tagged["confidence"] == conf_mod.confidence(1, 2, 1, 0)
    pb.tag(bullet["id"], "neutral")
    assert store.get_bullet(bullet["id"])["confidence"] == stored["confidence"]
    assert ops(store, bullet["id"]) == ["ADD", "TAG", "TAG", "TAG", "TAG"]
    with pytest.raises(PlaybookError, match="helpful, harmful or neutral"):
        pb.tag(bullet["id"], "great")


def test_tag_logs_the_count_it_applied(pb, store):
    bullet, _ = pb.add("Use the staging database for load tests", "rules")
    pb.tag(bullet["id"], "helpful", count=0)
    assert store.get_bullet(bullet["id"])["helpful"] == 1
    assert store.changes(bullet_id=bullet["id"])[0]["detail"]["count"] == 1


# -- REMOVE / QUARANTINE / RESTORE -------------------------------------------------------------------


def test_status_changes_are_logged_once_and_update_domain_counts(pb, store):
    bullet, _ = pb.add("Pin the docker base image digest", "rules")
    assert store.domain_counts(pb.project_id) == {"docker": 1}
    assert pb.remove(bullet["id"])["status"] == "archived"
    pb.remove(bullet["id"])  # already archived: nothing to do
    assert store.domain_counts(pb.project_id) == {}
    assert [b["id"] for b in pb.bullets()] == []
    assert pb.quarantine(bullet["id"])["status"] == "quarantined"
    assert pb.restore(bullet["id"])["status"] == "active"
    assert ops(store, bullet["id"]) == ["ADD", "REMOVE", "QUARANTINE", "RESTORE"]
    assert store.changes(bullet_id=bullet["id"])[0]["detail"] == {"from": "quarantined", "to": "active"}
    assert store.domain_counts(pb.project_id) == {"docker": 1}


# -- candidates: PROMOTE, RESTORE as a candidate, the safety policy ---------------------------------------


def test_a_candidate_is_kept_apart_from_the_active_playbook_until_promoted(pb, store):
    assert STATUSES == ("active", "candidate", "quarantined", "archived")
    bullet, _ = pb.add("Run `mix format` before committing: the pre-commit hook rejects unformatted files", "rules",
                       status="candidate")
    assert bullet["status"] == "candidate" and pb.bullets() == []
    assert [b["id"] for b in pb.bullets(statuses=("candidate",))] == [bullet["id"]]
    assert store.domain_counts(pb.project_id) == {}, "domains count what may be injected"
    assert store.fts_candidates('"format"', pb.project_id) == []
    assert [b["id"] for b in store.fts_candidates('"format"', pb.project_id, statuses=("candidate",))] == [bullet["id"]]
    promoted = pb.promote(bullet["id"], source="user", reason="kept")
    assert promoted["status"] == store.get_bullet(bullet["id"])["status"] == "active"
    assert ops(store, bullet["id"]) == ["ADD", "PROMOTE"]
    assert store.changes(bullet_id=bullet["id"])[0]["detail"] == {"from": "candidate", "to": "active"}
    with pytest.raises(PlaybookError, match="is active, not a candidate"):
        pb.promote(bullet["id"])
    pb.remove(bullet["id"])
    assert pb.restore(bullet["id"], status="candidate", source="learning")["status"] == "candidate"
    with pytest.raises(PlaybookError, match="active or candidate"):
        pb.restore(bullet["id"], status="archived")


def test_the_safety_policy_holds_candidates_back_too(pb, store, git_project):
    risky = "Fetch the fixtures with `curl -fsSL https://fixtures.acme-tools.dev/seed.json -o seed.json` first"
    held, _ = pb.add(risky, "rules", status="candidate")
    assert held["status"] == "quarantined", "a flagged lesson is never a candidate"
    store.purge_bullets([held["id"]])
    # Screened when it became a candidate (the host trusted then), not any more when promoted.
    trusting = Playbook(store, identify(str(git_project)), trusted_hosts=["fixtures.acme-tools.dev"])
    bullet, _ = trusting.add(risky, "rules", status="candidate")
    assert bullet["status"] == "candidate"
    after = pb.promote(bullet["id"], source="user", reason="kept")
    assert after["status"] == store.get_bullet(bullet["id"])["status"] == "quarantined"
    assert store.get_bullet(bullet["id"])["provenance"]["concerns"] == ["contacts unknown host fixtures.acme-tools.dev"]
    (change,) = [c for c in store.changes(bullet_id=bullet["id"]) if c["op"] == "QUARANTINE"]
    assert change["source"] == "user" and "held back instead of promoted" in change["reason"]
    # New flagged content for a candidate quarantines it, as for an active lesson.
    other, _ = pb.add("Seed the database with `make seed` before the integration tests", "rules", status="candidate")
    assert pb.update(other["id"], content=risky + " (seed)")["status"] == "quarantined"


# -- MERGE -----------------------------------------------------------------------------------------


def test_merge_sums_counters_unites_domains_and_archives_the_other(pb, store):
    a, _ = pb.add("Run migrations with alembic upgrade head", "rules", domains=["database"])
    b, _ = pb.add("Apply the alembic migrations before the tests", "rules", domains=["python-testing"])
    pb.tag(a["id"], "helpful", count=2)
    pb.tag(b["id"], "helpful", explicit=True)
    pb.tag(b["id"], "harmful")
    merged = pb.merge(a["id"], b["id"], content="Apply alembic migrations (upgrade head) before the tests")
    stored = store.get_bullet(a["id"])
    assert (stored["helpful"], stored["helpful_explicit"], stored["harmful"]) == (2, 1, 1)
    assert stored["confidence"] == merged["confidence"] == conf_mod.confidence(2, 1, 1, 0)
    assert stored["domains"] == ["database", "python-testing"]
    assert stored["content"] == "Apply alembic migrations (upgrade head) before the tests"
    assert stored["provenance"]["merged"][0]["id"] == b["id"]
    assert store.get_bullet(b["id"])["status"] == "archived"
    assert ops(store, a["id"])[-1] == "MERGE" and ops(store, b["id"])[-1] == "REMOVE"
    assert store.changes(bullet_id=b["id"])[0]["detail"]["merged_into"] == a["id"]
    with pytest.raises(PlaybookError, match="itself"):
        pb.merge(a["id"], a["id"])


# -- get, batches, apply, scopes ---------------------------------------------------------------------


def test_get_by_unique_prefix(pb):
    bullet, _ = pb.add("Pin the docker base image digest", "rules", now=1_700_000_000.0)
    other, _ = pb.add("Never run migrations by hand", "rules", now=1_800_000_000.0)
    assert pb.get(bullet["id"][:12])["id"] == bullet["id"]
    with pytest.raises(PlaybookError, match="several bullets"):
        pb.get("ctx-0")
    with pytest.raises(PlaybookError, match="ace patterns"):
        pb.get("ctx-zzzz")
    with pytest.raises(PlaybookError, match="no bullet"):
        pb.get("nonsense")
    assert other["id"] > bullet["id"]


def test_batch_refreshes_domain_counts_once_at_the_end(pb, store):
    with pb:
        pb.add("Pin the docker base image digest", "rules")
        pb.add("Use pytest fixtures for the database", "rules", domains=["python-testing"])
        assert store.domain_counts(pb.project_id) == {}
    assert store.domain_counts(pb.project_id) == {"docker": 1, "python-testing": 1}


def test_apply_dispatches_deltas(pb, store):
    bullet = pb.apply({"op": "add", "content": "Pin the docker base image digest", "section": "rules"})
    pb.apply({"op": "TAG", "id": bullet["id"], "tag": "helpful", "explicit": True})
    assert store.get_bullet(bullet["id"])["helpful_explicit"] == 1
    assert pb.apply({"op": "REMOVE", "id": bullet["id"]})["status"] == "archived"
    with pytest.raises(PlaybookError, match="unknown delta"):
        pb.apply({"op": "DELETE", "id": bullet["id"]})


@pytest.mark.parametrize("delta", [{"op": "ADD"}, {"op": "TAG", "id": "ctx-x"}, {"op": "ADD", "content": "a b",
                                                                                  "section": "rules", "colour": 1}])
def test_apply_refuses_malformed_deltas_with_a_playbook_error(pb, delta):
    with pytest.raises(PlaybookError, match=delta["op"]):
        pb.apply(delta)


def test_global_bullets_are_seen_by_every_project(store, git_project, tmp_path):
    one = Playbook(store, identify(str(git_project)))
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    two = Playbook(store, identify(str(other_dir)))
    shared, _ = one.add("Prefer ripgrep over grep -r", "rules", scope="global")
    mine, _ = one.add("This project uses tabs", "rules")
    assert {b["id"] for b in one.bullets()} == {shared["id"], mine["id"]}
    assert {b["id"] for b in two.bullets()} == {shared["id"]}
    assert {b["id"] for b in Playbook(store, None).bullets()} == {shared["id"]}


@settings(max_examples=examples(25), deadline=None)
@given(st.text(alphabet="abc XYZ.,!", min_size=1, max_size=30).filter(lambda t: content_key(t)))
def test_adding_the_same_lesson_twice_never_duplicates(tmp_path_factory, text):
    path = str(tmp_path_factory.mktemp("store") / "ace.db")
    with SQLiteStore(path) as s:
        pb = Playbook(s, None)
        first, created = pb.add(text, "rules", now=time.time())
        again, created_again = pb.add(text.upper() + "!", "rules")
        assert created and not created_again and again["id"] == first["id"]
        assert s.count_bullets(None) == 1
