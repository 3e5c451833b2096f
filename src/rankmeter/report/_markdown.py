"""The one Markdown table writer: every Markdown table rankmeter writes comes from
:func:`markdown_table`, and every cell goes through :func:`rankmeter._escape.markdown_text`
unless it is Markdown already (:class:`Verbatim`, e.g. a code span)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from rankmeter._escape import markdown_code, markdown_text

__all__ = ["Align", "Verbatim", "code", "markdown_table"]

#: A column's alignment: ``None`` writes ``---``, "left" ``:---``, "right" ``---:``.
Align = Literal["left", "right"] | None

_DELIMITER = {None: "---", "left": ":---", "right": "---:"}


class Verbatim(str):
    """A cell that is Markdown already (a code span, say): written as it is."""

    __slots__ = ()


def code(text: str) -> Verbatim:
    r"""``text`` as an inline code span cell: a ``|`` in it is written ``\|``, which a GFM
    table reads as a ``|`` of the code (unescaped it would end the cell, even inside the span).

    >>> code("d|1")
    '`d\\|1`'
    """
    return Verbatim(markdown_code(text).replace("|", "\\|"))


def _cell(value: str) -> str:
    return value if isinstance(value, Verbatim) else markdown_text(value)


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[Align]
) -> list[str]:
    """The lines of a Markdown table: the header, the delimiter row, one line per row.

    >>> print("\\n".join(markdown_table(["run", "AP"], [["a|b", "0.5"]], [None, "right"])))
    | run | AP |
    | --- | ---: |
    | a\\|b | 0.5 |
    """
    if len(align) != len(header):
        raise ValueError(f"{len(header)} columns but {len(align)} alignments")
    return [
        "| " + " | ".join(_cell(h) for h in header) + " |",
        "| " + " | ".join(_DELIMITER[a] for a in align) + " |",
        *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows),
    ]
