"""Persistence behind one interface: the embedded SQLite store (PostgreSQL comes with the team server).

Layout: `sqlite.SQLiteStore` is every table family (`capture_sql`, `playbook_sql`, `jobs_sql`,
`maintenance_sql`, `meta_sql`) over one shared connection (`_base.StoreBase`), each family's
interface a Protocol in `interfaces.py`; `schema.py` holds the named migrations and `migrate()`;
`redacting.py` is the write-side redaction choke point; `spool.py` keeps what the store could not take.
Importing this package costs nothing: the hooks import `store.sqlite` or `store.spool` themselves.
"""
