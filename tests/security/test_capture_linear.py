"""Issue 35, "a record dropped for the hook budget": every text screen of capture is linear.

At 42195db `strip_private` was quadratic on `<private ` repeated (its tag pattern ran `[^>]*` to
the end of the text from every opener and back): a 108 KB file read cost the PostToolUse hook more
than its 5 s budget, the watchdog answered empty, and the read — the evidence that a later command
came from that file — was lost. The same held for the redactor's folding of split strings (a
quote, then 1,000 blanks, on a line with a non-ASCII character: minutes of backtracking, four
`[ \\t]*` in a row) and, quadratically, for "password is" and "Passwort ist" followed by a run of
blanks (the hook's size cap kept that one under its budget; the team server and the CLI have none).

The tests here compare, the way tests/security/test_policy_linear.py does, what the rewritten
screens find with what the patterns they replace find, on every string of the security tests and
on generated ones (a rewrite must not change a verdict), and check that the records the slow
screens lost are now kept, through the real hook process. (Timing lives in
bench/redaction_bench.py; no test here asserts one.)
"""

import ast
import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from ace_engine.redact import evasions, flags_and_prose, surroundings
from ace_engine.redact.sanitize import strip_private
from hookutil import payload, run_hook

HERE = Path(__file__).parent

# The patterns as they were at 42195db.
OLD_TAG = re.compile(r"<(/?)private(?:\s[^>]*)?>", re.I)
OLD_SPLIT = r"[\"'][ \t]*(?:\+|\.|\|\|)?[ \t]*\\?\r?\n?[ \t]*(?:\+|\.|\|\|)?[ \t]*[\"']"
OLD_GATE = r"[\"'][ \t]*(?:\+|\.|\|\|)[ \t]*\\?\r?\n?[ \t]*[\"']|[\"'][ \t]*\\?\r?\n[ \t]*[\"']"
OLD_WORDS = (r"(?P<key>passw(?:or)?d|passphrase|passcode|token|secret|api[ _-]?key)[ \t]+"
             r"(?:(?:is|was|will be|should be|(?:has been )?(?:set|changed) to|to)[ \t]*:?)[ \t]+"
             r"(?P<q>[\"'`])?(?P<val>(?(q)[^\"'`\r\n]+|[^\s\"'`]+))")
OLD_FOREIGN_SEP = r"[ \t]*(?P<sep>[:=])?[ \t]*"


def old_strip_private(s: str) -> str:
    """`strip_private` as it was: the same depth rule over the matches of OLD_TAG."""
    if "<" not in s:
        return s
    out, depth, last = [], 0, 0
    for m in OLD_TAG.finditer(s):
        if not m.group(1):
            if depth == 0:
                out.append(s[last:m.start()])
            depth += 1
        elif depth == 0:
            out.append(s[last:m.start()])
            last = m.end()
        else:
            depth -= 1
            if depth == 0:
                last = m.end()
    if depth == 0:
        out.append(s[last:])
    return "".join(out)


def _strings() -> list[str]:
    """Every string constant of the security and capture tests."""
    found = set()
    for path in [*HERE.glob("test_*.py"), *HERE.parent.glob("test_capture*.py"), *HERE.parent.glob("test_redact*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 4000:
                found.add(node.value)
    return sorted(found)


def _random(alphabet: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(count)]


CORPUS = _strings()
PRIVATE_TEXTS = CORPUS + _random(["<private", "</private", "<PRIVATE", "<Private", ">", " ", "\n", "\u00a0", "x",
                                  "<", "/", "er", "<private>", "</private>", "\u2028", "a b"], 40_000, 35)
SPLIT_TEXTS = CORPUS + _random(['"', "'", " ", "\t", "+", ".", "|", "\\", "\r", "\n", "x"], 40_000, 36)
WORD_TEXTS = CORPUS + _random(["password", "token", "passwort", "contraseña", " ", "\t", "is", "ist", ":", "=",
                               "x", '"', "y7Q"], 40_000, 37)


def test_the_corpus_is_real_sized():
    assert len(CORPUS) > 500


def test_strip_private_removes_exactly_what_it_did():
    differ = [t for t in PRIVATE_TEXTS if strip_private(t) != old_strip_private(t)]
    assert differ == [], f"{len(differ)} texts stripped differently, e.g. {differ[:3]}"


def test_the_split_string_patterns_match_exactly_what_they_did():
    old_split, new_split = re.compile(OLD_SPLIT), re.compile(evasions._SPLIT)
    old_gate, new_gate = re.compile(OLD_GATE), re.compile(evasions._SPLIT_GATE)
    differ = []
    for t in SPLIT_TEXTS:
        for i in (j for j, c in enumerate(t) if c in "\"'"):
            a, b = old_split.match(t, i), new_split.match(t, i)
            if (a and a.end()) != (b and b.end()):
                differ.append(t)
        if (old_gate.search(t) is None) != (new_gate.search(t) is None):
            differ.append(t)
    assert differ == [], f"{len(differ)} texts read differently, e.g. {differ[:3]}"


def test_the_stated_password_patterns_match_exactly_what_they_did():
    old_words, new_words = re.compile(OLD_WORDS), re.compile(flags_and_prose._WORDS)
    new_foreign = re.compile(surroundings._FOREIGN)
    old_foreign = re.compile(surroundings._FOREIGN.replace(
        r"[ \t]*(?:(?P<sep>[:=])[ \t]*)?", OLD_FOREIGN_SEP))
    assert old_foreign.pattern != new_foreign.pattern, "the foreign-password pattern was not rewritten"
    differ = []
    for t in WORD_TEXTS:
        low = t.lower()
        for i in range(len(low)):
            a, b = old_words.match(low, i), new_words.match(low, i)
            if (a and a.span("val")) != (b and b.span("val")):
                differ.append(t)
            a, b = old_foreign.match(low, i), new_foreign.match(low, i)
            if (a and (a.span("val"), a.group("sep"), a.group("verb"))) != (
                    b and (b.span("val"), b.group("sep"), b.group("verb"))):
                differ.append(t)
    assert differ == [], f"{len(differ)} texts read differently, e.g. {differ[:3]}"


# -- the records the slow screens lost are kept -------------------------------------------------

# Each input cost the PostToolUse hook more than its 5 s budget at 42195db (the watchdog answered
# empty and nothing was stored); each is far below it now.
ADVERSARIAL = {
    "private-openers": "<private " * 45_000,                   # 405 KB, a file read: quadratic
    "quote-then-blanks": "naïve \"" + " " * 2_000 + "x",     # four `[ \t]*` in a row: O(n^4)
}


@pytest.mark.parametrize("kind", list(ADVERSARIAL))
def test_a_read_the_screens_were_slow_on_is_stored(ace_home, git_project, kind):
    """The file read reaches the store (one real hook process), with its path: the evidence that
    a later command came from that file is not lost to the budget."""
    cwd = str(git_project)
    text = ADVERSARIAL[kind]
    code, out, err, _ = run_hook("PostToolUse", payload(
        "PostToolUse", cwd, tool_name="Read", tool_use_id=f"read-{kind}",
        tool_input={"file_path": f"{cwd}/NOTES.md"},
        tool_response={"type": "text", "file": {"filePath": f"{cwd}/NOTES.md", "content": text}}), timeout=60)
    assert code == 0, err
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        row = con.execute("SELECT input, response FROM tool_events WHERE tool_use_id = ?",
                          (f"read-{kind}",)).fetchone()
    except sqlite3.OperationalError:  # nothing was ever stored: not even the tables
        row = None
    finally:
        con.close()
    assert row is not None, f"the read was dropped ({kind}): {err[-300:]}"
    assert "NOTES.md" in json.loads(row[0])["file_path"]
    assert row[1], "the read's content was not kept"
