"""The layers table as data: every package of `ace_engine`, its rank, and what it owns.

Contract: a package imports only packages of a lower rank (lazy imports inside functions count;
imports under `if TYPE_CHECKING:` do not, they never run). Packages of the same rank are siblings
and do not import each other. No module lives at the package root besides `__init__`: every
module is in one of these folders. `tests/test_layers.py` is generated from this table, and the
table in `docs/development.md` is `markdown()`'s output (a test keeps them equal), so the map
cannot drift from the territory. To add a package, add a row; to let a package import another,
the importer's rank must be higher.

Cost: nothing imports this at run time (tests and docs do); pure data and one function.
"""

# (package, rank, what it owns). Highest rank first = nearest the user; rank 0 imports nothing.
TABLE: tuple[tuple[str, int, str], ...] = (
    ("cli", 10, "the `ace` command: arguments in, the layers below called, text or JSON out; "
                "`ace doctor`'s checks"),
    ("integrations", 9, "what `ace install` writes for each agent (hook settings, MCP config, status "
                        "line: the installers the agents' rows name) and `ace sync`'s agent files"),
    ("mcp_server", 9, "the MCP tools agents call: lessons, history, answers"),
    ("ui", 9, "the local dashboard's pages"),
    ("server", 9, "the team server: its HTTP API, its dashboard and its own database (`server/storage`: "
                  "SQLite or PostgreSQL, the state replicas share)"),
    ("demo", 9, "the scripted demo session"),
    ("hooks", 8, "the agents' boundary: parse stdin, dispatch per event, build each agent's output; "
                 "stdlib only, exit 0 on every input"),
    ("jobs", 7, "the learning work queue and its worker process"),
    ("learning", 6, "reflection, quality gates, curation, code patterns: lessons from what happened"),
    ("team_client", 6, "the team server's client: bind, push, pull, outbox and inbox"),
    ("bootstrap", 6, "first lessons read from a repository's own files and conventions"),
    ("experiment", 5, "the holdout: each session's arm, outcomes read from what was captured, the with vs "
                      "without report and its statistics"),
    ("continuity", 5, "session summaries: what was done and is open, the next SessionStart's head"),
    ("observe", 4, "what happened in a session, read back: commands, error signatures, check tools, "
                   "trajectories, transcripts, git context, corrections, origins"),
    ("retrieval", 4, "query building, scoring, domain matching, token budgets, rendering of "
                     "injected blocks"),
    ("web", 4, "the one request guard (host, auth, CSRF, body limits), rendering and templates "
               "shared by `ui` and `server`"),
    ("playbook", 3, "the domain model: lessons, sections, ids, counters, confidence, delta "
                    "operations, the lesson safety policy, provenance"),
    ("store", 2, "the local store: SQLite (WAL, FTS5, migrations), the redacting connection, the spool; "
                 "SQL is written here and in `server/storage` only"),
    ("llm", 2, "providers (Claude Code CLI, Anthropic API, OpenAI-compatible), budgets, "
               "structured output; never required"),
    ("agents", 2, "the coding agents served, one module each behind one protocol, and the registry the rest "
                  "asks: hook events and answer shapes, tool tables, installers' and readers' names; "
                  "stdlib only (the hooks import it)"),
    ("embed", 2, "lesson vectors: the shipped static table or an optional model, stored beside "
                 "each lesson (every playbook write embeds)"),
    ("core", 1, "settings, paths, errors, the log, atomic files, escaping, project identity, "
                "config trust, record types, background processes, formatting"),
    ("capture", 0, "the agents' tool calls read: the tool table (names, input fields, kinds), a tool "
                   "result's text parts, Codex's `apply_patch` split into edits"),
    ("redact", 0, "text made safe to store: redaction (the one choke point, under the log and the "
                  "store's connection), `<private>` stripping, UTF-8 repair, size caps"),
)

RANK: dict[str, int] = {name: rank for name, rank, _ in TABLE}


def allowed(importer: str, imported: str) -> bool:
    """Whether package `importer` may import package `imported`: its own modules, or a lower rank."""
    return importer == imported or RANK[imported] < RANK[importer]


def markdown() -> str:
    """The table as Markdown, highest layer first (what `docs/development.md` shows)."""
    lines = ["| rank | package | owns |", "|---|---|---|"]
    lines += [f"| {rank} | `{name}` | {owns} |" for name, rank, owns in TABLE]
    return "\n".join(lines) + "\n"
