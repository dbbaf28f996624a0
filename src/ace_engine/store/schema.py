"""The store's schema as forward-only migrations: migration N brings `user_version` N-1 to N.

Never edit a released migration; append a new one. Each runs inside the migrating transaction.
"""

MIGRATIONS: list[str] = [
    # 1: capture — projects, sessions, hook events, tool events, messages.
    """
    CREATE TABLE projects (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,          -- git:<normalized remote> or path:<root>
        root TEXT NOT NULL,
        remote TEXT,
        name TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_seen_at REAL NOT NULL
    );
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        project_id INTEGER REFERENCES projects(id),
        cwd TEXT,
        transcript_path TEXT,
        agent_type TEXT,
        source TEXT,                       -- SessionStart source of the first start
        permission_mode TEXT,
        started_at REAL NOT NULL,
        ended_at REAL,
        end_reason TEXT,
        status TEXT NOT NULL DEFAULT 'active',   -- active / ended
        compactions INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_project ON sessions(project_id, started_at);
    CREATE TABLE hook_events (
        id INTEGER PRIMARY KEY,
        session_id TEXT,
        project_id INTEGER,
        event TEXT NOT NULL,
        detail TEXT,                       -- source / trigger / reason / tool name
        agent_id TEXT,
        created_at REAL NOT NULL,
        duration_ms REAL
    );
    CREATE INDEX hook_events_session ON hook_events(session_id, id);
    CREATE INDEX hook_events_time ON hook_events(created_at);
    CREATE TABLE tool_events (
        id INTEGER PRIMARY KEY,
        tool_use_id TEXT NOT NULL UNIQUE,
        session_id TEXT,
        project_id INTEGER,
        agent_id TEXT,
        agent_type TEXT,
        tool_name TEXT NOT NULL,
        input TEXT,                        -- redacted, capped JSON text
        response TEXT,                     -- redacted, capped text
        success INTEGER NOT NULL,
        exit_code INTEGER,
        error TEXT,
        is_interrupt INTEGER NOT NULL DEFAULT 0,
        duration_ms REAL,
        created_at REAL NOT NULL
    );
    CREATE INDEX tool_events_session ON tool_events(session_id, id);
    CREATE INDEX tool_events_time ON tool_events(created_at);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT,
        project_id INTEGER,
        agent_id TEXT,
        role TEXT NOT NULL,                -- user (prompt) / assistant (final message of a turn)
        text TEXT NOT NULL,                -- redacted, private spans dropped, capped
        created_at REAL NOT NULL
    );
    CREATE INDEX messages_session ON messages(session_id, id);
    CREATE INDEX messages_time ON messages(created_at);
    """,
]

LATEST = len(MIGRATIONS)
