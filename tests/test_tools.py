"""The tool table's readers: which (old, new) texts an edit call carries, for every edit tool."""

import pytest

from ace_engine.capture.tools import edit_pairs


@pytest.mark.parametrize("tool, data, expected", [
    ("Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, [("x = 1", "x = 2")]),
    ("Edit", {"file_path": "a.py", "old_string": "import os\n"}, [("import os\n", "")]),
    ("Edit", {"file_path": "a.py"}, []),
    ("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}, "junk",
                                                  {"old_string": "c", "new_string": ""}]}, [("a", "b"), ("c", "")]),
    ("MultiEdit", {"file_path": "a.py", "edits": "not a list"}, []),
    ("Write", {"file_path": "a.py", "content": "print(1)\n"}, [("", "print(1)\n")]),
    ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x = 1"}, [("", "x = 1")]),
    ("Read", {"file_path": "a.py"}, []),
    ("Bash", {"command": "ls"}, []),
    ("Edit", "capped JSON text", []),
    (None, {"old_string": "a", "new_string": "b"}, []),
])
def test_edit_pairs(tool, data, expected):
    assert edit_pairs(tool, data) == expected
