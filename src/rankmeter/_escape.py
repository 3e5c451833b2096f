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

One escaper per format, all here: :func:`visible` (text, terminals), :func:`terminal_safe`
(data formats at a terminal), :func:`json_safe`, :func:`markdown_text` (with
:func:`markdown_code` and :func:`markdown_fence`), :func:`html_text`, :func:`latex_text`, and
:func:`spreadsheet_cell` (a text cell of a CSV file a spreadsheet may open; the readers undo
it with :data:`SPREADSHEET_ESCAPED`).
One module, used by every renderer and by the CLI's error line, so that the rule cannot drift.
Standard library only: it sits below everything else.
"""

from __future__ import annotations

import html
import os
import re
import stat
import sys
from collections.abc import Iterable

__all__ = [
    "SPREADSHEET_ESCAPED",
    "html_text",
    "json_safe",
    "latex_text",
    "markdown_code",
    "markdown_fence",
    "markdown_text",
    "spreadsheet_cell",
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


def html_text(text: object) -> str:
    r"""``text`` escaped for HTML text and attribute values (quotes too), control characters
    shown as visible escapes.

    The one HTML escaper: the report templates' autoescape calls it for every value they
    insert, and the SVG plots call it directly. It writes quotes as :func:`html.escape` does
    (``&#x27;``, ``&quot;``), so pages keep the bytes they have always had.

    >>> html_text("<b>Müller's & \"x\"</b>\x1b")
    '&lt;b&gt;Müller&#x27;s &amp; &quot;x&quot;&lt;/b&gt;\\x1b'
    """
    return html.escape(visible(str(text)), quote=True)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # In LaTeX's default OT1 encoding these print as other glyphs: < > | as ¡ ¿ —, " as ”,
    # ` as ‘ (OT1 has no straight double quote, the typewriter font has).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r'\texttt{"}',
    "`": r"\textasciigrave{}",
    # A row starting with [ or * after \\ (or \midrule) would be read as their argument.
    "[": "{[}",
    "]": "{]}",
    "*": "{*}",
}
# Pairs that pdflatex's fonts join into one glyph (-- is an en dash, '' a closing quote, ,, a low
# quote in T1): an empty group after the first character keeps both.
_LATEX_LIGATURES = frozenset({"--", "''", ",,"})
# The non-ASCII characters pdflatex typesets in a default document (OT1 fonts, UTF-8 input):
# Latin-1 and Latin Extended-A less the letters only T1 fonts have, and common punctuation.
# Any other character stops pdflatex ("Unicode character ... not set up for use with LaTeX").
_LATEX_TEXT = (
    frozenset(map(chr, range(0xA0, 0x180))) - frozenset("«»ÐÞðþĄąĐđĘęĦħĮįĸĿŀŉŊŋŦŧŲųſ")
) | frozenset("‘’“”–—…•€™")


def latex_text(text: str) -> str:
    r"""``text`` as LaTeX text that pdflatex typesets as exactly these characters.

    Control characters, and characters pdflatex has no glyph for by default, are shown as
    visible escapes (````, ``检``), as in every other human-facing output.

    >>> latex_text("bm25_k1 & 50% <new>")
    'bm25\\_k1 \\& 50\\% \\textless{}new\\textgreater{}'
    """
    shown = visible(text)
    out = []
    for i, char in enumerate(shown):
        if char in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[char])
        elif char.isascii() or char in _LATEX_TEXT:
            out.append(char)
            if shown[i : i + 2] in _LATEX_LIGATURES:
                out.append("{}")
        else:
            code = ord(char)
            escape = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
            out.append(r"\textbackslash{}" + escape[1:])
    return "".join(out)


# What a spreadsheet reads as a formula at the start of a cell (OWASP's list: CSV injection),
# and the apostrophe that makes a cell text; an apostrophe is added before either.
_SPREADSHEET_FIRST = "=+-@\t\r"
#: A cell :func:`spreadsheet_cell` escaped (a regular expression for Python's ``re`` and RE2,
#: as Arrow's compute uses it): the apostrophe to remove is the first character, group 1 the rest
#: of the cell's first two characters.
SPREADSHEET_ESCAPED = "^'([=+\\-@\t\r'])"


def spreadsheet_cell(text: str) -> str:
    """A text cell of a CSV file, safe to open in a spreadsheet: a cell that begins with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return (a formula to a spreadsheet) gets a leading
    apostrophe, as OWASP advises, and so does a cell that begins with an apostrophe followed
    by one of those or another apostrophe, so that the reader's undoing (remove the apostrophe
    of a cell matching :data:`SPREADSHEET_ESCAPED`) gives back exactly the text written.

    Numbers are not text cells: a grade of -1 is written as it is.

    >>> [spreadsheet_cell(t) for t in ("=1+1", "@SUM(A1)", "-x", "'=x", "'ok", "d1")]
    ["'=1+1", "'@SUM(A1)", "'-x", "''=x", "'ok", 'd1']
    """
    first, second = text[:1], text[1:2]
    formula = bool(first) and first in _SPREADSHEET_FIRST
    escaped_look = first == "'" and bool(second) and second in _SPREADSHEET_FIRST + "'"
    return "'" + text if formula or escaped_look else text
