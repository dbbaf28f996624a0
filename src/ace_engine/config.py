"""Layered configuration: defaults < user config < project config < environment (`ACE_*`).

Keys are dotted (`capture.max_response_chars`); a TOML file writes them as tables
(`[capture] max_response_chars = 4000`); the environment as `ACE_CAPTURE_MAX_RESPONSE_CHARS`.
Hooks load this on every run, so it costs two `stat` calls when no config file exists.

Trust: the user config file and `ACE_*` variables are the user's; a project's `.ace.toml` is
repository content, written by whoever wrote the repository. It may set only the keys in
`PROJECT_KEYS` (what is captured and injected, how lessons are shaped and searched). A key that
chooses an executable, an endpoint, a credential or its variable, trusted hosts, extra pattern
files, retention (deletion of the user's data), the store, or spending (`llm.*`, `store.*`,
`retention.*`, the worker's queue mechanics…) is user-level: set in a project file it is
ignored — logged once, shown by `ace config show` — unless the user ran `ace trust` on that
exact file content (`trust.py`: sha256 of the bytes and the real path; any edit voids it).
Only a project file that sets such a key is hashed, so the common case costs nothing more.
"""

import os

from . import paths

DEFAULTS: dict[str, object] = {
    # Capture: caps are in characters, head and tail are kept around a marked cut.
    "capture.max_input_chars": 8_000,
    "capture.max_response_chars": 8_000,
    "capture.max_message_chars": 16_000,
    "capture.skip_tools": ["TodoWrite", "TodoRead", "ExitPlanMode", "TaskList", "TaskGet"],
    # Store: how long a hook waits for a lock before spooling its record instead.
    "store.busy_timeout_ms": 2_000,
    # Injection: what the hooks put back into Claude Code's context, in tokens (estimated).
    "inject.enabled": True,
    "inject.session_start_tokens": 500,
    "inject.prompt_tokens": 400,
    "inject.prompt_k": 5,
    "inject.domain_shift_tokens": 250,
    "inject.domain_shift_k": 3,
    "inject.recall_tokens": 600,
    "inject.pin_hours": 24.0,
    # Retrieval: how the playbook is searched (see `retrieval/search.py` for what each weight does).
    "retrieval.threshold": 0.25,
    "retrieval.candidates": 40,
    "retrieval.max_terms": 32,
    "retrieval.weights.bm25": 0.30,
    "retrieval.weights.coverage": 0.60,
    "retrieval.weights.fuzzy": 0.05,
    "retrieval.weights.domain": 0.05,
    "retrieval.weights.confidence": 0.05,
    "retrieval.weights.helpful": 0.05,
    "retrieval.weights.recency": 0.05,
    "retrieval.weights.semantic": 0.30,
    "retrieval.recency_half_life_days": 30.0,
    "retrieval.abbreviations": {},
    "retrieval.semantic": False,
    # Learning: the job queue, the reflector, and the curator's dedup and pruning rules.
    "learning.enabled": True,
    "learning.reflector": "auto",
    "learning.max_attempts": 3,
    "learning.backoff_seconds": 30.0,
    "learning.lease_seconds": 600.0,
    "learning.linger_seconds": 60.0,
    "learning.merge_similarity": 0.8,
    "learning.prune_confidence": 0.3,
    "learning.prune_min_observations": 10,
    "learning.stale_days": 90.0,
    "learning.max_bullets": 500,
    "learning.max_tokens": 40_000,
    "learning.slow_step_seconds": 120.0,
    "learning.co_edit_sessions": 3,
    "learning.code_pattern_sessions": 2,
    "learning.trusted_hosts": [],
    # LLM: an optional model for reflection. Nothing leaves the machine unless a provider is set.
    "llm.provider": "none",
    "llm.model": "",
    "llm.base_url": "",
    "llm.api_key_env": "",
    "llm.claude_path": "",
    "llm.timeout_s": 120.0,
    "llm.max_tokens": 4_000,
    "llm.max_calls_per_job": 3,
    "llm.max_calls_per_day": 200,
    "llm.max_tokens_per_day": 2_000_000,
    # Code patterns: observations on Edit / Write content (see `learning/code_patterns.py`).
    "learning.code_patterns_file": "",
    # Retention: `ace gc`, and the automatic gc SessionStart starts past the cap, keep the store
    # within these.
    "retention.max_db_mb": 256.0,
    "retention.max_age_days": 180,
}

DESCRIPTIONS: dict[str, str] = {
    "capture.max_input_chars": "cap on a stored tool input (chars)",
    "capture.max_response_chars": "cap on a stored tool response (chars)",
    "capture.max_message_chars": "cap on a stored prompt or final assistant message (chars)",
    "capture.skip_tools": "tools whose calls are not captured",
    "inject.enabled": "inject playbook bullets into Claude Code's context at all",
    "inject.session_start_tokens": "budget of the <ace-playbook> digest at session start",
    "inject.prompt_tokens": "budget of the <ace-patterns> block on each prompt",
    "inject.prompt_k": "at most this many bullets per prompt",
    "inject.domain_shift_tokens": "budget of an <ace-patterns-domain-shift> block",
    "inject.domain_shift_k": "at most this many bullets on a shift of domain",
    "inject.recall_tokens": "budget of the <ace-patterns-recalled> block after compaction",
    "inject.pin_hours": "how long bullets pinned at compaction stay recallable",
    "learning.enabled": "Stop / SubagentStop / SessionEnd queue learning jobs and start the worker",
    "learning.reflector": "auto (an LLM when a provider is configured, else heuristics), heuristic or llm",
    "learning.max_attempts": "attempts of a learning job before it is marked failed",
    "learning.backoff_seconds": "wait before retrying a failed job; doubles with each attempt",
    "learning.lease_seconds": "a running job not finished within this is retried (its worker died)",
    "learning.linger_seconds": "the worker waits at most this long for a job in backoff before exiting",
    "learning.merge_similarity": "lexical similarity (0-1) at which a new lesson updates an existing one",
    "learning.prune_confidence": "archive bullets below this confidence…",
    "learning.prune_min_observations": "…once they have at least this many helpful/harmful marks",
    "learning.stale_days": "archive bullets unused for this many days that were never helpful",
    "learning.max_bullets": "active bullets per project before the least valuable are archived (0: no cap)",
    "learning.max_tokens": "estimated tokens of a project's active bullets before pruning (0: no cap)",
    "learning.slow_step_seconds": "a command slower than this becomes a 'slow step' lesson",
    "learning.co_edit_sessions": "sessions two files must be edited together in to become a lesson",
    "learning.code_pattern_sessions": "sessions a harmful code pattern must be written in before its lesson is learned",
    "learning.trusted_hosts": "hosts a lesson may name without being quarantined (besides registries, code hosts, docs)",
    "store.busy_timeout_ms": "how long a hook waits for a locked store before spooling",
    "retrieval.threshold": "minimum score (0..1) of a bullet to be injected; empty results are fine",
    "retrieval.candidates": "how many full-text matches are re-ranked per search",
    "retrieval.max_terms": "cap on the search terms taken from one prompt",
    "retrieval.weights.bm25": "weight of full-text (BM25) relevance, relative to the best candidate",
    "retrieval.weights.coverage": "weight of the share of the query's terms a bullet contains",
    "retrieval.weights.fuzzy": "weight of fuzzy identifier / file path matches",
    "retrieval.weights.domain": "weight of a bullet's domains matching the query and files in play",
    "retrieval.weights.confidence": "weight of a bullet's confidence (scaled by its relevance)",
    "retrieval.weights.helpful": "weight of a bullet's helpful record (scaled by its relevance)",
    "retrieval.weights.recency": "weight of a bullet's recent use or update (scaled by its relevance)",
    "retrieval.weights.semantic": "share of embedding similarity in hybrid mode (0..1)",
    "retrieval.recency_half_life_days": "age at which the recency part has halved",
    "retrieval.abbreviations": "extra abbreviations, a table or `k8s=kubernetes,tf=terraform` (| between alternatives)",
    "retrieval.semantic": "blend embedding similarity into searches (needs `pip install ace-engine[semantic]` and `ace embed`)",
    "llm.provider": "none (offline heuristics only), claude-cli (your Claude Code login), anthropic or openai (any OpenAI-compatible endpoint)",
    "llm.model": "model name; needed for anthropic / openai, optional for claude-cli (its default otherwise)",
    "llm.base_url": "endpoint of an anthropic / openai provider, e.g. http://localhost:11434/v1 for Ollama",
    "llm.api_key_env": "NAME of the environment variable holding the API key (default ANTHROPIC_API_KEY / OPENAI_API_KEY); keys are never stored in config",
    "llm.claude_path": "the `claude` binary for claude-cli (default: `claude` on PATH)",
    "llm.timeout_s": "seconds one model call may take",
    "llm.max_tokens": "cap on the tokens of one model reply",
    "llm.max_calls_per_job": "model calls one learning job may make (a reply that isn't valid JSON is retried once)",
    "llm.max_calls_per_day": "model calls per day on this machine, all projects (0: no cap); past it learning goes offline",
    "llm.max_tokens_per_day": "model tokens (in + out) per day on this machine (0: no cap)",
    "learning.code_patterns_file": "JSON file of extra code patterns, or `{\"disable\": [ids]}` (see learning/code_patterns.py)",
    "retention.max_db_mb": "store size above which gc drops the oldest captured sessions",
    "retention.max_age_days": "captured events older than this are dropped by gc",
}


# What a repository's `.ace.toml` may set without `ace trust`: keys that only shape what is captured,
# injected and learned from this project's own sessions. Everything else is user-level (see the
# module docstring); a new key is user-level until it is added here on purpose.
PROJECT_KEYS: frozenset[str] = frozenset(
    [key for key in DEFAULTS if key.startswith(("capture.", "inject.", "retrieval."))]
    + ["learning.enabled", "learning.merge_similarity", "learning.prune_confidence",
       "learning.prune_min_observations", "learning.stale_days", "learning.max_bullets", "learning.max_tokens",
       "learning.slow_step_seconds", "learning.co_edit_sessions", "learning.code_pattern_sessions"]
)


def project_may_set(key: str) -> bool:
    return key in PROJECT_KEYS


class ConfigError(ValueError):
    """A config file or variable that cannot be used; the message names it and the fix."""


def env_name(key: str) -> str:
    return "ACE_" + key.replace(".", "_").upper()


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and not isinstance(DEFAULTS.get(key), dict):
            flat.update(_flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


def _coerce(key: str, value: object, source: str) -> object:
    default = DEFAULTS[key]
    if isinstance(default, bool):
        if isinstance(value, str):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
        elif isinstance(value, bool):
            return value
    elif isinstance(default, float):
        try:
            if isinstance(value, bool):
                raise ValueError
            return float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    elif isinstance(default, int):
        try:
            if isinstance(value, bool):
                raise ValueError
            return int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    elif isinstance(default, list):
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    elif isinstance(default, dict):
        # A table of strings: from TOML as a table, from the environment as `a=b,c=d`.
        if isinstance(value, str):
            pairs = [part.split("=", 1) for part in value.split(",") if part.strip()]
            if all(len(pair) == 2 and pair[0].strip() for pair in pairs):
                return {k.strip(): v.strip() for k, v in pairs}
        elif isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            return value
    else:
        return value
    raise ConfigError(
        f"{source}: `{key}` must be {type(default).__name__} like {default!r}, got {value!r}"
    )


def read_toml_bytes(path: str) -> tuple[dict[str, object], bytes] | None:
    """(flattened table, the exact bytes parsed), None when the file does not exist."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror}); fix its permissions") from exc
    import tomllib  # only paid for when a config file exists

    try:
        return _flatten(tomllib.loads(data.decode("utf-8"))), data
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc}); fix or remove the file") from exc


class Config:
    """Effective values plus, for `ace config show`, where each one came from, and the user-level
    keys a project file set but which were ignored ({key: (value, path)})."""

    def __init__(self, values: dict[str, object], sources: dict[str, str],
                 ignored: dict[str, tuple[object, str]] | None = None):
        self.values = values
        self.sources = sources
        self.ignored = ignored or {}

    def __getitem__(self, key: str):
        return self.values[key]


def load(project_root: str | None = None, *, strict: bool = False) -> Config:
    """Load the layered config. Non-strict (hooks): a bad layer is logged and skipped."""
    values = dict(DEFAULTS)
    sources = {key: "default" for key in DEFAULTS}
    ignored: dict[str, tuple[object, str]] = {}
    layers = [("user", paths.user_config_path())]
    if project_root:
        layers.append(("project", os.path.join(project_root, paths.PROJECT_CONFIG_NAME)))
    for label, path in layers:
        try:
            found = read_toml_bytes(path)
            if found is None:
                continue
            table, data = found
            unknown = [key for key in table if key not in DEFAULTS]
            if unknown:
                raise ConfigError(f"{path}: unknown key `{unknown[0]}`; see `ace config show`")
            if label == "project":
                label, table = _project_layer(path, table, data, ignored)
            for key, raw in table.items():
                values[key] = _coerce(key, raw, path)
                sources[key] = f"{label} ({path})"
        except ConfigError as exc:
            if strict:
                raise
            from . import log

            log.warning("config", str(exc))
    for key in DEFAULTS:
        raw = os.environ.get(env_name(key))
        if raw is None:
            continue
        try:
            values[key] = _coerce(key, raw, env_name(key))
            sources[key] = f"env ({env_name(key)})"
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


def ignored_fix(path: str) -> str:
    """What to do about user-level keys ignored in a project file."""
    return (f"move them to your user config ({paths.user_config_path()}) or set them as ACE_* variables; "
            f"or, if you wrote or reviewed {path}, run `ace trust` in the project (any later edit voids it)")
