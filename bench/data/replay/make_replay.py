"""Build the real-sessions replay set (issue 24) from the grown learning corpus.

    python bench/data/replay/make_replay.py        # writes bench/data/replay/sessions.json

For every repository of `bench/corpus/gold.json`, its sessions in time order (`source.created_at`),
each with the user's first prompts as the transcript has them (ace-engine's own transcript parser:
what a learning run would see; `<system_instruction>` wrappers, commands and injected context are
not prompts) and its gold lessons (`lesson`, `must_any`, `prompts`). Sessions whose transcript is not
copied here (bench/corpus/README.md: external/) keep their gold lessons and no prompts.
`bench/retrieval_bench.py --data replay` walks it (see `replay()` there). Nothing here is tuned:
the file is a reformatting of the corpus.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from ace_engine.observe.transcript import parse_file  # noqa: E402

CORPUS = os.path.join(ROOT, "bench", "corpus")
sys.path.insert(0, CORPUS)
from transcripts import readable  # noqa: E402  (the committed transcripts are stored gzip-compressed)

PROMPTS = 3


def prompts_of(path: str) -> list[str]:
    if not readable(path):
        return []
    parsed = parse_file(path)
    agents = parsed.get("agents") or []
    if not agents:
        return []
    out = []
    for message in agents[0]["messages"]:
        if message.get("role") == "user" and message.get("by", "user") == "user" and message.get("text"):
            out.append(" ".join(message["text"].split())[:1000])
        if len(out) >= PROMPTS:
            break
    return out


def main() -> None:
    with open(os.path.join(CORPUS, "gold.json"), encoding="utf-8") as fh:
        gold = json.load(fh)
    repos: dict[str, list[dict]] = {}
    for t in gold["trajectories"]:
        repos.setdefault(t["repo"], []).append({
            "id": t["id"], "split": t["split"], "created_at": t["source"]["created_at"],
            "prompts": prompts_of(os.path.join(CORPUS, t["file"])),
            "lessons": [{"id": lesson["id"], "lesson": lesson["lesson"], "must_any": lesson["must_any"],
                         "prompts": lesson.get("prompts") or []} for lesson in t["lessons"]],
        })
    for sessions in repos.values():
        sessions.sort(key=lambda s: (s["created_at"], s["id"]))
    out = {"source": "bench/corpus/gold.json", "match_rule": gold["match_rule"],
           "repos": [{"repo": repo, "sessions": sessions} for repo, sessions in sorted(repos.items())]}
    with open(os.path.join(HERE, "sessions.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    n = sum(len(r["sessions"]) for r in out["repos"])
    print(f"{len(out['repos'])} repositories, {n} sessions, "
          f"{sum(bool(s['prompts']) for r in out['repos'] for s in r['sessions'])} with prompts")


if __name__ == "__main__":
    main()
