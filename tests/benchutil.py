"""What the bench tests may say of a measured time: that it was reported, as a number. How long it
was is the bench's to judge against its budget (bench/*.py print ok or not themselves): a test that
compares times fails on a busy machine, and says nothing about the code. And how they load a bench
or script (not a package module) to check its parts: `script_module`; and a transcript of the
corpus, which the repository stores gzip-compressed: `corpus_transcript`."""

import gzip
import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "bench" / "corpus" / "trajectories"


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


def corpus_transcript(name: str, into: Path) -> Path:
    """The corpus session `name` (bench/corpus/trajectories/<name>.jsonl, stored as .jsonl.gz) as a plain
    file under `into` (the test's own directory, never the source tree); skips when the corpus is absent."""
    packed = CORPUS / f"{name}.jsonl.gz"
    if not packed.is_file():
        pytest.skip(f"the corpus session {name} is not in this checkout (bench/corpus/trajectories)")
    into.mkdir(parents=True, exist_ok=True)
    plain = into / f"{name}.jsonl"
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    return plain
