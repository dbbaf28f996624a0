"""Structured output: finding the JSON object in a model's reply and checking its shape."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.llm.structured import InvalidOutput, extract_json, validate
from conftest import examples

SCHEMA = {
    "type": "object",
    "required": ["candidates", "tags"],
    "properties": {
        "candidates": {"type": "array", "items": {"type": "object", "required": ["content"],
                                                  "properties": {"content": {"type": "string"},
                                                                 "confidence": {"type": "number"}}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {
            "tag": {"type": "string", "enum": ["helpful", "harmful", "neutral"]}}}},
    },
}
GOOD = {"candidates": [{"content": "Run `make test`", "confidence": 0.8}], "tags": [{"tag": "helpful"}]}


@pytest.mark.parametrize("reply", [
    json.dumps(GOOD),
    "Here is the reflection:\n```json\n" + json.dumps(GOOD, indent=2) + "\n```\nHope it helps.",
    "Sure! " + json.dumps(GOOD) + " -- done",
    # An example object in the prose comes first but does not fit; the real answer does.
    'The format is {"like": "this"}. Answer: ' + json.dumps(GOOD),
    # Braces inside strings don't confuse the scan.
    'Note {not json} then ' + json.dumps(GOOD),
])
def test_the_fitting_object_is_found_wherever_it_is(reply):
    assert extract_json(reply, SCHEMA) == GOOD


@pytest.mark.parametrize("reply, problem", [
    ("", "empty"),
    ("I could not find any lessons.", "no JSON object"),
    ('{"candidates": [}', "no JSON object"),  # cut short
    ('{"candidates": []}', "missing required key 'tags'"),
    ('{"candidates": [{"content": 3}], "tags": []}', "$.candidates[0].content: expected string"),
    ('{"candidates": [], "tags": [{"tag": "great"}]}', "is not one of"),
    ('[1, 2, "three"]', "no JSON object"),  # JSON, but no object
])
def test_unusable_replies_say_what_is_wrong(reply, problem):
    with pytest.raises(InvalidOutput, match=problem.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        extract_json(reply, SCHEMA)


def test_an_object_wrapped_in_a_list_is_still_found():
    assert extract_json('[{"candidates": [], "tags": []}]', SCHEMA) == {"candidates": [], "tags": []}


def test_validate_types():
    assert validate(True, {"type": "integer"}) == ["$: expected integer, got bool"]
    assert validate(3, {"type": "number"}) == []
    assert validate(None, {"type": ["string", "null"]}) == []
    assert validate([1, 2, 3], {"type": "array", "maxItems": 2}) == ["$: at most 2 items, got 3"]
    assert validate({"a": 1}, None) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
prose = st.text(alphabet=st.characters(blacklist_characters="{"), max_size=80)


@settings(max_examples=examples(200), deadline=None)
@given(value=st.dictionaries(st.text(max_size=8), json_values, max_size=5), before=prose, after=st.text(max_size=80))
def test_any_object_surrounded_by_prose_without_braces_comes_back_intact(value, before, after):
    assert extract_json(before + json.dumps(value) + after) == value


# -- the reflector's schema against its recorded answers ------------------------------------------

ANSWERS = Path(__file__).parent / "fixtures" / "llm_answers"


@pytest.mark.parametrize("path", sorted(ANSWERS.glob("*.json")), ids=lambda p: p.stem)
def test_every_recorded_answer_fits_the_reflector_schema(path):
    from ace_engine.learning.llm_prompt import SCHEMA

    answer = json.loads(path.read_text(encoding="utf-8"))["answer"]
    assert validate(answer, SCHEMA) == []
    # As a model sends it: prose around a fenced block.
    assert extract_json("My reflection:\n```json\n" + json.dumps(answer, indent=2) + "\n```", SCHEMA) == answer


def test_a_lesson_without_step_ids_fails_the_reflector_schema_naming_where():
    from ace_engine.learning.llm_prompt import SCHEMA

    reply = {"reasoning": "r", "tags": [], "candidates": [
        {"content": "`make test` needs `make deps` first.", "section": "troubleshooting", "evidence": "steps 2-4"}]}
    with pytest.raises(InvalidOutput, match=r"\$\.candidates\[0\]: missing required key 'source_steps'"):
        extract_json(json.dumps(reply), SCHEMA)
    reply["candidates"][0]["source_steps"] = ["2", "4"]  # ids as strings: the schema wants integers
    with pytest.raises(InvalidOutput, match=r"\$\.candidates\[0\]\.source_steps\[0\]: expected integer"):
        extract_json(json.dumps(reply), SCHEMA)
