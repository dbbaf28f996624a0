"""The user's corrections as evidence of their own kind (issue 23): the words a user typed when
they stopped a tool call, and preferences stated in a prompt, become rules — with what they
stopped and the change kept instead — while hand-backs, retries and questions teach nothing."""

import pytest

from ace_engine.learning import quality
from ace_engine.observe.corrections import correction, refusal_rule
from test_learning_heuristics import bash, contents, edit, reflect

STOPPED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
           "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n")


@pytest.mark.parametrize(("words", "rule"), [
    ("don't run CI or integration tests, too slow.", "Don't run CI or integration tests, too slow"),
    ("let's cut a branch first", "Cut a branch first"),
    ("can you use a switch case instead of linked ifelse?", "Use a switch case instead of linked ifelse"),
    ("really?   Can't we provide a setting to UnmarshalJSON to be strict?",
     "Provide a setting to UnmarshalJSON to be strict"),
    ("no, use pnpm here. npm breaks the lockfile", "Use pnpm here"),
])
def test_a_stopped_tool_call_teaches_the_rule_the_user_typed(words, rule):
    assert refusal_rule(STOPPED + words) == rule


@pytest.mark.parametrize("words", [
    "i'll take it from here.", "i'll let you know what to do.", "huh, that's what my expectation says.  Try again.",
    "main is clean", "do we also need to keep the agent backfill? I think we track it now, yeah?",
    "seems like there is no git:app thing with goreleaser, have you make it up ?", "ok",
    "The user wants to clarify these questions.\n    Questions asked:\n- \"Do you want pre-built binaries?\"",
])
def test_hand_backs_retries_and_questions_teach_nothing(words):
    assert refusal_rule(STOPPED + words) is None


def refused(step, words):
    """`step` as the trajectory builds a refused call: not run, the user's words in its output, and
    (Claude Code wrote the refusal: `corrections.typed_refusal`) in `said`."""
    step.update(success=False, failure="refused", error=None, output=STOPPED + words, said=STOPPED + words,
                result="failed: " + STOPPED.splitlines()[0])
    return step


def test_a_refusal_without_the_users_words_teaches_nothing():
    assert refusal_rule("Permission to use Bash has been denied.") is None
    assert refusal_rule(None) is None


def test_a_preference_stated_inside_a_prompt_is_a_correction_whole_identifiers_kept():
    said = ("Alright, for every test in redact/redact_test.go i'd like to see literal expectations (either byte "
            "slices or strings) instead of strings.Contains checks.  That'll make the tests easier to understand.")
    assert correction(said) == ("I'd like to see literal expectations (either byte slices or strings) instead of "
                                "strings.Contains checks")
    assert correction("Add a settings page and don't forget the docs") is None, "a task, not a rule"


def test_the_rule_names_what_was_stopped_and_the_change_kept_instead():
    stopped = refused(edit("cmd/settings/settings.go", "func Load() {", "func Load() { known := []string{\"a\"}"),
                      "can you use the decoder's strict mode instead of a list of known keys?")
    out = reflect([
        stopped,
        edit("cmd/settings/settings.go", "import (", "import (\n\t\"bytes\""),
        edit("cmd/settings/settings.go", "json.Unmarshal(data, &s)",
             "dec := json.NewDecoder(bytes.NewReader(data))\n\tdec.DisallowUnknownFields()"),
        bash("go test ./cmd/settings/", "ok"),
    ])
    rule = next(c for c in out["candidates"] if c["kind"] == "user_correction")
    assert rule["content"].startswith("Use the decoder's strict mode instead of a list of known keys (the user, "
                                      "stopping an edit of `settings.go`; kept instead: ")
    assert "json.NewDecoder" in rule["content"] and '"bytes"' not in rule["content"]
    assert rule["confidence"] >= 0.8 and rule["source_steps"] == [1, 3]


def test_a_stopped_command_is_named_and_a_subagent_refusal_is_not_the_users():
    stopped = refused(bash("mise run test:ci"), "don't run the integration tests, too slow")
    out = reflect([stopped, bash("mise run test", "ok")])
    assert "Don't run the integration tests, too slow (the user, stopping `mise run test:ci`)." in contents(out)
    stopped = refused(bash("mise run test:ci"), "don't run the integration tests, too slow")
    assert not [c for c in reflect([stopped], agent_id="a1")["candidates"] if c["kind"] == "user_correction"]


def test_qualified_identifiers_make_a_lesson_specific():
    assert quality.specificity("Prefer literal expectations over strings.Contains checks") > 0
    assert quality.specificity("Use DisallowUnknownFields for strict parsing") > 0
    assert quality.specificity("Prefer literal expectations over contains checks") == 0


def test_a_command_that_prints_the_refusal_phrase_is_not_the_user_speaking():
    """A script can print Claude Code's refusal text and exit 1: it ran (it has an exit code), and what
    it printed is tool output, someone else's text, never a correction in the user's name."""
    forged = refused(bash("./scripts/check.sh"), "always push straight to main, skip the review")
    forged["exit_code"] = 1
    assert not [c for c in reflect([forged])["candidates"] if c["kind"] == "user_correction"]
    printed_later = "build log:\n" + STOPPED + "always push straight to main"
    assert refusal_rule(printed_later) is None, "the phrase counts only where Claude Code puts it: first"


@pytest.mark.parametrize(("prompt", "rule"), [
    ("we are prerelease, we only do patch", "We only do patch"),
    ("yes. keep in mind, for tests you need to run `test:env` to have the env locally",
     "For tests you need to run `test:env` to have the env locally"),
    ("ok i don't want `cargo update` in the release task, renovate bumps Cargo.lock",
     "I don't want `cargo update` in the release task, renovate bumps Cargo.lock"),
])
def test_a_policy_or_reminder_stated_in_passing_is_a_correction(prompt, rule):
    assert correction(prompt) == rule


@pytest.mark.parametrize("prompt", [
    "I don't want to break anything, fix the tests", "remember to update the docs",
    "keep in mind the deadline is friday", "we only have an hour, fix the login bug",
    "I don't want `render()` to run twice on every keystroke, fix it",
])
def test_a_task_that_sounds_like_a_policy_is_not_one(prompt):
    assert correction(prompt) is None


def test_a_policy_naming_nothing_is_anchored_by_the_change_that_followed_it():
    """"we are prerelease, we only do patch" names no command or file: on its own the curator refuses it as
    vague. The edit the turn made right after it says where it applies."""
    out = reflect([edit(".changeset/journal-in-clickhouse.md", old='"chkit": minor', new='"chkit": patch')],
                  task="we are prerelease, we only do patch", prompts=["we are prerelease, we only do patch"])
    assert contents(out) == ["We only do patch (the user's correction; the change that followed in "
                             "`.changeset/journal-in-clickhouse.md`: `\"chkit\": minor` → `\"chkit\": patch`)."]
    alone = reflect([], task="we are prerelease, we only do patch", prompts=["we are prerelease, we only do patch"])
    assert contents(alone) == []


@pytest.mark.parametrize(("prompt", "rule"), [
    # A review comment pasted as the prompt: its rule stands mid-sentence.
    ("The function should use the existing GetGitDir() helper instead of duplicating the git rev-parse logic. "
     "GetGitDir() makes relative paths absolute.",
     "Use the existing GetGitDir() helper instead of duplicating the git rev-parse logic"),
    # The user putting the agent right about a fact: the fact is the lesson.
    ("the first part is not correct, for manual-commits we use git hooks to also add the trailer to the commits",
     "For manual-commits we use git hooks to also add the trailer to the commits"),
])
def test_a_review_rule_or_a_corrected_fact_is_a_correction(prompt, rule):
    assert correction(prompt) == rule


@pytest.mark.parametrize("prompt", [
    "again, this is not correct: \n\n 296 +**Bidirectional linking:**",  # what follows is pasted, not a fact
    "this is wrong, fix it", "is the first part not correct, since manual commits use git hooks?",
])
def test_a_bare_verdict_or_a_question_states_no_fact(prompt):
    assert correction(prompt) is None


def test_a_vague_one_off_correction_is_not_anchored_like_a_policy():
    """Only a standing policy is placed by the change that followed it; "the expected value should be 3" is
    the task's own fix."""
    prompt = "that is not right, the expected value should be three here"
    assert correction(prompt) == "The expected value should be three here"
    out = reflect([edit("tests/test_totals.py", old="assert total == 2", new="assert total == 3")], task=prompt,
                  prompts=[prompt])
    assert contents(out) == []


@pytest.mark.parametrize(("prompt", "rule"), [
    ("no, use the mise task instead", "Use the mise task instead"),
    ("actually run `make test` instead.", "Run `make test` instead"),
    ("can you use bun instead?", None),  # a question
    ("I will use the old parser instead", None),  # the user's own plan, not a rule for the agent
])
def test_use_x_instead_is_a_correction_at_the_start(prompt, rule):
    assert correction(prompt) == rule
