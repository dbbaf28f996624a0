"""The version of the lesson safety policy (`safety.py`), as one integer: the single source.

The store records the policy version its lessons were last screened under (table `meta`, key
`META_KEY`). A store whose recorded version is older than `POLICY_VERSION` may hold active lessons
that today's rules would flag — stored by an older ace-engine, or before a rule was added — so
nothing is injected until `rescreen` has put them through the policy again (the hooks start it in
the background; the learning worker, `ace sync` and `ace doctor --fix` run it first).

It lives apart from `playbook/safety.py` because every injecting hook compares it, and a hook must
not import the policy's rules; and in the store layer because the store records it and every layer
above reads it (dependencies point down). Cost: importing this module defines two constants.

Bump `POLICY_VERSION` whenever the policy can flag a lesson it passed before: a rule in
safety.py's `_RULES`, `KNOWN_HOSTS` narrowed, the folding of evasions, `contains_secret` or the
redactor it relies on, or the provenance rule (`playbook/provenance.py`: what a risky part is, the
default origin of a source). (Loosening it needs no bump: nothing passed before is flagged now.)

  0  nothing recorded: a store written before policy versions existed (up to commit 2f8a758)
  1  one policy on every entry path, exact-match trusted hosts, the instruction corpus
  2  provenance decides — a risky part (named package, remote code, host, permission) first
     seen in text someone else wrote waits for review; learned lessons without computed origins
     count as foreign
  3  secrets by class (gitleaks / detect-secrets formats, keyword context, evasions folded)
     in `contains_secret`; text over 2,048 characters flagged as too long to screen
  4  what a lesson would run is read by structure (a shell reader unwraps wrappers, honours
     `--`, resolves variables; fetched code run, remotes, agent controls; a command it cannot place
     from someone else's text is held); new secret kinds in the redactor; invisible characters removed
"""

POLICY_VERSION = 4
META_KEY = "policy_version"
