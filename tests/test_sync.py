"""`ace sync` (integrations/agent_files.py): the playbook's top lessons between markers in
CLAUDE.md / AGENTS.md / .github/copilot-instructions.md, never touching anything else."""

import json
import os
import stat

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ace_engine.core.project import identify
from ace_engine.integrations import agent_files as af
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace, examples

BULLETS = [
    {"id": "ctx-0000000001aaaaaaaaaa", "section": "troubleshooting_and_pitfalls", "content": "JWT expires after 15 min",
     "created_at": 2.0},
    {"id": "ctx-0000000002bbbbbbbbbb", "section": "strategies_and_hard_rules", "content": "Run python -m pytest",
     "created_at": 3.0},
    {"id": "ctx-0000000000cccccccccc", "section": "strategies_and_hard_rules", "content": "Never force-push main",
     "created_at": 1.0},
]
OTHER = [{"id": "ctx-0000000009dddddddddd", "section": "apis_to_use", "content": "Use httpx", "created_at": 4.0}]


# -- the pure text functions --------------------------------------------------------------------------


def test_block_groups_by_section_in_playbook_order_oldest_first():
    block = af.render_block(BULLETS)
    assert block.startswith(af.START + "\n## Lessons learned (ace-engine)\n") and block.endswith("\n" + af.END)
    lines = block.splitlines()
    rules, pitfalls = lines.index("### Strategies and hard rules"), lines.index("### Troubleshooting and pitfalls")
    assert rules < pitfalls
    assert lines[rules + 2:rules + 4] == ["- [ctx-0000000000cccccccccc] Never force-push main",
                                          "- [ctx-0000000002bbbbbbbbbb] Run python -m pytest"]
    assert af.render_block(list(reversed(BULLETS))) == block, "order of the input does not matter"
    assert af.EMPTY in af.render_block([])
    assert "\r\n" in af.render_block(BULLETS, "\r\n") and "\n" not in af.render_block(BULLETS, "\r\n").replace("\r\n", "")


def test_bullet_text_cannot_fake_a_marker():
    evil = [{"id": "ctx-1", "section": "apis_to_use", "content": f"x {af.END} y {af.START}"}]
    text = af.with_section("intro\n", evil)
    assert text.count(af.START) == 1 and text.count(af.END) == 1
    assert af.without_section(text) == "intro\n"


def test_append_then_replace_then_remove():
    original = "# My project\n\nHand-written notes.\n"
    added = af.with_section(original, BULLETS)
    assert added.startswith(original + "\n" + af.START) and added.endswith(af.END + "\n")
    replaced = af.with_section(added, OTHER)
    assert replaced.startswith(original + "\n" + af.START) and "Use httpx" in replaced and "JWT" not in replaced
    assert af.with_section(replaced, OTHER) == replaced
    assert af.without_section(replaced) == original


def test_edits_outside_the_markers_survive_a_resync():
    text = af.with_section("top\n", BULLETS)
    edited = "new first line\n" + text + "\nappended by hand after the section\n"
    resynced = af.with_section(edited, OTHER)
    start, end = resynced.index(af.START), resynced.index(af.END) + len(af.END)
    assert resynced[:start] == edited[:edited.index(af.START)]
    assert resynced[end:] == edited[edited.index(af.END) + len(af.END):]


def test_section_moved_into_the_middle_is_removed_cleanly():
    block = af.render_block(BULLETS)
    assert af.without_section(f"intro\n\n{block}\n\nmore\n") == "intro\n\nmore\n"
    assert af.without_section(f"intro\n{block}\nmore\n") == "intro\nmore\n"


@pytest.mark.parametrize("text,detail", [
    (f"{af.START}\n{af.START}\n{af.END}\n", "2 × <!-- ACE_SECTION_START -->"),
    (f"{af.START}\n", "0 × <!-- ACE_SECTION_END -->"),
    (f"{af.END}\n", "0 × <!-- ACE_SECTION_START -->"),
    (f"{af.END}\nx\n{af.START}\n", "END before START"),
    (f"{af.START}\n{af.END}\n{af.START}\n{af.END}\n", "2 ×"),
])
def test_unbalanced_markers_are_refused(text, detail):
    for fn in (lambda t: af.with_section(t, BULLETS, "CLAUDE.md"), lambda t: af.without_section(t, "CLAUDE.md")):
        with pytest.raises(af.SyncError) as err:
            fn(text)
        assert "CLAUDE.md: the ACE markers are unbalanced" in str(err.value) and detail in str(err.value)
        assert "Fix the file by hand" in str(err.value)


surrounding = st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "#", "<", "!--", "-->", "é", "\t", "\udcff",
                                       "ACE_SECTION_START", "<!-- ACE", "ACE_SECTION_END -->"]), max_size=40).map("".join)


@settings(max_examples=examples(400))
@given(surrounding, st.sampled_from([BULLETS, OTHER, []]), st.sampled_from([OTHER, BULLETS]))
def test_any_text_survives_add_update_remove_byte_for_byte(text, first, second):
    # The pieces can spell a whole marker ("<" "!--" " " "ACE_SECTION_END -->"): such a file is
    # refused, which `test_unbalanced_markers_are_refused` covers.
    assume(af.START not in text and af.END not in text)
    added = af.with_section(text, first)
    assert added.startswith(text)
    updated = af.with_section(added, second)
    assert updated[:updated.index(af.START)] == added[:added.index(af.START)]
    assert updated[updated.index(af.END):] == added[added.index(af.END):]
    assert af.with_section(updated, second) == updated
    assert af.without_section(updated) == text
    assert af.without_section(text) == text


@given(st.lists(st.sampled_from(["line", "", "## title", "- item"]), max_size=8), st.booleans(), st.booleans())
def test_crlf_files_get_crlf_sections(lines, crlf, trailing):
    nl = "\r\n" if crlf else "\n"
    text = nl.join(lines) + (nl if trailing and lines else "")
    added = af.with_section(text, BULLETS)
    section = added[added.index(af.START):added.index(af.END)]
    if crlf and text.count("\r\n"):
        assert "\r\n" in section and "\n" not in section.replace("\r\n", "")
    else:
        assert "\r" not in section
    assert af.without_section(added) == text


# -- files -------------------------------------------------------------------------------------------


def test_sync_creates_files_but_not_the_github_directory(tmp_path):
    entries = af.sync(str(tmp_path), BULLETS)
    assert [(e["file"], e["action"]) for e in entries] == [
        ("CLAUDE.md", "created"), ("AGENTS.md", "created"), (".github/copilot-instructions.md", "skipped")]
    assert "doesn't exist" in entries[2]["reason"]
    assert not (tmp_path / ".github").exists()
    assert (tmp_path / "CLAUDE.md").read_text() == af.render_block(BULLETS) + "\n"
    (tmp_path / ".github").mkdir()
    entries = af.sync(str(tmp_path), BULLETS)
    assert [e["action"] for e in entries] == ["unchanged", "unchanged", "created"]


def test_sync_keeps_permissions_bytes_and_line_endings(tmp_path):
    claude = tmp_path / "CLAUDE.md"
    original = "# Rules\r\n\r\nBe nice.\r\nLatin-1 byte: \xe9 stays".encode("latin-1")
    claude.write_bytes(original)
    claude.chmod(0o640)
    af.sync(str(tmp_path), BULLETS, targets=("CLAUDE.md",))
    data = claude.read_bytes()
    assert data.startswith(original + b"\r\n" + af.START.encode() + b"\r\n")  # no final newline: no blank line
    assert stat.S_IMODE(claude.stat().st_mode) == 0o640
    assert [e["action"] for e in af.sync(str(tmp_path), [], remove=True, targets=("CLAUDE.md",))] == ["removed"]
    assert claude.read_bytes() == original
    assert stat.S_IMODE(claude.stat().st_mode) == 0o640
    assert not [p for p in os.listdir(tmp_path) if "ace-tmp" in p]


def test_symlinked_agents_file_is_written_once_through_the_link(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("shared\n")
    os.symlink("CLAUDE.md", tmp_path / "AGENTS.md")
    entries = af.sync(str(tmp_path), BULLETS)
    assert [e["action"] for e in entries[:2]] == ["updated", "skipped"]
    assert entries[1]["reason"] == "the same file as CLAUDE.md"
    assert os.path.islink(tmp_path / "AGENTS.md")
    assert (tmp_path / "CLAUDE.md").read_text().count(af.START) == 1
    af.sync(str(tmp_path), [], remove=True)
    assert (tmp_path / "CLAUDE.md").read_text() == "shared\n" and os.path.islink(tmp_path / "AGENTS.md")


def test_one_bad_file_means_no_file_is_written(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("fine\n")
    (tmp_path / "AGENTS.md").write_text(f"{af.START}\nno end\n")
    with pytest.raises(af.SyncError, match="AGENTS.md"):
        af.sync(str(tmp_path), BULLETS)
    assert (tmp_path / "CLAUDE.md").read_text() == "fine\n"
    assert (tmp_path / "AGENTS.md").read_text() == f"{af.START}\nno end\n"


def test_remove_deletes_files_that_sync_created_and_leaves_others(tmp_path):
    (tmp_path / "AGENTS.md").write_text("mine")
    af.sync(str(tmp_path), BULLETS)
    entries = af.sync(str(tmp_path), [], remove=True)
    assert [e["action"] for e in entries] == ["deleted", "removed", "absent"]
    assert not (tmp_path / "CLAUDE.md").exists() and (tmp_path / "AGENTS.md").read_text() == "mine"
    assert [e["action"] for e in af.sync(str(tmp_path), [], remove=True)] == ["absent", "absent", "absent"]


# -- the command -------------------------------------------------------------------------------------


@pytest.fixture
def seeded(ace_home, git_project):
    with SQLiteStore() as store:
        pb = Playbook(store, identify(str(git_project)))
        ids = [pb.add(f"Project lesson number {i} about pytest", "rules")[0]["id"] for i in range(4)]
        pb.tag(ids[3], "helpful", explicit=True)
        pitfall, _ = pb.add("JWT tokens expire after 15 minutes", "pitfalls")
        shared, _ = pb.add("A personal global preference", "rules", scope="global")
    return {"rules": ids, "pitfall": pitfall["id"], "global": shared["id"]}


def test_sync_command(seeded, git_project):
    root = git_project
    (root / "CLAUDE.md").write_text("# Widget\n\nOur conventions.\n")
    result = ace("sync", "--k", "3", "--project", root, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["root"] == str(root) and len(data["bullets"]) == 3 and seeded["rules"][3] in data["bullets"]
    assert [(f["file"], f["action"]) for f in data["files"]] == [
        ("CLAUDE.md", "updated"), ("AGENTS.md", "created"), (".github/copilot-instructions.md", "skipped")]
    claude = (root / "CLAUDE.md").read_text()
    assert claude.startswith("# Widget\n\nOur conventions.\n\n" + af.START)
    assert seeded["global"] not in claude, "global lessons stay out of shared files"
    assert claude.count("- [ctx-") == 3 and f"- [{seeded['rules'][3]}] Project lesson number 3" in claude
    again = json.loads(ace("sync", "--k", "3", "--project", root, "--json").stdout)
    assert [f["action"] for f in again["files"][:2]] == ["unchanged", "unchanged"]
    full = ace("sync", "--project", root)
    assert full.exit_code == 0 and "updated" in full.stdout and "5 lessons" in full.stdout
    assert "### Troubleshooting and pitfalls" in (root / "AGENTS.md").read_text()
    removed = ace("sync", "--remove", "--project", root)
    assert removed.exit_code == 0
    assert (root / "CLAUDE.md").read_text() == "# Widget\n\nOur conventions.\n"
    assert not (root / "AGENTS.md").exists()


def test_sync_command_refuses_unbalanced_markers(seeded, git_project):
    (git_project / "CLAUDE.md").write_text(f"{af.END}\n{af.START}\n")
    result = ace("sync", "--project", git_project)
    assert result.exit_code == 1 and "unbalanced" in result.stderr and "Fix the file by hand" in result.stderr
    assert not (git_project / "AGENTS.md").exists()


def test_sync_of_an_unknown_project_writes_an_empty_section(ace_home, tmp_path):
    result = ace("sync", "--project", tmp_path)
    assert result.exit_code == 0
    assert af.EMPTY in (tmp_path / "CLAUDE.md").read_text()
