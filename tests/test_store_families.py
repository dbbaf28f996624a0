"""The store's families as narrow repositories, and the facts that have one source (issue 22).

Real SQLite files under the test's ACE_HOME; no part of the project is mocked.
"""

import time

import pytest

from ace_engine import continuity
from ace_engine.core import config, fmt
from ace_engine.llm import base as llm_base
from ace_engine.retrieval import render
from ace_engine.store import interfaces
from ace_engine.store.history_sql import McpStore
from ace_engine.store.sqlite import SQLiteStore

FAMILIES = {
    "sessions": interfaces.SessionsStore,
    "events": interfaces.EventsStore,
    "lessons": interfaces.PlaybookStore,
    "jobs": interfaces.JobsStore,
    "summaries": interfaces.ContinuityStore,
    "team_sync": interfaces.SyncStore,
    "maintenance": interfaces.MaintenanceStore,
    "meta": interfaces.MetaStore,
}


def _declared(protocol: type) -> set[str]:
    """The methods a Protocol declares, its bases' included."""
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls.__module__ == interfaces.__name__:
            names |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return names


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_offers_what_its_interface_declares(ace_home, family):
    with SQLiteStore() as store:
        repository = getattr(store, family)
        missing = sorted(n for n in _declared(FAMILIES[family]) if not callable(getattr(repository, n, None)))
    assert missing == []


def test_the_whole_store_declares_every_method_it_has(ace_home):
    """What `SQLiteStore` (and `McpStore`'s history reads) offers is declared in an interface:
    no method is reachable only by taking the concrete class (note_first_head once was)."""
    declared = set().union(*map(_declared, (interfaces.Store, interfaces.HistoryStore, interfaces.ViewsStore)))
    offered = {n for cls in McpStore.__mro__ if cls.__module__.startswith("ace_engine.store.")
               and cls.__name__ != "StoreBase"
               for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    assert offered - declared == set()


def test_families_share_one_connection_and_one_transaction(ace_home):
    """A write through one family inside `store.transaction()` rolls back with the others'."""
    with SQLiteStore() as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.lessons.set_state("s-1", "k", "lessons")
            store.summaries.note_first_head("s-1", "abc123")
            raise RuntimeError("the caller fails half way")
        assert store.lessons.get_state("s-1", "k") is None
        assert store.lessons.get_state("s-1", "first_head") is None
        with store.transaction():
            store.lessons.set_state("s-1", "k", "kept")
            store.summaries.note_first_head("s-1", "abc123")
    with SQLiteStore() as other:  # another connection sees both: committed together
        assert other.lessons.get_state("s-1", "k") == "kept"
        assert other.lessons.get_state("s-1", "first_head") == "abc123"


def test_a_like_search_matches_percent_and_underscore_literally(ace_home):
    now = time.time()
    with McpStore() as store:
        project_id = store.sessions.ensure_project("path:/p", "/p", None, "p", now)
        with store.transaction():
            store.jobs.record_command_runs(project_id, "s-1", [
                {"command": "pytest -k a_b", "kind": "test", "runs": 1, "failures": 1, "error": "E"},
                {"command": "pytest -k axb", "kind": "test", "runs": 1, "failures": 1, "error": "E"},
                {"command": "grep 100%", "kind": "other", "runs": 1, "failures": 0},
                {"command": "grep 1000", "kind": "other", "runs": 1, "failures": 0},
            ], now)
        assert [r["command"] for r in store.command_stats_like(project_id, "a_b")] == ["pytest -k a_b"]
        assert [r["command"] for r in store.command_stats_like(project_id, "0%")] == ["grep 100%"]


def test_sizes_times_and_tokens_have_one_format():
    assert fmt.size(512) == "512 B"
    assert fmt.size(1536) == "1.5 KiB"
    assert fmt.size(3 * 1024 * 1024) == "3.0 MiB"
    assert fmt.iso_utc(0) == "1970-01-01T00:00:00Z"
    assert fmt.stamp(None) == fmt.stamp(True) == fmt.stamp("soon") == "-"
    now = time.time()
    assert fmt.ago(now - 7200, now) == "2 hours ago"
    assert fmt.ago(now - 10, now) == "just now"
    assert fmt.day_relative(now, now).startswith("today ")
    assert fmt.short_stamp(now, now) == time.strftime("%H:%M", time.localtime(now))
    # One estimator: the hooks' budget and the LLM usage fallback count the same text the same way.
    assert render.estimate_tokens is fmt.estimate_tokens is llm_base.estimate_tokens
    assert fmt.estimate_tokens("abcdefg") == 2


def test_a_missing_setting_falls_back_to_the_one_table():
    assert config.value_of(None, "llm.provider") == config.DEFAULTS["llm.provider"]
    assert config.value_of({}, "continuity.sessions") == config.DEFAULTS["continuity.sessions"]
    assert config.value_of({"continuity.sessions": 9}, "continuity.sessions") == 9
    assert continuity.setting is config.value_of
    assert continuity.DEFAULTS == {k: v for k, v in config.DEFAULTS.items() if k.startswith("continuity.")}


def test_an_api_key_comes_from_the_environment_variable_the_config_names():
    assert llm_base.api_key(None, "ACE_TEST_KEY", {"ACE_TEST_KEY": "k1"}) == ("ACE_TEST_KEY", "k1")
    assert llm_base.api_key("MINE", "ACE_TEST_KEY", {"MINE": "k2", "ACE_TEST_KEY": "k1"}) == ("MINE", "k2")
    assert llm_base.api_key(None, "ACE_TEST_KEY", {}) == ("ACE_TEST_KEY", "")
    assert "`llm.api_key_env`" in str(llm_base.missing_key("X", "name another one in `llm.api_key_env`"))
