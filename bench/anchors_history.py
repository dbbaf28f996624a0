"""Anchors on real repositories' histories: lessons written at a session's date, checked at later commits.

    python bench/anchors_history.py [--mirrors DIR] [--out bench/results/anchors_history.json]
                                    [--judged bench/results/anchors_judged.json]

For every corpus session (bench/corpus/gold.json) whose repository snapshot is at hand (a bare
mirror `<owner>+<name>/repo` under --mirrors, `$ACE_CORPUS_MIRRORS`, default ../.mirror beside
the checkout; the `fetch` tool makes them), its gold lessons — what a careful engineer wrote
down after the session — are taken as lessons learned that day: their anchors are found
(`playbook/anchors.extract`) in the tree of the default branch's last commit before the session,
then judged (`playbook/staleness.judge`, what the SessionStart check does) in the tree of the
snapshot's last commit. Reported: lessons, lessons with anchors the files decide, lessons whose
anchors are gone (archived), changed (to re-check: caveat or withheld, `inject.recheck`) or only
grew (recheck: shown as they are), by kind, and what each `inject.recheck` mode would do to the
judged ones (true lessons withheld vs wrong ones shown with a caveat). `--judged` is a hand
judgment of flagged lessons ({lesson id: {"verdict": "wrong" | "still true", "why"}}): the share
still true among those flagged is the false-stale rate.

Cost: one `git archive` of each distinct commit (kept until its repository is done); no network.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from ace_engine.playbook import anchors, staleness  # noqa: E402


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True,
                          check=False).stdout.strip()


def export(git_dir: str, commit: str, into: str, missing: set) -> str:
    """The tree of `commit` as files under `into` (regular files only, symlinks left out). A blob the
    snapshot lacks (its largest files may be absent) is written empty and its path added to `missing`:
    anchors in it are not judged (`git archive` stops at the first such blob, leaving half a tree)."""
    path = os.path.join(into, commit[:12])
    if os.path.isdir(path):
        return path
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit], capture_output=True,
                             check=True).stdout.split(b"\0")
    blobs = []
    for entry in listing:
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            blobs.append((sha.decode(), name.decode("utf-8", "replace")))
    batch = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"], capture_output=True, check=False,
                           input="".join(f"{sha}\n" for sha, _ in blobs).encode()).stdout
    at = 0
    for _sha, name in blobs:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        data = b""
        if len(header) == 3:
            size = int(header[2])
            data, at = batch[at:at + size], at + size + 1
        else:
            missing.add(name)
        target = os.path.join(path, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = os.environ.get("ACE_CORPUS_MIRRORS") or os.path.join(os.path.dirname(os.path.dirname(HERE)), ".mirror")
    parser.add_argument("--mirrors", default=default)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "anchors_history.json"))
    parser.add_argument("--judged", default=os.path.join(HERE, "results", "anchors_judged.json"))
    args = parser.parse_args()
    gold = json.load(open(os.path.join(HERE, "corpus", "gold.json"), encoding="utf-8"))
    by_repo: dict[str, list[dict]] = collections.defaultdict(list)
    for t in gold["trajectories"]:
        if t.get("lessons") and (t.get("source") or {}).get("created_at"):
            by_repo[t["repo"]].append(t)
    rows, missing = [], []
    for repo, sessions in sorted(by_repo.items()):
        git_dir = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
        if not os.path.isdir(git_dir):
            missing.append(repo)
            continue
        end = git(git_dir, "rev-parse", "HEAD")
        end_date = git(git_dir, "log", "-1", "--format=%cI", end)
        with tempfile.TemporaryDirectory(prefix="ace-anchors-") as tmp:
            absent: set = set()
            later = export(git_dir, end, tmp, absent)
            for t in sorted(sessions, key=lambda s: s["source"]["created_at"]):
                start = git(git_dir, "rev-list", "-1", f"--before={t['source']['created_at']}", end)
                if not start:
                    continue
                tree = export(git_dir, start, tmp, absent)
                commits = int(git(git_dir, "rev-list", "--count", f"{start}..{end}") or 0)
                reader = anchors.Reader(later)
                for lesson in t["lessons"]:
                    found = anchors.extract(lesson["lesson"], tree)
                    judged = []
                    for a in found:
                        if a["kind"] == "command" or a["file"] in absent:
                            judged.append({**a, "state": "unchecked", "detail": None})
                            continue  # a command is judged by sessions; an absent blob by nobody
                        state, detail = staleness.judge(a, reader.value(a["kind"], a["name"], a["file"]))
                        judged.append({**a, "state": state, "detail": detail, "now": reader.value(
                            a["kind"], a["name"], a["file"])})
                    states = {a["state"] for a in judged}
                    rows.append({"lesson_id": lesson["id"], "repo": repo, "session": t["id"], "split": t["split"],
                                 "lesson": lesson["lesson"], "start": start[:12], "end": end[:12],
                                 "end_date": end_date, "commits_after": commits,
                                 "verdict": "gone" if "gone" in states else "changed" if "changed" in states
                                 else "recheck" if "recheck" in states else "ok" if states - {"unchecked"}
                                 else "none", "anchors": judged})
    judged = json.load(open(args.judged, encoding="utf-8")) if os.path.exists(args.judged) else {}
    report = summarize(rows, judged)
    report["repositories_missing"] = missing
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"summary": report, "lessons": rows}, fh, indent=1, ensure_ascii=False)
    print(json.dumps(report, indent=1))


def summarize(rows: list[dict], judged: dict) -> dict:
    verdicts = collections.Counter(r["verdict"] for r in rows)
    kinds = collections.Counter(a["kind"] for r in rows for a in r["anchors"])
    moved = collections.Counter(f"{a['kind']}:{a['state']}" for r in rows for a in r["anchors"]
                                if a["state"] in ("gone", "changed", "recheck"))
    flagged = [r for r in rows if r["verdict"] in ("gone", "changed", "recheck")]
    seen = [r for r in flagged if judged.get(r["lesson_id"], {}).get("verdict") in ("wrong", "still true")]
    wrong = [r for r in seen if judged[r["lesson_id"]]["verdict"] == "wrong"]
    by = {v: [r for r in seen if r["verdict"] == v] for v in ("gone", "changed", "recheck")}

    def count(verdict: str, truth: str) -> int:
        return sum(1 for r in by[verdict] if (judged[r["lesson_id"]]["verdict"] == "wrong") == (truth == "wrong"))

    return {
        "sessions": len({r["session"] for r in rows}), "lessons": len(rows),
        "repositories": len({r["repo"] for r in rows}),
        "lessons_with_file_anchors": sum(1 for r in rows if r["verdict"] != "none"),
        "lessons_with_any_anchor": sum(1 for r in rows if r["anchors"]),
        "verdicts": dict(verdicts), "anchors_by_kind": dict(kinds), "anchors_moved": dict(moved),
        "flagged": len(flagged), "flagged_judged": len(seen), "flagged_wrong": len(wrong),
        "false_stale_rate": round(1 - len(wrong) / len(seen), 3) if seen else None,
        # hidden from the agent although still true: archived (gone), and withheld under inject.recheck = withhold
        "hidden_still_true": {"archived": count("gone", "true"), "withheld_if_withhold": count("changed", "true")},
        "false_stale_by_verdict": {v: (round(sum(1 for r in rs if judged[r["lesson_id"]]["verdict"] != "wrong")
                                             / len(rs), 3) if rs else None, len(rs)) for v, rs in by.items()},
        # inject.recheck: a lesson whose anchor changed is withheld (demoted) or shown with a caveat; one
        # whose anchor only grew (recheck) is shown as it is either way.
        "recheck_modes": {
            "withhold": {"true_lessons_withheld": count("changed", "true"),
                         "wrong_lessons_withheld": count("changed", "wrong")},
            "caveat": {"wrong_lessons_shown_with_caveat": count("changed", "wrong"),
                       "true_lessons_shown_with_caveat": count("changed", "true")},
            "grown_shown_plain": {"true": count("recheck", "true"), "wrong": count("recheck", "wrong")},
        },
    }


if __name__ == "__main__":
    main()
