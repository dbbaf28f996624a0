"""The exceptions of ace-engine: one tree under `AceError`.

Contract: every message names the problem and the fix, in words a user can act on. The CLI turns
any `AceError` that reaches it into `error: <message>` and exit code 1 (`cli/app.py`, one wrapper);
a command catches one itself only to add context or to go on. Code that must not fail (hooks, the
worker) catches `AceError` or the narrower class it can handle.

    AceError
    ├── ConfigError        config.py: a config file or variable that cannot be used
    ├── StoreError         store/: the store cannot be opened or used
    ├── ClaudeMemError     store/claude_mem_sql.py: a claude-mem database that cannot be read (`ace import`)
    ├── UnsafeDirError     paths.py: a data directory not private to the user (also a PermissionError)
    ├── SettingsError      integrations/claude_settings.py: Claude Code's settings file can't be changed
    ├── SyncError          integrations/agent_files.py: `ace sync` refused a target
    ├── PlaybookError      playbook/playbook.py: a delta the playbook refuses
    ├── SectionError       playbook/sections.py: an unknown section name
    ├── TransferError      playbook/transfer.py: an import file that cannot be taken
    ├── BootstrapError     bootstrap/: a repository bootstrap that cannot run
    ├── PatternError       learning/code_patterns.py: a bad code-pattern file
    ├── ReflectorError     learning/reflector.py: a reflector gave no usable reflection
    ├── ClaimLost, AlreadyLearned   learning/pipeline.py: a job's lease went away / it was learned
    ├── TranscriptError    observe/transcript.py: a transcript file that cannot be read
    ├── ToolError          mcp_server/answer.py: an MCP tool call refused, with the reason the agent sees
    ├── McpUnavailable     mcp_server/server.py: `ace mcp` without the `mcp` package (names the install)
    ├── RemoteError        team_client/remote.py: a team-server binding or exchange that cannot go on
    │   ├── Unreachable    team_client/client.py: the server did not answer
    │   └── ServerRefused  team_client/client.py: the server answered with a refusal (its reason kept)
    ├── ApiError           server/auth.py: a team API request refused (status, code, message)
    ├── TeamDBError        server/storage/: the team server's storage refused an operation
    │   ├── Conflict, NotFound       dialect.py: a write that conflicts / a row that is not there
    │   ├── ClientTaken, Stale       ops.py: a client id bound to another token / an approval of changed content
    │   └── Alone          batch.py: a group of pushes that cannot go together (each is applied alone)
    ├── LLMError           llm/: a model call failed (not installed, not configured, refused…)
    │   └── LLMTimeout     the provider did not answer within `llm.timeout_s`
    ├── BudgetExceeded     llm/budget.py: a call would go past `llm.max_calls_per_*` / `llm.max_tokens_per_day`
    └── InvalidOutput      llm/structured.py: a reply that holds no usable JSON object, after the one retry

The classes of the modules that own the config, the integrations and the model providers are
defined here and re-exported where they were (`config.ConfigError`, `llm.LLMError`…); the others
stay next to the code that raises them, deriving from `AceError`. Each keeps the builtin base it
had (ValueError, RuntimeError, PermissionError) as a second base, so an `except ValueError`
written before the tree still catches what it caught.

The three ways a model call fails to give a usable answer stay siblings, as they were: a caller
with a fallback catches `llm.FAILURES`; `except LLMError` keeps meaning "the call itself failed".

Cost: stdlib-only and import-free; hooks load it through `config` and `store`.
"""

__all__ = ["AceError", "ConfigError", "SettingsError", "SyncError", "LLMError", "LLMTimeout", "BudgetExceeded",
           "InvalidOutput"]


class AceError(Exception):
    """Base of every error ace-engine raises on purpose; the message names the problem and the fix."""


class ConfigError(AceError, ValueError):
    """A config file or variable that cannot be used; the message names it and the fix."""


class SettingsError(AceError):
    """Claude Code's settings file cannot be read or changed safely; the message says why and the fix."""


class SyncError(AceError, ValueError):
    """`ace sync` refused a target (outside the project, a symlink out, unreadable); nothing was written."""


class LLMError(AceError, RuntimeError):
    """A model call failed (not installed, not configured, refused, transport error); says the fix."""


class LLMTimeout(LLMError):
    """The provider did not answer within the timeout."""


class BudgetExceeded(AceError, RuntimeError):
    """A call would go past a configured budget; the message names the budget and the key."""


class InvalidOutput(AceError, ValueError):
    """A reply that holds no usable JSON object; the message says what was wrong."""
