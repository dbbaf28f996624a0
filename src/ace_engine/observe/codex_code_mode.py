"""Codex "code mode" (newer Codex Desktop): the model calls ONE freeform tool, `exec`, whose input is
JavaScript calling the real tools (`await tools.exec_command({cmd: "…", workdir: "…"})`, several in
`Promise.all([...])`, `const patch = "*** Begin Patch…"; await tools.apply_patch(patch)`,
`tools.write_stdin({...})`). This module reads such a script back into the tool calls it makes, so
`codex_rollout` can record each as the event the plain tools give (Bash, per-file edits…).

Contract: the script is never executed. It is scanned: `tools.NAME(` call sites, their argument (a
flat object literal or a string, or the name of a `const`/`let`/`var` bound to a string literal),
strings in JSON/JS escapes or a template literal without `${…}`; `tools.x(` inside a string is
text, not a call. A script with a call this cannot read (a computed or nested argument, a name
bound twice, a call in a comment or in a literal it could not read plainly), more than MAX_CALLS
calls, or no call at all gives None: the caller keeps the `exec` event unchanged (nothing lost,
nothing invented). Output: the exec's answer is a header part (`Script completed`, `Wall time …`,
`Output:`) then one part per `text(…)` the script printed. When there is one part per call, each
call gets its own part (and the exit code a `JSON.stringify(result)` part states); otherwise every
call gets the whole output and no exit code.

Cost: linear in the script (capped at MAX_SCRIPT characters, MAX_CALLS calls); no recursion.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from ..capture.parts import text_of

MAX_SCRIPT = 400_000
MAX_CALLS = 64
# The field a call of these tools cannot go without.
_NEEDED: dict[str, tuple[str, type]] = {"exec_command": ("cmd", str), "write_stdin": ("session_id", int)}
_CALL = re.compile(r"\btools\.([A-Za-z_$][\w$]*)\s*\(")
_BINDING = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_RUNNING = re.compile(r"^Script running with cell ID (\w+)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def string_at(src: str, i: int) -> tuple[str, int] | None:
    """(the value of the string literal starting at src[i], the index after it), or None when there
    is none there or it is not a plain literal (a template literal with `${…}`)."""
    if i >= len(src) or src[i] not in "\"'`":
        return None
    quote, out, j = src[i], list[str](), i + 1
    while j < len(src):
        ch = src[j]
        if ch == quote:
            return "".join(out), j + 1
        if quote == "`" and ch == "$" and src.startswith("${", j):
            return None
        if ch == "\n" and quote != "`":
            return None
        if ch != "\\":
            out.append(ch)
            j += 1
            continue
        nxt = src[j + 1] if j + 1 < len(src) else ""
        if nxt == "u" and src.startswith("{", j + 2):
            end = src.find("}", j + 3)
            code = src[j + 3:end] if end > 0 else ""
            if not re.fullmatch(r"[0-9a-fA-F]{1,6}", code) or int(code, 16) > 0x10FFFF:
                return None
            out.append(chr(int(code, 16)))
            j = end + 1
        elif nxt in "ux":
            width = 4 if nxt == "u" else 2
            code = src[j + 2:j + 2 + width]
            if not re.fullmatch("[0-9a-fA-F]{" + str(width) + "}", code):
                return None
            out.append(chr(int(code, 16)))
            j += 2 + width
        elif nxt == "\n":  # a line continuation
            j += 2
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            j += 2
    return None


def _skip_space(src: str, i: int) -> int:
    while i < len(src) and src[i] in " \t\r\n":
        i += 1
    return i


def _value_at(src: str, i: int, strings: dict[str, str]) -> tuple[object, int] | None:
    """A scalar value at src[i]: a string literal, a number, true/false/null, or the name of a
    string binding. None for anything else (an object, an expression…)."""
    found = string_at(src, i)
    if found is not None:
        return found
    if i < len(src) and src[i] in "\"'`":
        return None
    number = _NUMBER.match(src, i)
    if number:
        text = number.group()
        return (float(text) if "." in text else int(text)), number.end()
    ident = _IDENT.match(src, i)
    if ident:
        word = ident.group()
        known: dict[str, object] = {"true": True, "false": False, "null": None}
        if word in known:
            return known[word], ident.end()
        if word in strings:
            return strings[word], ident.end()
    return None


def _object_at(src: str, i: int, strings: dict[str, str]) -> tuple[dict[str, Any], int] | None:
    """A flat object literal `{key: value, …}` at src[i] (keys bare or quoted, values scalars)."""
    if i >= len(src) or src[i] != "{":
        return None
    out: dict[str, Any] = {}
    i = _skip_space(src, i + 1)
    while i < len(src) and src[i] != "}":
        key_str = string_at(src, i)
        ident = None if key_str else _IDENT.match(src, i)
        if key_str is None and ident is None:
            return None
        key, i = key_str if key_str else (ident.group(), ident.end())  # type: ignore[union-attr]
        i = _skip_space(src, i)
        if i >= len(src) or src[i] != ":":
            return None
        value = _value_at(src, _skip_space(src, i + 1), strings)
        if value is None:
            return None
        out[key], i = value[0], _skip_space(src, value[1])
        if i < len(src) and src[i] == ",":
            i = _skip_space(src, i + 1)
        elif i < len(src) and src[i] != "}":
            return None
    return (out, i + 1) if i < len(src) else None


def _string_bindings(src: str, spans: list[tuple[int, int, bool]]) -> dict[str, str]:
    """`const NAME = "literal"` bindings (the patch text is usually one); a name bound twice is
    left out (which value a call sees is not known without running the script)."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    for match in _BINDING.finditer(src):
        if _span_at(spans, match.start()) is not None:
            continue
        name, found = match.group(1), string_at(src, match.end())
        if name in seen:
            out.pop(name, None)
        elif found is not None:
            out[name] = found[0]
        seen.add(name)
    return out


def _quoted_spans(src: str) -> list[tuple[int, int, bool]]:
    """[(start, end, clean)] of the string literals and comments, in order (one pass); clean when
    a plain literal was read there, not for a comment or a literal read only roughly (so a
    `tools.` there may be code this scanner misread)."""
    spans: list[tuple[int, int, bool]] = []
    i = 0
    while i < len(src):
        ch = src[i]
        if ch in "\"'`":
            found = string_at(src, i)
            end = found[1] if found else _closing(src, i)
            spans.append((i, end, found is not None))
            i = end
        elif src.startswith(("//", "/*"), i):
            end = src.find("\n" if src[i + 1] == "/" else "*/", i + 2)
            end = len(src) if end < 0 else end + (0 if src[i + 1] == "/" else 2)
            spans.append((i, end, False))
            i = end
        else:
            i += 1
    return spans


def _closing(src: str, i: int) -> int:
    """Past the quote closing the one at src[i], escapes skipped (for a literal not read as plain)."""
    j = i + 1
    while j < len(src) and src[j] != src[i]:
        j += 2 if src[j] == "\\" else 1
    return min(j + 1, len(src))


def _span_at(spans: list[tuple[int, int, bool]], at: int) -> tuple[int, int, bool] | None:
    k = bisect.bisect_right(spans, (at, 1 << 62, True)) - 1
    return spans[k] if k >= 0 and spans[k][0] <= at < spans[k][1] else None


def calls(script: object) -> list[tuple[str, dict[str, Any]]] | None:
    """[(tool name, its input)] in the order the script names them, or None when the script is not
    read (see the module's contract). `apply_patch`'s input comes as `{"input": patch}`, the shape
    of the plain freeform call."""
    if not isinstance(script, str) or len(script) > MAX_SCRIPT:
        return None
    quoted = _quoted_spans(script)
    strings = _string_bindings(script, quoted)
    out: list[tuple[str, dict[str, Any]]] = []
    for match in _CALL.finditer(script):
        span = _span_at(quoted, match.start())
        if span is not None and span[2]:  # `tools.x(` written in a string (a patch's text) is no call
            continue
        if span is not None or len(out) >= MAX_CALLS:  # in a comment or a literal misread: unsure
            return None
        name, at = match.group(1), _skip_space(script, match.end())
        obj = _object_at(script, at, strings)
        if obj is not None:
            args: dict[str, Any] = obj[0]
        else:
            scalar = _value_at(script, at, strings)
            if scalar is None or not isinstance(scalar[0], str):
                return None
            args = {"input": scalar[0]}
        field, kind = _NEEDED.get(name, ("", object))
        if (field and not isinstance(args.get(field), kind)) or \
                (name == "apply_patch" and not isinstance(args.get("input"), str)):
            return None
        out.append((name, args))
    return out or None


def output_parts(payload: dict[str, Any]) -> tuple[str, list[str]]:
    """(the header, the printed parts) of an exec's answer (a string is a header alone)."""
    raw = payload.get("output")
    if isinstance(raw, dict):
        raw = raw.get("content")
    if isinstance(raw, str):
        head, sep, rest = raw.partition("Output:\n")
        return head + sep, [rest] if rest else []
    texts = [text_of(c) for c in raw if isinstance(c, (dict, str))] if isinstance(raw, list) else []
    return (texts[0], texts[1:]) if texts else ("", [])


def running_cell(payload: dict[str, Any]) -> str | None:
    """The cell id when the answer says the script is still running (its end comes in a `wait`)."""
    match = _RUNNING.match(output_parts(payload)[0])
    return match.group(1) if match else None


def _part(text: str) -> tuple[str, int | None]:
    """A printed part: `JSON.stringify(result)` of a tool call gives its output and exit code."""
    if text.startswith("{") and '"output"' in text:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            code = data.get("exit_code")
            # What else the result carried is read too (a nested `content`, `stderr`…: capture/parts.py).
            rest = text_of({k: v for k, v in data.items() if k not in ("output", "exit_code")}, whole=True)
            return data["output"] + ("\n" + rest if rest else ""), \
                code if isinstance(code, int) and not isinstance(code, bool) else None
    return text, None


def split_output(parts: list[str], n: int) -> list[tuple[str, int | None]]:
    """One (output, exit code or None) per call: part by part when there is one per call, else
    the whole output for each call (which of them printed what is not known) and no exit code."""
    if n > 1 and len(parts) == n:
        return [_part(p) for p in parts]
    if n == 1 and len(parts) == 1:
        return [_part(parts[0])]
    whole = "\n".join(parts)
    return [(whole, None)] * n
