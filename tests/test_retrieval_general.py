"""The general lesson ranks above its one-off variants, and variants of one command collapse."""

from ace_engine.retrieval.general import _command, prefer_general


def hit(score, content):
    return (score, {"content": content}, None)


SUITE = "Run the whole suite with `mix test` from the repo root."
FILE_A = "Ran `mix test test/courier_hub/dispatch_test.exs` to check the change in isolation."
FILE_B = "Ran `mix test test/courier_hub_web/live/route_live_test.exs` to check the change in isolation."
FAILED = "`mix test --failed` re-runs only the tests that failed in the previous run."
PUSH_A = "Pushed the new branch with `git push --set-upstream origin feat/eta-badge`."
PUSH_B = "Pushed the new branch with `git push --set-upstream origin fix/oban-retry-backoff`."


def test_plain_forms():
    assert _command(FILE_A) == ("mix test", True)
    assert _command(SUITE) == ("mix test", False)
    assert _command(FAILED) == ("mix test --failed", False)
    assert _command(PUSH_A) == ("git push --set-upstream origin", True)
    assert _command("no command here") is None
    assert _command("use `make lint` then `make test`") is None  # several: left alone
    assert _command("open `src/app.py`") is None  # a file, not a command


def test_the_general_lesson_moves_above_its_variants_and_variants_collapse():
    ranked = [hit(0.9, FILE_A), hit(0.88, FILE_B), hit(0.8, FAILED), hit(0.7, SUITE), hit(0.6, PUSH_A)]
    out = [h[1]["content"] for h in prefer_general(ranked)]
    assert out == [SUITE, FILE_A, FAILED, PUSH_A]


def test_unrelated_hits_keep_their_order():
    ranked = [hit(0.9, PUSH_A), hit(0.8, FAILED), hit(0.7, "Keep secrets in `config/runtime.exs`.")]
    assert prefer_general(ranked) == ranked
    ranked = [hit(0.9, PUSH_A), hit(0.8, PUSH_B)]
    assert [h[1]["content"] for h in prefer_general(ranked)] == [PUSH_A]
