"""Codex Desktop's "code mode": one freeform `exec` tool whose input is JavaScript calling the real
tools. The reader turns each call the script makes into the event the plain tool gives (Bash with
its workdir, the per-file edits of apply_patch), splits the printed output between the calls when
it can, folds `wait` polls into the cell they wait on, and keeps anything it cannot read as the
`exec` event it was. The rollouts are written by `agent_sessions.CodexRollout` in the shape real
code-mode sessions have (no Codex ran to make them)."""

import json

from ace_engine.observe import codex_code_mode, codex_rollout
from agent_sessions import CodexRollout

PATCH = ("*** Begin Patch\n*** Update File: calc.py\n@@ def div(a, b):\n-    return a / b\n"
         "+    return a / b if b else 0\n*** Add File: notes.txt\n+caf\u00e9 \"quoted\"\n*** End Patch")


def parse(tmp_path, r):
    return codex_rollout.parse_file(str(r.write(tmp_path / "rollout.jsonl")))


def events(parsed):
    return parsed["agents"][0]["events"]


def summary(parsed):
    out = []
    for e in events(parsed):
        given = json.loads(e["input"])
        out.append((e["tool_name"], given.get("command") or given.get("file_path"), e["success"], e["exit_code"]))
    return out


def test_one_exec_command_is_a_bash_event_with_its_workdir_and_output(tmp_path):
    r = CodexRollout(tmp_path, "019a-one")
    r.prompt("run the tests")
    r.code_mode("call_1", 'const r = await tools.exec_command({cmd:"python -m pytest -q \'tests/a b.py\'",'
                          '"workdir":"/src/calc","yield_time_ms":10000,"max_output_tokens":20000});text(r.output)\n',
                ["3 passed in 0.02s\n"])
    parsed = parse(tmp_path, r)
    # no exit code in the output nor the script: success is not known, and no failure is made up
    assert summary(parsed) == [("Bash", "python -m pytest -q 'tests/a b.py'", True, None)]
    event = events(parsed)[0]
    given = json.loads(event["input"])
    assert (given["workdir"], given["_agent_tool"]) == ("/src/calc", "exec_command")
    assert "3 passed" in event["response"]


def test_promise_all_gives_each_command_its_own_part_and_stated_exit_code(tmp_path):
    r = CodexRollout(tmp_path, "019a-all")
    r.prompt("check")
    script = ('const results = await Promise.all([\n'
              '  tools.exec_command({cmd:"cargo test",workdir:"/w",yield_time_ms:1000}),\n'
              "  tools.exec_command({cmd:'git status --short',workdir:'/w'}),\n"
              '  tools.exec_command({"cmd":"rg -n \\"a\\\\\\\\b\\" src","workdir":"/w"})\n'
              ']); results.forEach(x=>text(JSON.stringify(x)));\n')
    parts = [json.dumps({"chunk_id": "a1", "exit_code": 101, "output": "test result: FAILED. 1 failed"}),
             json.dumps({"chunk_id": "a2", "exit_code": 0, "output": " M calc.py\n"}),
             json.dumps({"chunk_id": "a3", "session_id": 9, "output": "src/x.rs:1:a\\b\n"})]  # still running
    r.code_mode("call_1", script, parts)
    parsed = parse(tmp_path, r)
    assert summary(parsed) == [("Bash", "cargo test", False, 101), ("Bash", "git status --short", True, 0),
                               ("Bash", 'rg -n "a\\\\b" src', True, None)]
    first, second, _ = events(parsed)
    assert "1 failed" in first["error"] and "M calc.py" in second["response"]
    assert len({e["tool_use_id"] for e in events(parsed)}) == 3


def test_output_printed_once_for_several_commands_goes_to_each_without_an_exit_code(tmp_path):
    r = CodexRollout(tmp_path, "019a-joined")
    r.prompt("look")
    r.code_mode("call_1", 'const [a,b] = await Promise.all([tools.exec_command({cmd:"ls"}),'
                          'tools.exec_command({cmd:"pwd"})]); text("A\\n"+a.output+"B\\n"+b.output);',
                ["A\nx.py\nB\n/w\n"])
    parsed = parse(tmp_path, r)
    assert summary(parsed) == [("Bash", "ls", True, None), ("Bash", "pwd", True, None)]
    assert all("x.py" in e["response"] and "/w" in e["response"] for e in events(parsed))


def test_an_apply_patch_string_becomes_the_edits_the_plain_tool_gives(tmp_path):
    plain = CodexRollout(tmp_path, "019a-plain")
    plain.prompt("fix")
    plain.patch("call_1", PATCH)
    r = CodexRollout(tmp_path, "019a-patch")
    r.prompt("fix")
    r.code_mode("call_1", f"const patch = {json.dumps(PATCH)};\ntext(await tools.apply_patch(patch));\n", ["{}"])
    mine, theirs = events(parse(tmp_path, r)), events(parse(tmp_path, plain))
    assert [(e["tool_name"], e["input"], e["success"]) for e in mine] == \
        [(e["tool_name"], e["input"], e["success"]) for e in theirs]
    assert [json.loads(e["input"])["file_path"] for e in mine] == ["calc.py", "notes.txt"]
    failed = CodexRollout(tmp_path, "019a-bad")
    failed.prompt("fix")
    failed.code_mode("call_1", "await tools.apply_patch(`*** Begin Patch\n*** Update File: calc.py\n@@\n-x\n+y\n"
                               "*** End Patch`)", ["apply_patch verification failed: Failed to find expected lines"])
    assert summary(parse(tmp_path, failed)) == [("Edit", "calc.py", False, None)]


def test_a_patch_apply_end_of_code_mode_tells_the_patch_outcome(tmp_path):
    # its call_id is Codex's own ("exec-…"), not the exec call's: it belongs to the exec in flight
    r = CodexRollout(tmp_path, "019a-end")
    r.prompt("fix")
    r.add("response_item", {"type": "custom_tool_call", "call_id": "call_1", "name": "exec",
                            "input": "await tools.apply_patch(`*** Begin Patch\n*** Update File: calc.py\n"
                                     "@@\n-x\n+y\n*** End Patch`)"})
    r.add("event_msg", {"type": "patch_apply_end", "call_id": "exec-1b2c", "stdout": "", "stderr": "no match",
                        "success": False})
    r.add("response_item", {"type": "custom_tool_call_output", "call_id": "call_1",
                            "output": [{"type": "input_text", "text": "Script failed\nWall time 0.1 seconds\n"}]})
    assert summary(parse(tmp_path, r)) == [("Edit", "calc.py", False, None)]


def test_a_cell_left_running_ends_in_its_wait_and_the_polls_are_not_events(tmp_path):
    r = CodexRollout(tmp_path, "019a-wait")
    r.prompt("test it")
    r.code_mode("call_1", 'const r = await tools.exec_command({cmd:"mise run test","workdir":"/w"});'
                          'text(JSON.stringify(r));', running="7")
    r.wait("call_2", "7", running=True)
    r.wait("call_3", "7", [json.dumps({"exit_code": 1, "output": "not ok 3 depends\n"})])
    r.wait("call_4", "99", ["another cell"])  # a wait on a cell no exec here left running stays
    parsed = parse(tmp_path, r)
    assert [(t, c, ok, code) for t, c, ok, code in summary(parsed)] == [
        ("Bash", "mise run test", False, 1), ("wait", None, True, None)]
    assert "not ok 3" in events(parsed)[0]["error"]


def test_an_exec_never_answered_is_interrupted_for_each_command(tmp_path):
    r = CodexRollout(tmp_path, "019a-cut")
    r.prompt("go")
    r.add("response_item", {"type": "custom_tool_call", "call_id": "call_1", "name": "exec",
                            "input": 'await Promise.all([tools.exec_command({cmd:"a"}),tools.exec_command({cmd:"b"})])'})
    assert [(e["tool_name"], e["is_interrupt"], e["success"]) for e in events(parse(tmp_path, r))] == \
        [("Bash", True, False), ("Bash", True, False)]


def test_scripts_it_cannot_read_stay_one_exec_event(tmp_path):
    unread = [
        'const base = "git"; await tools.exec_command({cmd: base + " status"})',  # a computed command
        'await tools.exec_command({cmd:`git log ${ref}`})',  # a template literal with a substitution
        'await tools.exec_command({cmd:"git status})',  # an unterminated string
        'await tools.exec_command({cmd:"ls", env:{A:"1"}})',  # a nested value
        'await tools.exec_command(opts)',  # not a literal at all
        'const hits = ALL_TOOLS.filter(x => /github/.test(x.name)); text(hits);',  # no tool call
        'text("tools.exec_command({cmd:\\"rm -rf /\\"})")',  # a call written inside a string is no call
        '// tools.exec_command({cmd:"old"})\nawait tools.exec_command({cmd:"ls"})',  # a call in a comment: unsure
        '/* tools.exec_command({cmd:"old"}) */ await tools.exec_command({cmd:"ls"})',
        'let c = "ls"; if (x) { let c = "rm -rf build"; } await tools.exec_command({cmd: c})',  # bound twice
        'await tools.mcp__github_fetch_pr({repo: repoName})',  # any call's argument unread
        "tools.exec_command({cmd:" * 5000,  # deep nonsense: bounded, no recursion
        'await tools.exec_command({cmd:"x"});' * (codex_code_mode.MAX_CALLS + 1),
    ]
    r = CodexRollout(tmp_path, "019a-unread")
    r.prompt("go")
    for n, script in enumerate(unread):
        r.code_mode(f"call_{n}", script, ["out"])
    parsed = parse(tmp_path, r)
    assert [e["tool_name"] for e in events(parsed)] == ["exec"] * len(unread)
    assert json.loads(events(parsed)[0]["input"])["input"].startswith("const base")


def test_the_string_scanner_reads_js_and_json_escapes():
    read = codex_code_mode.string_at
    literal = r'"caf\u00e9 \x41 \u{1F600} \"q\" \\ \n" + rest'
    assert read(literal, 0) == ('caf\u00e9 A \U0001F600 "q" \\ \n', literal.index(" + rest"))
    assert read("'it\\'s'", 0) == ("it's", 7)
    assert read("`a\nb`", 0) == ("a\nb", 5)
    assert read("`a ${b}`", 0) is None and read('"abc', 0) is None and read('"\\u12"', 0) is None
    assert read('"\\u{110000}"', 0) is None
    # a mention of a tool in an mcp call's text does not count; the mcp call itself is kept by name
    found = codex_code_mode.calls('await Promise.all([tools.mcp__github_fetch_pr({repo:"a/b",pr_number:3}),'
                                  'tools.exec_command({cmd:"echo \'tools.apply_patch(x)\'"})])')
    assert found == [("mcp__github_fetch_pr", {"repo": "a/b", "pr_number": 3}),
                     ("exec_command", {"cmd": "echo 'tools.apply_patch(x)'"})]
