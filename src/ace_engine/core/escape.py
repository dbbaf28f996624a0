"""Text is data: one escaping function per medium that stored or learned text is shown in.

Everything ace-engine stores came, at some point, from somewhere it does not control (a tool's
output, a transcript, a repository file, an imported playbook). Wherever that text is shown, it
passes through exactly one of these, chosen by where it lands:

* `terminal(text)` — the CLI's rich output: control characters and ANSI escapes made visible,
  rich markup (`[bold]`, `[/tmp/log]`) escaped so it prints literally and never raises
  (`markup=False`: the cleaned text alone, for a rich `Text`, which is never parsed);
* `injected(text)` — one line inside a block the hooks inject into the model's context
  (`<ace-patterns>` …): no tag can be opened or closed, no line can be started, no turn marker
  (`Human:`, `System:`) can be faked;
* `markdown(text)` — one line of a bullet in CLAUDE.md / AGENTS.md: the same, plus no HTML comment
  (so the `ACE_SECTION` markers can't be faked);
* `html(text)` — the dashboard's pages;
* `plain(text)` — not an escape but the text as a reader sees it: ANSI sequences and control
  characters removed (tab and newline kept). The safety screens and lesson content read this, so
  `npx \x1b[0mevil` is judged as the `npx evil` a terminal or a model would read;
* `quoted(text, limit)` — someone else's words inside an injected line, as a quotation: one line,
  clipped, its own double quotes turned into single ones so the quotation can't be closed early,
  then wrapped in `"…"` (the line still goes through `injected` where it is injected).
* `normalized(text)` — not an escape but the one normalisation of lesson text: NFKC, and
  no Unicode tag characters (U+E0000–E007F), bidi controls, zero-width or other invisible format
  characters, variation selectors or soft hyphens. A model reads what those hide (tag characters
  spell ASCII no reader sees); the screens and a reviewer would not. Applied at every door a
  lesson passes: each content write (`playbook.clean_content`, and the store's bullet writes),
  every injected line (`injected`, so SessionStart / UserPromptSubmit blocks and MCP answers) and
  every synced line (`markdown`, so CLAUDE.md / AGENTS.md).

JSON needs no function: `json.dumps` escapes by construction. Stdlib only and cheap (compiled
regexes, no imports at call time): the hooks call `injected` on every injection.
"""

import re

__all__ = ["strip_controls", "plain", "one_line", "terminal", "injected", "markdown", "html", "quoted",
           "normalized"]

# The patterns are compiled on first use (`_rx`): the hooks import this module on every run and
# most runs render nothing. Sources:
_SOURCES = {
    # C0 controls but tab and newline, DEL, C1 controls, and the Unicode direction overrides and
    # isolates that make text display differently from what it is ("Trojan Source").
    "controls": "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]",
    # `<` that starts something a reader could take for a tag: `<name`, `</name`, `<!`, `<?`,
    # `< system >`. A closing `>` is harmless once the opener is neutralised, so only the opener is
    # escaped: `x -> y` stays as it is.
    "tag_open": r"<(?=\s*(?:/\s*)?[A-Za-z!?])",
    # Words a model may read as a new turn or a higher-priority voice (`... Human: …`).
    "turn": r"(?i)\b(human|assistant|system|user|developer)(\s*):(?=\s)",
    # Rich markup: exactly what rich takes for a tag (rich/markup.py RE_TAGS): `[`, a lowercase
    # letter, `#`, `/` or `@`, then anything but `[` (newlines too) up to `]`, after backslashes.
    "rich_tag": r"(\\*)(\[[a-z#/@][^\[]*?\])",
    # ANSI escape sequences as terminals read them: CSI (`ESC [` … final byte, or its 8-bit form),
    # OSC / DCS / PM / APC strings up to BEL or ST, and two-character escapes (`ESC c`).
    "ansi": "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?"
            "|(?:\x1b[\\]PX^_]|[\x90\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"
            "|\x1b[ -~]?",
    # Lone surrogates (undecodable bytes under `surrogateescape`): no terminal can encode them.
    "surrogate": "[\ud800-\udfff]",
    # What `normalized` drops: characters that change what a model reads but not what a person
    # sees. Tag characters; bidi embeddings, overrides, isolates and marks (LRM, RLM, ALM);
    # zero-width space / joiners, word joiner and the invisible operators, BOM; soft hyphen,
    # combining grapheme joiner, Mongolian vowel separator, Hangul and Khmer fillers; variation
    # selectors (which can carry bytes, one per selector, behind an emoji); interlinear
    # annotation marks and the shorthand format controls.
    "invisible": "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
                 "\u200b-\u200d\u2060-\u2064\ufeff\u00ad\u034f\u180b-\u180f\u115f\u1160\u3164\uffa0"
                 "\u17b4\u17b5\ufe00-\ufe0f\U000e0100-\U000e01ef\ufff9-\ufffb\U0001bca0-\U0001bca3]",
}
_compiled: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    rx = _compiled.get(name)
    if rx is None:
        rx = _compiled[name] = re.compile(_SOURCES[name])
    return rx


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def strip_controls(text: str) -> str:
    """Control characters (ESC included, so no ANSI sequence survives) shown as `\\xNN`."""
    text = str(text)
    if text.isprintable():  # C speed; true for most lines (it is false for \n and \t too)
        return text
    return _rx("controls").sub(_visible, text)


def plain(text: str) -> str:
    """`text` as a reader sees it: ANSI sequences and control characters (but tab and newline)
    removed, the Unicode direction overrides too. Linear: each pattern is one pass without nesting."""
    text = str(text)
    if text.isprintable():
        return text
    return _rx("controls").sub("", _rx("ansi").sub("", text))


def normalized(text: str) -> str:
    """`text` in NFKC with every invisible character of the `invisible` class removed (see the
    module doc). Idempotent; ASCII text is returned as it is (one O(1) check)."""
    text = str(text)
    if text.isascii():
        return text
    import unicodedata  # here: hooks that render nothing non-ASCII never load it

    rx = _rx("invisible")
    # Dropped before NFKC (so a hidden joiner can't compose with what follows) and after it
    # (should a compatibility mapping ever produce one). The ellipsis is kept: NFKC's "..." would
    # make a lesson's elided command read as three more symbols (the quality filter counts letters),
    # and it is no look-alike of anything a screen reads.
    text = rx.sub("", text)
    return rx.sub("", "\u2026".join(unicodedata.normalize("NFKC", part) for part in text.split("\u2026")))


def one_line(text: str) -> str:
    """Whitespace runs, newlines included, become one space; controls made visible."""
    return " ".join(strip_controls(text).split())


def terminal(text: object, *, markup: bool = True) -> str:
    """For the CLI (rich): control characters, ANSI escapes and lone surrogates shown as `\\xNN` /
    `\\udcNN`. With `markup` (the default) the result is also rich markup that prints literally,
    for a value placed inside markup the code wrote: every tag is escaped the way
    `rich.markup.escape` does it, and a trailing backslash can't escape the code's next tag.
    `markup=False` gives the cleaned text itself, for a rich `Text` (cli/output.py builds those)."""
    clean = _rx("surrogate").sub(_visible, strip_controls("" if text is None else str(text)))
    if not markup:
        return clean
    if "[" in clean:
        clean = _rx("rich_tag").sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", clean)
    # A trailing run of n backslashes would pair with the caller's next `[tag]`; rich halves a run
    # before a tag and escapes the tag when the run is odd, so 2n prints n and escapes nothing.
    # (`rich.markup.escape` only fixes a single one: `\\\\\\` would still escape the tag.)
    trailing = len(clean) - len(clean.rstrip("\\"))
    return clean + "\\" * trailing


def injected(text: object) -> str:
    """One line of lesson text inside an injected block: it can't open or close any tag, start a
    line, or pose as a turn of the conversation."""
    line = one_line(normalized("" if text is None else str(text)))
    if "<" in line:
        line = _rx("tag_open").sub("&lt;", line)
    if ":" in line:
        line = _rx("turn").sub(lambda m: f"{m.group(1)}{m.group(2)}\u2236", line)  # ∶ (ratio), not a colon
    return line


def markdown(text: object) -> str:
    """One line of lesson text in a Markdown instruction file (CLAUDE.md, AGENTS.md): as
    `injected`, and no HTML comment can open or close (the sync markers are comments)."""
    return injected(text).replace("-->", "--&gt;")


def html(text: object) -> str:
    """For HTML pages: `&`, `<`, `>`, quotes escaped; controls made visible."""
    return (strip_controls("" if text is None else str(text)).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;"))


_QUOTES = str.maketrans(dict.fromkeys("\"\u201c\u201d\u201e\u201f\u2033\u2036\uff02\u00ab\u00bb", "'"))


def quoted(text: object, limit: int = 200) -> str:
    """Someone else's words as one quotation: `"…"`, at most `limit` characters inside (cut at a
    word, with `…`), no double quote inside to end it early, controls made visible."""
    line = one_line("" if text is None else str(text)).translate(_QUOTES)
    if len(line) > limit:
        head = line[: max(1, limit - 1)]
        space = head.rfind(" ")
        if space > limit * 0.6:
            head = head[:space]
        line = head.rstrip(" ,;:-\u2013\u2014") + "\u2026"
    return f'"{line}"'
