"""Domains: short hyphenated names (`python-testing`, `auth-jwt`) that say what a bullet is about.

Derived from a bullet's content and provenance (files touched, tools used) through a keyword
table; the user can edit them. Also: the words of a file path, for spotting a shift of domain.

Cost: imports only `re` (hooks import this through retrieval); the keyword table is built once.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Sequence

# keyword (lower case, one word) -> domain. Order of the table doesn't matter; counts do.
KEYWORDS: dict[str, str] = {}
_TABLE = {
    "python-testing": "pytest unittest conftest fixture fixtures tox nox pytest.ini parametrize monkeypatch",
    "js-testing": "jest vitest mocha cypress playwright karma jasmine",
    "python-packaging": "pip pyproject setuptools poetry venv virtualenv wheel hatch hatchling pipx requirements",
    "node-packaging": "npm yarn pnpm node_modules npx",
    "auth-jwt": "jwt jwks",
    "auth": "auth oauth login logout password passwords credential credentials session cookie cookies sso",
    "database": "sql sqlite postgres postgresql mysql mariadb alembic orm sqlalchemy migration migrations query "
                "queries psycopg prisma",
    "docker": "docker dockerfile compose container containers kubernetes k8s helm",
    "ci": "ci workflow workflows github-actions pipeline pipelines jenkins gitlab-ci",
    "git": "git rebase merge branch branches commit commits cherry-pick stash",
    "typescript": "typescript tsc tsconfig tsx",
    "python-typing": "mypy pyright typing annotations typeddict",
    "linting": "ruff eslint flake8 black prettier lint linter linting pylint isort",
    "http-api": "api apis endpoint endpoints rest http https fastapi flask express django request requests graphql",
    "frontend-react": "react jsx component components useeffect usestate redux nextjs",
    "build": "make makefile cmake build builds bundler webpack vite esbuild",
    "rust": "cargo rust crate crates rustc clippy",
    "go": "golang gofmt",
    "shell": "bash shell zsh sh shellcheck",
    "config-env": "env dotenv environment config configuration settings",
    "async": "async await asyncio promise promises concurrency threading",
    "logging": "logging logger logs",
    "performance": "performance slow latency profiling profile benchmark cache caching",
    "unicode-text": "unicode utf-8 utf8 encoding unicodedata accents",
    "cli": "cli argparse click typer",
}
for _domain, _words in _TABLE.items():
    for _word in _words.split():
        KEYWORDS[_word] = _domain
# Keywords with `-`, `.` or `_` (`node_modules`, `utf-8`): the word pattern splits them, so `derive`
# looks for them whole.
COMPOUND_KEYWORDS = {word: domain for word, domain in KEYWORDS.items() if not word.isalnum()}

EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "frontend-react", ".jsx": "frontend-react",
    ".js": "javascript", ".mjs": "javascript", ".rs": "rust", ".go": "go", ".sql": "database",
    ".sh": "shell", ".yml": "config-env", ".yaml": "config-env", ".toml": "config-env",
    ".md": "docs", ".rst": "docs", ".css": "frontend-css", ".scss": "frontend-css", ".html": "frontend-html",
}

# Path segments that say nothing about a domain.
GENERIC = frozenset(
    "src lib libs app apps main index init utils util common core internal pkg packages package "
    "test tests spec specs dist build out tmp the and for with from file files home root usr var "
    "users user code project projects repo repos work workspace module modules".split()
)

_WORD = re.compile(r"[a-z][a-z0-9]+")
_NAME_JUNK = re.compile(r"[^a-z0-9]+")


def normalize(name: str) -> str:
    """A domain name: lower case words joined by single hyphens, at most 4 words."""
    words = [w for w in _NAME_JUNK.split(name.lower()) if w]
    return "-".join(words[:4])


def path_words(path: str) -> list[str]:
    """Meaningful lower-case words of a file path (`src/auth/jwt_refresh.py` → auth, jwt, refresh)."""
    words = []
    for word in _WORD.findall(path.lower().replace("\\", "/")):
        if len(word) >= 3 and word not in GENERIC and word not in ("py", "js", "ts", "md") and word not in words:
            words.append(word)
    return words


def _has_term(text: str, term: str) -> bool:
    """`term` occurs in `text` not glued to other letters or digits."""
    start = text.find(term)
    while start != -1:
        end = start + len(term)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(term, start + 1)
    return False


def derive(content: str, files: Sequence[str] = (), tools: Sequence[str] = (), limit: int = 3) -> list[str]:
    """Up to `limit` domains for a bullet, most strongly indicated first."""
    scores: dict[str, float] = {}
    lowered = content.lower()
    for word in _WORD.findall(lowered):
        domain = KEYWORDS.get(word)
        if domain:
            scores[domain] = scores.get(domain, 0) + 1.0
    for term, domain in COMPOUND_KEYWORDS.items():
        if _has_term(lowered, term):
            scores[domain] = scores.get(domain, 0) + 1.0
    for path in files:
        for word in path_words(path):
            domain = KEYWORDS.get(word)
            if domain:
                scores[domain] = scores.get(domain, 0) + 0.75
        for ext, domain in EXTENSIONS.items():
            if path.lower().endswith(ext):
                scores[domain] = scores.get(domain, 0) + 0.5
    for tool in tools:
        if tool.lower() in ("bash",) and "shell" in scores:
            scores["shell"] += 0.25
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    found = [domain for domain, _ in ranked[:limit]]
    return found or ["general"]


def words_match(a: str, b: str) -> bool:
    """Exact, or sharing a 4-letter prefix when both are at least 4 letters long."""
    return a == b or (len(a) >= 4 and len(b) >= 4 and a[:4] == b[:4])


# Short path segments that stand for a longer word (`src/db/…` is about databases).
SHORT_WORDS = {"db": "database", "k8s": "kubernetes", "js": "javascript", "ts": "typescript",
               "ui": "frontend", "ci": "ci", "api": "api", "sql": "sql"}


def match_path(path: str, domains: list[str]) -> tuple[str, int] | None:
    """The domain whose words best match `path`'s words, with how many matched; None if none.

    A path word matches a domain word exactly or by a shared 4-letter prefix; a path word that
    the keyword table assigns to a domain (`migrations` → database) counts for that domain too.
    """
    words = path_words(path)
    words += [SHORT_WORDS[w] for w in _WORD.findall(path.lower()) if w in SHORT_WORDS and SHORT_WORDS[w] not in words]
    if not words:
        return None
    best = None
    for domain in sorted(domains):
        parts = domain.split("-")
        # Each path word counts once per domain, whether by its words or by the keyword table.
        hits = sum(1 for pw in words if KEYWORDS.get(pw) == domain or any(words_match(dw, pw) for dw in parts))
        if hits and (best is None or hits > best[1]):
            best = (domain, hits)
    return best
