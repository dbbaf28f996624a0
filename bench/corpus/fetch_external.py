#!/usr/bin/env python3
"""Rebuild or verify the grown learning corpus's transcripts from repository snapshots.

    python3 bench/corpus/fetch_external.py [--mirror-root DIR] [--check] [--only ID ...]

Contract. `bench/corpus/gold.json` records, for every session, where its transcript came from: the
public repository, the checkpoint ref and path, and the git blob id of `full.jsonl` (and of each subagent
transcript). Sessions whose licence allows copying live in `trajectories/` (committed, stored
gzip-compressed: `transcripts.py`); the others live in `external/` (git-ignored) and are rebuilt here
from a bare snapshot of their repository
(`<mirror-root>/<owner>+<name>/repo`, as the workplace's `fetch` brings it), taking the blob by its
id, so what is rebuilt is byte-for-byte what the gold was written from. `--check` rebuilds nothing
and verifies every file present against its recorded blob id. Nothing read is executed; only
`git cat-file` runs, on the snapshot.

Cost. One `git cat-file` per missing file; seconds for the whole corpus. Stdlib only.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def wanted_files(traj: dict) -> list[tuple[str, str, str]]:
    """(path under the corpus, blob id, path in the source tree) for a session's transcript and subagents."""
    src = traj["source"]
    stem = os.path.splitext(traj["file"])[0]
    out = [(traj["file"], src["blob"], traj["source_path"])]
    for sub in src.get("subagents") or []:
        out.append((os.path.join(stem, "subagents", os.path.basename(sub["path"])), sub["blob"], sub["path"]))
    return out


def cat_blob(gitdir: str, blob: str) -> bytes | None:
    """The blob's bytes from a bare snapshot, or None when the snapshot lacks it."""
    proc = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "blob", blob], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Default: the snapshots folder beside the checkout (<checkout>/../.mirror).
    beside = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".mirror"))
    ap.add_argument("--mirror-root", default=os.environ.get("ACE_CORPUS_MIRRORS") or beside,
                    help="folder holding <owner>+<name>/repo bare snapshots")
    ap.add_argument("--check", action="store_true", help="verify present files, rebuild nothing")
    ap.add_argument("--only", nargs="*", help="only these session ids")
    args = ap.parse_args(argv)
    gold = json.load(open(os.path.join(HERE, "gold.json"), encoding="utf-8"))
    bad = missing = made = 0
    for traj in gold["trajectories"]:
        if args.only and traj["id"] not in args.only:
            continue
        gitdir = os.path.join(args.mirror_root, traj["repo"].replace("/", "+", 1), "repo")
        for rel, blob, _ in wanted_files(traj):
            path = os.path.join(HERE, rel)
            # A committed transcript is stored compressed (transcripts.py): what it unpacks to is checked.
            packed = path + ".gz"
            stored = packed if os.path.isfile(packed) else path if os.path.isfile(path) else None
            if stored:
                with open(stored, "rb") as fh:
                    data = gzip.decompress(fh.read()) if stored == packed else fh.read()
                if blob_id(data) != blob:
                    print(f"{traj['id']}: {rel} differs from blob {blob}", file=sys.stderr)
                    bad += 1
                continue
            if args.check or not traj["file"].startswith("external/"):
                print(f"{traj['id']}: {rel} is missing", file=sys.stderr)
                missing += 1
                continue
            data = cat_blob(gitdir, blob) if os.path.isdir(gitdir) else None
            if data is None or blob_id(data) != blob:
                print(f"{traj['id']}: blob {blob} not found in {gitdir}; fetch github:{traj['repo']} first",
                      file=sys.stderr)
                missing += 1
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            made += 1
    print(f"rebuilt {made}, missing {missing}, differing {bad}")
    return 1 if (bad or missing) else 0


if __name__ == "__main__":
    sys.exit(main())
