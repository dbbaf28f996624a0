"""The local web dashboard (`ace ui`): what the agent was told, what it learned, whether it helped.

Layout: `app.create_app` builds the Starlette app; `auth` is this dashboard's guard — `web.guard`'s
pieces (security headers, host allow-list, methods, the form's origin and CSRF checks) around its
own policy, the per-run token and its cookie; `site` what the pages share (the store of a request,
config, rendering with the navigation's context); `pages/` holds the routes of each area (playbook
and review, sessions, "does it help?", health); `templates/` this dashboard's own Jinja2 pages on
`web/templates`' frame; the stylesheet and script are `web/static`'s. All SQL the pages need is in
`store/views_sql.py`. Needs the `server` extra (Starlette, uvicorn, Jinja2); nothing here is
imported by the hooks.
"""
