"""Lexical similarity of lessons: normalized token sets, Jaccard and containment, the "anchor"
guard, the *shape* of a lesson (its variables abstracted), and the FTS query that finds a lesson's
possible duplicates without comparing it to the whole playbook (`neighbour_query`).

    similarity(a, b) = max(jaccard(A, B), 0.9 · containment(A, B))   when both have ≥ 4 tokens
                       jaccard(A, B)                                 otherwise
    containment(A, B) = |A ∩ B| / min(|A|, |B|)
    duplicate_score(a, b) = 0 when both name things in code spans and the first two spans' words
                            differ once shaped (another command, error or file), or both name
                            files outside code spans and none in common (another fix),
                            else similarity(shape(a), shape(b))

Containment catches the commonest near-duplicate — the same lesson with a few words added
("… from the repository root") — that Jaccard alone scores too low; the 0.9 factor keeps a short
lesson wholly inside a long, different one from counting as a full match. The anchor guard
catches what no bag of words can: lessons written from one template that differ in the one word
that matters (`src/app.py` vs `src/db.py`: Jaccard 0.87); the file guard, what shaping alone
would lose: the same generic failure of two test files, fixed in two source files.

Shape. The same lesson learned in two sessions differs in what was particular to each run: the
branch pushed, the commit message, the throwaway script, the test file passed, a count or a
duration. `slots(text)` finds those variables; `shape(text)` writes each as a metavariable (the
argparse convention: FILE, BRANCH, COMMIT, MESSAGE, TEXT, N), so such variants compare equal:
- in a code span that is a command (its first word a lowercase program name — not a path, a file
  name, an error class or the first word of an error message): path and file arguments and test
  ids (FILE), quoted strings and heredocs (TEXT; MESSAGE after -m / --message and in `git
  commit`), git refs (BRANCH: what `push` / `pull` / `fetch` name after the remote, what
  `checkout`, `switch`, `merge`, `rebase`… name), commit hashes (COMMIT), numbers (N). The program,
  subcommand, options and bare words (`make e2e`, `pip install requests`) stay: they are what the
  lesson is about;
- the same file, branch or commit elsewhere in the lesson (the branch git's error message echoes,
  the script named again in the prose) becomes the same metavariable;
- numbers anywhere (counts, durations, line numbers).
Everything else stays, error messages included: `No module named 'requests'` and `… 'yaml'` are
two lessons, and a span that is just a path (`src/app.py`, the subject of the lesson) is no
variable.

`generalize(a, b)`: the one wording of two lessons that differ only in variables — `a` with each
variable the two disagree on written as its metavariable (`git push --set-upstream origin
BRANCH`); a number outside a command keeps `a`'s value (a count or a duration is no identifier,
and "failed N times" reads worse than "failed 2 times"). None when they differ in more than that.

Threshold (`learning.merge_similarity`, default 0.8), chosen on the labelled pairs in
`tests/test_learning_curator.py` (duplicates, related-but-different lessons, and variants that
differ only in variables, both ways; the counts are asserted there):
    0.75 → every duplicate merged, 1 different pair merged (ruff format vs black)
    0.80 → every duplicate merged, no different pair                 ← default
    0.85 → two reworded duplicates missed, no different pair
Without the anchor guard, 0.8 would merge 5 of the 13 different lessons.

Cost: regular expressions over one lesson (≤ 2,000 characters): tens of microseconds a shape;
the curator shapes a new lesson and its ≤ 20 FTS neighbours.
"""

import functools
import re

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]*")
STOPWORDS = frozenset(
    "a an and are as at be been but by can do does did for from has have if in into is it its of on or so "
    "than that the then there these this those to was were when where which while will with you your "
    "i we they he she them our us my me not no yes just also only very more most some any all each "
    "should would could must may might use used using run runs ran".split()
)
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    if len(word) > 4 and not word.isdigit():
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


def tokens(text: str) -> frozenset[str]:
    """Normalized content words: lower case, stop words dropped, light suffix stemming."""
    return frozenset(_stem(w) for w in _TOKEN.findall(str(text).lower()) if w not in STOPWORDS and len(w) > 1)


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def containment(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def similarity(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """0..1; `a`, `b` are texts or token sets."""
    ta = a if isinstance(a, frozenset) else tokens(a)
    tb = b if isinstance(b, frozenset) else tokens(b)
    score = jaccard(ta, tb)
    if min(len(ta), len(tb)) >= 4:
        score = max(score, 0.9 * containment(ta, tb))
    return round(score, 4)


_SPAN = re.compile(r"`([^`\n]+)`")

# -- variables: slots, shape, generalize ------------------------------------------------------------

FILE, BRANCH, COMMIT, MESSAGE, TEXT, NUMBER = "FILE", "BRANCH", "COMMIT", "MESSAGE", "TEXT", "N"
METAVARS = frozenset((FILE, BRANCH, COMMIT, MESSAGE, TEXT, NUMBER))
# One variable: (start, end, metavariable, value, merges) — `merges`: two lessons that disagree on
# it are worded with the metavariable (False: a number outside a command keeps the first value).
Slot = tuple[int, int, str, str, bool]

_PROGRAM = re.compile(r"[a-z][\w.+-]*")
# First words of error messages ("cannot import name 'x'") and of code ("import os.path") that
# look like program names.
_NOT_A_PROGRAM = frozenset(
    "error errors fatal warning panic failed failure cannot can't could unable no not missing unknown invalid "
    "undefined unexpected expected module name type syntax permission port connection exception traceback the a an "
    "file directory command usage def class return import from if elif else for while with const let var fn func "
    "pub async await raise throw try except catch assert yield lambda new".split())
_ARG = re.compile(r"""<<-?\s*['"]?\w+['"]?.*|'[^']*(?:'|$)|"[^"]*(?:"|$)|\S+""")
_EXT = re.compile(r"\.[A-Za-z]\w{0,5}$")  # a file name's extension (`v1.2` is a version, not a file)
_HEX = re.compile(r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}")
_NUM = re.compile(r"\d+(?:\.\d+)?")
_NUM_IN_TEXT = re.compile(r"(?<![\w.\-/])\d+(?:\.\d+)?(?![\w/]|\.\d)")
_LITERAL_METAVAR = re.compile(r"\b(?:FILE|BRANCH|COMMIT|MESSAGE|TEXT)\b")
_GIT_REMOTE_FIRST = frozenset({"push", "pull", "fetch"})
_GIT_REFS = frozenset({"checkout", "switch", "branch", "merge", "rebase", "cherry-pick", "revert", "reset", "tag",
                       "show", "diff", "log"})
_SHARED_REFS = frozenset({"main", "master", "head", "develop", "dev", "trunk", "origin", "upstream"})


def _is_command(span: str) -> bool:
    """Does this code span run something (whose arguments may be variables), rather than quote an
    error or name a file or an identifier?"""
    words = span.split()
    if not words or not _PROGRAM.fullmatch(words[0]) or words[0] in _NOT_A_PROGRAM or _EXT.search(words[0]):
        return False
    return not any(w.endswith(":") for w in words[:3])


def _path_like(word: str) -> bool:
    return ("/" in word or "::" in word or bool(_EXT.search(word))) and "://" not in word \
        and not word.startswith(("@", "-", "$"))


def _argument(word: str, previous: str, git: str | None, positional: int) -> str | None:
    """The metavariable of one argument of a command, None when it is part of what the lesson is
    about. `git`: the git subcommand when the command is git; `positional`: how many positional
    arguments came before this one."""
    if word in METAVARS:
        return word
    if word.startswith("<<") or word[:1] in "'\"":
        return MESSAGE if git == "commit" or previous in ("-m", "--message") else TEXT
    if word.startswith("-") and word.strip("-"):
        return None  # an option: part of the command
    if git == "commit":
        return MESSAGE
    if git and (git in _GIT_REFS or (git in _GIT_REMOTE_FIRST and positional >= 1)):
        if _HEX.fullmatch(word):
            return COMMIT
        return FILE if _EXT.search(word) and "/" in word else BRANCH
    if _HEX.fullmatch(word):
        return COMMIT
    if previous != "-m" and _path_like(word):
        return FILE
    return NUMBER if _NUM.fullmatch(word) else None


def _command_slots(span: str, base: int) -> list[Slot]:
    words = [(m.start(), m.end(), m.group()) for m in _ARG.finditer(span)]
    git = words[1][2] if len(words) > 1 and words[0][2] == "git" else None
    found: list[Slot] = []
    positional = 0
    for index in range(2 if git else 1, len(words)):
        start, end, word = words[index]
        kind = _argument(word, words[index - 1][2], git, positional)
        if word.startswith("-") and "=" in word and kind is None:  # --cov=src/pkg: the value may be one
            cut = word.index("=") + 1
            kind = _argument(word[cut:], word[:cut - 1], git, positional) if word[cut:] else None
            start += cut
            word = word[cut:]
        if not (word.startswith("-") and word.strip("-")):
            positional += 1
        if kind is not None:
            found.append((base + start, base + end, kind, word, True))
    return found


def _free(taken: list[Slot], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e, *_ in taken)


def slots(text: str) -> list[Slot]:
    """The variables of a lesson, in order (see the module doc); consecutive ones of the same kind
    (`a.exs b.exs`, a commit message cut into words) are one."""
    text = str(text)
    found: list[Slot] = []
    for match in _SPAN.finditer(text):
        if _is_command(match.group(1)):
            found += _command_slots(match.group(1), match.start(1))
    values: dict[str, str] = {}
    for _, _, kind, value, _ in found:
        if kind in (FILE, BRANCH, COMMIT) and value not in METAVARS and value.lower() not in _SHARED_REFS:
            base = value.rstrip("/").rsplit("/", 1)[-1]  # the script's name said again in the prose
            for variant in (value, base if kind == FILE and _EXT.search(base) else value):
                if len(variant) >= 3:
                    values.setdefault(variant, kind)
    for value, kind in values.items():
        for match in re.finditer(rf"(?<![\w/.-]){re.escape(value)}(?![\w/-]|\.\w)", text):
            if _free(found, match.start(), match.end()):
                found.append((match.start(), match.end(), kind, value, True))
    for match in _LITERAL_METAVAR.finditer(text):
        if _free(found, match.start(), match.end()):
            found.append((match.start(), match.end(), match.group(), match.group(), True))
    for match in _NUM_IN_TEXT.finditer(text):
        if _free(found, match.start(), match.end()):
            found.append((match.start(), match.end(), NUMBER, match.group(), False))
    found.sort()
    merged: list[Slot] = []
    for slot in found:
        if merged and merged[-1][2] == slot[2] and merged[-1][4] and not text[merged[-1][1]:slot[0]].strip():
            last = merged[-1]
            merged[-1] = (last[0], slot[1], last[2], text[last[0]:slot[1]], True)
        else:
            merged.append(slot)
    return merged


def _render(text: str, found: list[Slot], fill: str | None = None) -> str:
    out, pos = [], 0
    for start, end, kind, _, _ in found:
        out += [text[pos:start], kind if fill is None else fill]
        pos = end
    return "".join(out) + text[pos:]


@functools.lru_cache(maxsize=512)  # a new lesson is compared with ~20 neighbours, which recur across lessons
def shape(text: str) -> str:
    """The lesson with its variables written as metavariables: what two observations of one
    lesson in different runs have in common."""
    return _render(str(text), slots(text))


def generalize(a: str, b: str) -> str | None:
    """One wording for two lessons that differ only in variables (see the module doc): `a` with
    each variable they disagree on written as its metavariable. None when they differ in more."""
    sa, sb = slots(a), slots(b)
    if [s[2] for s in sa] != [s[2] for s in sb] or \
            " ".join(_render(a, sa).lower().split()) != " ".join(_render(b, sb).lower().split()):
        return None
    out, pos = [], 0
    for (start, end, kind, va, merges), (_, _, _, vb, _) in zip(sa, sb, strict=True):
        out += [a[pos:start], va if va == vb or not merges else kind]
        pos = end
    return "".join(out) + a[pos:]


def variables(text: str) -> int:
    """How many metavariables the lesson's wording already has: the more, the more general."""
    return sum(1 for _, _, kind, value, _ in slots(text) if value == kind)


# -- anchors and duplicates -------------------------------------------------------------------------


def anchors(text: str) -> frozenset[str]:
    """The words of a lesson's first two code spans — what it is about: the command and its
    error, the two files, the file and its error. Numbers don't count."""
    words: set[str] = set()
    for span in _SPAN.findall(str(text))[:2]:
        words |= {w for w in tokens(span) if not w.isdigit()}
    return frozenset(words)


def duplicate_score(a: str, b: str) -> float:
    """`similarity` of the two shapes, except that two lessons about different things (their
    shaped anchors differ: another command, error or file) are never duplicates however alike the
    rest of the wording is."""
    sa, sb = shape(a), shape(b)
    aa, ab = anchors(sa), anchors(sb)
    if aa and ab and aa != ab:
        return 0.0
    pa, pb = prose_paths(sa), prose_paths(sb)
    if pa and pb and not pa & pb:
        return 0.0  # the same failure fixed in other files: two lessons
    return similarity(sa, sb)


_PROSE_PATH = re.compile(r"(?:[\w.@-]*/)+[\w.@-]*|[\w-]{2,}\.[A-Za-z]\w{1,5}\b")


def prose_paths(text: str) -> frozenset[str]:
    """The files and directories a lesson names outside its code spans (where the fix was, which
    file holds what)."""
    found = (p.rstrip(".") for p in _PROSE_PATH.findall(_SPAN.sub(" ", str(text))))
    return frozenset(p for p in found if p.strip("./"))


def prose_words(text: str) -> frozenset[str]:
    """The lesson's words outside its code spans, the paths it names left out: how it is worded,
    apart from what it names."""
    return tokens(_PROSE_PATH.sub(" ", _SPAN.sub(" ", str(text))))


def names(text: str) -> frozenset[str]:
    """What the lesson names: its code spans and the paths in its prose."""
    return frozenset(_SPAN.findall(str(text))) | prose_paths(text)


_FTS_WORD = re.compile(r"[a-z0-9]+")


def neighbour_query(text: str) -> str | None:
    """The FTS5 expression that finds a lesson's possible duplicates among thousands of bullets.

    A lesson with code spans can only duplicate a bullet that names the same things, so every
    word of its anchors is required (AND): a handful of matches, ~0.5 ms at 10,000 bullets. The
    variables are left out (the stored variants name other branches and files). Without spans
    (free prose, e.g. from an LLM), its longest words are OR-ed and ranked by BM25 — ~10 ms at
    10,000 bullets, still independent of comparing against every bullet.
    """
    text = str(text)
    words: list[str] = []
    for span in _SPAN.findall(_render(text, slots(text), " "))[:2]:
        for word in _FTS_WORD.findall(span.lower()):
            if len(word) > 1 and word not in words:
                words.append(word)
    if words:
        return " AND ".join(f'"{w}"' for w in words[:12])
    return fts_query(text)


def fts_query(text: str, limit: int = 10) -> str | None:
    """An FTS5 expression OR-ing the lesson's most distinctive words (longest first). None when
    the text has no usable word."""
    words = sorted({w for w in _TOKEN.findall(str(text).lower()) if w not in STOPWORDS and len(w) > 2 and "_" not in w},
                   key=lambda w: (-len(w), w))[:limit]
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)


def overlap(bullet_text: str, context_tokens: frozenset) -> float:
    """Share of a bullet's words found in a task's context: "plausibly relevant" when high."""
    tb = tokens(bullet_text)
    if not tb:
        return 0.0
    return len(tb & context_tokens) / len(tb)
