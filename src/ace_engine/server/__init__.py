"""The team server: an HTTP API (Starlette on uvicorn) in front of `server/storage`.

`app.create_app(db, ...)` builds the ASGI app; `auth` holds tokens and scopes, `limits` the body
size limit and the per-token rate limiter, `policy` the safety choke point every pushed delta
passes, `openapi` the one description of every route and the schemas the routes validate with.
Only `app` (and `limits`, as ASGI middleware) know about HTTP; `auth`, `policy` and `openapi` are
stdlib-only, so `ace server token …` works without the `server` extra.

Cost: importing this package imports nothing; `app` pulls in Starlette.
"""
