"""The store's schema as forward-only migrations, and `migrate()`, which applies them.

Contract: `MIGRATIONS` is a plain list of (name, SQL) — the shape of sqlite-utils' and llm's
migrations — and migration N (1-based: its position) brings `PRAGMA user_version` N-1 to N, so a
store written by any earlier ace-engine upgrades in place. Never edit or reorder a released
migration; append a new one. `migrate(conn, migrations)` runs the missing ones in one write
transaction; a caller (a test) may pass its own list, which must start with the released ones.

Cost: importing defines the SQL strings; `migrate` runs only when `user_version` is behind.
"""

# ruff: noqa: E501  -- released migrations are never edited, not even re-wrapped

from __future__ import annotations

from ._base import StoreError, Transaction, sqlite3
from .policy_version import META_KEY, POLICY_VERSION

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from .redacting import RedactingConnection

MIGRATIONS: list[tuple[str, str]] = [
    # 1: capture — projects, sessions, hook events, tool events, messages.
    ("capture", """
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
    """),
    # 2: the playbook — bullets (+ FTS5 index), their domains, change log, injections, pins.
    ("playbook", """
    CREATE TABLE bullets (
        id TEXT PRIMARY KEY,               -- ctx-…, stable forever
        project_id INTEGER REFERENCES projects(id),   -- NULL: global
        section TEXT NOT NULL,
        content TEXT NOT NULL,
        domains TEXT NOT NULL DEFAULT '',  -- space-separated domain names
        helpful INTEGER NOT NULL DEFAULT 0,
        harmful INTEGER NOT NULL DEFAULT 0,
        helpful_explicit INTEGER NOT NULL DEFAULT 0,
        harmful_explicit INTEGER NOT NULL DEFAULT 0,
        confidence REAL NOT NULL DEFAULT 0.5,
        status TEXT NOT NULL DEFAULT 'active',   -- active / quarantined / archived
        provenance TEXT NOT NULL DEFAULT '{}',   -- JSON: source, sessions, tool events, files, evidence
        content_key TEXT NOT NULL,         -- normalized content, for exact dedup
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        last_used_at REAL,
        retrieval_count INTEGER NOT NULL DEFAULT 0
    );
    -- Matches list_bullets(order="value") exactly, so the digest's top-N is an index walk.
    CREATE INDEX bullets_value ON bullets(
        project_id, status, confidence DESC, (helpful + 3 * helpful_explicit) DESC, updated_at DESC
    );
    CREATE INDEX bullets_key ON bullets(content_key);
    CREATE VIRTUAL TABLE bullets_fts USING fts5(
        content, domains, content='bullets', content_rowid='rowid', tokenize='porter unicode61'
    );
    CREATE TRIGGER bullets_fts_insert AFTER INSERT ON bullets BEGIN
        INSERT INTO bullets_fts(rowid, content, domains) VALUES (new.rowid, new.content, new.domains);
    END;
    CREATE TRIGGER bullets_fts_delete AFTER DELETE ON bullets BEGIN
        INSERT INTO bullets_fts(bullets_fts, rowid, content, domains) VALUES ('delete', old.rowid, old.content, old.domains);
    END;
    CREATE TRIGGER bullets_fts_update AFTER UPDATE OF content, domains ON bullets BEGIN
        INSERT INTO bullets_fts(bullets_fts, rowid, content, domains) VALUES ('delete', old.rowid, old.content, old.domains);
        INSERT INTO bullets_fts(rowid, content, domains) VALUES (new.rowid, new.content, new.domains);
    END;
    CREATE TABLE domain_counts (
        project_id INTEGER NOT NULL,       -- 0: global bullets
        domain TEXT NOT NULL,
        bullets INTEGER NOT NULL,
        PRIMARY KEY (project_id, domain)
    );
    CREATE TABLE bullet_changes (
        id INTEGER PRIMARY KEY,
        bullet_id TEXT NOT NULL,
        op TEXT NOT NULL,                  -- ADD / UPDATE / TAG / REMOVE / MERGE / RESTORE
        detail TEXT,                       -- JSON: what changed (before / after), merged ids, tag
        reason TEXT,
        source TEXT,                       -- user / learning / import / bootstrap / feedback
        session_id TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX bullet_changes_bullet ON bullet_changes(bullet_id, id);
    CREATE INDEX bullet_changes_time ON bullet_changes(created_at);
    CREATE TABLE injections (
        id INTEGER PRIMARY KEY,
        session_id TEXT,
        project_id INTEGER,
        hook TEXT NOT NULL,                -- SessionStart / UserPromptSubmit / PreToolUse / recall
        bullet_id TEXT NOT NULL,
        score REAL,
        rank INTEGER,
        created_at REAL NOT NULL
    );
    CREATE INDEX injections_session ON injections(session_id, id);
    CREATE INDEX injections_bullet ON injections(bullet_id);
    CREATE TABLE pins (
        session_id TEXT NOT NULL,
        bullet_id TEXT NOT NULL,
        pinned_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (session_id, bullet_id)
    );
    CREATE TABLE session_state (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,                 -- e.g. current_domain, compacted_at
        value TEXT,
        PRIMARY KEY (session_id, key)
    );
    CREATE TABLE bullet_vectors (
        bullet_id TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        content_key TEXT NOT NULL,         -- the content the vector was computed from
        vector BLOB NOT NULL               -- float32, L2-normalized
    );
    """),
    # 3: learning — the job queue, per-task learning statistics, and the history the heuristics
    # mine (files edited per session, command outcomes).
    ("learning", """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL DEFAULT 'session',    -- session (captured events) / transcript / payload
        dedup_key TEXT NOT NULL UNIQUE,    -- a task is learned once: session+agent+range, turn, payload hash
        project_id INTEGER,
        session_id TEXT,
        agent_id TEXT NOT NULL DEFAULT '', -- '' = the main agent; else the subagent's id
        agent_type TEXT,
        trigger TEXT,                      -- Stop / SubagentStop / SessionEnd / cli
        tool_from INTEGER NOT NULL DEFAULT 0,  -- tool_events.id range (from, to] of this session+agent
        tool_to INTEGER NOT NULL DEFAULT 0,
        msg_from INTEGER NOT NULL DEFAULT 0,   -- messages.id range (from, to]
        msg_to INTEGER NOT NULL DEFAULT 0,
        tool_events INTEGER NOT NULL DEFAULT 0,    -- how many of each the range holds
        messages INTEGER NOT NULL DEFAULT 0,
        window_from REAL NOT NULL DEFAULT 0,   -- time range: which injections belong to this task
        window_to REAL NOT NULL DEFAULT 0,
        payload TEXT,                      -- JSON trajectory for transcript / payload jobs
        status TEXT NOT NULL DEFAULT 'queued',  -- queued / running / done / failed / skipped
        attempts INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL DEFAULT 3,
        not_before REAL NOT NULL DEFAULT 0,    -- backoff: not run before this time
        lease_until REAL,                  -- a running job whose lease passed is retried
        worker_pid INTEGER,
        last_error TEXT,
        reason TEXT,                       -- why skipped
        result TEXT,                       -- JSON learning statistics
        created_at REAL NOT NULL,
        started_at REAL,
        finished_at REAL
    );
    CREATE INDEX jobs_claim ON jobs(project_id, status, not_before);
    CREATE INDEX jobs_session ON jobs(session_id, agent_id, id);
    CREATE TABLE learning_runs (
        id INTEGER PRIMARY KEY,
        job_id INTEGER,
        project_id INTEGER,
        session_id TEXT,
        agent_id TEXT,
        source TEXT NOT NULL,              -- session / transcript / payload
        reflector TEXT,
        task TEXT,
        outcome TEXT,                      -- success / failure / unknown
        learned INTEGER NOT NULL,          -- 0: gated (not learned, feedback only)
        gate_reason TEXT,
        steps INTEGER NOT NULL DEFAULT 0,
        candidates INTEGER NOT NULL DEFAULT 0,
        created INTEGER NOT NULL DEFAULT 0,
        updated INTEGER NOT NULL DEFAULT 0,
        merged INTEGER NOT NULL DEFAULT 0,
        pruned INTEGER NOT NULL DEFAULT 0,
        quarantined INTEGER NOT NULL DEFAULT 0,
        rejected INTEGER NOT NULL DEFAULT 0,
        helpful INTEGER NOT NULL DEFAULT 0,
        harmful INTEGER NOT NULL DEFAULT 0,
        average_confidence REAL,
        duration_ms REAL,
        detail TEXT,                       -- JSON: rejected candidates and why, errors
        created_at REAL NOT NULL
    );
    CREATE INDEX learning_runs_project ON learning_runs(project_id, id);
    CREATE TABLE file_edits (
        project_id INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,                -- project-relative
        created_at REAL NOT NULL,
        PRIMARY KEY (project_id, session_id, path)
    );
    CREATE INDEX file_edits_path ON file_edits(project_id, path);
    CREATE TABLE command_stats (
        project_id INTEGER NOT NULL,
        command TEXT NOT NULL,             -- normalized command line
        kind TEXT,                         -- test / build / lint / typecheck / format / install / other
        runs INTEGER NOT NULL DEFAULT 0,
        failures INTEGER NOT NULL DEFAULT 0,
        sessions_failed INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        last_session TEXT,
        last_ok_at REAL,
        last_fail_at REAL,
        PRIMARY KEY (project_id, command)
    );
    """),
    # 4: code patterns written by the agent, per session, so a lesson needs repeats to be learned.
    ("code_patterns", """
    CREATE TABLE code_pattern_hits (
        project_id INTEGER NOT NULL,
        pattern_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        file TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (project_id, pattern_id, session_id)
    );
    """),
    # 5: store-wide facts. `policy_version`: the lesson safety policy the active lessons were last
    # screened under (store/policy_version.py); no row means "before versions were recorded".
    ("meta", """
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT
    );
    """),
    # 6: semantic search by default (embed/vectors.py). `bullet_vectors` keys by (bullet, model),
    # so the built-in embedder's vectors and an optional model's live side by side. `vector_packs`:
    # per scope and model, the bullets' rowids and their vectors' sign codes back to back, so a hook reads
    # one row instead of 10,000 — a cache, rebuilt when `stamp` (bullets' and vectors' max rowid) moves;
    # entries for bullets since archived or deleted are filtered when the few best are rescored.
    ("vector_packs", """
    CREATE TABLE bullet_vectors_v6 (
        bullet_id TEXT NOT NULL,
        model TEXT NOT NULL,
        content_key TEXT NOT NULL,         -- the content the vector was computed from
        vector BLOB NOT NULL,              -- the model's format (float32, or code + scale + int8)
        PRIMARY KEY (bullet_id, model)
    );
    INSERT INTO bullet_vectors_v6 SELECT bullet_id, model, content_key, vector FROM bullet_vectors;
    DROP TABLE bullet_vectors;
    ALTER TABLE bullet_vectors_v6 RENAME TO bullet_vectors;
    CREATE TABLE vector_packs (
        scope TEXT NOT NULL,               -- project id (or 'global'), '+global' when it includes them
        model TEXT NOT NULL,
        stamp TEXT NOT NULL,
        ids BLOB NOT NULL,                 -- the bullets' rowids, 4-byte unsigned little-endian
        codes BLOB NOT NULL,               -- one fixed-width code per id, in the same order
        PRIMARY KEY (scope, model)
    );
    """),
    # 7: team sync (sync/, docs/team-server.md). `bullets.origin`: NULL a local lesson, 'team' one
    # pulled from the project's remote. `team_counts`: other clients' own helpful / harmful counts of
    # a lesson as the server last sent them (the local counters are own + these). `sync_state`: per
    # project, the remote it is bound to, how far push (bullet_changes.id) and pull (server seq) got, and when.
    ("team_sync", """
    ALTER TABLE bullets ADD COLUMN origin TEXT;
    CREATE TABLE team_counts (
        bullet_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        helpful INTEGER NOT NULL DEFAULT 0,
        harmful INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (bullet_id, client_id)
    );
    CREATE TABLE sync_state (
        project_id INTEGER PRIMARY KEY,
        remote TEXT,                       -- the server and project the cursors belong to
        push_cursor INTEGER NOT NULL DEFAULT 0,   -- last bullet_changes.id the server answered for
        pull_cursor INTEGER NOT NULL DEFAULT 0,   -- last server seq applied here
        last_error TEXT,                   -- the last push's or pull's failure; NULL after a success
        pushed_at REAL,                    -- when a push / pull last got the server's answer
        pulled_at REAL,
        updated_at REAL
    );
    """),
    # 8: continuity (continuity/). One summary per session, written by the learning
    # worker after Stop from the captured events (or by `ace learn --transcript`): `summary` the
    # facts as JSON, `text` the same as plain lines, most important first (what SessionStart's
    # `<ace-recent-context>` shows, cut from the end to fit). `branch`, `open_ends`, `carry` and
    # `last_at` are copied out of the JSON so the hook picks sessions from the index alone.
    ("session_summaries", """
    CREATE TABLE session_summaries (
        session_id TEXT PRIMARY KEY,
        project_id INTEGER,
        version INTEGER NOT NULL,          -- continuity.summarize.VERSION of the code that wrote it
        kind TEXT NOT NULL,                -- offline / llm (an LLM narrative on top of the offline facts)
        summary TEXT NOT NULL,             -- JSON: requests, files, failures, checks, git, left to do, turns
        text TEXT NOT NULL,                -- plain lines, most important first
        branch TEXT,                       -- the git branch the session worked on
        open_ends INTEGER NOT NULL DEFAULT 0,  -- failing checks, unfinished work, uncommitted changes left
        carry INTEGER NOT NULL DEFAULT 0,  -- 1: worth bringing back at the next session start
        last_at REAL NOT NULL,             -- the session's last captured activity
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX session_summaries_recent ON session_summaries(project_id, carry, last_at);
    """),
    # 9: situations (retrieval/situations.py). The moments a lesson serves, kept as search
    # keys beside it: the prompts of the sessions it was learned and confirmed in, its error signature,
    # command, files. Capped per lesson by the writer; `vector` is the embedder `model`'s vector of
    # `text` (NULL until embedded). Never injected: the lesson's own text is what an agent sees.
    ("lesson_situations", """
    CREATE TABLE lesson_situations (
        id INTEGER PRIMARY KEY,
        bullet_id TEXT NOT NULL,
        kind TEXT NOT NULL,                -- prompt / error / command / file
        text TEXT NOT NULL,                -- redacted (the store's connection), capped
        text_key TEXT NOT NULL,            -- the text normalized: one row per distinct situation
        session_id TEXT,                   -- the session it was last seen in
        seen INTEGER NOT NULL DEFAULT 1,   -- sessions it was seen in (learned, then confirmed)
        model TEXT,
        vector BLOB,
        created_at REAL NOT NULL,
        last_seen_at REAL NOT NULL,
        UNIQUE (bullet_id, text_key)
    );
    CREATE INDEX lesson_situations_vector ON lesson_situations(model, bullet_id);
    """),
    # 10: one playbook, every agent. Which coding agent a session ran in (`claude`,
    # `codex`, `gemini`, as the hooks name them; NULL: recorded before agents were, i.e. Claude
    # Code), and so which one a session summary and a lesson came from (a lesson: the agent of the session it was first
    # learned in; one imported from claude-mem: the agent claude-mem recorded). Nothing filters by
    # it: every agent on a repository gets the repository's lessons.
    ("agents", """
    ALTER TABLE sessions ADD COLUMN agent TEXT;
    ALTER TABLE session_summaries ADD COLUMN agent TEXT;
    ALTER TABLE bullets ADD COLUMN agent TEXT;
    """),
    # 11: the holdout (experiment/). `experiments`: one row per `ace experiment start`
    # (`stopped_at` NULL while it runs; at most one runs). `experiment_arms`: the arm each session
    # was given, once, from its id (experiment/arms.py): 'holdout' sessions get no injection.
    ("experiments", """
    CREATE TABLE experiments (
        id INTEGER PRIMARY KEY,
        share REAL NOT NULL,               -- the share of sessions held out (0..1)
        started_at REAL NOT NULL,
        stopped_at REAL,
        announced_at REAL                  -- when the user was told it runs (CLI or SessionStart)
    );
    CREATE TABLE experiment_arms (
        session_id TEXT PRIMARY KEY,
        experiment_id INTEGER NOT NULL,
        project_id INTEGER,
        arm TEXT NOT NULL,                 -- holdout / inject
        assigned_at REAL NOT NULL,
        hook TEXT                          -- the hook event that assigned it (SessionStart, normally)
    );
    CREATE INDEX experiment_arms_project ON experiment_arms(project_id, experiment_id);
    """),
    # 12: what a lesson rests on (playbook/anchors.py). `lesson_anchors`: one row per thing the lesson
    # names that the project's files hold (a Makefile target, a package.json script, a dependency's
    # version, a config key, a file, a symbol, a command), its fingerprint when it was last confirmed
    # (`value`) and its state (ok / gone / changed / unchecked). `anchor_files`: one row per project
    # file some anchor lives in, with its stamp (mtime and size) at the last check — the check at
    # SessionStart stats these files only and re-reads those whose stamp moved.
    ("anchors", """
    CREATE TABLE lesson_anchors (
        bullet_id TEXT NOT NULL,
        project_id INTEGER,
        kind TEXT NOT NULL,                -- file / symbol / script / make / just / mix / ci / dep / config / flag / command
        name TEXT NOT NULL,                -- the target, script, package, key, symbol or command as named
        file TEXT NOT NULL DEFAULT '',     -- project-relative file that holds it ('' for a command)
        value TEXT,                        -- its fingerprint when last confirmed (a recipe, a version, a value)
        state TEXT NOT NULL DEFAULT 'ok',  -- ok / gone / changed / unchecked
        detail TEXT,                       -- what the last check found ("`gen` is no longer a Makefile target")
        created_at REAL NOT NULL,
        checked_at REAL,
        PRIMARY KEY (bullet_id, kind, name, file)
    );
    CREATE INDEX lesson_anchors_file ON lesson_anchors(project_id, file);
    CREATE TABLE anchor_files (
        project_id INTEGER NOT NULL,
        file TEXT NOT NULL,
        stamp TEXT,                        -- mtime_ns:size at the last check; NULL: absent then
        checked_at REAL NOT NULL,
        PRIMARY KEY (project_id, file)
    );
    """),
    # 13: the project's most recently updated lessons as an indexed top-N. SessionStart reads them
    # twice (the digest's recent sessions, the learning notice); without this index each read
    # scanned and sorted every active lesson of the project (1.4 ms at 10,000: bench/hooks_bench.py).
    ("recent lessons", """
    CREATE INDEX bullets_recent ON bullets(project_id, status, updated_at DESC);
    """),
]

LATEST = len(MIGRATIONS)
_META = 5  # the migration that creates table `meta`


def statements(script: str) -> Iterator[str]:
    """Split a migration into statements (triggers hold `;` inside BEGIN … END). Not
    `executescript`, which would commit the migrating transaction half-way."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                yield buffer
            buffer = ""


def migrate(conn: RedactingConnection, migrations: Sequence[tuple[str, str]] = MIGRATIONS) -> int:
    """Bring the store to version `len(migrations)`; returns the version it found (0: a new
    store). Raises StoreError for a store newer than the migrations known here."""
    latest = len(migrations)
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found > latest:
        raise StoreError(f"store schema v{found} is newer than this ace-engine (v{latest}); upgrade ace-engine")
    if found == 0:
        # Must precede the first table; lets gc return space to the file system.
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
    with Transaction(conn):
        found = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
        for number in range(found + 1, latest + 1):
            _name, script = migrations[number - 1]
            for statement in statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={number}")
        if found == 0 and latest >= _META:  # a new store holds no lesson yet: nothing to re-screen
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, str(POLICY_VERSION)))
    return found
