"""The playbook from the command line: search, browse, edit, share."""

COMMANDS: list = []
