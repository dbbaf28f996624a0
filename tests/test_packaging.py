"""The packages ship the product: `python -m build` of the working tree (the sdist, then the wheel
built from that sdist, as a user's `pip install` of the sdist would) gives a wheel under 15 MB with
no file of the bench in it, and an sdist with the package, its tests and their fixtures but none of
the bench's corpus, data or results (other people's transcripts, tens of MB; they stay in the
repository). The selection is pyproject.toml's `[tool.hatch.build.targets.sdist]`.

Marked `slow`: one real build, 5-20 s. `--no-isolation`: the backend (hatchling) comes from the
`test` extra, not from the package index.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build", reason="the packaging test needs `build` (the `test` extra)")
pytest.importorskip("hatchling", reason="the packaging test needs `hatchling`, the build backend (the `test` extra)")

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
WHEEL_LIMIT = 15 * 1024 * 1024
BENCH_DATA = ("bench/corpus/", "bench/data/", "bench/results/")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    wheel, = out.glob("ace_engine-*.whl")
    sdist, = out.glob("ace_engine-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def tracked(*paths: str) -> set[str]:
    return set(subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", *paths], capture_output=True, text=True,
                              check=True).stdout.split("\0")) - {""}


def sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as tar:
        # Every member sits under `ace_engine-<version>/`.
        return {m.name.partition("/")[2] for m in tar.getmembers() if m.isfile()}


def test_the_wheel_is_small_and_carries_no_bench_file(dist):
    size = dist["wheel"].stat().st_size
    assert size < WHEEL_LIMIT, f"the wheel is {size / 1e6:.1f} MB"
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = wheel.namelist()
    assert not [n for n in names if n.startswith("bench/") or "/bench/" in n]
    assert {n.split("/")[0] for n in names} == {"ace_engine", f"{dist['wheel'].name.split('-py3')[0]}.dist-info"}


def test_the_sdist_has_the_product_and_its_tests_but_not_the_corpus(dist):
    names = sdist_names(dist["sdist"])
    assert not [n for n in names if n.startswith(BENCH_DATA)], sorted(n for n in names if n.startswith(BENCH_DATA))[:5]
    # Complete where it must be: the package (the wheel is built from this sdist), the tests and their
    # fixtures, the plugin's hooks.
    missing = tracked("src", "tests", "hooks", ".claude-plugin", "pyproject.toml") - names
    assert not missing, sorted(missing)[:10]
    assert tracked("bench/corpus"), "the corpus is in the repository (so the exclusion above means something)"
