"""The foundation every layer stands on: settings, paths, errors, the log, atomic files, text
escaping, project identity, config trust, record types, background processes and the tables other
layers read (CLI command marks, install routes).

Contract: nothing here imports another `ace_engine` package except `redact` (the log sends every
line through the one redactor); see `core/layers.py`. Cost: this file imports nothing — hooks pay
only for the modules they name.
"""
