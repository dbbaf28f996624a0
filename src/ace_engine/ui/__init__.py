"""The local web dashboard (`ace ui`): what the agent was told, what it learned, whether it helped.

Layout: `app.create_app` builds the Starlette app; `auth` guards every request (per-run token,
cookie, CSRF and same-origin checks); `pages/` holds the routes of each area (playbook and review,
sessions, "does it help?", health); `templates/` the Jinja2 pages; `static/` one stylesheet and one
small script (the pages work without it). All SQL the pages need is in `store/views_sql.py`.
Needs the `server` extra (Starlette, uvicorn, Jinja2); nothing here is imported by the hooks.
"""
