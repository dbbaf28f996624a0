"""A real claude-mem database, built with the tables and columns claude-mem's source defines
(`src/services/sqlite/SessionStore.ts` of thedotmack/claude-mem: `initializeSchema` and the
migrations after it — the composite-identity rebuild of `sdk_sessions` and `user_prompts`, the
rebuilt `observations` and `session_summaries`, and the columns added later: `content_hash`,
`generated_by_model`, `relevance_count`, `merged_into_project`, `agent_type`, `agent_id`). Written
here in our own words, not copied; the rows are what its worker stores (epochs in milliseconds,
lists as JSON text). `legacy=True` gives the shape before its migration 17 (`claude_session_id`,
`sdk_session_id`) and before user prompts were kept."""

import json
import sqlite3

SCHEMA = [
    """CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL, applied_at TEXT NOT NULL)""",
    """CREATE TABLE sdk_sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL, memory_session_id TEXT UNIQUE,
        project TEXT NOT NULL, platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT,
        started_at TEXT NOT NULL, started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
        status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')),
        worker_port INTEGER, prompt_counter INTEGER DEFAULT 0, custom_title TEXT)""",
    """CREATE TABLE user_prompts (
        id INTEGER PRIMARY KEY AUTOINCREMENT, session_db_id INTEGER, content_session_id TEXT NOT NULL,
        prompt_number INTEGER NOT NULL, prompt_text TEXT NOT NULL, created_at TEXT NOT NULL,
        created_at_epoch INTEGER NOT NULL, FOREIGN KEY(session_db_id) REFERENCES sdk_sessions(id) ON DELETE CASCADE)""",
    """CREATE VIRTUAL TABLE user_prompts_fts USING fts5(prompt_text, content='user_prompts', content_rowid='id')""",
    """CREATE TABLE observations (
        id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, text TEXT,
        type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT,
        files_modified TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL,
        created_at_epoch INTEGER NOT NULL, content_hash TEXT, generated_by_model TEXT, relevance_count INTEGER
        DEFAULT 0, merged_into_project TEXT, agent_type TEXT, agent_id TEXT,
        FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE)""",
    """CREATE TABLE session_summaries (
        id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, request TEXT,
        investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT,
        notes TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL,
        created_at_epoch INTEGER NOT NULL, merged_into_project TEXT,
        FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE)""",
]
LEGACY_SCHEMA = [
    """CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, claude_session_id TEXT UNIQUE NOT NULL,
        sdk_session_id TEXT UNIQUE, project TEXT NOT NULL, user_prompt TEXT, started_at TEXT NOT NULL,
        started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
        status TEXT NOT NULL DEFAULT 'active')""",
    """CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sdk_session_id TEXT NOT NULL,
        project TEXT NOT NULL, text TEXT NOT NULL, type TEXT NOT NULL, created_at TEXT NOT NULL,
        created_at_epoch INTEGER NOT NULL)""",
]
MS = 1_763_629_200_000  # 2025-11-20 09:00 UTC, in claude-mem's milliseconds


class ClaudeMemDB:
    def __init__(self, path, legacy=False):
        self.path = path
        self.legacy = legacy
        self.con = sqlite3.connect(path)
        self.con.execute("PRAGMA journal_mode=WAL")  # as its worker opens it
        for statement in LEGACY_SCHEMA if legacy else SCHEMA:
            self.con.execute(statement)
        self.n = 0

    def session(self, content_id, memory_id, project, *, platform="claude", prompt=None, minutes=0):
        at = MS + minutes * 60_000
        if self.legacy:
            self.con.execute("INSERT INTO sdk_sessions(claude_session_id, sdk_session_id, project, user_prompt,"
                             " started_at, started_at_epoch, status) VALUES (?,?,?,?,?,?, 'completed')",
                             (content_id, memory_id, project, prompt, "2025-11-20T09:00:00Z", at))
        else:
            self.con.execute("INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, platform_source,"
                             " user_prompt, started_at, started_at_epoch, completed_at_epoch, status)"
                             " VALUES (?,?,?,?,?,?,?,?, 'completed')",
                             (content_id, memory_id, project, platform, prompt, "2025-11-20T09:00:00Z", at,
                              at + 600_000))
        return at

    def prompt(self, content_id, number, text, at):
        self.con.execute("INSERT INTO user_prompts(content_session_id, prompt_number, prompt_text, created_at,"
                         " created_at_epoch) VALUES (?,?,?,?,?)", (content_id, number, text, "x", at))

    def observation(self, memory_id, project, kind, title, *, facts=(), narrative="", concepts=(), files=(), at=MS):
        if self.legacy:
            self.con.execute("INSERT INTO observations(sdk_session_id, project, text, type, created_at,"
                             " created_at_epoch) VALUES (?,?,?,?,?,?)", (memory_id, project, title, kind, "x", at))
            return
        self.con.execute(
            "INSERT INTO observations(memory_session_id, project, type, title, subtitle, facts, narrative, concepts,"
            " files_read, files_modified, prompt_number, created_at, created_at_epoch, generated_by_model)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (memory_id, project, kind, title, None, json.dumps(list(facts)), narrative, json.dumps(list(concepts)),
             json.dumps([]), json.dumps(list(files)), 1, "x", at, "claude-haiku"))

    def summary(self, memory_id, project, *, request, completed, learned, next_steps, at=MS):
        self.con.execute(
            "INSERT INTO session_summaries(memory_session_id, project, request, investigated, learned, completed,"
            " next_steps, files_read, files_edited, notes, prompt_number, created_at, created_at_epoch)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (memory_id, project, request, "", learned, completed, next_steps, "[]", "[]", None, 1, "x", at))

    def close(self):
        self.con.commit()
        self.con.close()
