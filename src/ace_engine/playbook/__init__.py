"""The playbook domain model: bullets, sections, ids, counters, confidence, domains, delta operations.

Knows nothing about storage engines: it talks to a store through the methods `Playbook` calls.
"""
