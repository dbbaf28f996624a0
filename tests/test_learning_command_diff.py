"""Causes found by what changed between a failing invocation and the next one that got past it
(`learning/command_diff.py`, used by the heuristic reflector): the tool's suggested flag, the directory,
an argument swapped, a command run in between, the edit where the error points — and the traps
(an unrelated edit, a chain blamed on its first part, another action that "worked")."""

from ace_engine.learning import command_diff
from ace_engine.learning.heuristics import HeuristicReflector
from ace_engine.observe import commands

ROOT = "/home/dev/spot"

PUSH_NO_UPSTREAM = ("Exit code 128\nfatal: The current branch feat-x has no upstream branch.\n"
                    "To push the current branch and set the remote as upstream, use\n\n"
                    "    git push --set-upstream origin feat-x\n\n"
                    "To have this happen automatically for branches without a tracking\nupstream, see "
                    "'push.autoSetupRemote' in 'git help config'.\n")
IGNORED = ("Exit code 1\nThe following paths are ignored by one of your .gitignore files:\npriv/static/assets\n"
           "hint: Use -f if you really want to add them.\n")


def bash(cmd, output="", *, ok=True):
    return {"tool": "Bash", "action": "$ " + cmd, "command": commands.clean(cmd), "kind": commands.kind(cmd),
            "success": ok, "result": (commands.outcome_line(output) or "ok") if ok else
            "failed: " + (commands.error_signature(output) or output[:80]), "files": [],
            "error": None if ok else commands.error_signature(output), "output": output}


def edit(path, old="a = 1", new="a = 2"):
    return {"tool": "Edit", "action": f"edit {path}", "kind": "edit", "success": True, "result": "ok",
            "files": [path], "command": None, "written": {"old_string": old, "new_string": new}}


def learn(steps, branch="feat-x"):
    for n, step in enumerate(steps, 1):
        step["step"] = n
    traj = {"task": "ship it", "trajectory": steps, "cwd": ROOT, "result": {"success": True}}
    return [(c["content"], c["confidence"]) for c in HeuristicReflector().reflect(traj, [])["candidates"]]


def test_the_tools_suggested_flag_is_the_fix_not_the_feature_edits_before_it():
    lessons = learn([edit("lib/spot/feature.ex"), bash('git commit -m "feat: x"', "[feat-x 1a2b3c4] feat: x"),
                     bash("git push", PUSH_NO_UPSTREAM, ok=False), edit("lib/spot/other.ex"),
                     bash("git push --set-upstream origin feat-x", "branch 'feat-x' set up to track 'origin/feat-x'.")])
    assert lessons == [(
        "`git push` here needs `--set-upstream origin <branch>` (git's own suggestion): without it, it fails with "
        "`error: The current branch <branch> has no upstream branch.`.", 0.85)]
    # Another branch, the same lesson: the branch name is no part of it.
    other = learn([bash("git push", PUSH_NO_UPSTREAM.replace("feat-x", "fix-y"), ok=False),
                   bash("git push --set-upstream origin fix-y", "ok")])
    assert other == lessons


def test_run_from_a_subdirectory_is_the_change():
    lessons = learn([bash("node assets/build.js", 'Exit code 1\n✘ [ERROR] Could not resolve "js/app.js"\n\n1 error',
                          ok=False),
                     bash(f"cd {ROOT}/assets && node build.js", "built in 120ms")])
    assert lessons == [("Run `node build.js` from `assets/` (`cd assets && node build.js`): from the repository root, "
                        "`node assets/build.js` fails with `[ERROR] Could not resolve \"js/app.js\"`.", 0.85)]


def test_a_chain_is_blamed_on_the_part_that_failed():
    lessons = learn([bash("git add lib/a.ex priv/static/assets/app.css && git commit -m 'x' && git push", IGNORED,
                          ok=False)])
    assert len(lessons) == 1 and lessons[0][0].startswith("`git add lib/a.ex priv/static/assets/app.css` fails here "
                                                         "with `The following paths are ignored")
    # A task runner names its task on every line it prints.
    lint_out = "Exit code 1\n[lint] $ golangci-lint run ./...\ncmd/x.go:3:1: NewX returns interface (ireturn)\n"
    assert command_diff.failing_part("mise run fmt && mise run lint && mise run test:ci", lint_out) == "mise run lint"
    # The output names no part: the line's check stays the command (the test in `npm ci && npm test`).
    assert command_diff.failing_part("npm ci && npm test", "FAIL src/a.test.ts") == "npm ci && npm test"
    assert command_diff.failing_part("cd web && npm install && npm run build", "npm ERR! Missing script: \"build\"") \
        == "cd web && npm run build"


def test_another_action_that_passed_is_not_how_the_failure_was_got_past():
    lessons = learn([bash("git add lib/a.ex priv/static/assets/app.css", IGNORED, ok=False),
                     bash('git commit -m "x"', "[feat-x 1a2b3c4] x")])
    assert all("git commit` worked" not in text for text, _ in lessons), lessons


def test_an_argument_the_error_named_swapped_for_the_real_path():
    out = ("Exit code 128\nfatal: pathspec '_build/dev/lib/spot/priv/repo/migrations/20260212_add.exs' is beyond "
           "a symbolic link")
    lessons = learn([bash("git add _build/dev/lib/spot/priv/repo/migrations/20260212_add.exs lib/a.ex", out, ok=False),
                     edit("lib/unrelated.ex"),
                     bash("git add priv/repo/migrations/20260212_add.exs lib/a.ex && git commit -m 'm'", "ok")])
    assert lessons == [("`git add` takes `priv/repo/migrations/…`, not `_build/dev/lib/spot/priv/repo/migrations/…`: "
                        "that fails with `error: pathspec '…' is beyond a symbolic link`.", 0.85)]


def test_an_install_run_between_is_the_fix():
    lessons = learn([bash("bun run lint", "Volta error: Could not locate executable `turbo` in your project.", ok=False),
                     bash("bun install", "312 packages installed"), bash("bun run lint", "Tasks: 4 successful")])
    assert lessons[0] == ("Run `bun install` before `bun run lint`: without it, it fails with `Volta error: Could not "
                          "locate executable 'turbo' in your project.`.", 0.85)


def test_the_edit_where_the_error_points_is_the_fix_not_the_unrelated_one():
    out = ("Exit code 1\nlib/shop/cart.ex:12: undefined function totl/1 (expected Shop.Cart to define such a "
           "function)\n")
    lessons = learn([bash("mix compile --warnings-as-errors", out, ok=False), edit("lib/shop/banner.ex", "x", "y"),
                     edit("lib/shop/cart.ex", "totl(items)", "total(items)"),
                     bash("mix compile --warnings-as-errors", "Generated shop app")])
    assert len(lessons) == 1 and "lib/shop/cart.ex" in lessons[0][0] and "banner" not in lessons[0][0]
    assert "`total(items)`" in lessons[0][0]


def test_a_git_failure_is_not_credited_to_feature_edits_in_between():
    out = "Exit code 1\nerror: failed to push some refs to 'github.com:o/r.git'\nhint: Updates were rejected"
    lessons = learn([bash("git push origin main", out, ok=False), edit("lib/feature.ex"),
                     bash("git push origin main", "ok")])
    assert not any("feature.ex" in text for text, _ in lessons), lessons


def test_a_flag_dropped_on_our_own_guess_is_a_candidate():
    lessons = learn([bash("npm test -- --ci", "Error: unknown reporter 'ci-json'", ok=False),
                     bash("npm test", "Tests: 40 passed, 40 total")])
    assert lessons == [("Don't pass `--ci` to `npm test` here: with it, it fails with `Error: unknown reporter "
                        "'ci-json'`.", 0.7)]


def test_a_background_run_or_another_test_suite_proves_nothing():
    failing = bash("mix test", "** (RuntimeError) no :secret_key_base configuration found in Web.Endpoint.", ok=False)
    other_suite = bash("npx vitest run", "Tests 12 passed (12)")
    assert not any("vitest" in text for text, _ in learn([failing, other_suite]))
    background = bash("mix test &", "")
    assert learn([dict(failing), background]) == []


def test_the_suggestion_reader_and_the_comparison():
    assert command_diff.suggestions(PUSH_NO_UPSTREAM) == ["git push --set-upstream origin feat-x"]
    assert command_diff.suggestions("[FORMAT] Code is not formatted.\nRun 'mix format' to fix.") == ["mix format"]
    d = command_diff.compare("FOO=1 go test ./...", "FOO=1 CGO_ENABLED=0 go test -count=1 ./...", ROOT)
    assert d["env"] == ["CGO_ENABLED=…"] and d["added"] == ["-count=1"] and d["cwd"] == ("", "")
    assert command_diff.compare("pytest", f"cd {ROOT}/api && pytest", ROOT)["cwd"] == ("", "api")


def test_a_change_in_the_invocation_is_strong_evidence_for_the_curator():
    from ace_engine.learning.activation import strong_evidence
    steps = [bash("git push", PUSH_NO_UPSTREAM, ok=False), bash("git push --set-upstream origin feat-x", "ok")]
    for n, step in enumerate(steps, 1):
        step["step"] = n
    assert strong_evidence({"kind": "command_change"}, steps)
    # A bare re-run with nothing changed is not.
    again = [dict(steps[0]), bash("git push", "Everything up-to-date")]
    again[1]["step"] = 2
    assert not strong_evidence({"kind": "flaky"}, again)


def test_a_directory_left_by_an_earlier_cd_and_a_flag_the_tool_named():
    lessons = learn([bash("npm test", "npm error Missing script: \"test\"", ok=False),
                     bash(f"cd {ROOT}/web", ""), bash("npm test", "Tests: 12 passed, 12 total")])
    assert lessons[0] == ("Run `npm test` from `web/` (`cd web && npm test`): from the repository root, `npm test` "
                          "fails with `npm error Missing script: \"test\"`.", 0.85)
    out = ("none of the git remotes configured for this repository point to a known GitHub host; "
           "pass --repo OWNER/REPO to choose one")
    lessons = learn([bash('gh pr create --title "Add x" --body "y"', out, ok=False),
                     bash('gh pr create --repo acme/shop --title "Add x" --body "y"', "https://github.com/acme/shop/pull/7")])
    assert lessons == [("`gh pr create` here needs `--repo acme/shop` (gh's own suggestion): without it, it fails with "
                        "`none of the git remotes configured for this … pass --repo OWNER/REPO to choose one`.", 0.85)]


def test_a_failure_fixed_every_time_is_that_fix_not_a_never_fixed_failure():
    steps = [bash("git push", PUSH_NO_UPSTREAM, ok=False),
             bash("git push --set-upstream origin feat-x", "branch 'feat-x' set up to track 'origin/feat-x'.")]
    for n, step in enumerate(steps, 1):
        step["step"] = n
    traj = {"task": "ship it", "trajectory": steps, "cwd": ROOT, "result": {"success": True},
            "history": {"commands": {"git push": {"sessions_failed": 4}}}}
    out = [c["content"] for c in HeuristicReflector().reflect(traj, [])["candidates"]]
    assert len(out) == 1 and "--set-upstream origin <branch>" in out[0] and "never fixed" not in out[0]


def test_task_local_traps_teach_nothing():
    # A binary this session built in a temp dir, called with a typo: the session's own usage error.
    built = learn([bash("go build -o /tmp/app-test ./cmd/app", "ok"),
                   bash("/tmp/app-test enabl", "Error: unknown command \"enabl\" for \"app\"\nDid you mean this?\n\tenable",
                        ok=False)])
    assert built == []
    # A compile error the linter passed on is a broken build, not a rule of the linter.
    compile_error = learn([bash("mise run lint", "[lint] $ golangci-lint run ./...\ncmd/x_test.go:12:2: undefined: "
                                "loadStrict (typecheck)\n", ok=False),
                           edit("cmd/x_test.go", "loadStrict()", "load()"), bash("mise run lint", "0 issues.")])
    assert not any("enforces" in text for text, _ in compile_error), compile_error
    # A test the task was writing, fixed in that test: nothing for the next session.
    own_test = learn([edit("pkg/reset_test.go", "", "func TestReset(t *testing.T) {}"),
                      bash("go test ./pkg/", "--- FAIL: TestReset (0.00s)\n    reset_test.go:9: shadow branch should be "
                           "deleted\nFAIL", ok=False),
                      edit("pkg/reset_test.go", "want := 1", "want := 0"), bash("go test ./pkg/", "ok  pkg 0.2s")])
    assert own_test == []


def test_a_branch_of_an_if_is_judged_as_its_own_command_and_a_named_flag_that_got_past_is_the_fix():
    """`if …; then a; else cargo run …; fi` failed in its else branch; the next run with the flag the
    error named fails on something else: the flag got past the first failure, so it is the rule."""
    no_bin = ("error: `cargo run` could not determine which binary to run. Use the `--bin` option to specify a "
              "binary, or the `default-run` manifest key.\navailable binaries: gen-docs, shop")
    assert command_diff.failing_part("if [[ -x target/debug/shop ]]; then target/debug/shop check; "
                                "else cargo run --quiet -- check; fi", no_bin) == "cargo run --quiet -- check"
    out = learn([
        bash("if [[ -x target/debug/shop ]]; then target/debug/shop check; else cargo run --quiet -- check; fi",
             no_bin, ok=False),
        bash("cargo run --quiet --bin shop -- check", "Error: Failed to read config file: shop.toml", ok=False)])
    assert any("`cargo run` here needs `--bin shop`" in c and conf >= 0.85 for c, conf in out)
    # A flag added on the agent's own guess that only moved the failure elsewhere proves nothing.
    guess = learn([
        bash("cargo run --quiet -- check", "error: linking with `cc` failed: exit status: 1", ok=False),
        bash("cargo run --quiet --release -- check", "Error: Failed to read config file: shop.toml", ok=False)])
    assert not any("needs `--release`" in c for c, _ in guess)


def test_a_flag_given_another_value_where_the_error_named_it_is_the_fix():
    """`-destination 'name=…'` → `-destination 'id=…'` after "Unable to find a destination …": the value
    of the flag the error spoke of changed, nothing else; a commit message changed is no such cause."""
    no_sim = ("xcodebuild: error: Unable to find a destination matching the provided destination specifier:\n"
              "\t\t{ platform:iOS Simulator, OS:latest, name:iPhone 16 }")
    out = learn([
        bash("xcodebuild test -scheme Shop -destination 'platform=iOS Simulator,name=iPhone 16'", no_sim, ok=False),
        bash("xcodebuild test -scheme Shop -destination 'id=8A3F2C1D-1111-2222-3333-444455556666'",
             "** TEST SUCCEEDED **")])
    assert any(c.startswith("`xcodebuild test` here takes `-destination 'id=8A3F2C1D") and "not `-destination "
               "'platform=iOS Simulator,name=iPhone 16'`" in c and conf >= 0.85 for c, conf in out)
    unnamed = command_diff.compare("cargo test --features sqlite", "cargo test --features postgres", ROOT,
                              "error[E0308]: mismatched types")
    assert unnamed["revalued"] is None
    named = command_diff.compare("cargo test --features sqlite", "cargo test --features postgres", ROOT,
                            "error: the package 'shop' does not contain this feature: sqlite")
    assert named["revalued"] == ("--features", "sqlite", "postgres")


def test_a_refused_push_to_a_protected_branch_is_about_the_ref_not_a_flag_dropped_on_the_way():
    """`git push origin main --tags` refused by the branch protection, then `git push origin release/x`:
    the ref is the cause (not `--tags`, dropped in the same move)."""
    out = learn([
        bash("git push origin main --tags", "To github.com:acme/shop.git\n ! [remote rejected] main -> main "
             "(protected branch hook declined)\nerror: failed to push some refs to 'github.com:acme/shop.git'",
             ok=False),
        bash("git branch release/v1.2.0 && git push origin release/v1.2.0", "To github.com:acme/shop.git\n"
             " * [new branch]      release/v1.2.0 -> release/v1.2.0")])
    assert any(c.startswith("`git push` to `main` is refused here") and "push a branch and open a pull request" in c
               and conf >= 0.85 for c, conf in out), out
    assert not any("--tags" in c for c, _ in out)
