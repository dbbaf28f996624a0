"""Retrieval: which playbook bullets go back into the agent's context, and how they are shown.

query.py     prompt → search terms (identifiers split, stop words, abbreviations) → FTS5 expression
search.py    `search()` (FTS5 candidates re-ranked by a hybrid score) and `top()` (session digest)
render.py    token estimates and the tagged `<ace-…>` blocks the hooks inject
semantic.py  optional embeddings (extra `semantic`); never imported unless enabled

Reads the store only; the hooks record what was shown. Everything but semantic.py is stdlib-only
and cheap to import, because hooks import it on every prompt.
"""
