"""Which `ace` commands and options only read this project's data: the one table the
PermissionRequest hook trusts (`hooks/permission.py`).

Contract: every command of the click CLI (`cli/app.py`) is named here exactly once — in `READS`
(may be auto-approved), `DESTRUCTIVE` (denied: only the user runs it) or `NO_OPINION` (Claude
Code asks the user) — and every option of a `READS` command carries a mark. A test
(tests/test_cli_marks.py) walks the click tree and fails when the two drift, so a new command or
option is never approved because somebody forgot to copy it here; until it is classified, the
hook has no opinion on it.

A command is in `READS` only when, with the options marked FLAG / VALUE / TEXT / SESSION, it
writes nothing, executes nothing and shows nothing but this project's (and the global) lessons
and records. Options that name a path, an output file, another project, every project, a retry
or a fix are marked REFUSE: their presence makes the request "no opinion".

Cost: data only, no imports (the hook imports it on every PermissionRequest).
"""

# Option and argument marks.
FLAG = "flag"  # read-only option without a value
VALUE = "value"  # read-only option taking one value that is data (a number, a name), never a path
TEXT = "text"  # positional free text (a search query)
SESSION = "session"  # a session id: allowed only when it is the asking session's own id
REFUSE = "refuse"  # known, but makes the command more than a read of this project

_PROJECT = {"--project": REFUSE}  # another directory's data: refused whatever it points at
_JSON = {"--json": FLAG}
_WIDE = {"--wide": FLAG}  # a table instead of a list on a narrow terminal: layout only

# Options `ace` itself takes, alone on the command line (`ace --help`).
TOP_LEVEL = {"--help": FLAG, "-h": FLAG, "--version": FLAG, "--no-pager": FLAG}
# Every command also takes these (the group's `help_option_names`); click prints and exits.
HELP = {"--help": FLAG, "-h": FLAG}

# command path (group and subcommand joined by a space) -> (options, positional arguments)
READS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "status": ({**_PROJECT, **_JSON}, ()),
    # `--all` shows every repository's figures: another project's data.
    "report": ({"--all": REFUSE, "--min-sessions": VALUE, **_PROJECT, **_JSON}, ()),
    "experiment status": ({**_JSON}, ()),
    # Reads this project's transcripts; learns in a throwaway home it removes. `--model` spends model calls.
    "replay": ({"--limit": VALUE, "--model": REFUSE, **_PROJECT, **_JSON}, ()),
    "search": ({"--k": VALUE, "--domain": VALUE, "--exclude-domain": VALUE, "--threshold": VALUE,
                "--mode": VALUE, "--stdin": FLAG, **_PROJECT, **_JSON, **_WIDE}, (TEXT,)),
    "patterns": ({"--section": VALUE, "--min-helpful": VALUE, "--domain": VALUE, "--status": VALUE,
                  "--limit": VALUE, "--to-recheck": FLAG, **_PROJECT, **_JSON, **_WIDE}, ()),
    "top": ({"--k": VALUE, **_PROJECT, **_JSON, **_WIDE}, ()),
    "domains": ({**_PROJECT, **_JSON, **_WIDE}, ()),
    # stdout only: `-o/--output` writes a file (the `ace export -o ~/.bashrc --force` hole).
    "export": ({"-o": REFUSE, "--output": REFUSE, "--force": REFUSE, "--all-projects": REFUSE,
                **_PROJECT, **_JSON}, ()),
    # `--remote` asks the team server.
    "stats": ({"--all": REFUSE, "--limit": VALUE, "--remote": REFUSE, "--days": VALUE, **_PROJECT, **_JSON,
               **_WIDE}, ()),
    # `--bullet` takes any bullet id (prefix), of any project.
    "log": ({"--bullet": REFUSE, "--all": REFUSE, "--limit": VALUE, **_PROJECT, **_JSON, **_WIDE}, ()),
    # `--retry` queues a job and starts the learning worker.
    "jobs": ({"--all": REFUSE, "--status": VALUE, "--retry": REFUSE, "--limit": VALUE, **_PROJECT, **_JSON,
              **_WIDE}, ()),
    "config show": ({**_PROJECT, **_JSON, **_WIDE}, ()),
    "config get": ({**_PROJECT, **_JSON}, (TEXT,)),
    "config path": ({**_PROJECT, **_JSON}, ()),
    # Session-keyed views read any project's session, so only the asking session's own id passes.
    "recall": ({"--session": SESSION, **_JSON, **_WIDE}, ()),
    "cache recall": ({"--session": SESSION, **_JSON, **_WIDE}, ()),
    "events": ({"--full": FLAG, **_JSON, **_WIDE}, (SESSION,)),
    # Session summaries (continuity/): this project's recent ones; one by id (the asking session's own only).
    "recent": ({"--sessions": VALUE, **_PROJECT, **_JSON}, ()),
    "session": ({"--full": FLAG, **_JSON}, (SESSION,)),
    "sessions show": ({"--full": FLAG, **_JSON}, (SESSION,)),
}

# Change or delete lessons, records, settings or instruction files: denied with a reason.
# `reset` and `trust` may not exist yet (RESERVED); a request for them is refused, not left to chance.
RESERVED = frozenset({"reset", "trust"})
DESTRUCTIVE = frozenset({
    "clear", "rm", "gc", "uninstall", "reset", "import", "sync", "edit", "tag", "add", "learn",
    "trust",  # trusting a repository's config is the user's decision, never the agent's
    "review",  # --approve activates a quarantined lesson: the user's decision, never the agent's
    "bootstrap",  # writes lessons drawn from the repository's history
    "keep",  # promotes a candidate lesson to one that is injected: the user's decision
    # The team server: pointing this machine at a server, and running one or handing out its
    # tokens, are the user's decisions; so is approving a lesson for the whole team.
    "remote set", "remote unset", "remote review",
    "config set", "config edit",  # the user's settings (and `edit` runs $EDITOR)
    "server run", "server token create", "server token revoke",
})

# Commands that do more than read, but not destructively enough to deny: Claude Code asks the user.
NO_OPINION = {
    "doctor": "executes things: probes hook commands, runs `claude --version`; --fix writes",
    "install": "writes Claude Code settings",
    "experiment start": "writes the user's config (the share of sessions held out)",
    "experiment stop": "writes the user's config (ends the holdout)",
    "hook": "runs a hook: writes records, may start the learning worker",
    "demo": "runs a scripted Claude Code session and the learning worker",
    "embed": "writes embedding vectors into the store",
    "show": "takes any bullet id (a prefix is enough), of any project",
    "push": "sends this project's lessons to its team server",
    "pull": "writes the team's lessons from the server into the store",
    "remote status": "contacts the team server",
    "remote stats": "contacts the team server",
    "server token list": "reads the team server's token table (another database than this project's)",
    "ui": "serves the local dashboard, from which lessons can be changed, until stopped",
    "mcp": "runs ace-engine's MCP server until stdin closes; with --allow-writes it changes lessons",
    "statusline": "reads the project and session named in its stdin JSON",
    "completion": "prints a script meant to be sourced into the user's shell (bash's also runs `bash`)",
}
