"""Text made safe to store: the redactor (`redactor.redact`, the one choke point every stored or
logged string passes), its rule modules, and `sanitize` (UTF-8 repair, `<private>` stripping, size
caps, JSON values cleaned leaf by leaf).

Contract: the bottom layer; imports nothing from `ace_engine`. Cost: this file imports nothing —
the hooks pay only for the modules they name (`re` and `functools`, nothing else).
"""
