"""The protocol every agent module fills in: one `Agent` (or a subclass) named `AGENT`.

What an agent is to ace-engine, as data: its hook events (`events`: the agent's event → the
Claude Code event ace-engine handles it as; events not listed are not installed), which of them
take added context in their answer (`context_events`), what it lacks (`lost`: our event → why,
read by `ace install`, `ace doctor` and the docs), its tools (`tools`: their name → our tool and
field renames, `agents.tools`), the hook entries' shape (`timeout_scale`: ms per second of its
`timeout`; `matchers`; `named_handlers`: a `name` on each handler), its installer and transcript
readers (module names under `integrations/` and `observe/`: named, not imported, so a hook never
loads them), what `ace install` and `ace doctor` tell its user (`trust`, `hooks_off_fix`,
`probe`), `legacy` (why it is kept for those still on it, or "") and `empty_answer` (what is
printed when there is nothing to say: "" prints nothing, Antigravity wants `{}`).

Behaviour, overridable: `adapt(native, event, payload)` turns the agent's payload into the one
Claude Code would have sent (tool names and fields through `agents.tools.to_canonical`), so
`HookInput.parse`, capture, learning and injection run unchanged; `answer(native, obj)` rewrites
the handler's Claude-shaped answer into what the agent accepts for that event, or None.

Cost: stdlib only, no `typing` at run time (the hooks import this).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any


class Agent:
    __slots__ = ("name", "events", "context_events", "lost", "tools", "patch_tools", "timeout_scale", "matchers",
                 "named_handlers", "handlers", "installer", "readers", "trust", "hooks_off_fix", "probe", "legacy",
                 "scopes", "empty_answer")

    def __init__(self, name: str, *, events: "dict[str, str]", context_events: "frozenset[str]" = frozenset(),
                 lost: "dict[str, str] | None" = None, tools: "dict[str, tuple[str, dict[str, str]]] | None" = None,
                 patch_tools: "frozenset[str]" = frozenset(), timeout_scale: int = 1,
                 matchers: "dict[str, str] | None" = None, named_handlers: bool = False,
                 handlers: "dict[str, str] | None" = None, installer: "str | None" = None,
                 readers: "tuple[str, ...]" = (), trust: "tuple[str, str, str]" = ("", "", ""), hooks_off_fix: str = "",
                 probe: "tuple[str, dict[str, Any], str] | None" = None, legacy: str = "",
                 scopes: "tuple[str, ...]" = ("project", "user"), empty_answer: str = ""):
        self.name = name
        self.events = events
        self.context_events = context_events
        self.lost = lost or {}
        self.tools = tools or {}
        self.patch_tools = patch_tools
        self.timeout_scale = timeout_scale
        self.matchers = matchers or {}
        self.named_handlers = named_handlers
        self.handlers = handlers or {}  # the agent's event → the `hooks.handlers` function run for it
        self.installer = installer
        self.readers = readers
        self.trust = trust  # (`ace install` says for every scope, adds for the project's, `ace doctor` reminds)
        self.hooks_off_fix = hooks_off_fix
        self.probe = probe  # (the agent's event, its payload, "denies" | "answers") for `ace doctor`
        self.legacy = legacy
        self.scopes = scopes
        self.empty_answer = empty_answer  # printed when there is nothing to answer ("" = print nothing)

    @property
    def label(self) -> str:
        from .registry import label

        return label(self.name)

    def event_for(self, native: str) -> str:
        """Our event for the agent's `native` event; "" when we do not handle it."""
        return self.events.get(native, "")

    def adapt(self, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
        """(our event, a Claude-Code-shaped payload) for the agent's `payload` of `native`."""
        out = dict(payload)
        out["hook_event_name"] = event
        if "tool_name" in out:
            from .tools import to_canonical

            out["tool_name"], out["tool_input"] = to_canonical(self.name, out.get("tool_name"), out.get("tool_input"))
        return event, out

    def answer(self, native: str, obj: "dict[str, Any] | None") -> "dict[str, Any] | None":
        """The handler's answer as the agent accepts it for `native`; None when nothing is left.
        Kept: `systemMessage`, and added context on the agent's context events (it rejects what
        it does not know)."""
        if not obj:
            return None
        out: dict[str, Any] = {}
        if isinstance(obj.get("systemMessage"), str):
            out["systemMessage"] = obj["systemMessage"]
        specific = obj.get("hookSpecificOutput")
        if isinstance(specific, dict):
            context = specific.get("additionalContext")
            if isinstance(context, str) and context and native in self.context_events:
                out["hookSpecificOutput"] = {"hookEventName": native, "additionalContext": context}
            else:
                kept = self.answer_specific(native, specific)
                if kept:
                    out["hookSpecificOutput"] = kept
        return out or None

    def answer_specific(self, native: str, specific: "dict[str, Any]") -> "dict[str, Any] | None":
        """A `hookSpecificOutput` other than added context that the agent takes for `native`."""
        return None
