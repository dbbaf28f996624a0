"""The two dashboards stand on one frame (`web/`): `ace ui` and the team server's `/ui/` build their
request guards from the same `web.guard` pieces, each adding only its own auth policy, so a rule
changed once there — the Content-Security-Policy here — changes both apps' answers.

Real parts: the ui app over a real SQLite store, the team server's whole app (its dashboard mounted
under `/ui/`) over a real SQLite team database, both driven through Starlette's in-process client.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("jinja2", reason="the dashboards need the `server` extra (Starlette, uvicorn, Jinja2)")
from starlette.routing import Mount, Router  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from ace_engine.server import dashboard_auth  # noqa: E402
from ace_engine.server.app import create_app as create_server  # noqa: E402
from ace_engine.server.storage.db import TeamDB  # noqa: E402
from ace_engine.store.views_sql import ViewsSQLiteStore  # noqa: E402
from ace_engine.ui import auth as ui_auth  # noqa: E402
from ace_engine.ui.app import create_app as create_ui  # noqa: E402
from ace_engine.web import guard as web_guard  # noqa: E402

TOKEN = "t" * 43


@pytest.fixture
def team_db(tmp_path) -> Iterator[TeamDB]:
    db = TeamDB.open(f"sqlite://{tmp_path}/team.db")
    try:
        yield db
    finally:
        db.close()


def guard_layers(app) -> list[type]:
    """The classes of the middlewares an app's requests pass, outermost first, up to its router."""
    found, layer = [], app.build_middleware_stack()
    while not isinstance(layer, Router) and len(found) < 30:
        found.append(type(layer))
        layer = layer.app
    return found


def dashboard_of(server) -> object:
    return next(route.app for route in server.routes if isinstance(route, Mount) and route.path == "/ui")


def answers(team_db: TeamDB) -> dict[str, dict[str, str]]:
    """The headers of a refusal and of a page of each dashboard, built now (after any change to `web.guard`)."""
    ui = TestClient(create_ui(lambda: ViewsSQLiteStore(), token=TOKEN), base_url="http://127.0.0.1")
    team = TestClient(create_server(team_db), base_url="http://127.0.0.1")
    found = {
        "ui refused": ui.get("/"),                     # no token: 401 from the ui's auth policy
        "ui misdirected": ui.get("/", headers={"host": "rebound.example"}),  # 421 from the host allow-list
        "team page": team.get("/ui/"),                 # the sign-in page, rendered by a route
        "team refused": team.post("/ui/signout"),      # no session: 401 from the team's auth policy
    }
    assert [r.status_code for r in found.values()] == [401, 421, 200, 401]
    return {name: dict(r.headers) for name, r in found.items()}


def test_both_guards_are_built_from_the_same_pieces(team_db):
    ui_layers = guard_layers(create_ui(lambda: ViewsSQLiteStore(), token=TOKEN))
    team_layers = guard_layers(dashboard_of(create_server(team_db)))
    shared = [web_guard.HttpOnly, web_guard.SecurityHeaders, web_guard.Methods, web_guard.FormCheck]
    for layers, own in ((ui_layers, [ui_auth.TokenCookie]),
                        (team_layers, [dashboard_auth.SessionAuth, dashboard_auth.TokenRate])):
        from_web = [cls for cls in layers if cls.__module__ == web_guard.__name__]
        assert [cls for cls in from_web if cls in shared] == shared, layers
        guard = layers[layers.index(web_guard.HttpOnly):layers.index(web_guard.FormCheck) + 1]
        assert [cls for cls in guard if cls.__module__ != web_guard.__name__] == own, layers
    assert web_guard.HostAllowList in ui_layers  # the loopback-only dashboard checks the Host first
    assert ui_layers.index(web_guard.HostAllowList) < ui_layers.index(ui_auth.TokenCookie)


def test_every_answer_of_both_dashboards_carries_the_one_policy(team_db):
    for name, headers in answers(team_db).items():
        assert headers["content-security-policy"] == web_guard.CSP, name
        for key, value in web_guard.SECURITY_HEADERS:
            assert headers[key.decode()] == value.decode(), (name, key)
        assert headers["cache-control"] == "no-store", name


def test_a_csp_changed_in_web_guard_changes_both_dashboards(team_db, monkeypatch):
    changed = web_guard.CSP.replace("img-src 'self' data:", "img-src 'self'")
    assert changed != web_guard.CSP
    monkeypatch.setattr(web_guard, "SECURITY_HEADERS",
                        [(b"content-security-policy", changed.encode()), *web_guard.SECURITY_HEADERS[1:]])
    seen = {name: headers["content-security-policy"] for name, headers in answers(team_db).items()}
    assert seen == dict.fromkeys(seen, changed)
