"""Lesson vectors: the embedder (the shipped static table, or an optional sentence-transformers
model), the vectors stored beside each lesson, and nearest-neighbour search over them.

It sits below `playbook` so that every write of a lesson embeds it (`Playbook._flush`), and below
`retrieval`, whose semantic and hybrid search read the vectors. Cost: this file imports nothing.
"""
