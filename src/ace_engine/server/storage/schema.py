"""The team server's schema: forward-only migrations written once for SQLite and PostgreSQL.

Contract: `MIGRATIONS` is a plain list of (name, SQL); migration N (1-based: its position) brings
the `team_meta` row `schema_version` from N-1 to N. Never edit or reorder a released migration;
append a new one. Each script is written once with two placeholders the dialect fills in
(`render`): `{id}` (`INTEGER PRIMARY KEY AUTOINCREMENT` / `BIGSERIAL PRIMARY KEY`) and `{json}`
(`TEXT` / `JSONB`). Everything else is SQL both engines read alike: `DOUBLE PRECISION` is a REAL
column to SQLite, `BIGINT` an INTEGER one. Time is always a parameter (seconds since the epoch),
never the database's clock. `team_meta` itself is not a migration: `META_TABLE` is created (if
missing) under the migration lock before the version is read (`db.TeamDB._migrate`).

The tables follow docs/team-server.md, "Server data model", with these additions the storage
interface needs: `lessons.concerns` (why the safety policy held a lesson: the review queue shows
it), `lessons.held_status` / `held_version` (what the team had before a held update, restored
when the reviewer rejects it), `lesson_versions.id`, and `delta_keys.status` / `created_at`
(what became of a pushed key, and when: the stats count held lessons per day from it).

Migration 2 (peers are untrusted, docs/team-server.md "The server trusts no client"):
`lessons.client_note` (a client's QUARANTINE reason, kept apart from the review concerns only the
server writes), `client_tokens` (which token owns a client id in a project: no token pushes as
another's client) and `mark_budget` (helpful / harmful marks accepted per lesson, token and UTC
day, so one token's counts grow by a bounded amount a day whatever client ids it invents).

Migration 3 (stateless replicas: any number of server processes on one database behave as one,
docs/team-server.md "Running several replicas"): `ui_sessions` (a dashboard session by the SHA-256
of its cookie's id: signed in on one replica, served by another) and `rate_buckets` (a token
bucket per key, taken in one upsert, so a token's burst is shared by every replica).

Cost: importing defines strings; rendering is two `str.replace` per script.
"""

from __future__ import annotations

__all__ = ["META_TABLE", "MIGRATIONS", "render", "statements"]

META_TABLE = "CREATE TABLE IF NOT EXISTS team_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

MIGRATIONS: list[tuple[str, str]] = [
    ("team", """
    CREATE TABLE orgs (
        id {id},
        name TEXT NOT NULL UNIQUE,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE projects (
        id {id},
        org_id BIGINT NOT NULL REFERENCES orgs(id),
        name TEXT NOT NULL,
        last_seq BIGINT NOT NULL DEFAULT 0,      -- the project's last logged delta (gap-free)
        created_at DOUBLE PRECISION NOT NULL,
        UNIQUE (org_id, name)
    );
    CREATE TABLE tokens (
        id {id},
        token_hash TEXT NOT NULL UNIQUE,         -- SHA-256 hex; the token itself is never stored
        prefix TEXT NOT NULL,
        org_id BIGINT NOT NULL REFERENCES orgs(id),
        project_id BIGINT REFERENCES projects(id),   -- NULL: every project of the org
        scope TEXT NOT NULL,
        label TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        revoked_at DOUBLE PRECISION,
        last_used_at DOUBLE PRECISION
    );
    CREATE INDEX tokens_prefix ON tokens(prefix);
    CREATE TABLE lessons (
        project_id BIGINT NOT NULL REFERENCES projects(id),
        lesson_id TEXT NOT NULL,
        section TEXT NOT NULL,
        content TEXT NOT NULL,
        domains {json} NOT NULL,
        status TEXT NOT NULL,                    -- active / quarantined / archived / rejected
        origin_client TEXT NOT NULL,
        version INTEGER NOT NULL,
        concerns {json},                         -- why it waits in the review queue
        held_status TEXT,                        -- status before a held update (NULL: none held)
        held_version INTEGER,                    -- the version the team had before it
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project_id, lesson_id)
    );
    CREATE INDEX lessons_status ON lessons(project_id, status);
    CREATE TABLE lesson_versions (
        id {id},
        project_id BIGINT NOT NULL,
        lesson_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        content TEXT NOT NULL,
        section TEXT NOT NULL,
        domains {json} NOT NULL,
        client_id TEXT NOT NULL,
        seq BIGINT,                              -- the delta that published it; NULL: held
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX lesson_versions_lesson ON lesson_versions(project_id, lesson_id, version);
    CREATE TABLE counters (
        project_id BIGINT NOT NULL,
        lesson_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        helpful BIGINT NOT NULL DEFAULT 0,
        harmful BIGINT NOT NULL DEFAULT 0,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project_id, lesson_id, client_id)
    );
    CREATE TABLE deltas (
        project_id BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        client_id TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        op TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        body {json} NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project_id, seq),
        UNIQUE (project_id, client_id, idem_key)
    );
    CREATE INDEX deltas_time ON deltas(project_id, created_at);
    CREATE TABLE delta_keys (
        project_id BIGINT NOT NULL,
        client_id TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        seq BIGINT,                              -- NULL: held for review or rejected
        status TEXT NOT NULL,                    -- applied / quarantined / rejected
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project_id, client_id, idem_key)
    );
    CREATE INDEX delta_keys_time ON delta_keys(project_id, created_at);
    """),
    ("peers untrusted", """
    ALTER TABLE lessons ADD COLUMN client_note TEXT;   -- a client's QUARANTINE reason: never the concerns
    CREATE TABLE client_tokens (
        project_id BIGINT NOT NULL,
        client_id TEXT NOT NULL,
        token_id BIGINT NOT NULL,                -- the token that owns this client id in the project
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (project_id, client_id)
    );
    CREATE INDEX client_tokens_token ON client_tokens(token_id);
    CREATE TABLE mark_budget (
        project_id BIGINT NOT NULL,
        lesson_id TEXT NOT NULL,
        holder TEXT NOT NULL,                    -- `t<token id>`, or `c<client id>` for a push without one
        day BIGINT NOT NULL,                     -- UTC day number
        helpful BIGINT NOT NULL DEFAULT 0,       -- marks accepted that day
        harmful BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, lesson_id, holder, day)
    );
    """),
    ("shared state", """
    CREATE TABLE ui_sessions (
        id_hash TEXT PRIMARY KEY,                -- SHA-256 hex of the cookie's session id
        token_id BIGINT NOT NULL,
        label TEXT NOT NULL,
        csrf TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX ui_sessions_expiry ON ui_sessions(expires_at);
    CREATE TABLE rate_buckets (
        bucket TEXT PRIMARY KEY,                 -- `t<token id>`, or `signin:<address>`
        tokens DOUBLE PRECISION NOT NULL,        -- what is left after the last take
        at DOUBLE PRECISION NOT NULL,            -- when it was last taken from
        ok INTEGER NOT NULL DEFAULT 1            -- whether the last take was allowed
    );
    CREATE INDEX rate_buckets_at ON rate_buckets(at);
    """),
]


def render(script: str, id_type: str, json_type: str) -> str:
    """`script` with the dialect's column types in place of `{id}` and `{json}`."""
    return script.replace("{id}", id_type).replace("{json}", json_type)


def statements(script: str) -> list[str]:
    """The statements of a migration: `--` comments dropped (they may hold a `;`), then split on
    `;` (no statement of ours holds one, nor a `--` inside a string)."""
    code = "\n".join(line.split("--", 1)[0].rstrip() for line in script.splitlines())
    return [part.strip() for part in code.split(";") if part.strip()]
