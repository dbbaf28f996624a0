"""Domains: short hyphenated names (`elixir-testing`, `auth-jwt`, `git`) that say what a bullet is about.

`derive` reads what a lesson names — commands (`mix test`, `go test ./...`, `bundle exec rspec`),
files (`mix.exs`, a Dockerfile, `.github/workflows/ci.yml`, `*_test.go`), tools and libraries
(`clippy`, `ecto`), error messages only one ecosystem prints — and interprets it in the project's
ecosystem: `mix test` is elixir-testing, `cargo clippy` rust-linting, `npm test` js-testing, git
commands git, CI files ci, Dockerfiles docker. A job named without a tool ("run the tests",
"lint") takes the ecosystem the rest of the lesson names, else the project's first language
(`languages`, from `project_langs.detect`), else it says nothing. Common words (`session`, `token`,
`config`, `branch`) are weak: they count only beside a strong word of the same domain or another
weak one, so "session" alone never makes a lesson about auth. The table lives in `domain_table`.
The user can edit a bullet's domains. Also: the words of a file path, and which known domain a
path belongs to, for spotting a shift of domain.

One piece, past 400 lines, because `derive` and `match_path` apply the same ecosystem rules (strong and
weak words, the project's languages); the word table itself is already apart in `domain_table`.

Cost: imports only `re` (hooks import this through retrieval); `domain_table` is imported and its
lookups built on the first `derive` / `match_path` of a process (well under a millisecond).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Sequence

# Path segments that say nothing about a domain.
GENERIC = frozenset(
    "src lib libs app apps main index init utils util common core internal pkg packages package "
    "test tests spec specs dist build out tmp the and for with from file files home root usr var "
    "users user code project projects repo repos work workspace module modules".split()
)

_WORD = re.compile(r"[a-z][a-z0-9]+")
_NAME_JUNK = re.compile(r"[^a-z0-9]+")

# How much each kind of evidence weighs.
COMMAND, NAMED, WORD, FILE, LANGUAGE, WEAK = 1.5, 1.0, 1.0, 0.75, 0.5, 0.5


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


# -- the table, loaded on first use ----------------------------------------------------------------


class _Lookups:
    """What `derive` and `match_path` look things up in, built from `domain_table` once per process."""

    __slots__ = ("words", "compounds", "token", "code_span", "task_parts", "line_col", "errors")

    def __init__(self) -> None:
        from . import domain_table as t

        words: dict[str, str] = {}
        for signal, names in t.WORDS.items():
            for word in names.split():
                words[word] = signal
        self.words = {w: s for w, s in words.items() if w.isalnum()}
        # Words with `-`, `.`, `_` or `/` (`node_modules`, `utf-8`): the word pattern splits them,
        # so they are looked for whole.
        self.compounds = {w: s for w, s in words.items() if not w.isalnum()}
        # A token of a lesson: a word, a command word, a path; quotes, brackets and separators split.
        self.token = re.compile(r"[^\s`'\"(),;<>\[\]{}|&=]+")
        self.code_span = re.compile(r"`[^`\n]+`")
        self.task_parts = re.compile(r"[:._/-]+")
        self.line_col = re.compile(r"(?::\d+)+:?$")  # `lib/a.ex:12:3`
        self.errors: list[tuple[re.Pattern[str], str]] | None = None  # compiled by the first `derive`


_lookups: _Lookups | None = None


def _table() -> _Lookups:
    global _lookups
    if _lookups is None:
        _lookups = _Lookups()
    return _lookups


def _errors() -> list[tuple[re.Pattern[str], str]]:
    """The error-message regexes, compiled on the first `derive` (never in a hook)."""
    from . import domain_table as t

    tab = _table()
    if tab.errors is None:
        tab.errors = [(re.compile(rx), signal) for rx, signal in t.ERRORS]
    return tab.errors


def domain_name(ecosystem: str, kind: str) -> str:
    """The domain for a job (or a plain domain) in an ecosystem: (`go`, `packaging`) → `go-modules`."""
    from .domain_table import domain_name as name

    return name(ecosystem, kind)


def keyword_domain(word: str) -> str | None:
    """The domain a single strong word stands for (`migrations` → database, `clippy` → rust-linting)."""
    signal = _table().words.get(word)
    if not signal or signal[0] in "~*":
        return None
    eco, sep, kind = signal.partition(":")
    if not sep:
        return signal
    return domain_name(eco, kind) if kind else None


# -- evidence --------------------------------------------------------------------------------------


class _Evidence:
    """What a lesson's parts point to, summed: strong weight and weak words per domain, jobs named
    without a tool, and per ecosystem how much points to it (and to it bare)."""

    def __init__(self) -> None:
        self.strong: dict[str, float] = {}
        self.weak: dict[str, set[str]] = {}
        self.jobs: dict[str, float] = {}
        self.weak_jobs: dict[str, set[str]] = {}
        self.ecosystems: dict[str, float] = {}
        self.bare: dict[str, float] = {}

    def add(self, signal: str, weight: float, word: str = "", bare: bool = True) -> None:
        weak = signal.startswith("~")
        signal = signal.lstrip("~")
        word = word[:4]  # `session` and `sessions` are one weak word, not two
        if signal.startswith("*"):
            job = signal[1:]
            if weak:
                self.weak_jobs.setdefault(job, set()).add(word)
            else:
                self.jobs[job] = self.jobs.get(job, 0.0) + weight
            return
        eco, sep, kind = signal.partition(":")
        if sep:
            self.ecosystems[eco] = self.ecosystems.get(eco, 0.0) + (WEAK if weak else weight)
            if not kind:
                if bare:
                    self.bare[eco] = self.bare.get(eco, 0.0) + weight
                return
            signal = domain_name(eco, kind)
        if weak:
            self.weak.setdefault(signal, set()).add(word or signal)
        else:
            self.strong[signal] = self.strong.get(signal, 0.0) + weight


def _task_job(name: str, jobs: dict[str, str]) -> str | None:
    """The job a task name says it does (`test:unit` → testing, `lint-fix` → linting, `dev` → None)."""
    if name in jobs:
        return jobs[name]
    parts = _table().task_parts.split(name)
    return next((jobs[p] for p in parts if p in jobs), None)


def _sub_signal(spec: dict[str, str], word: str) -> str | None:
    if word in spec and word:
        return spec[word]
    return next((s for k, s in spec.items() if k.endswith("*") and word.startswith(k[:-1])), None)


def _commands(text: str, ev: _Evidence, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Add what the commands in `text` say (`spans`: its code spans); returns the spans of the
    words they used up."""
    from . import domain_table as t

    tab = _table()
    tokens = [(m.start(), m.end(), m.group().rstrip(".:")) for m in tab.token.finditer(text)]
    used: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        start, end, word = tokens[i]
        tool = word.rsplit("/", 1)[-1]
        tool = t.COMMAND_ALIASES.get(tool, tool)
        spec = t.COMMANDS.get(tool)
        in_code = any(a <= start < b for a, b in spans)
        if spec is None or (tool in t.CODE_ONLY and not in_code):
            i += 1
            continue
        eco = t.RUNNER_ECOSYSTEM.get(tool)
        runner = spec.get("") == "=run" or eco is not None  # `make lint`, `./gradlew :app:test`
        look = 3 if in_code else 1  # in prose only the next word: "make sure the tests pass" is no command
        action, j, seen = None, i + 1, 0
        while j < len(tokens) and seen < look and j - i <= 6:
            nxt = tokens[j][2]
            action = _sub_signal(spec, nxt)
            if action is None and runner and (job := _task_job(nxt, t.TASK_JOBS)):
                action = f"{eco}:{job}" if eco else f"*{job}"
            if action is not None:
                break
            if not nxt.startswith(("-", "+")):
                seen += 1
            j += 1
        used.append((start, end))
        if action is None:  # the tool alone says what it says, if anything
            default = spec.get("")
            if default == "=skip":  # `npx tsc`: the next word is the tool
                if eco:
                    ev.add(f"{eco}:", LANGUAGE, bare=False)
            elif default and default != "=run":  # running an interpreter says the language, not the topic
                ev.add(default, NAMED, bare=False)
            else:
                used.pop()
            i += 1
            continue
        used.append(tokens[j][:2])
        if action == "=run":  # `npm run <task>`: the task's name says the job
            job = None
            if j + 1 < len(tokens):
                j += 1
                used.append(tokens[j][:2])
                job = _task_job(tokens[j][2], t.TASK_JOBS)
            action = (f"{eco}:{job}" if eco else f"*{job}") if job else (f"{eco}:" if eco else "")
        if action == "=skip":  # `bundle exec rspec`: the launcher says the ecosystem, the next word the tool
            if eco:
                ev.add(f"{eco}:", LANGUAGE, bare=False)
        elif action:
            ev.add(action, NAMED if action.endswith(":") else COMMAND, bare=False)
        i = j + 1
    return used


def _file_signals(path: str) -> list[tuple[str, bool]]:
    """What a file path says: (signal, named) pairs — named by its name or place (`mix.exs`,
    `.github/workflows/…`, `*_test.go`), or only by its extension (the language it is in)."""
    from . import domain_table as t

    lowered = path.lower().replace("\\", "/").rstrip("/")
    folder, _, name = lowered.rpartition("/")
    folder = f"/{folder}/"
    found = []
    named = t.FILE_NAMES.get(name)
    if named:
        found.append((named, True))
    for under, ending, start, signal in t.PATH_RULES:
        if ((not under or f"/{under}/" in folder) and (not ending or name.endswith(ending))
                and (not start or name.startswith(start)) and (signal, True) not in found):
            found.append((signal, True))
    dot = name.rfind(".")
    if dot > 0 or (dot == 0 and not named):
        ext = t.EXTENSIONS.get(name[dot:])
        if ext:
            found.append((ext, False))
    return found


def _add_file(ev: _Evidence, path: str, named_weight: float, bare: bool = True) -> None:
    for signal, named in _file_signals(path):
        ev.add(signal, named_weight if named else LANGUAGE, bare=bare)


def _gather(content: str, files: Sequence[str]) -> _Evidence:
    ev = _Evidence()
    tab = _table()
    lowered = content.lower()
    spans = [m.span() for m in tab.code_span.finditer(lowered)]
    used = _commands(lowered, ev, spans)
    # The rest of the text, without the words the commands used up (`npm test` is not npm packaging).
    residual = lowered
    for a, b in used:
        residual = residual[:a] + " " * (b - a) + residual[b:]
    counts: dict[str, int] = {}
    for m in _WORD.finditer(residual):
        word = m.group()
        signal = tab.words.get(word)
        if not signal or counts.get(word, 0) >= 2:
            continue
        if signal[0] == "~" and any(a <= m.start() < b for a, b in spans):
            continue  # a common word inside code is a name (`Session.token/1`), not the topic
        counts[word] = counts.get(word, 0) + 1
        ev.add(signal, WORD, word)
    for term, signal in tab.compounds.items():
        if _has_term(residual, term):
            ev.add(signal, WORD, term)
    for token in dict.fromkeys(tab.line_col.sub("", m.group()).rstrip(".:") for m in tab.token.finditer(lowered)):
        if ("." in token or "/" in token) and any(c.isalpha() for c in token):
            _add_file(ev, token, NAMED, bare=False)  # a path named in passing: its language, not its topic
    for rx, signal in _errors():
        if rx.search(lowered):
            ev.add(signal, NAMED)
    for path in files:
        if not isinstance(path, str):
            continue
        _add_file(ev, path, FILE)
        for word in path_words(path):
            signal = tab.words.get(word)
            if signal:
                ev.add(signal, FILE, word)
    return ev


def _main_ecosystem(ev: _Evidence, languages: Sequence[str]) -> str | None:
    """The lesson's own ecosystem (the one it names most; ties to the project's order), else the project's."""
    from . import domain_table as t

    known = [lang for lang in languages if lang in t.ECOSYSTEMS]
    if ev.ecosystems:
        order = {lang: i for i, lang in enumerate(known)}
        return min(ev.ecosystems, key=lambda e: (-ev.ecosystems[e], order.get(e, len(order)), e))
    return known[0] if known else None


def derive(content: str, files: Sequence[str] = (), tools: Sequence[str] = (), limit: int = 3,
           languages: Sequence[str] | None = None) -> list[str]:
    """Up to `limit` domains for a bullet, most strongly indicated first; ["general"] when nothing
    points anywhere. `files`: paths the lesson came from; `tools`: tool names it used;
    `languages`: the project's ecosystems, first the main one (`project_langs.detect`) — they
    only decide what a job named without a tool belongs to."""
    from . import domain_table as t

    ev = _gather(content, files)
    ecosystem = _main_ecosystem(ev, languages or ())
    for job in set(ev.jobs) | set(ev.weak_jobs):
        target = domain_name(ecosystem, job) if ecosystem else t.GENERIC_JOBS.get(job)
        if target and job in ev.jobs:  # weaker than a tool named
            ev.strong[target] = ev.strong.get(target, 0.0) + ev.jobs[job] * FILE
        if target and job in ev.weak_jobs:
            ev.weak.setdefault(target, set()).update(ev.weak_jobs[job])
    scores: dict[str, float] = {}
    for domain in set(ev.strong) | set(ev.weak):
        strong, weak = ev.strong.get(domain, 0.0), len(ev.weak.get(domain, ()))
        if strong > 0 or weak >= 2:  # a weak word alone says nothing
            scores[domain] = strong + WEAK * weak
    # The bare language ("elixir") when the lesson is about one but names no job of it.
    for eco, weight in ev.bare.items():
        names = t.ECOSYSTEMS.get(eco, {})
        prefix = names.get("*", eco) + "-"
        own = {v for k, v in names.items() if k not in ("", "*")}
        if not any(d.startswith(prefix) or d in own for d in scores):
            bare = names.get("", eco)
            scores[bare] = max(scores.get(bare, 0.0), min(weight, 2.0) * LANGUAGE)
    for tool in tools:
        if tool.lower() == "bash" and "shell" in scores:
            scores["shell"] += 0.25
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    found = [domain for domain, _ in ranked[:limit]]
    return found or ["general"]


# -- matching a path to a domain -------------------------------------------------------------------


def words_match(a: str, b: str) -> bool:
    """Exact, or sharing a 4-letter prefix when both are at least 4 letters long."""
    return a == b or (len(a) >= 4 and len(b) >= 4 and a[:4] == b[:4])


# Short path segments that stand for a longer word (`src/db/…` is about databases).
SHORT_WORDS = {"db": "database", "k8s": "kubernetes", "js": "javascript", "ts": "typescript",
               "ui": "frontend", "ci": "ci", "api": "api", "sql": "sql"}


def match_path(path: str, domains: list[str]) -> tuple[str, int] | None:
    """The domain whose words best match `path`'s words, with how many matched; None if none.

    A path word matches a domain word exactly or by a shared 4-letter prefix; a path word that
    the keyword table assigns to a domain (`migrations` → database) counts for that domain too;
    a file whose name or place says its domain (`test/…_test.exs` → elixir-testing and testing, a
    Dockerfile → docker) counts twice for it. The extension alone counts for nothing: in an Elixir
    project every file is Elixir, which says nothing about a shift.
    """
    words = path_words(path)
    words += [SHORT_WORDS[w] for w in _WORD.findall(path.lower()) if w in SHORT_WORDS and SHORT_WORDS[w] not in words]
    from . import domain_table as t

    said: set[str] = set()
    for signal, named in _file_signals(path):
        eco, sep, kind = signal.partition(":")
        if sep and kind:
            said.update((domain_name(eco, kind), t.GENERIC_JOBS.get(kind, "")))
        elif named and not sep:
            said.add(signal)
    if not words and not said:
        return None
    best = None
    for domain in sorted(domains):
        parts = domain.split("-")
        # Each path word counts once per domain, whether by its words or by the keyword table.
        hits = sum(1 for pw in words if keyword_domain(pw) == domain or any(words_match(dw, pw) for dw in parts))
        hits += 2 if domain in said else 0
        if hits and (best is None or hits > best[1]):
            best = (domain, hits)
    return best
