"""The frame both dashboards stand on: `ace ui` (`ui/`) and the team server's `/ui/` (`server/dashboard*.py`).

Layout: `guard` — the request guard as small composed ASGI middlewares (websocket refusal, security
headers with the CSP, host allow-list, methods, the POST form's origin, size and CSRF checks);
`page` — what a route uses (form, query parameters, flash messages, redirects, the `Refused`
exception, static files); `render` — the Jinja2 environment with its filters (times, sizes, the
`lesson` filter); `charts` — server-drawn SVG charts; `templates/` the shared frame and macros;
`static/` the one stylesheet and script. Each app adds its own pages, templates and auth policy
(the per-run token of `ace ui`, the team server's token sign-in and sessions).

Layer: below `ui/` and `server/`, above the core modules (`errors`, `escape`); imports neither app.
Needs the `server` extra (Starlette, Jinja2); nothing here is imported by the hooks.
"""
