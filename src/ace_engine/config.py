"""Layered configuration: defaults < user config < project config < environment (`ACE_*`).

Keys are dotted (`capture.max_response_chars`); a TOML file writes them as tables
(`[capture] max_response_chars = 4000`); the environment as `ACE_CAPTURE_MAX_RESPONSE_CHARS`.
Hooks load this on every run, so it costs two `stat` calls when no config file exists.
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
    "store.busy_timeout_ms": "how long a hook waits for a locked store before spooling",
    "retention.max_db_mb": "store size above which gc drops the oldest captured sessions",
    "retention.max_age_days": "captured events older than this are dropped by gc",
}


class ConfigError(ValueError):
    """A config file or variable that cannot be used; the message names it and the fix."""


def env_name(key: str) -> str:
    return "ACE_" + key.replace(".", "_").upper()


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
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
    else:
        return value
    raise ConfigError(
        f"{source}: `{key}` must be {type(default).__name__} like {default!r}, got {value!r}"
    )


def _read_toml(path: str) -> dict[str, object] | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror}); fix its permissions") from exc
    import tomllib  # only paid for when a config file exists

    try:
        return _flatten(tomllib.loads(data.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc}); fix or remove the file") from exc


class Config:
    """Effective values plus, for `ace config show`, where each one came from."""

    def __init__(self, values: dict[str, object], sources: dict[str, str]):
        self.values = values
        self.sources = sources

    def __getitem__(self, key: str):
        return self.values[key]


def load(project_root: str | None = None, *, strict: bool = False) -> Config:
    """Load the layered config. Non-strict (hooks): a bad layer is logged and skipped."""
    values = dict(DEFAULTS)
    sources = {key: "default" for key in DEFAULTS}
    layers = [("user", paths.user_config_path())]
    if project_root:
        layers.append(("project", os.path.join(project_root, paths.PROJECT_CONFIG_NAME)))
    for label, path in layers:
        try:
            table = _read_toml(path)
            if table is None:
                continue
            for key, raw in table.items():
                if key not in DEFAULTS:
                    raise ConfigError(f"{path}: unknown key `{key}`; see `ace config show`")
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
    return Config(values, sources)
