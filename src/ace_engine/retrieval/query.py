"""From a prompt to search terms, and from terms to a safe FTS5 MATCH expression.

A query is a list of *groups*: each group is one concept with its alternative spellings, e.g.
`["jwt", "json web token"]` or `["database", "db"]`. The FTS expression ORs every alternative;
the re-ranker counts a group as covered when a bullet contains any of its alternatives.

Tokens:
- words are lower-cased; identifiers are split into their words (`getUserToken` → get, user,
  token; `snake_case` → snake, case) and also kept joined (`getusertoken`), because FTS5's
  unicode61 tokenizer indexes `getUserToken` as the single token `getusertoken` but `snake_case`
  as `snake` + `case`. The original identifiers and file paths are kept apart for fuzzy matching.
- stop words are English function words plus request filler ("please", "could", "help"). Kept on
  purpose: "fix", "error", "fail", "bug" — weak words, but a pitfall bullet is often about
  exactly that failure, and BM25's IDF plus the candidate-frequency weights of the re-ranker
  already make a word that is everywhere count for little.
- abbreviations are expanded both ways (`jwt` ↔ "json web token", `db` ↔ database); the table
  is extended by the config key `retrieval.abbreviations`.
- stemming is FTS5's porter tokenizer on the SQL side; `stem()` below is a much cruder suffix
  stripper used only by the re-ranker to decide whether a bullet contains a term.

One piece, past 400 lines, because `parse`, `fts_expression` and `contains` must agree on what a token
is (splitting, stop words, abbreviations, quoting): the FTS expression is safe and the re-ranker's
coverage right only while those rules sit side by side.

Stdlib only and import-light: hooks import this on every prompt.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Prompts can be huge (a pasted log): only the head and the tail are searched.
MAX_QUERY_CHARS = 20_000
_HEAD_CHARS = 16_000

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers herself him
    himself his how i if in into is isn it its itself just let lets me more most mustn my myself no
    nor not now of off on once only or other ought our ours ourselves out over own same shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was wasn we were weren what when where which while
    who whom why will with won would wouldn you your yours yourself yourselves
    please pls plz thanks thank hi hello hey ok okay could can you help want wanted need needs
    needed like just really actually maybe somehow something anything everything thing things stuff
    way ways look looks looking see seems seem try tried trying going gonna wanna able sure still
    again already yet got get gets getting think know use using used
    etc eg ie via per
    """.split()
)

# abbreviation -> alternatives. Applied both ways: the abbreviation finds its expansions and
# an expansion (single word or phrase) finds the abbreviation.
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "jwt": ("json web token",),
    "api": ("endpoint",),
    "db": ("database",),
    "env": ("environment",),
    "auth": ("authentication", "authorization"),
    "authn": ("authentication",),
    "authz": ("authorization",),
    "config": ("configuration",),
    "cfg": ("config", "configuration"),
    "conf": ("config", "configuration"),
    "deps": ("dependencies",),
    "dep": ("dependency",),
    "repo": ("repository",),
    "repos": ("repositories",),
    "k8s": ("kubernetes",),
    "ts": ("typescript",),
    "js": ("javascript",),
    "py": ("python",),
    "pg": ("postgres", "postgresql"),
    "postgres": ("postgresql",),
    "ci": ("continuous integration",),
    "e2e": ("end to end",),
    "gh": ("github",),
    "pr": ("pull request",),
    "mr": ("merge request",),
    "msg": ("message",),
    "err": ("error",),
    "dir": ("directory",),
    "dirs": ("directories",),
    "pkg": ("package",),
    "fn": ("function",),
    "func": ("function",),
    "args": ("arguments",),
    "arg": ("argument",),
    "param": ("parameter",),
    "params": ("parameters",),
    "impl": ("implementation",),
    "perf": ("performance",),
    "ws": ("websocket",),
    "regex": ("regular expression",),
    "regexp": ("regular expression",),
    "req": ("request",),
    "res": ("response",),
    "resp": ("response",),
    "var": ("variable",),
    "vars": ("variables",),
    "tmp": ("temporary",),
    "temp": ("temporary",),
    "async": ("asynchronous",),
    "sso": ("single sign on",),
    "oidc": ("openid connect",),
    "cors": ("cross origin",),
    "csrf": ("cross site request forgery",),
    "ssr": ("server side rendering",),
    "orm": ("object relational mapping",),
    "cli": ("command line",),
    "ui": ("user interface",),
    "ux": ("user experience",),
    "ttl": ("time to live",),
    "tz": ("timezone",),
    "i18n": ("internationalization", "translation"),
    "mw": ("middleware",),
    "util": ("utility",),
    "utils": ("utilities",),
    "lib": ("library",),
    "libs": ("libraries",),
    "doc": ("documentation",),
    "docs": ("documentation",),
    "img": ("image",),
    "max": ("maximum",),
    "min": ("minimum",),
    "num": ("number",),
    "str": ("string",),
    "int": ("integer",),
    "bool": ("boolean",),
    "obj": ("object",),
    "prod": ("production",),
    "dev": ("development",),
    "stg": ("staging",),
}

# A word token: letters and digits of any script (FTS5's unicode61 agrees, minus diacritics).
_WORD_RE = r"[^\W_]+"
# An identifier-ish chunk: anything between spaces, quotes, brackets and sentence punctuation.
_CHUNK_RE = r"[^\s\"'`()\[\]{}<>,;!?]+"
# camelCase / PascalCase / ACRONYMCase / digits split points.
_CAMEL_RE = r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+"
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ness", "ions", "ion", "ers", "er",
             "ies", "ied", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude, cheap suffix stripper (tests/testing/tested → test). Used only to check whether a
    bullet contains a query term; the real stemming of the search is FTS5's porter tokenizer."""
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            elif len(base) > 3 and base[-1] == base[-2] and base[-1] not in "ls":
                base = base[:-1]  # running → run, skipped → skip
            return base
    return word


def _split_identifier(chunk: str) -> list[str]:
    """Lower-case words of an identifier or path chunk: `getUserToken` → get, user, token."""
    words: list[str] = []
    for run in re.findall(_WORD_RE, chunk):
        parts = re.findall(_CAMEL_RE, run) or [run]
        words.extend(part.lower() for part in parts)
    return words


def _is_identifier(chunk: str) -> bool:
    """Code-like: snake_case, camelCase, dotted.names, paths, kebab-names, --flags, x::y."""
    core = chunk.strip(".:-")
    if len(core) < 3:
        return False
    if any(c in core for c in "_/\\") or "::" in core or "." in core[1:-1] or "-" in core[1:-1]:
        return any(c.isalpha() for c in core)
    return bool(re.search(r"[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]", core)) and any(c.isalpha() for c in core)


def normalize_abbreviations(extra: Mapping[str, object] | str | None) -> dict[str, tuple[str, ...]]:
    """The built-in table plus `extra` (a dict, or "a=b,c=d" text; `|` separates alternatives).
    Anything else in `extra` (a config value of the wrong shape) is ignored."""
    table = dict(ABBREVIATIONS)
    if not extra:
        return table
    if isinstance(extra, str):
        pairs = (part.split("=", 1) for part in extra.split(",") if "=" in part)
        extra = {abbr: expansions for abbr, expansions in pairs}
    if not isinstance(extra, dict):
        return table
    for abbr, expansions in extra.items():
        key = " ".join(re.findall(_WORD_RE, str(abbr).lower()))
        if not key:
            continue
        if isinstance(expansions, str):
            expansions = expansions.split("|")
        alts = tuple(" ".join(re.findall(_WORD_RE, str(e).lower())) for e in expansions or ())
        table[key] = tuple(dict.fromkeys(table.get(key, ()) + tuple(a for a in alts if a and a != key)))
    return table


_REVERSE_CACHE: dict[int, tuple[dict[str, tuple[str, ...]], dict[str, list[str]]]] = {}


def _reverse(table: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """expansion (word or phrase) -> abbreviations; cached per table object."""
    cached = _REVERSE_CACHE.get(id(table))
    if cached is not None and cached[0] is table:
        return cached[1]
    reverse: dict[str, list[str]] = {}
    for abbr, expansions in table.items():
        for expansion in expansions:
            reverse.setdefault(expansion, []).append(abbr)
    _REVERSE_CACHE.clear()
    _REVERSE_CACHE[id(table)] = (table, reverse)
    return reverse



class Query:
    """What a search looks for.

    groups:       concepts, each a list of alternatives (a word or a space-separated phrase)
    identifiers:  code identifiers and file paths seen in the text or `files`, lower case
    words:        the significant words of the text (domain matching)
    joined:       camelCase identifiers run together (`getusertoken`): FTS5 indexes them whole
    """

    __slots__ = ("groups", "identifiers", "words", "joined")

    def __init__(self, groups: list[list[str]], identifiers: list[str], words: list[str], joined: list[str]):
        self.groups = groups
        self.identifiers = identifiers
        self.words = words
        self.joined = joined

    def __bool__(self) -> bool:
        return bool(self.groups)

    def __repr__(self) -> str:
        return f"Query(groups={self.groups!r}, identifiers={self.identifiers!r})"


def _phrase_groups(sequence: list[str], reverse: dict[str, list[str]]) -> tuple[list[list[str]], set[int]]:
    """Multi-word expansions present in `sequence` ("json web token"): one group each, with their
    abbreviations, and the positions of their words (which then leave the word list)."""
    starts: dict[str, list[int]] = {}
    for i, word in enumerate(sequence):
        starts.setdefault(word, []).append(i)
    groups: list[list[str]] = []
    used: set[int] = set()
    for expansion, abbrs in reverse.items():
        if " " not in expansion:
            continue
        words = expansion.split()
        n = len(words)
        for i in starts.get(words[0], ()):
            if sequence[i : i + n] == words:
                groups.append([expansion] + abbrs)
                used.update(range(i, i + n))
                break
    return groups, used


def parse(text: object, *, files: Iterable[object] = (), abbreviations: dict[str, tuple[str, ...]] | None = None,
          max_terms: int = 32) -> Query:
    """Turn a prompt (any string; junk tolerated) and the files in play into a `Query`.

    `abbreviations` is a table from `normalize_abbreviations` (default: the built-in one).
    At most `max_terms` alternatives are kept: identifiers first, then phrases, then the longest
    (most specific) words.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if len(text) > MAX_QUERY_CHARS:
        text = text[:_HEAD_CHARS] + " " + text[-(MAX_QUERY_CHARS - _HEAD_CHARS):]
    table = abbreviations if abbreviations is not None else ABBREVIATIONS
    reverse = _reverse(table)

    identifiers: list[str] = []
    joined: list[str] = []
    sequence: list[str] = []  # every word in order (stop words too, for phrase detection)
    for chunk in re.findall(_CHUNK_RE, text):
        chunk = chunk.strip(".:")
        if not chunk:
            continue
        plain = chunk.isalpha() and (chunk.islower() or chunk.istitle() or chunk.isupper())
        if not plain and _is_identifier(chunk):
            ident = chunk.lower().strip("-")
            if ident not in identifiers:
                identifiers.append(ident)
            for run in re.findall(_WORD_RE, chunk):
                if re.search(r"[a-z][A-Z]", run) and run.lower() not in joined:
                    joined.append(run.lower())
        sequence.extend(_split_identifier(chunk))
    for path in files or ():
        if not isinstance(path, str) or not path:
            continue
        tail = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
        for ident in (tail, tail.rsplit(".", 1)[0]):
            if len(ident) >= 3 and ident not in identifiers:
                identifiers.append(ident)

    groups, in_phrases = _phrase_groups(sequence, reverse)
    seen = {g[0] for g in groups}
    significant: list[str] = []
    for i, word in enumerate(sequence):
        if i in in_phrases or word in seen or len(word) < 2 or word in STOP_WORDS:
            continue
        seen.add(word)
        significant.append(word)

    word_groups = []
    for word in sorted(significant, key=lambda w: -len(w)):
        alts = [word]
        for alt in table.get(word, ()) + tuple(reverse.get(word, ())):
            if alt and alt not in alts:
                alts.append(alt)
        word_groups.append(alts)
    groups = [[j] for j in joined if j not in seen] + groups + word_groups

    capped: list[list[str]] = []
    budget = max(1, int(max_terms))
    for group in groups:
        if budget <= 0:
            break
        capped.append(group[:budget])
        budget -= len(capped[-1])
    return Query(capped, identifiers[:16], significant, joined)


def _quote(term: str) -> str:
    """An FTS5 string: double quotes around, inner double quotes doubled. Inside quotes nothing
    is syntax (`-`, `:`, `*`, `^`, `AND`/`OR`/`NOT`/`NEAR`, parentheses are plain text)."""
    return '"' + term.replace('"', '""') + '"'


def fts_terms(query: Query) -> list[tuple[str, str | None]]:
    """(FTS5 string, prefix fallback or None) for every alternative of every group, deduplicated.

    Only letters, digits and spaces reach the expression, each term quoted. The fallback is a
    prefix query for when the term itself matches nothing: the whole term for code-like words
    (joined camelCase, letters mixed with digits: `getUser` → `"getuser"*` finds getUserToken),
    the first five letters for other long words, so a typo near the end (`databse`,
    `dependancy`) still brings candidates — the re-ranker then judges them.
    """
    joined = set(query.joined)
    seen: set[str] = set()
    out: list[tuple[str, str | None]] = []
    for group in query.groups:
        for alt in group:
            clean = " ".join("".join(c if c.isalnum() else " " for c in alt).split())
            if not clean or clean in seen:
                continue
            seen.add(clean)
            fallback = None
            if " " not in clean:
                if len(clean) >= 4 and (clean in joined or not clean.isalpha()) and not clean.isdigit():
                    fallback = _quote(clean) + "*"
                elif len(clean) >= 7 and clean.isalpha():
                    fallback = _quote(clean[:5]) + "*"
            out.append((_quote(clean), fallback))
    return out


def fts_expression(query: Query) -> str:
    """A MATCH expression ORing every term and its prefix fallback; '' when there is nothing.
    (`search` builds a leaner one from the same terms, knowing how common each is.)"""
    parts: list[str] = []
    for term, fallback in fts_terms(query):
        parts.append(term)
        if fallback:
            parts.append(fallback)
    return " OR ".join(dict.fromkeys(parts))


def normalized_text(text: str) -> str:
    """`text` lower-cased as space-separated words, padded with spaces (` get user token `), with
    camelCase words also split. `contains()` then tests terms with fast substring searches."""
    lowered = text.lower()
    words = re.split(r"[\W_]+", lowered)
    if lowered != text:
        for camel in re.findall(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*", text):
            words += [part.lower() for part in re.findall(_CAMEL_RE, camel)]
    return " " + " ".join(words) + " "


def term_key(term: str) -> str:
    """What `contains()` looks for: per word of the term, its stem without a final y or e, so
    that it is a prefix of every form (testing → test: tests; query → quer: queries; configure →
    configur: configuring); words of three letters or fewer (`db`, `ci`, `app`) are marked `$`
    to be matched whole (with an optional plural s), as a prefix they would match too much."""
    keys = []
    for word in term.split():
        if len(word) <= 3:
            keys.append(word + "$")
            continue
        word = stem(word)
        if len(word) > 4 and word[-1] in "ye":
            word = word[:-1]
        keys.append(word)
    return " ".join(keys)


def contains(normalized: str, key: str) -> bool:
    """Whether a `normalized_text` holds every word of a `term_key`."""
    for part in key.split(" "):
        if part[-1] == "$":
            part = part[:-1]
            if f" {part} " not in normalized and f" {part}s " not in normalized:
                return False
        elif f" {part}" not in normalized:
            return False
    return True


def text_identifiers(text: str) -> list[str]:
    """Code-like chunks of a bullet's text (for fuzzy matching), lower case."""
    found = []
    for chunk in re.findall(_CHUNK_RE, text):
        # Plain words (most of a text) are skipped with C-speed string tests.
        if len(chunk) < 3 or (chunk.isalpha() and (chunk.islower() or chunk.istitle() or chunk.isupper())):
            continue
        chunk = chunk.strip(".:")
        if _is_identifier(chunk):
            ident = chunk.lower().strip("-")
            if ident not in found:
                found.append(ident)
    return found
