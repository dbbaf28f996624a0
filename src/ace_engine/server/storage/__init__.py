"""The team server's storage: every table and SQL statement of `ace server`, on SQLite or PostgreSQL.

Layout: `db.TeamDB` is the interface the server calls (docs/team-server.md, "Storage interface");
`ops.py` is what each pushed delta and each review decision does to the team state; `schema.py`
the migrations, written once for both engines; `dialect.py` the connections, transactions and the
few words the two engines spell apart. psycopg is imported only when a PostgreSQL URL is opened.

Importing this package costs nothing: callers import `server.storage.db`.
"""
