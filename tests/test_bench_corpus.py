"""The corpus's transcripts are committed gzip-compressed (bench/corpus/transcripts.py): each stored file
unpacks to the very blob gold.json records for it, none is committed plain, and the loaders' unpacking
writes a plain file beside its .gz when it is missing or stale, and only then.

Cost: decompresses and hashes the committed transcripts once (~80 MB): about a second.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

from benchutil import script_module

ROOT = Path(__file__).resolve().parent.parent
transcripts = script_module(ROOT / "bench" / "corpus" / "transcripts.py", "corpus_transcripts")


def test_every_stored_transcript_unpacks_to_its_recorded_blob():
    stored = transcripts.compressed()
    assert len(stored) > 100, "the corpus's transcripts are in the repository"
    assert transcripts.check() == []


def test_no_transcript_is_committed_plain():
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "bench/corpus/trajectories"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert tracked and all(name.endswith(".jsonl.gz") for name in tracked), [n for n in tracked if not n.endswith(".gz")]


def _corpus(tmp_path: Path, text: bytes) -> Path:
    (tmp_path / "trajectories" / "s1" / "subagents").mkdir(parents=True)
    (tmp_path / "trajectories" / "s1.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))
    (tmp_path / "trajectories" / "s1" / "subagents" / "agent-a.jsonl.gz").write_bytes(gzip.compress(b"{}\n", mtime=0))
    return tmp_path


def test_unpack_writes_each_plain_file_once_and_again_when_its_gz_is_newer(tmp_path):
    corpus = _corpus(tmp_path, b'{"type": "user"}\n')
    plain = corpus / "trajectories" / "s1.jsonl"
    assert transcripts.unpack(str(corpus)) == 2
    assert plain.read_bytes() == b'{"type": "user"}\n'
    assert (corpus / "trajectories" / "s1" / "subagents" / "agent-a.jsonl").read_bytes() == b"{}\n"
    assert transcripts.unpack(str(corpus)) == 0  # fresh: nothing rewritten
    packed = corpus / "trajectories" / "s1.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"type": "assistant"}\n', mtime=0))
    later = plain.stat().st_mtime + 10
    os.utime(packed, (later, later))  # a checkout that changed the stored file
    assert transcripts.unpack(str(corpus)) == 1
    assert plain.read_bytes() == b'{"type": "assistant"}\n'
    assert not list(corpus.rglob(".unpack-*"))


def test_readable_unpacks_a_session_with_its_subagents_and_knows_a_missing_one(tmp_path):
    corpus = _corpus(tmp_path, b'{"type": "user"}\n')
    path = str(corpus / "trajectories" / "s1.jsonl")
    assert transcripts.readable(path) == path
    assert (corpus / "trajectories" / "s1" / "subagents" / "agent-a.jsonl").is_file()
    assert transcripts.readable(str(corpus / "trajectories" / "nope.jsonl")) is None


def test_pack_is_deterministic_and_check_names_what_is_wrong(tmp_path):
    text = b'{"type": "user", "message": {"content": "hi"}}\n'
    (tmp_path / "trajectories").mkdir()
    (tmp_path / "trajectories" / "s1.jsonl").write_bytes(text)
    blob = transcripts._blob_id(text)
    gold = {"trajectories": [{"id": "s1", "file": "trajectories/s1.jsonl", "source": {"blob": blob}},
                             {"id": "s2", "file": "trajectories/s2.jsonl", "source": {"blob": blob}}]}
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    assert transcripts.pack(str(tmp_path)) == 1
    first = (tmp_path / "trajectories" / "s1.jsonl.gz").read_bytes()
    (tmp_path / "trajectories" / "s1.jsonl.gz").unlink()
    transcripts.pack(str(tmp_path))
    assert (tmp_path / "trajectories" / "s1.jsonl.gz").read_bytes() == first  # same bytes: no diff on a re-pack
    assert transcripts.check(str(tmp_path)) == ["trajectories/s2.jsonl.gz is missing"]
    (tmp_path / "trajectories" / "s1.jsonl.gz").write_bytes(gzip.compress(text + b"x", mtime=0))
    assert "does not unpack to blob" in transcripts.check(str(tmp_path))[0]
