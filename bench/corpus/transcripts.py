#!/usr/bin/env python3
"""The corpus's committed transcripts are stored gzip-compressed; readers get the plain files.

    python3 bench/corpus/transcripts.py            # unpack every stale transcript (what the shared scorer needs first)
    python3 bench/corpus/transcripts.py --check    # every .gz unpacks to the blob gold.json records, nothing written
    python3 bench/corpus/transcripts.py --pack     # compress plain transcripts that have no .gz yet (adding sessions)

Contract. In git, `trajectories/<id>.jsonl.gz` (and `trajectories/<id>/subagents/*.jsonl.gz`) hold the
transcripts byte for byte; gold.json names the plain path (`trajectories/<id>.jsonl`), which is what
`ace learn --transcript` and every scorer read. `unpack()` and `readable(path)` write each plain file
beside its .gz (git-ignored) when it is missing or older than the .gz, atomically (a temporary file
renamed: concurrent readers see the old file or the whole new one); every bench loader of the corpus
calls one of them first, so the compression is invisible to them. `pack()` compresses deterministically (level 9,
mtime 0, no file name), so packing the same transcript again gives the same bytes and no diff.

Cost. A stat per file when nothing is stale; the first unpack of the whole corpus decompresses ~80 MB
(about a second). Stdlib only; nothing read is executed.
"""
from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUFFIX = ".gz"


def compressed(corpus: str = HERE) -> list[str]:
    """Every stored transcript (.jsonl.gz) under the corpus's trajectories/, sorted."""
    return sorted(glob.glob(os.path.join(corpus, "trajectories", "**", "*.jsonl" + SUFFIX), recursive=True))


def _write_atomically(path: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".unpack-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _stale(plain: str, packed: str) -> bool:
    try:
        return os.stat(plain).st_mtime < os.stat(packed).st_mtime
    except FileNotFoundError:
        return True


def unpack_file(packed: str) -> str:
    """The plain file of one .jsonl.gz, written beside it when missing or stale; its path."""
    plain = packed[: -len(SUFFIX)]
    if _stale(plain, packed):
        with open(packed, "rb") as fh:
            _write_atomically(plain, gzip.decompress(fh.read()))
    return plain


def unpack(corpus: str = HERE) -> int:
    """Make every stored transcript of `corpus` readable as its plain file; how many were written."""
    written = 0
    for packed in compressed(corpus):
        if _stale(packed[: -len(SUFFIX)], packed):
            unpack_file(packed)
            written += 1
    return written


def readable(path: str) -> str | None:
    """`path` (a plain transcript of the corpus) readable: as it is, or unpacked from its .gz (with the
    session's subagents beside it); None when neither exists."""
    packed = path + SUFFIX
    if os.path.isfile(packed):
        unpack_file(packed)
        for sub in sorted(glob.glob(os.path.join(os.path.splitext(path)[0], "subagents", "*.jsonl" + SUFFIX))):
            unpack_file(sub)
        return path
    return path if os.path.isfile(path) else None


def pack(corpus: str = HERE) -> int:
    """Compress every plain transcript under trajectories/ that has no .gz yet; how many."""
    made = 0
    for plain in sorted(glob.glob(os.path.join(corpus, "trajectories", "**", "*.jsonl"), recursive=True)):
        if os.path.exists(plain + SUFFIX):
            continue
        with open(plain, "rb") as fh:
            data = fh.read()
        _write_atomically(plain + SUFFIX, gzip.compress(data, compresslevel=9, mtime=0))
        os.utime(plain)  # the plain copy stays fresh: not rewritten by the next unpack
        made += 1
    return made


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check(corpus: str = HERE) -> list[str]:
    """Problems: a stored transcript that does not unpack to the blob id gold.json records for it, a
    committed session with no stored file, a stored file gold.json does not name."""
    with open(os.path.join(corpus, "gold.json"), encoding="utf-8") as fh:
        gold = json.load(fh)
    want: dict[str, str] = {}
    for traj in gold["trajectories"]:
        if not traj["file"].startswith("trajectories/"):
            continue
        want[traj["file"]] = traj["source"]["blob"]
        stem = os.path.splitext(traj["file"])[0]
        for sub in traj["source"].get("subagents") or []:
            want[os.path.join(stem, "subagents", os.path.basename(sub["path"]))] = sub["blob"]
    problems = []
    stored = {os.path.relpath(p, corpus)[: -len(SUFFIX)]: p for p in compressed(corpus)}
    for rel, blob in sorted(want.items()):
        if rel not in stored:
            problems.append(f"{rel}{SUFFIX} is missing")
            continue
        with open(stored[rel], "rb") as fh:
            if _blob_id(gzip.decompress(fh.read())) != blob:
                problems.append(f"{rel}{SUFFIX} does not unpack to blob {blob}")
    problems += [f"{rel}{SUFFIX} is not in gold.json" for rel in sorted(set(stored) - set(want))]
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=HERE, help="the corpus folder (gold.json + trajectories/)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="verify the stored transcripts, write nothing")
    mode.add_argument("--pack", action="store_true", help="compress plain transcripts that have no .gz")
    args = ap.parse_args(argv)
    if args.check:
        problems = check(args.corpus)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(compressed(args.corpus))} stored transcripts, {len(problems)} problems")
        return 1 if problems else 0
    if args.pack:
        print(f"packed {pack(args.corpus)}")
        return 0
    print(f"unpacked {unpack(args.corpus)} of {len(compressed(args.corpus))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
