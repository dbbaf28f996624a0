"""The code-pattern detector on Edit / MultiEdit / Write / NotebookEdit inputs as Claude Code sends them."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.core import config as config_mod
from ace_engine.core import log
from ace_engine.learning import code_patterns as cp
from conftest import examples

TABLE = cp.builtin()


def ids(observations) -> list[str]:
    return [o["pattern_id"] for o in observations]


def test_the_table_covers_three_languages_both_polarities_and_checks_its_own_examples():
    assert len(TABLE) >= 20
    by_lang = {lang: [p for p in TABLE.patterns if lang in p.languages] for lang in ("python", "javascript", "typescript")}
    assert all(len(v) >= 8 for v in by_lang.values()), {k: len(v) for k, v in by_lang.items()}
    assert {p.polarity for p in TABLE.patterns} == {"helpful", "harmful"}
    for spec in cp.BUILTIN_PATTERNS:
        assert spec.get("example") and spec.get("counter"), spec["id"]
        assert len(spec["lesson"]) <= 200, spec["id"]
    cp.CodePatterns(cp.BUILTIN_PATTERNS, check_examples=True)  # every example matches, no counter does


def test_write_of_a_python_file():
    content = '''import subprocess, time, datetime, requests


def load(path, cache={}):
    data = open(path).read()
    try:
        return parse(data)
    except:
        pass


async def poll(url):
    time.sleep(1)
    r = requests.get(url)
    assert r.ok
    subprocess.run(f"curl {url}", shell=True)
    print(r)
    return datetime.datetime.now()
'''
    obs = TABLE.detect("Write", {"file_path": "/repo/src/app.py", "content": content})
    # In table order; `except: pass` is the bare-except pattern (py-except-pass is `except Exception`).
    assert ids(obs) == ["py-bare-except", "py-mutable-default", "py-print-debug", "py-shell-true", "py-assert-validation",
                        "py-sleep-in-async", "py-open-without-with", "py-naive-now", "py-requests-no-timeout"]
    first = {o["pattern_id"]: o for o in obs}
    assert first["py-bare-except"] == {
        "pattern_id": "py-bare-except", "language": "python", "polarity": "harmful",
        "lesson": cp.BUILTIN_PATTERNS[0]["lesson"], "file": "/repo/src/app.py", "count": 1, "change": "added",
        "line": 8, "match": "except:"}
    assert first["py-mutable-default"]["line"] == 4
    assert first["py-sleep-in-async"]["line"] == 13
    assert all(o["language"] == "python" and o["change"] == "added" for o in obs)


def test_except_exception_pass_is_its_own_pattern():
    obs = TABLE.detect("Write", {"file_path": "a.py", "content": "try:\n    x()\nexcept Exception as exc:\n    pass\n"})
    assert ids(obs) == ["py-except-pass"]
    assert obs[0]["line"] == 3


def test_assert_is_fine_in_tests():
    content = "def test_x():\n    assert parse('a') == ['a']\n"
    assert TABLE.detect("Write", {"file_path": "tests/test_parse.py", "content": content}) == []
    assert TABLE.detect("Write", {"file_path": "src/parse.test.ts", "content": "var x = 1;\n"})[0]["pattern_id"] == "js-var"
    assert ids(TABLE.detect("Write", {"file_path": "src/parse.py", "content": content})) == ["py-assert-validation"]


def test_typescript_edit_and_javascript_patterns_apply_to_typescript():
    edit = {"file_path": "/repo/web/api.ts", "old_string": "const user = await getUser(id);",
            "new_string": "var user: any = getUser(id)!;\n// @ts-ignore\nif (user.role == 'admin') console.log(user);\n"}
    obs = TABLE.detect("Edit", edit)
    assert sorted(ids(obs)) == sorted(["js-var", "js-loose-equality", "js-console-log", "ts-any", "ts-ignore",
                                       "ts-non-null-assertion"])
    assert all(o["language"] == "typescript" for o in obs)
    assert {o["pattern_id"]: o["line"] for o in obs}["ts-ignore"] == 2


def test_javascript_only_patterns_do_not_fire_in_python_and_vice_versa():
    js = "var a = 1;\nconsole.log(a == 2);\n"
    assert TABLE.detect("Write", {"file_path": "x.py", "content": js}) == []
    assert sorted(ids(TABLE.detect("Write", {"file_path": "x.js", "content": js}))) == ["js-console-log", "js-loose-equality", "js-var"]
    assert ids(TABLE.detect("Write", {"file_path": "x.js", "content": "const x: any = 1;\n"})) == []  # `any` is TypeScript
    assert TABLE.detect("Write", {"file_path": "README.md", "content": js}) == []
    assert TABLE.detect("Bash", {"command": "echo 'except:'"}) == []


def test_comments_do_not_count_except_for_comment_patterns():
    content = "// console.log(debug)\n# not python\n/* var x */\nconst ok = a === b;\n"
    assert TABLE.detect("Write", {"file_path": "a.js", "content": content}) == []
    assert ids(TABLE.detect("Write", {"file_path": "a.js", "content": "/* eslint-disable */\n"})) == ["js-eslint-disable-file"]


def test_an_edit_that_removes_a_harmful_pattern_is_reported_as_removed():
    edit = {"file_path": "src/app.py", "old_string": "try:\n    go()\nexcept:\n    log()\n",
            "new_string": "try:\n    go()\nexcept OSError:\n    log()\n"}
    assert TABLE.detect("Edit", edit) == [{
        "pattern_id": "py-bare-except", "language": "python", "polarity": "harmful",
        "lesson": cp.BUILTIN_PATTERNS[0]["lesson"], "file": "src/app.py", "count": 1, "change": "removed"}]
    # A pattern already present before the edit and still there is not news.
    same = {"file_path": "src/app.py", "old_string": "print(x)\nfoo()", "new_string": "print(x)\nbar()"}
    assert TABLE.detect("Edit", same) == []


def test_multiedit_and_notebook_and_stored_json_inputs():
    multi = {"file_path": "src/util.js", "edits": [
        {"old_string": "let a = 1", "new_string": "var a = 1"},
        {"old_string": "x === y", "new_string": "x == y"},
        {"old_string": "foo()", "new_string": "eval(foo)"},
    ]}
    assert ids(TABLE.detect("MultiEdit", multi)) == ["js-var", "js-loose-equality", "js-eval"]
    notebook = {"notebook_path": "analysis.ipynb", "cell_type": "code", "new_source": "df = eval(expr)\n"}
    obs = TABLE.detect("NotebookEdit", notebook)
    assert ids(obs) == ["py-eval-exec"] and obs[0]["language"] == "python"
    assert TABLE.detect("NotebookEdit", {**notebook, "cell_type": "markdown"}) == []
    # Tool inputs as the store keeps them: JSON text — and text capped mid-JSON is skipped, not guessed.
    stored = json.dumps({"file_path": "a.py", "content": "except:\n    pass\n"})
    assert ids(TABLE.detect("Write", stored)) == ["py-bare-except"]
    assert TABLE.detect("Write", stored[:20]) == []
    assert TABLE.detect("Write", {"file_path": "a.py"}) == []


def test_helpful_patterns():
    content = ("from datetime import datetime, timezone\nnow = datetime.now(timezone.utc)\n"
               "with open(p, encoding='utf-8') as fh:\n    data = fh.read()\nsubprocess.run(['make'], check=True)\n")
    obs = TABLE.detect("Write", {"file_path": "a.py", "content": content})
    assert sorted(ids(obs)) == ["py-aware-datetime", "py-subprocess-check", "py-with-open"]
    assert {o["polarity"] for o in obs} == {"helpful"}
    ts = "try { run(); } catch (err: unknown) { report(err); }\n// @ts-expect-error legacy API returns string\n"
    assert sorted(ids(TABLE.detect("Write", {"file_path": "a.ts", "content": ts}))) == ["ts-catch-unknown", "ts-expect-error"]


# -- configuration ---------------------------------------------------------------------------------

def test_user_file_extends_replaces_and_disables(tmp_path):
    path = tmp_path / "patterns.json"
    path.write_text(json.dumps({
        "patterns": [
            {"id": "py-no-pdb", "language": "python", "polarity": "harmful", "regex": r"\bpdb\.set_trace\(|\bbreakpoint\(\)",
             "hint": "(", "lesson": "A debugger breakpoint was left in.", "example": "import pdb; pdb.set_trace()\n",
             "counter": "log.debug('x')\n"},
            {"id": "js-console-log", "languages": ["javascript", "typescript"], "polarity": "harmful",
             "regex": r"\bconsole\.log\(", "lesson": "Use the `logger` module, not console.log."},
        ],
        "disable": ["py-print-debug"],
    }))
    table = cp.load_file(str(path))
    assert len(table) == len(cp.BUILTIN_PATTERNS)  # +1 new, 1 replaced, -1 disabled
    content = "import pdb; pdb.set_trace()\nprint(x)\n"
    assert ids(table.detect("Write", {"file_path": "a.py", "content": content})) == ["py-no-pdb"]
    obs = table.detect("Write", {"file_path": "a.js", "content": "console.log(1)\n"})
    assert obs[0]["lesson"] == "Use the `logger` module, not console.log."
    # Through the config key, cached until the file changes.
    cfg = dict(config_mod.DEFAULTS, **{"learning.code_patterns_file": str(path)})
    assert cp.load(cfg) is cp.load(cfg)
    assert ids(cp.detect("Write", {"file_path": "a.py", "content": content}, cfg)) == ["py-no-pdb"]
    assert cp.load(dict(config_mod.DEFAULTS)) is TABLE


@pytest.mark.parametrize("data, message", [
    ([{"id": "x", "language": "cobol", "polarity": "harmful", "regex": "a", "lesson": "b"}], "needs `languages` from"),
    ([{"id": "x", "language": "python", "polarity": "meh", "regex": "a", "lesson": "b"}], "polarity` helpful or harmful"),
    ([{"id": "x", "language": "python", "polarity": "harmful", "regex": "(", "lesson": "b"}], "invalid regex"),
    ([{"id": "x", "language": "python", "polarity": "harmful", "regex": "foo", "lesson": "b", "example": "bar"}],
     "does not match its own `example`"),
    ([{"id": "x", "language": "python", "polarity": "harmful", "regex": "foo", "lesson": "b", "counter": "foo"}],
     "matches its `counter` example"),
    ({"disable": ["no-such-pattern"]}, "`disable` names unknown patterns"),
    ("not json", "invalid JSON"),
])
def test_a_bad_user_file_is_refused_with_the_reason(tmp_path, data, message):
    path = tmp_path / "patterns.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(cp.PatternError, match=message):
        cp.load_file(str(path))


def test_a_bad_user_file_falls_back_to_the_builtin_table_and_is_logged(ace_home, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("[{")
    cfg = dict(config_mod.DEFAULTS, **{"learning.code_patterns_file": str(path)})
    assert cp.load(cfg) is TABLE
    assert any("broken.json: invalid JSON" in line for line in log.tail(3, level="WARN"))


# -- speed and robustness -------------------------------------------------------------------------------

def test_a_large_write_is_scanned():
    block = ("def f(a, b=None):\n    with open(a) as fh:\n        return [x for x in fh if x.strip() == b]\n\n" * 600
             + "except:\n    pass\n")
    obs = TABLE.detect("Write", {"file_path": "big.py", "content": block})  # its time: bench/budgets_bench.py
    assert ids(obs)[0] == "py-bare-except"


@settings(max_examples=examples(150), deadline=None)
@given(text=st.text(max_size=400), name=st.sampled_from(["a.py", "b.js", "c.ts", "d.tsx", "e.txt"]),
       tool=st.sampled_from(["Write", "Edit", "MultiEdit"]))
def test_any_text_gives_well_formed_observations(text, name, tool):
    if tool == "Write":
        tool_input = {"file_path": name, "content": text}
    elif tool == "Edit":
        tool_input = {"file_path": name, "old_string": text[::2], "new_string": text}
    else:
        tool_input = {"file_path": name, "edits": [{"old_string": "", "new_string": text}]}
    for obs in TABLE.detect(tool, tool_input):
        assert obs["polarity"] in ("helpful", "harmful") and obs["change"] in ("added", "removed")
        assert obs["count"] >= 1 and obs["language"] == cp.language_of(name)
        if obs["change"] == "added":
            assert 1 <= obs["line"] <= text.count("\n") + 1
