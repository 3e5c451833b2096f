"""Where a table's rows came from, so that errors can name the file, the line and the text.

The readers (rankmeter.io) build an :class:`Origin` for what they read and hand it to the
constructors of Qrels and Run, which report bad values through it.
"""

from __future__ import annotations

from collections.abc import Callable

from rankmeter.errors import FormatError

__all__ = ["Origin"]


class Origin:
    """Where a table's rows came from, so errors can name the file, line and text.

    ``locate(row)`` maps a 0-based row index to ``(line_number, line_text)``; it is only called
    when an error is being reported, so it may be slow (for example, rescan a file).
    """

    __slots__ = ("describe", "locate", "name")

    def __init__(
        self,
        name: str,
        locate: Callable[[int], tuple[int, str]] | None = None,
        describe: Callable[[int], str] | None = None,
    ) -> None:
        self.name = name
        self.locate = locate
        self.describe = describe  # for tables without lines: "query 'q1', doc 'd3'"

    def error(self, row: int | None, reason: str, text: str | None = None) -> FormatError:
        if row is not None and self.describe is not None:
            return FormatError(self.name, f"{self.describe(row)}: {reason}", text=text)
        if row is not None and self.locate is not None:
            line, line_text = self.locate(row)
            return FormatError(self.name, reason, line=line, text=line_text)
        if row is not None:
            return FormatError(self.name, reason, line=row + 1, text=text)
        return FormatError(self.name, reason, text=text)
