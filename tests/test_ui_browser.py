"""The dashboard in a real browser: Debian's Chromium driven by Playwright through `ace ui` itself.

The walk a developer takes: open the URL `ace ui` printed, find a lesson by a paraphrase of it, open
it, mark it helpful (the count changes on the page and in the store), open the session and see what
was injected (and a new prompt arriving live), use the command palette, approve a quarantined lesson
(its status changes in the store). On the way: no JavaScript dialog ever fires although lessons, a
prompt and a tool's output hold `<script>` and `onerror=` markup, no console error (a CSP violation
would be one), every form control has a label. Screenshots go to docs/screenshots/.

Needs `/usr/bin/chromium` (Debian's `chromium` package) and the `playwright` Python package; the
browser Playwright would download is never used.
"""

import os
import re
import time
from pathlib import Path

import pytest

from ace_engine.store.sqlite import SQLiteStore

pytest.importorskip("jinja2", reason="the dashboard needs the `server` extra (Starlette, uvicorn, Jinja2)")
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the Python package only)")
CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed: apt-get install -y chromium", allow_module_level=True)

from test_ui import SID, XSS_LESSON, private_env, seed_store, start_ace_ui  # noqa: E402

# A real browser and `ace ui` in a process (10-20 s in a loaded 2-core run): the full run has it, --fast not.
pytestmark = pytest.mark.slow

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => e.offsetParent !== null && !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
  .map(e => e.outerHTML)"""


def test_developer_walk_through_the_dashboard(tmp_path):
    expect = sync_api.expect
    ids = seed_store(tmp_path)
    env = private_env(tmp_path)
    proc, url = start_ace_ui(env=env)
    base = url.split("/?")[0]
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs: list[str] = []
    errors: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="light")
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            page.goto(url)
            assert page.url == base + "/", "the token left the address bar"
            expect(page.locator("h1")).to_have_text("Playbook")
            assert not page.evaluate(UNLABELLED)

            # A paraphrase: none of the lesson's key words but "token" and "login".
            page.fill("#q", "my login keeps failing as unauthorized once the access token times out")
            page.press("#q", "Enter")
            first = page.locator("li.hit a.lesson-link").first
            expect(first).to_contain_text("refresh_token()")
            expect(page.locator("li.hit .why").first).to_contain_text("cosine")
            page.screenshot(path=str(SHOTS / "playbook-search.png"), full_page=True)

            first.click()
            page.wait_for_url(f"**/lessons/{ids['auth-jwt']}")
            helpful = int(page.inner_text("#helpful-count"))
            page.get_by_role("button", name="Mark helpful").click()
            expect(page.locator("#helpful-count")).to_have_text(str(helpful + 1))
            with SQLiteStore(ids["db"]) as store:
                assert store.get_bullet(ids["auth-jwt"])["helpful_explicit"] == 1
            page.reload()
            expect(page.locator("#helpful-count")).to_have_text(str(helpful + 1))
            expect(page.locator("section[aria-labelledby=inj-h]")).to_contain_text("UserPromptSubmit")
            page.screenshot(path=str(SHOTS / "lesson.png"), full_page=True)

            page.keyboard.press("g")
            page.keyboard.press("s")
            page.wait_for_url(f"{base}/sessions")
            page.locator(f"a[href='/sessions/{SID}']").first.click()
            page.wait_for_url(f"**/sessions/{SID}")
            shown = page.locator("li.item-shown").first
            expect(shown).to_contain_text("Injected by UserPromptSubmit")
            expect(shown.locator(f"a[href='/lessons/{ids['auth-jwt']}']")).to_be_visible()
            expect(page.locator("li.item-prompt").first).to_contain_text("The <b>login</b> returns 401")
            expect(page.locator("li.item-tool.failed")).to_contain_text("AssertionError")
            page.screenshot(path=str(SHOTS / "session.png"), full_page=True)
            # Live: a prompt captured now shows up without a reload.
            with SQLiteStore(ids["db"]) as store:
                store.apply({"v": 1, "at": time.time(), "event": "UserPromptSubmit", "session_id": SID, "agent_id": None,
                             "agent_type": None, "detail": None, "project": None,
                             "session": {"cwd": None, "transcript_path": None, "permission_mode": None, "agent_type": None},
                             "message": {"role": "user", "text": "now also check the <em>refresh</em> path"}})
            expect(page.locator("#story")).to_contain_text("now also check the <em>refresh</em> path", timeout=15000)

            # The command palette: Ctrl-K, a query, Enter opens the best lesson.
            page.keyboard.press("Control+K")
            palette = page.locator("dialog.palette")
            expect(palette).to_be_visible()
            page.keyboard.type("autogenerate alembic models")
            option = palette.locator("li[role=option]", has_text="Alembic migrations")
            expect(option).to_be_visible()
            for _ in range(20):  # arrow down to it (the page commands come first)
                if "Alembic migrations" in palette.locator("li[aria-selected=true]").inner_text():
                    break
                page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
            page.wait_for_url(f"**/lessons/{ids['database']}")

            page.goto(base + "/review")
            item = page.locator(f"#review-{ids['quarantined']}")
            expect(item.locator(".lesson-link")).to_have_text(XSS_LESSON)
            assert not page.evaluate(UNLABELLED)
            page.screenshot(path=str(SHOTS / "review.png"), full_page=True)
            item.get_by_role("button", name=f"Approve {ids['quarantined']}").click()
            expect(page.locator(".flash")).to_contain_text("Approved")
            with SQLiteStore(ids["db"]) as store:
                assert store.get_bullet(ids["quarantined"])["status"] == "active"

            # The approved <script> lesson is now in the list: still text, still no dialog.
            page.goto(base + "/?status=active&order=recent")
            expect(page.locator("table.lessons")).to_contain_text("<script>alert(1)</script>")
            for path in ("/help", "/health", f"/lessons/{ids['learned']}"):
                page.goto(base + path)
                assert not page.evaluate(UNLABELLED), path
            page.emulate_media(color_scheme="dark")
            page.goto(base + "/help")
            page.screenshot(path=str(SHOTS / "help-dark.png"), full_page=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    assert not dialogs, f"a script ran: {dialogs}"
    assert not errors, errors
    for name in ("playbook-search.png", "lesson.png", "session.png", "review.png", "help-dark.png"):
        assert (SHOTS / name).stat().st_size > 10_000, name
    assert not re.search(r"token=", proc.stderr.read() or "")
