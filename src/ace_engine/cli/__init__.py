"""The `ace` command. `ace hook EVENT` is routed before click and rich are imported, so a hook
run through the console script stays as light as `python -m ace_engine.hooks EVENT`; `ace hook`
alone or with `-h` / `--help` goes to click, which prints the hook command's help."""

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"] and len(args) > 1 and args[1] not in ("-h", "--help"):
        from ..hooks.engine import run as run_hook

        run_hook(args[1:])
        return
    from .app import cli

    cli.main(args=args, prog_name="ace")
