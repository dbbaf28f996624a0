"""What the bench tests may say of a measured time: that it was reported, as a number. How long it
was is the bench's to judge against its budget (bench/*.py print ok or not themselves): a test that
compares times fails on a busy machine, and says nothing about the code. And how they load a bench
or script (not a package module) to check its parts: `script_module`."""

import importlib.util
import math
from pathlib import Path
from types import ModuleType


def a_duration(value) -> bool:
    """A measured time (or a budget): a finite, non-negative number, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def script_module(path: str | Path, name: str) -> ModuleType:
    """The file at `path` (a bench/ or scripts/ program) imported as module `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
