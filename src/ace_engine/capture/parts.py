"""The text of another agent's tool result, read whole: every text part, wherever it is nested.

Gemini hands a tool's result back as `llmContent` — a string, a `Part`, or a list of them, where a
part is `{text}`, a `{functionResponse: {id, name, response: {...}}}` whose `response` is whatever
the tool returned (`{output}`, `{error}`, an MCP tool's `{content: [{type, text}]}`…), or inline data.
Codex's function outputs are a string, `{content, success}`, or a list of `{type, text}` items; a
code-mode cell prints `JSON.stringify` of nested results. What the model read is in any of those
parts: a reader that keeps only `text` (or only `output`) leaves a package named inside a
`functionResponse` unseen by capture and by provenance. `text_of` is the one reader every
agent path uses (`hooks/agents.py`, `observe/gemini_chat.py`, `observe/codex_rollout.py`,
`observe/codex_code_mode.py`): every string leaf, in document order, except the parts that are not
text the model read — ids, names, types, MIME types, a model's own thoughts, inline base64 data.

Cost: one walk of the value, bounded by `MAX_LEAVES` strings and `MAX_DEPTH` levels (a hook's
payload is capped before it gets here; the caps apply to the joined text after). Stdlib only, no
imports: the hooks use it.
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

MAX_LEAVES = 10_000
MAX_DEPTH = 32
# The agent's own labels of its parts, not text the model read: ids, names, kinds, roles. Skipped only
# in the agent's structure; what a tool returned (a `functionResponse`'s `response`, a JSON result) is
# the tool's to shape, so every string in it is read, whatever its key.
_LABELS = frozenset(("id", "name", "type", "mimeType", "mime_type", "call_id", "callId", "tool_use_id",
                     "toolCallId", "thoughtSignature", "role", "status", "image_url", "detail"))


def text_of(value: "Any", *, whole: bool = False) -> str:
    """Every text part of `value` (module docstring), joined by newlines; "" when it has none.
    `whole`: `value` is what a tool returned itself (no agent labels to skip)."""
    out: list[str] = []
    _walk(value, out, 0, whole)
    return "\n".join(out)


def _walk(value: "Any", out: list[str], depth: int, whole: bool) -> None:
    if len(out) >= MAX_LEAVES or depth > MAX_DEPTH:
        return
    if isinstance(value, str):
        if value:
            out.append(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if whole:
            out.append(str(value))
    elif isinstance(value, list):
        for item in value:
            _walk(item, out, depth + 1, whole)
    elif isinstance(value, dict):
        if value.get("thought") is True and not whole:
            return  # the model's own reasoning, not what the tool said
        blob = "mimeType" in value or "mime_type" in value  # inline data: `data` is base64, not text
        for key, item in value.items():
            if blob and key == "data":
                continue
            if key == "functionResponse" and isinstance(item, dict):
                _walk(item.get("response"), out, depth + 1, True)  # its id and name are labels
            elif whole or key not in _LABELS or isinstance(item, (dict, list)):
                _walk(item, out, depth + 1, whole)
