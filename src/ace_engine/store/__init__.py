"""The local store: the embedded SQLite database every hook, command and worker of one machine shares.

Layout: `sqlite.SQLiteStore` is every table family (`capture_sql`, `playbook_sql`, `jobs_sql`,
`maintenance_sql`, `meta_sql`, `sync_sql`, `continuity_sql`) over one shared connection
(`_base.StoreBase`); each family's interface is a Protocol in `interfaces.py`, handed out as a
narrow repository (`store.lessons`, `store.events`, `store.sessions`, `store.jobs`,
`store.summaries`, `store.team_sync`, …), and its rows are the TypedDicts of `records.py` and
`view_records.py`. `history_sql` and `views_sql` add the CLI / MCP and dashboard reads (`McpStore`,
`ViewsSQLiteStore`); `schema.py` holds the named migrations and `migrate()`; `redacting.py` is the
write-side redaction choke point; `spool.py` keeps what the store could not take. The team
server's database is its own (`server/storage/`): it implements none of the local interfaces.
Importing this package costs nothing: the hooks import `store.sqlite` or `store.spool` themselves.
"""
