"""The activation rule of a model's lessons, studied on kept stores: recall / precision / noise per setting.

    python bench/llm/activation.py KEEP_DIR [KEEP_DIR ...] [--split tune] [--cv] [--out bench/results/llm-activation.json]

Contract. KEEP_DIR is what `bench/llm/score.py --keep` left: one folder per session with its
`acehome/ace.db`. Several KEEP_DIRs (the same sessions learned from independent answer sets of the
same prompts) are pooled: each session counts once per set, its gold too, and a repository left out
is left out of every set. Every learned lesson of every status except quarantined (held by provenance, which
this rule does not decide) is read with what the curator knew when it chose its status: kind (`llm` or
an offline rule), the model's grade, whether it confirmed an offline candidate (`agrees`), whether its
steps were strong evidence, whether it is a pitfall whose cited steps show the failure (`pitfall`), what
the model said shows it (`basis`) and how often it recurs (`recurs`). For each setting of the rule — a
model's lesson is active when its grade ≥ T, or it is a pitfall graded ≥ T − margin, or its basis is the
user's words or a fixed failure and it is graded ≥ T − basis margin, or it agrees (with/without), or its
evidence is strong; with `rarely_waits`, one the model says recurs rarely is not active at once; with
`read_waits`, nor is one the model says only the repository's files or a command's output show (`basis`
"read": nothing failed, nobody said it); with `lost_strong`, one it says the agent lost steps to (`basis`
"lost", prompt 12-04.2 on) has the basis margin of the user's words and a fixed failure; with `scope_waits`, one
the model says only a session redoing this task needs (`scope` "task", prompt 12-07.1 on), or also one it says a
later change to the same code needs ("code"), waits; other lessons keep
their own rule — it counts the gold lessons matched by an active lesson (recall), the share of active lessons that match a gold lesson of their
session (precision), and the active lessons per session that match none (noise). A lesson merged into
another at learning time is read as the survivor; the study re-decides statuses on the stored lessons,
so merges the rule would have made differently are not replayed (the scorer's run of the chosen default
is the figure of record).

The rule (`chosen`) is the row with the most recall whose precision, less `guard` standard errors, stays
≥ 0.5; among equals, the strictest. With `--cv` the guard is chosen too (`cross_validated`, `guard_of`):
for each guard of `GUARDS`, leave one repository out, choose the rule on the others and count it on the
one left out; the guard kept has the most recall left out whose precision there stays ≥ 0.5 (among
equals, the most standard errors) — how the rule does on a repository it never saw, which is what the
held-out split asks of it.

Writes the rows (`--out`, with the folds and the guard) that tests/test_learning_activation.py keeps
with the default. Stdlib only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sqlite3
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from learning_quality import load_scorer  # noqa: E402

THRESHOLDS = (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.01)
MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35)
BASIS_MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 1.01)
STRONG_BASES = ("user", "fixed")
GUARDS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)  # standard errors of tune precision the rule keeps above 0.5


def lessons(keeps: list[str], split: str, scorer: Any) -> tuple[list[dict[str, Any]], dict[str, int]]:
    with open(os.path.join(ROOT, "bench", "corpus", "gold.json"), encoding="utf-8") as fh:
        gold = {t["id"]: t for t in json.load(fh)["trajectories"] if t["split"] == split}
    rows, golds = [], {}
    for n, keep in enumerate(keeps):
        for sid, traj in gold.items():
            session = sid if len(keeps) == 1 else f"{sid}#{n}"  # `repository` reads the id's head, kept
            _read(os.path.join(keep, sid, "acehome", "ace.db"), session, traj, scorer, rows)
            golds[session] = len(traj.get("lessons") or [])
    return rows, golds


def _read(db: str, sid: str, traj: dict[str, Any], scorer: Any, rows: list[dict[str, Any]]) -> None:
    """Every stored lesson of one session's store, with what the curator knew when it chose its status."""
    if not os.path.exists(db):
        return
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for content, status, prov in con.execute("SELECT content, status, provenance FROM bullets"):
        p = json.loads(prov or "{}")
        rows.append({"session": sid, "status": status, "kind": p.get("kind"),
                     "grade": p.get("confidence"), "agrees": bool(p.get("agrees")),
                     "strong": bool(p.get("strong_sessions")), "pitfall": bool(p.get("pitfall")),
                     "basis": p.get("basis"), "recurs": p.get("recurs"), "scope": p.get("scope"),
                     "matches": [g["id"] for g in traj.get("lessons") or [] if scorer.matches(content,
                                                                                              g.get("must_any"))]})
    con.close()


Setting = tuple[bool, float, float, float, bool, bool, bool, str]
# Which scopes the model names wait (prompt 12-07.1 on): none, "task", or "task" and "code" (a rule of the
# code a later change must keep: shown to a session that may never touch that code).
SCOPE_HOLDS = ("", "task", "task+code")


def settings() -> list[Setting]:
    """(agrees counts, threshold, pitfall margin, basis margin, rarely waits, read waits, lost counts with
    the user's words and a fixed failure, the scopes that wait): the grade grid with and without agreement, then the
    basis, recurrence and scope dimensions, agreement not counted."""
    grid: list[Setting] = [(agrees, t, m, 0.0, False, False, False, "")
                           for agrees, t, m in itertools.product((True, False), THRESHOLDS, MARGINS)]
    grid += [(False, t, m, b, rare, read, lost, held) for t, m, b, rare, read, lost, held in itertools.product(
        THRESHOLDS, MARGINS, BASIS_MARGINS, (False, True), (False, True), (False, True), SCOPE_HOLDS)
        if (b or rare or read or held) and (b or not lost)]
    return grid


def live(r: dict[str, Any], setting: Setting) -> bool:
    """Would this stored lesson be active at once under that setting?"""
    agrees, t, margin, basis_margin, rarely_waits, read_waits, lost_strong, held_scopes = setting
    if r["kind"] != "llm":
        return r["status"] == "active"
    g = r["grade"]
    held = (rarely_waits and r.get("recurs") == "rarely") or (read_waits and r.get("basis") == "read") \
        or (bool(held_scopes) and r.get("scope") in held_scopes.split("+"))
    if held and not r["strong"]:
        return False
    strong_bases = STRONG_BASES + (("lost",) if lost_strong else ())
    floor = t - max(margin if r["pitfall"] else 0.0, basis_margin if r.get("basis") in strong_bases else 0.0)
    return r["strong"] or (agrees and r["agrees"]) or (g is not None and g >= floor - 1e-9)


def study(rows: list[dict[str, Any]], golds: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    total_gold = sum(golds.values())
    for setting in settings():
        agrees, t, margin, basis_margin, rarely_waits, read_waits, lost_strong, held_scopes = setting
        active = [r for r in rows if r["status"] != "quarantined" and live(r, setting)]
        found = {(r["session"], m) for r in active for m in r["matches"]}
        good = sum(1 for r in active if r["matches"])
        out.append({"threshold": t, "pitfall_margin": margin, "agrees_counts": agrees, "basis_margin": basis_margin,
                    "rarely_waits": rarely_waits, "read_waits": read_waits, "lost_strong": lost_strong,
                    "scope_waits": held_scopes,
                    "active": len(active),
                    "recall": round(len(found) / total_gold, 3) if total_gold else 0.0,
                    "precision": round(good / len(active), 3) if active else 0.0,
                    "noise_per_session": round((len(active) - good) / max(1, len(golds)), 2)})
    return out


def chosen(table: list[dict[str, Any]], k: float = 1.0) -> dict[str, Any] | None:
    """The written rule: the row with the most recall whose precision, less `k` standard errors, is
    still ≥ 0.5; among equals the strictest (the highest threshold, the smallest margins, no extra
    signal counted). tests/test_learning_activation.py applies it to the kept study with k = `GUARD`."""
    def holds(row: dict[str, Any]) -> bool:
        p, n = row["precision"], row["active"]
        return n > 0 and p - k * math.sqrt(p * (1 - p) / n) >= 0.5
    fitting = [r for r in table if holds(r)]
    if not fitting:
        return None
    return max(fitting, key=lambda r: (r["recall"], r["threshold"], -r["pitfall_margin"], -r["basis_margin"],
                                       not r["agrees_counts"], not r["rarely_waits"], not r["read_waits"],
                                       not r["lost_strong"], -len(r.get("scope_waits") or "")))


def setting_of(row: dict[str, Any]) -> Setting:
    return (row["agrees_counts"], row["threshold"], row["pitfall_margin"], row["basis_margin"], row["rarely_waits"],
            row["read_waits"], row["lost_strong"], str(row.get("scope_waits") or ""))


def repository(session: str) -> str:
    return session.split("-", 1)[0]


def cross_validated(rows: list[dict[str, Any]], golds: dict[str, int], guards: tuple[float, ...]) -> list[dict[str, Any]]:
    """How the rule with each guard does on repositories it was not chosen on: leave one repository out,
    choose on the others, count the left-out one's active lessons, matches and gold; summed over folds."""
    sums = {k: [0, 0, 0] for k in guards}  # active, good, found
    gold = 0
    for repo in sorted({repository(s) for s in golds}):
        table = study([r for r in rows if repository(r["session"]) != repo],
                      {s: n for s, n in golds.items() if repository(s) != repo})
        test = [r for r in rows if repository(r["session"]) == repo and r["status"] != "quarantined"]
        gold += sum(n for s, n in golds.items() if repository(s) == repo)
        for k in guards:
            row = chosen(table, k)
            live_rows = [r for r in test if live(r, setting_of(row))] if row else []
            sums[k][0] += len(live_rows)
            sums[k][1] += sum(1 for r in live_rows if r["matches"])
            sums[k][2] += len({(r["session"], m) for r in live_rows for m in r["matches"]})
    return [{"guard": k, "active": a, "precision": round(g / a, 3) if a else 0.0,
             "recall": round(f / gold, 3) if gold else 0.0} for k, (a, g, f) in sums.items()]


def guard_of(folds: list[dict[str, Any]]) -> float:
    """The guard the rule keeps: the most recall on the repositories left out whose precision there is
    still ≥ 0.5; among equals the strictest (the most standard errors)."""
    fitting = [f for f in folds if f["precision"] >= 0.5] or folds
    return max(fitting, key=lambda f: (f["recall"], f["guard"]))["guard"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("keep", nargs="+")
    ap.add_argument("--split", default="tune")
    ap.add_argument("--out")
    ap.add_argument("--cv", action="store_true", help="also: the rule under each guard, repository left out")
    args = ap.parse_args(argv)
    scorer, _ = load_scorer()
    rows, golds = lessons(args.keep, args.split, scorer)
    table = study(rows, golds)
    folds = cross_validated(rows, golds, GUARDS) if args.cv else []
    for fold in folds:
        print(json.dumps({"cross_validated": fold}), file=sys.stderr)
    for row in table:
        print(json.dumps(row))
    if args.out:
        head: dict[str, Any] = {"split": args.split, "sessions": len(golds), "gold_lessons": sum(golds.values()),
                                "answer_sets": len(args.keep)}
        if folds:
            head.update(cross_validated=folds, guard=guard_of(folds))
        with open(args.out, "w", encoding="utf-8") as fh:  # a row a line, compact: thousands of settings
            fh.write(json.dumps(head)[:-1] + ', "rows": [\n')
            fh.write(",\n".join(json.dumps(row, separators=(",", ":")) for row in table) + "\n]}\n")


if __name__ == "__main__":
    main()
