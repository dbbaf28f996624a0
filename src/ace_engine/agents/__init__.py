"""The coding agents ace-engine serves, one module each, behind one protocol (`base.Agent`).

`registry` is what the rest of the code asks (`registry.get("codex")`, `registry.NAMES`,
`registry.label`); each row names the agent's module, imported only when that agent is asked for,
so a hook started for one agent loads that agent alone. Adding an agent: its module here and its
row in `registry.ROWS` (plus, when its config file is a layout no installer writes yet, that
installer in `integrations/`, and when its session files are a new format, their reader in
`observe/`; the row names both).

Cost: this file imports nothing.
"""
