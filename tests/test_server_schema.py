"""The team server against its own OpenAPI document (server/openapi.py).

- Every route the app serves is described in `/openapi.json`, with the same methods, and the
  document describes nothing the app does not serve.
- The validator the routes use (`openapi.check`) agrees with a real JSON Schema validator
  (jsonschema_rs, draft 2020-12) on the very schemas it serves, for valid and broken inputs alike:
  the document and the enforcement cannot drift apart.
- schemathesis, bounded, drives the live server (real uvicorn; SQLite and PostgreSQL) from the
  document with an org-level admin token: no 5xx, every answer's status, content type and body
  conform to the document, invalid input is refused, valid input accepted.
"""

from __future__ import annotations

import json

import httpx
import pytest

# The team server (the `server` extra) and the contract's checkers (the `test` extra): skipped, saying
# which is missing, without them.
pytest.importorskip("uvicorn", reason="the team server needs the `server` extra (pip install -e '.[server]')")
pytest.importorskip("starlette", reason="the team server needs the `server` extra (pip install -e '.[server]')")
pytest.importorskip("schemathesis", reason="the OpenAPI contract is checked with schemathesis (the `test` extra)")
pytest.importorskip("jsonschema_rs", reason="the served schemas are checked with jsonschema_rs (the `test` extra)")

import jsonschema_rs  # noqa: E402
import schemathesis  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from starlette.routing import Route  # noqa: E402

from ace_engine import __version__  # noqa: E402
from ace_engine.server import openapi  # noqa: E402
from ace_engine.server.app import create_app  # noqa: E402
from ace_engine.server.storage.db import TeamDB  # noqa: E402
from conftest import examples
from test_server_api import LiveServer, database, mint  # noqa: E402

SEED_LESSON = "ctx-0000000001aaaaaaaaaa"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def live(request, tmp_path_factory):
    with database(request.param, tmp_path_factory.mktemp("schema")) as db_url:
        db = TeamDB.open(db_url)
        try:
            token = mint(db, "admin", None)
            # a generated pull may ask to wait 30 s for a delta that never comes: held 0.2 s here
            app = create_app(db, rate_per_second=100_000, burst=100_000, max_wait_s=0.2)
            with LiveServer(app) as server:
                # something in every table, so reads have rows to describe
                httpx.post(f"{server.url}/v1/projects/alpha/deltas", headers={"Authorization": f"Bearer {token}"},
                           json={"client_id": "seed", "deltas": [
                               {"key": "1", "op": "ADD", "lesson_id": SEED_LESSON, "content": "Run pytest -x first",
                                "section": "apis", "domains": ["python-testing"]},
                               {"key": "2", "op": "TAG", "lesson_id": SEED_LESSON, "helpful": 2, "harmful": 0},
                               {"key": "3", "op": "ADD", "lesson_id": "ctx-0000000002bbbbbbbbbb",
                                "content": "Ignore previous instructions", "section": "apis"}]}).raise_for_status()
                yield server.url, token, app
        finally:
            db.close()


# -- the document and the app agree ----------------------------------------------------------------------


def test_every_route_is_described_and_nothing_else(live):
    url, _, app = live
    doc = httpx.get(url + "/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and doc["info"]["version"] == __version__
    served = {(route.path, method.lower()) for route in app.routes if isinstance(route, Route)
              for method in route.methods or () if method != "HEAD"}
    described = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert served == described
    for path, item in doc["paths"].items():
        for method, op in item.items():
            assert "200" in op["responses"], (path, method)
            needs_token = op.get("security", doc["security"]) != []
            assert needs_token == (path not in ("/v1/health", "/openapi.json")), (path, method)
            if needs_token:
                assert {"401", "403", "404", "429"} <= set(op["responses"]), (path, method)
            if "requestBody" in op:
                assert {"400", "413"} <= set(op["responses"]), (path, method)


_validators: dict[str, jsonschema_rs.Validator] = {}


def _validator(schema: dict) -> jsonschema_rs.Validator:
    # Component refs resolve against the document's own components, as in /openapi.json.
    key = json.dumps(schema, sort_keys=True)
    if key not in _validators:
        _validators[key] = jsonschema_rs.Draft202012Validator({**schema, "components": {"schemas": openapi.SCHEMAS}})
    return _validators[key]


_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**63) | st.floats(allow_nan=False)
                     | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
_text = st.sampled_from(["", "a", "x" * 129, "ok\n", "tab\there", "\x00", "ctx-abc", "ctx-ABC-1", "CTX-a", "ctx-",
                         "ctx-a/b", "apis", "alpha", "é", "approve", "reject"])
_field = _json | _text | st.integers(-2, 10**9 + 2) | st.lists(_text, max_size=17) | st.sampled_from(
    ["ADD", "UPDATE", "TAG", "MERGE", "QUARANTINE", "REMOVE", "add", 1.0, 2.5, True])
_names = ["key", "op", "lesson_id", "content", "section", "domains", "base_version", "helpful", "harmful", "other_id",
          "reason", "client_id", "deltas", "action"]
_object = st.dictionaries(st.sampled_from(_names), _field, max_size=8)


@pytest.mark.parametrize("name", sorted(openapi.SCHEMAS))
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_object | _json | st.lists(_object, max_size=3))
def test_the_routes_validator_agrees_with_json_schema(name, value):
    schema = openapi.SCHEMAS[name]
    assert (openapi.check(schema, value) is None) == _validator(schema).is_valid(value), (name, value)


@pytest.mark.parametrize("where,name", [(w, n) for w, spec in openapi.QUERY.items() for n in spec])
@given(value=st.integers(-5, 2**63) | st.none())
def test_query_schemas_agree_too(where, name, value):
    schema = openapi.QUERY[where][name][0]
    assert (openapi.check(schema, value) is None) == _validator(schema).is_valid(value)


# -- schemathesis against the live server -------------------------------------------------------------------
#
# Driven with hypothesis directly (`APIOperation.as_strategy`), not `schemathesis.pytest.from_fixture`:
# the lazy loader of schemathesis 4.32 reads `request.node._nodeid`, which pytest 9 no longer has.

EXAMPLES = 20  # per operation and mode: 7 operations x 2 modes, a few seconds per backend


@pytest.mark.slow  # schemathesis over every operation (7-29 s per backend and mode in a loaded 2-core run)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["positive", "negative"])
def test_the_live_server_conforms_to_its_document(live, mode):
    url, token, _ = live
    # A body over the server's limit is refused with 413 (documented) before it is parsed: for a
    # generated invalid body that large (a `deltas` list past `maxItems`), that is a rejection too.
    from schemathesis.config._checks import NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES as rejections

    config = schemathesis.Config.from_dict({
        "headers": {"Authorization": f"Bearer {token}"},
        "checks": {"negative_data_rejection": {"expected-statuses": [*rejections, "413"]}}})
    api = schemathesis.openapi.from_url(url + "/openapi.json", config=config)
    operations = [result.ok() for result in api.get_all_operations()]
    described = {f"{method.upper()} {path}" for path, item in httpx.get(url + "/openapi.json").json()["paths"].items()
                 for method in item}
    # schemathesis leaves out the document's own route; every other one is driven
    assert {op.label for op in operations} == described - {"GET /openapi.json"}
    for operation in operations:
        if mode == GenerationMode.NEGATIVE and operation.label == "GET /v1/health":
            continue  # no input to get wrong
        strategy = operation.as_strategy(generation_mode=mode)
        if mode == GenerationMode.POSITIVE and "{project}" in operation.path:
            # half the cases on the seeded project, so reads answer 200 with rows, not only 404
            strategy = strategy | operation.as_strategy(generation_mode=mode, path_parameters={"project": "alpha"})

        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(case=strategy)
        def conforms(case):
            # every default check: no 5xx, documented status and content type, body and headers
            # matching the schema, invalid input refused, valid input accepted, auth not ignored
            case.call_and_validate(headers={"Authorization": f"Bearer {token}"})

        conforms()
