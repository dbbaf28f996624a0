"""The general lesson ranks above its one-off variants, and variants of one command collapse."""

from ace_engine.retrieval.general import _commands, _variant_of, prefer_general


def hit(score, content):
    return (score, {"content": content}, None)


SUITE = ("Run the whole suite with `mix test` from the repo root. It needs Postgres (`docker compose up -d db`);"
         " the `test` alias sets `MIX_ENV=test`.")
FILE_A = "Ran `mix test test/courier_hub/dispatch_test.exs` to check the change in isolation."
FILE_B = "Ran `mix test test/courier_hub_web/live/route_live_test.exs` to check the change in isolation."
FAILED = "`mix test --failed` re-runs only the tests that failed in the previous run."
PUSH_A = "Pushed the new branch with `git push --set-upstream origin feat/eta-badge`."
PUSH_B = "Pushed the new branch with `git push --set-upstream origin fix/oban-retry-backoff`."


def test_plain_forms():
    assert _variant_of(FILE_A) == "mix test"
    assert _commands(SUITE) == [("mix test", False), ("docker compose up -d db", False)]  # one-word spans left out
    assert _commands(FAILED) == [("mix test --failed", False)]
    assert _variant_of(PUSH_A) == "git push --set-upstream origin"
    assert _commands("no command here") == [] and _variant_of(SUITE) is None
    assert _variant_of("use `make lint dir/` then `make test a/b`") is None  # several: not a one-off
    assert _commands("open `src/app.py`") == []  # a file, not a command


def test_the_general_lesson_moves_above_its_variants_and_variants_collapse():
    ranked = [hit(0.9, FILE_A), hit(0.88, FILE_B), hit(0.8, FAILED), hit(0.7, SUITE), hit(0.6, PUSH_A)]
    out = [h[1]["content"] for h in prefer_general(ranked)]
    assert out == [SUITE, FILE_A, FAILED, PUSH_A]


def test_unrelated_hits_keep_their_order():
    ranked = [hit(0.9, PUSH_A), hit(0.8, FAILED), hit(0.7, "Keep secrets in `config/runtime.exs`.")]
    assert prefer_general(ranked) == ranked
    ranked = [hit(0.9, PUSH_A), hit(0.8, PUSH_B)]
    assert [h[1]["content"] for h in prefer_general(ranked)] == [PUSH_A]
