"""Retrieval: which playbook bullets go back into the agent's context, and how they are shown.

query.py     prompt → search terms (identifiers split, stop words, abbreviations) → FTS5 expression
search.py    `search()` (FTS5 candidates re-ranked by a hybrid score) and `top()` (session digest)
general.py   the plain form of a command before its one-off variants
situations.py  the prompts, errors and files a lesson was learned and confirmed in: more keys to find it by
render.py    token estimates and the tagged `<ace-…>` blocks the hooks inject
vectors.py   lesson vectors: written with the lessons, the per-scope pack, `cosines()` for search
static_embed.py  the shipped static embedding table (data/): lookup embedding, popcount scoring
semantic.py  the optional full MiniLM (extra `semantic`, `retrieval.embedder = "minilm"`)

Reads the store (vectors.py also writes lesson vectors and packs); the hooks record what was shown.
Everything but semantic.py is stdlib-only and cheap to import, because hooks import it on every
prompt; NumPy is used only by batch paths when installed.
"""
