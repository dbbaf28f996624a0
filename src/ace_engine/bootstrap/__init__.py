"""`ace bootstrap`: seed a project's playbook from the repository itself.

Before the first session there is nothing to learn from, yet the repository already says how to
build, test and lint it (Makefile, package.json, pyproject.toml, CI workflows, READMEs), which
conventions hold (formatter, linter, type checker settings) and where the trouble is (files that
keep needing fixes, reverted commits). `collect` turns that into candidate bullets; `seed` adds
them through `Playbook.add`.

Every bullet names its source in its text, and carries `provenance = {"source": "bootstrap",
"files": [...], "evidence": "...", "bootstrap_key": "..."}`. The key makes re-running idempotent:
an unchanged repository adds nothing; a changed fact (a new recipe for `make test`, more fix
commits) updates its bullet in place; a bullet the user archived stays archived.

Modes: `local-files` (build files, CI, configuration), `docs` (README, CONTRIBUTING, docs/),
`git-history` (git log), `hybrid` (all). Thoroughness `light` / `medium` / `deep` sets how far
each source is read and how many bullets are kept.

Layout: `readers.py` reads files without trusting them, `findings.py` holds the shapes and their
builders, `files.py` and `conventions.py` scan, this module merges, ranks and seeds.
Cost: file reads and one `git log` (bounded by the level's commit count); run only by the CLI.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import AceError
from ..observe import commands as cmd_mod
from ..observe import git_context
from ..playbook.playbook import STATUSES, clean_content, content_key
from . import conventions, files, findings
from .findings import Candidate, CommandFinding, Finding, NoteFinding
from .readers import Problem

if TYPE_CHECKING:
    from ..core._types import Bullet
    from ..playbook.playbook import Playbook

OnStep = Callable[[str, int, int], object]  # (label, index, total), before each step: progress bars

MODES = ("local-files", "git-history", "docs", "hybrid")
LEVELS = {
    #          commits read, fix commits to call a file a hot spot, hot spots, reverts, bullets kept
    "light": {"commits": 300, "min_fixes": 3, "hotspots": 3, "reverts": 3, "max_bullets": 15},
    "medium": {"commits": 1500, "min_fixes": 3, "hotspots": 5, "reverts": 5, "max_bullets": 40},
    "deep": {"commits": 10_000, "min_fixes": 2, "hotspots": 10, "reverts": 10, "max_bullets": 100},
}
SOURCE = "bootstrap"

# How a command of each kind is introduced in its bullet, and its order in the playbook.
VERBS = {"test": "Run the tests with", "lint": "Lint with", "typecheck": "Type-check with",
         "format": "Format code with", "build": "Build with", "install": "Install dependencies with",
         "run": "Start the app locally with", "other": "Project task:"}
KIND_ORDER = ("test", "lint", "typecheck", "format", "build", "install", "run", "other")


class BootstrapError(AceError, ValueError):
    """Bad mode / thoroughness / directory; the message names the fix."""


# -- collecting -------------------------------------------------------------------------------------

def plan(mode: str = "hybrid", thoroughness: str = "medium") -> list[tuple[str, str]]:
    """The steps (id, label) `collect` runs for a mode, in order — a progress bar's total."""
    if mode not in MODES:
        raise BootstrapError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    if thoroughness not in LEVELS:
        raise BootstrapError(f"unknown thoroughness {thoroughness!r}; use one of: {', '.join(LEVELS)}")
    steps = []
    if mode in ("local-files", "hybrid"):
        steps += [("managers", "package managers"), ("pyproject", "pyproject.toml"), ("package-json", "package.json"),
                  ("make", "Makefile / justfile"), ("tox-nox", "tox / nox"), ("ci", "CI workflows"),
                  ("conventions", "linters, formatters, type checkers")]
    if mode in ("docs", "hybrid"):
        steps.append(("docs", "README and contributor docs"))
    if mode in ("git-history", "hybrid"):
        steps.append(("git", "git history"))
    return steps


def collect(root: str, mode: str = "hybrid", thoroughness: str = "medium",
            on_step: OnStep | None = None) -> dict[str, Any]:
    """Candidate bullets for the repository at `root`.

    Returns `{"candidates": [{content, section, files, evidence, key, kind}], "problems": [{file,
    problem}], "steps": [{step, findings, seconds}]}`. `on_step(label, index, total)` is called
    before each step (progress bars)."""
    if not os.path.isdir(root):
        raise BootstrapError(f"{root} is not a directory; run `ace bootstrap` inside the project or pass --project")
    steps = plan(mode, thoroughness)
    level = LEVELS[thoroughness]
    deep, medium = thoroughness == "deep", thoroughness in ("medium", "deep")
    scanners: dict[str, Callable[[list[Problem]], list[Finding]]] = {
        "managers": lambda p: files.scan_package_managers(root, p),
        "pyproject": lambda p: files.scan_pyproject(root, p, deep),
        "package-json": lambda p: files.scan_package_json(root, p, deep),
        "make": lambda p: files.scan_makefile(root, p, deep),
        "tox-nox": lambda p: files.scan_tox_nox(root, p, deep),
        "ci": lambda p: files.scan_ci(root, p, deep) if medium or deep else [],
        "conventions": lambda p: conventions.scan_conventions(root, p, deep),
        "docs": lambda p: files.scan_docs(root, p, deep, medium),
        "git": lambda p: scan_git_history(root, p, level),
    }
    found_all: list[Finding] = []
    problems: list[Problem] = []
    report = []
    for index, (step, label) in enumerate(steps):
        if on_step:
            on_step(label, index, len(steps))
        started = time.perf_counter()
        found = scanners[step](problems)
        found_all.extend(found)
        report.append({"step": step, "findings": len(found), "seconds": round(time.perf_counter() - started, 4)})
    if on_step:
        on_step("done", len(steps), len(steps))
    candidates = merge_commands([f for f in found_all if f["type"] == "command"])
    candidates += _notes([f for f in found_all if f["type"] == "note"])
    return {"candidates": candidates[: level["max_bullets"]], "problems": problems, "steps": report,
            "dropped": max(0, len(candidates) - level["max_bullets"])}


def _notes(notes: list[NoteFinding]) -> list[Candidate]:
    """Notes as candidates, the first of each key winning (a tool configured in two files)."""
    seen: set[str] = set()
    out: list[Candidate] = []
    order = {"strategies_and_hard_rules": 0, "apis_to_use": 1, "useful_code_snippets": 2,
             "troubleshooting_and_pitfalls": 3}
    for n in sorted(notes, key=lambda n: order.get(n["section"], 9)):
        if n["key"] in seen:
            continue
        seen.add(n["key"])
        out.append({"content": n["content"], "section": n["section"], "files": n["files"], "evidence": n["evidence"],
                    "key": n["key"], "kind": "convention" if n["section"] == "strategies_and_hard_rules" else "note"})
    return out


def _command_key(text: str | None) -> str:
    return cmd_mod.key(text).lower() if text else ""


def merge_commands(found: list[CommandFinding]) -> list[Candidate]:
    """One candidate per command: the same command from several files (a Makefile target, the CI
    job that runs it, the README that mentions it) becomes one bullet naming all of them."""
    groups: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    for item in sorted(found, key=lambda f: f["rank"]):
        keys = {_command_key(item["run"])}
        does = item.get("does")
        if does:  # a wrapper (`make lint`) also answers for each check it runs
            keys.update(_command_key(part) for part in cmd_mod.parts(does) if cmd_mod.kind(part) in cmd_mod.CHECK_KINDS)
            if " && " not in does:
                keys.add(_command_key(does))
        group = next((by_key[k] for k in keys if k in by_key), None)
        if group is None and item["source"] == "config" and " " not in item["run"]:
            # `pytest` configured in pyproject.toml joins whatever command runs pytest.
            family = cmd_mod.family(item["run"])
            group = next((g for g in groups if g["kind"] == item["kind"] and family in
                          (cmd_mod.family(g["run"]), cmd_mod.family(g.get("does") or ""))), None)
        if group is None:
            group = {"run": item["run"], "kind": item["kind"], "does": item.get("does"), "where": item["where"],
                     "source": item["source"], "also": [], "files": []}
            groups.append(group)
        elif item["where"] != group["where"] and item["where"] not in group["also"]:
            group["also"].append(item["where"])
        if item["file"] not in group["files"]:
            group["files"].append(item["file"])
        for k in keys:
            by_key.setdefault(k, group)
    groups.sort(key=lambda g: (KIND_ORDER.index(g["kind"]) if g["kind"] in KIND_ORDER else 99))
    return [_command_candidate(g) for g in groups]


def _command_candidate(group: dict[str, Any]) -> Candidate:
    where = group["where"]
    if group["source"] == "ci":
        detail = f"run by CI in {where}"
    elif group["source"] == "docs":
        detail = f"documented in {where}"
    elif group["source"] == "config":
        detail = where
    else:
        detail = where + (f" runs `{group['does']}`" if group.get("does") else "")
    extra = []
    for other in group["also"][:3]:
        extra.append(f"configured in {other.removeprefix('configured in ')}" if other.startswith("configured in")
                     else f"also in {other}")
    content = f"{VERBS.get(group['kind'], VERBS['other'])} `{group['run']}` ({'; '.join([detail] + extra)})."
    return {"content": content, "section": "useful_code_snippets", "files": group["files"],
            "evidence": "; ".join([where] + group["also"]), "key": f"cmd:{_command_key(group['run'])}",
            "kind": group["kind"]}


# -- git history -----------------------------------------------------------------------------------

_FIX = re.compile(r"(?i)\b(?:fix(?:e[sd])?|bug(?:fix)?|hotfix|regression|broken|crash(?:es|ed)?)\b|^fix[(:!]")
_REVERT = re.compile(r'^Revert "(.+)"\s*$')
_REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_CONVENTIONAL = re.compile(r"^(?:feat|fix|chore|docs|refactor|test|tests|ci|build|perf|style|"
                           r"revert)(?:\([^)]*\))?!?: \S")
_NOISE_FILES = re.compile(r"(?i)(?:^|/)(?:changelog|changes|history|news)(?:\.\w+)?$|\.lock$"
                          r"|(?:^|/)(?:package-lock\.json|pnpm-lock\.yaml|yarn\.lock|uv\.lock|poetry\.lock|Cargo\.lock"
                          r"|go\.sum)$|(?:^|/)(?:version|_version)\.py$")


def git_log(root: str, limit: int) -> list[dict[str, Any]] | None:
    """Recent non-merge commits `[{sha, full_sha, subject, body, files}]`, newest first; None if
    `root` is not a git work tree (or git is missing or too slow)."""
    fmt = "%x1e%h%x1f%H%x1f%s%x1f%b%x1f"
    out = git_context.run_git(root, "-c", "core.quotepath=off", "log", "--no-merges", f"-n{int(limit)}",
                           f"--format={fmt}", "--name-only", "--no-renames")
    if out is None:
        return None
    commits = []
    for record in out.split("\x1e")[1:]:
        parts = record.split("\x1f")
        if len(parts) < 5:
            continue
        short_sha, sha, subject, body, tail = parts[:5]
        changed = [line.strip() for line in tail.splitlines() if line.strip()]
        commits.append({"sha": short_sha, "full_sha": sha, "subject": subject.strip(), "body": body.strip(),
                        "files": changed})
    return commits


def scan_git_history(root: str, problems: list[Problem], level: dict[str, int]) -> list[Finding]:
    commits = git_log(root, level["commits"])
    if commits is None:
        problems.append({"file": ".git", "problem": "not a git repository (or git is missing): history skipped"})
        return []
    if not commits:
        return []
    found: list[Finding] = []
    total = len(commits)
    span = f"the last {total} commits" if total >= level["commits"] else f"all {total} commits"
    # Files that keep needing fixes.
    fixes: dict[str, list[dict]] = {}
    for c in commits:
        if _FIX.search(c["subject"]) and not _REVERT.match(c["subject"]):
            for f in c["files"]:
                if not _NOISE_FILES.search(f):
                    fixes.setdefault(f, []).append(c)
    hot = sorted(((f, cs) for f, cs in fixes.items() if len(cs) >= level["min_fixes"]),
                 key=lambda fc: (-len(fc[1]), fc[0]))
    for path, cs in hot[: level["hotspots"]]:
        examples = "; ".join(f"{c['sha']} “{findings.short(c['subject'], 60)}”" for c in cs[:2])
        found.append(findings.note(
            f"fix-hotspot:{path}",
            f"`{path}` needed fixes in {len(cs)} of {span} (e.g. {examples}); read its tests before changing it and "
            f"run them after.", "troubleshooting_and_pitfalls", [path],
            f"fix commits: {', '.join(c['sha'] for c in cs[:10])}"))
    # Reverted changes.
    by_sha = {c["full_sha"]: c for c in commits}
    reverts = 0
    for c in commits:
        m = _REVERT.match(c["subject"])
        if not m or reverts >= level["reverts"]:
            continue
        target = _REVERTS_SHA.search(c["body"])
        original = next((o for sha, o in by_sha.items() if target and sha.startswith(target.group(1))), None)
        what = original["sha"] if original else (target.group(1)[:7] if target else None)
        touched = (original or c)["files"][:3]
        where = f" (touching {', '.join(f'`{f}`' for f in touched)})" if touched else ""
        found.append(findings.note(
            f"revert:{(original or c)['sha']}",
            f"The change “{findings.short(m.group(1), 80)}”" + (f" (commit {what})" if what else "")
            + f" was reverted by commit {c['sha']}"
            f"{where}; find out why before re-applying it.", "troubleshooting_and_pitfalls", touched,
            f"revert commit {c['sha']}" + (f" of {what}" if what else "")))
        reverts += 1
    # Commit message convention.
    conventional = sum(1 for c in commits if _CONVENTIONAL.match(c["subject"]))
    if total >= 10 and conventional / total >= 0.6:
        share = round(100 * conventional / total)
        found.append(findings.note(
            "commit-style", f"Commit messages follow Conventional Commits (`fix(scope): …`, `feat: …`) — {share}% of "
                            f"{span}; "
            "write new ones the same way.", "strategies_and_hard_rules", [], f"{conventional}/{total} commits"))
    return found


# -- seeding -----------------------------------------------------------------------------------------

def seed(playbook: Playbook, candidates: list[Candidate], *, mode: str = "hybrid", dry_run: bool = False,
         now: float | None = None) -> dict[str, Any]:
    """Add `candidates` to `playbook` (a `playbook.Playbook`); idempotent (see the module doc).

    Returns `{"created", "updated", "unchanged", "bullets": [{id, status, content, section, files}]}`;
    with `dry_run` nothing is written and `status` says what would happen."""
    now = now or time.time()
    existing: dict[str, Bullet] = {}
    for row in playbook.bullets(include_global=False, statuses=STATUSES, order="created"):
        key = (row.get("provenance") or {}).get("bootstrap_key")
        if key and (key not in existing or row["status"] == "active"):
            existing[key] = row
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    out = []
    bullet: Bullet | None
    with playbook:
        for cand in candidates:
            provenance = {"source": SOURCE, "files": cand["files"], "evidence": cand["evidence"],
                          "bootstrap_key": cand["key"], "bootstrap_mode": mode}
            old = existing.get(cand["key"])
            if old is not None:
                # Compared as stored (`clean_content`: NFKC, invisible characters out), or a fact with
                # a `…` in it would read as changed on every run.
                if old["status"] == "archived" or old["content"] == clean_content(cand["content"]):
                    status, bullet = "unchanged", old
                else:
                    status = "updated"
                    bullet = old if dry_run else playbook.update(
                        old["id"], content=cand["content"], provenance={**old["provenance"], **provenance},
                        source=SOURCE, reason="bootstrap: the repository changed", now=now)
            elif dry_run:
                match = playbook.store.find_by_content_key(content_key(cand["content"]), playbook.project_id)
                status, bullet = ("unchanged", match) if match else ("created", None)
            else:
                bullet, created = playbook.add(cand["content"], cand["section"], provenance=provenance, source=SOURCE,
                                               reason=f"bootstrap from {', '.join(cand['files'][:3]) or 'git history'}",
                                               now=now)
                status = "created" if created else "unchanged"
            counts[status] += 1
            out.append({"id": bullet["id"] if bullet else None, "status": status, "content": cand["content"],
                        "section": cand["section"], "files": cand["files"], "kind": cand.get("kind")})
    return {**counts, "dry_run": dry_run, "bullets": out}


def bootstrap(playbook: Playbook, root: str, *, mode: str = "hybrid", thoroughness: str = "medium",
              dry_run: bool = False, on_step: OnStep | None = None) -> dict[str, Any]:
    """`collect` + `seed`: the whole of `ace bootstrap`."""
    started = time.perf_counter()
    found = collect(root, mode, thoroughness, on_step)
    result = seed(playbook, found["candidates"], mode=mode, dry_run=dry_run)
    result.update(mode=mode, thoroughness=thoroughness, root=root, problems=found["problems"], steps=found["steps"],
                  dropped=found["dropped"], seconds=round(time.perf_counter() - started, 3))
    return result
