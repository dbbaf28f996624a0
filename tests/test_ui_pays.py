"""The dashboard's "Does it pay?" page (issue 37): the holdout's report as `ace report` gives it, with
a forest plot in inline SVG. Served by the real app over a real store; the last test drives it in
Debian's Chromium through `ace ui` (no console error — a CSP violation would be one — every control
labelled) and writes docs/screenshots/pays.png."""

import os
import re
from pathlib import Path

import pytest

from ace_engine.experiment.arms import HOLDOUT, INJECT
from ace_engine.store.views_sql import ViewsSQLiteStore
from test_experiment_report import _write_sessions, lesson  # noqa: F401  (the fixture: a lesson in a real store)

pytest.importorskip("jinja2", reason="the dashboard needs the `server` extra (Starlette, uvicorn, Jinja2)")
import httpx  # noqa: E402

from ace_engine.ui.app import create_app  # noqa: E402
from test_ui import TOKEN, private_env, serve, sign_in, start_ace_ui  # noqa: E402

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"


def _big_effect(k, arm):
    return (k // 2) % 15 < (2 if arm == INJECT else 12)


def _get(path):
    with serve(create_app(lambda: ViewsSQLiteStore(), token=TOKEN)) as (base, _), \
            httpx.Client(base_url=base, timeout=20) as client:
        sign_in(client)
        return client.get(path)


def test_the_page_says_when_there_is_no_experiment(ace_home):
    answer = _get("/pays")
    assert answer.status_code == 200 and "No experiment yet" in answer.text and "<svg" not in answer.text


def test_the_page_says_not_enough_on_few_sessions(lesson, git_project):  # noqa: F811
    _write_sessions(str(git_project), [INJECT, HOLDOUT] * 3, lambda k, arm: arm == HOLDOUT)
    text = _get("/pays").text
    assert "Not enough sessions yet" in text and text.count("verdict-not-enough-sessions-yet") == 8  # one per outcome
    assert "<circle" not in text, "no interval to plot"


def test_the_page_shows_the_difference_and_plots_it(lesson, git_project):  # noqa: F811
    _write_sessions(str(git_project), [INJECT, HOLDOUT] * 15, _big_effect)
    text = _get("/pays").text
    assert "Does it pay?" in text and "Not enough sessions yet" not in text
    row = re.search(r"<tr><td>sessions where a failure a lesson covers came back</td>(.*?)</tr>", text).group(1)
    assert "13 %" in row and "80 %" in row and "15 / 15" in row and "helps" in row
    assert text.count("<circle") == 7, "one dot per outcome with a difference"
    assert "2 of 15" in text and "12 of 15" in text, "per lesson: came back with vs without"
    assert "/pays" in _get("/help").text, "the self-rated page points here"


@pytest.mark.slow  # a real browser (5 s in a loaded 2-core run)
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed")
def test_the_page_in_chromium(lesson, git_project, tmp_path):  # noqa: F811
    sync_api = pytest.importorskip("playwright.sync_api")
    from test_ui_browser import ARGS, UNLABELLED

    _write_sessions(str(git_project), [INJECT, HOLDOUT] * 15, _big_effect, shown=lesson)
    proc, url = start_ace_ui(env=private_env(tmp_path))  # the same ace-home the fixtures wrote
    base = url.split("/?")[0]
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="light")
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            page.goto(base + "/help")
            page.get_by_role("link", name="Does it pay?").click()
            page.wait_for_url(f"{base}/pays")
            sync_api.expect(page.locator("h1")).to_have_text("Does it pay?")
            sync_api.expect(page.locator("table.pays").first).to_contain_text("helps")
            assert page.locator("figure.chart svg circle").count() == 7
            box = page.locator("figure.chart svg").bounding_box()
            assert box and box["width"] > 400 and box["height"] > 100, "the plot is drawn at a readable size"
            assert not page.evaluate(UNLABELLED)
            page.screenshot(path=str(SHOTS / "pays.png"), full_page=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    assert not errors, errors
    assert (SHOTS / "pays.png").stat().st_size > 10_000
