"""When the store cannot take a hook's record (locked too long, read-only, corrupt, missing
directory), the record is appended here as one JSON line and replayed later: nothing is lost.

Files are claimed by an atomic rename before replay, so two replayers never apply the same file.
"""

import json
import os
import time

from .. import log, paths

CLAIM_STALE_SECONDS = 600


def append(record: dict) -> bool:
    """Append one record; False when even the spool cannot be written (e.g. disk full)."""
    try:
        directory = paths.ensure_private_dir(paths.spool_dir())
        name = time.strftime("%Y%m%d", time.gmtime()) + f"-{os.getpid()}.jsonl"
        line = (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one write of one line: concurrent appenders don't interleave
        finally:
            os.close(fd)
        return True
    except OSError as exc:
        log.error("spool", f"cannot spool a {record.get('event')} record: {exc}")
        return False


def pending_files() -> list[str]:
    directory = paths.spool_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    now = time.time()
    found = []
    for name in sorted(names):
        path = os.path.join(directory, name)
        if name.endswith(".jsonl"):
            found.append(path)
        elif ".claimed-" in name:
            try:  # a replayer that died mid-way leaves its claim; take it over when stale
                if now - os.path.getmtime(path) > CLAIM_STALE_SECONDS:
                    found.append(path)
            except OSError:
                pass
    return found


def count_pending() -> int:
    total = 0
    for path in pending_files():
        try:
            with open(path, "rb") as fh:
                total += sum(1 for _ in fh)
        except OSError:
            pass
    return total


def replay(store) -> int:
    """Apply every spooled record to `store`; returns how many were applied."""
    applied = 0
    for path in pending_files():
        original = path.split(".claimed-")[0]
        claimed = f"{original}.claimed-{os.getpid()}"
        try:
            os.replace(path, claimed)
        except OSError:
            continue  # another process claimed it first
        records = []
        try:
            with open(claimed, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    try:
                        record = json.loads(line)
                        if isinstance(record, dict) and "event" in record and "at" in record:
                            records.append(record)
                            continue
                    except ValueError:
                        pass
                    log.warning("spool", f"{claimed}:{number}: unreadable record skipped")
            store.apply_many(records)
        except Exception as exc:
            log.error("spool", f"replay of {claimed} failed, kept for later: {exc}")
            try:
                os.replace(claimed, original)
            except OSError:
                pass
            raise
        os.unlink(claimed)
        applied += len(records)
    return applied
