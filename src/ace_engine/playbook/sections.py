"""Playbook sections: the ACE plugin's four, plus any added by configuration."""

from ..core.errors import AceError

DEFAULT_SECTIONS = (
    "strategies_and_hard_rules",
    "useful_code_snippets",
    "troubleshooting_and_pitfalls",
    "apis_to_use",
)

TITLES = {
    "strategies_and_hard_rules": "Strategies and hard rules",
    "useful_code_snippets": "Useful code snippets",
    "troubleshooting_and_pitfalls": "Troubleshooting and pitfalls",
    "apis_to_use": "APIs to use",
}

ALIASES = {
    "strategies": "strategies_and_hard_rules",
    "rules": "strategies_and_hard_rules",
    "snippets": "useful_code_snippets",
    "code": "useful_code_snippets",
    "troubleshooting": "troubleshooting_and_pitfalls",
    "pitfalls": "troubleshooting_and_pitfalls",
    "apis": "apis_to_use",
    "api": "apis_to_use",
}


class SectionError(AceError, ValueError):
    pass


def normalize(name: str, extra: tuple[str, ...] = ()) -> str:
    """The canonical section for `name` (case, dashes and short aliases accepted)."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = ALIASES.get(key, key)
    allowed = DEFAULT_SECTIONS + tuple(extra)
    if key not in allowed:
        raise SectionError(f"unknown section {name!r}; use one of: {', '.join(allowed)}")
    return key


def title(section: str) -> str:
    return TITLES.get(section) or section.replace("_", " ").capitalize()
