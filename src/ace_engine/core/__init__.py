"""The foundation every layer stands on: settings, paths, errors, the log, atomic files and bounded
reads, text escaping, project identity, config trust, record types, the `with` protocol of what holds
a connection (`closing`), background processes and the tables other layers read (the layers, CLI
command marks, install routes).

Contract: nothing here imports another `ace_engine` package except `redact` (the log sends every
line through the one redactor); see `core/layers.py`. Cost: this file imports nothing — hooks pay
only for the modules they name.
"""
