"""How untrusted text is shown: run names, query and document ids, query texts, segment names,
file paths.

Such text comes from files and can hold anything, including terminal control sequences (an OSC
``ESC ] 0 ; ... BEL`` sets the window title, OSC 52 writes the clipboard, CSI sequences move
the cursor or clear the screen) and characters that turn a Markdown table into raw HTML. The rule:

- Human-facing renderings (rich tables, explain text, Markdown, LaTeX, HTML, error messages,
  progress labels) always show control characters as visible escapes, as Python's ``repr``
  writes them (:func:`visible`): ``\\x1b``, ``\\x9b``, ``\\n``, ``\\u2028``.
- Data formats (TSV, trec_eval lines, TREC runs) keep ids byte-exact when they go to a file or
  a pipe, since escaping them would break joins with the qrels; at a terminal they are escaped
  too (:func:`terminal_safe`). JSON escapes its control characters itself, as JSON escapes,
  so it stays exact data everywhere (:func:`json_safe`).

One module, used by every renderer and by the CLI's error line, so that the rule cannot drift.
Standard library only: it sits below everything else.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable

__all__ = [
    "json_safe",
    "markdown_code",
    "markdown_fence",
    "markdown_text",
    "terminal_safe",
    "visible",
]

# C0 and C1 controls and DEL (they drive terminals), the line and paragraph separators (they
# break lines in editors and JavaScript) and the bidirectional controls (they reorder what is
# shown, so that text reads differently from what it is).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# At a terminal, a data format keeps its own layout: newlines and the TSV tabs.
_TERMINAL_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# What JSON leaves raw (it escapes only U+0000-U+001F itself).
_JSON_RAW = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""``text`` with every control character written as a visible escape, as ``repr`` does.

    Backslashes themselves are left as they are, so that paths and names read naturally.

    >>> visible("q1\x1b]0;pwned\x07")
    'q1\\x1b]0;pwned\\x07'
    >>> visible("line one\nline two\u2028")
    'line one\\nline two\\u2028'
    >>> visible("Müller's run")
    "Müller's run"
    """
    return _CONTROL.sub(_escape, text)


def terminal_safe(text: str, output: str | None) -> str:
    """A data format's text as it should be written to ``output`` (``None`` or ``"-"``: stdout).

    To a terminal, control characters other than newline and tab become visible escapes; to a
    file or a pipe the text is returned unchanged, byte-exact.
    """
    if not _writes_to_terminal(output):
        return text
    return _TERMINAL_CONTROL.sub(_escape, text)


def _writes_to_terminal(output: str | None) -> bool:
    if output is None or output == "-":
        try:
            return sys.stdout.isatty()
        except (AttributeError, ValueError):  # replaced or closed stdout
            return False
    try:
        if not stat.S_ISCHR(os.stat(output).st_mode):
            return False  # a regular file, a FIFO, a missing file: data, kept exact
        descriptor = os.open(output, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return os.isatty(descriptor)  # -o /dev/tty, -o /dev/stdout at a terminal
    finally:
        os.close(descriptor)


def json_safe(document: str) -> str:
    r"""A JSON document (from ``json.dumps(..., ensure_ascii=False)``) with the control characters
    JSON leaves raw written as ``\uXXXX`` escapes: DEL, C1, U+2028/2029, bidi controls.

    These characters occur only inside JSON strings, so the escapes keep the document valid and
    its data exactly the same, while no terminal or editor acts on them.

    >>> json_safe('{"run": "a\x9b2J"}')
    '{"run": "a\\u009b2J"}'
    """
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|&~])")


def markdown_text(text: str) -> str:
    r"""``text`` as Markdown that renders as exactly that text: inline, in a paragraph or in a
    table cell.

    Control characters (newlines included) become visible escapes, and every character that
    Markdown or its raw HTML would read (``<``, ``>``, ``&``, ``|``, backticks, emphasis and
    link brackets, headings) is backslash-escaped.

    >>> markdown_text("<script>a|b</script> & `x`")
    '\\<script\\>a\\|b\\</script\\> \\& \\`x\\`'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(text))


def markdown_code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it contains."""
    text = visible(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_fence(lines: Iterable[str]) -> list[str]:
    """Lines as a fenced code block whose fence no line can close: longer than any run of
    backticks in them; control characters visible."""
    body = [visible(line) for line in lines]
    longest = max((len(m) for line in body for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]
