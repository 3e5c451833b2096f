"""Untrusted text for rich renderables: as a ``Text`` (rich would read ``[markup]`` in a plain
string: a run named ``[link=...]`` would become a hyperlink, one with ``[/x]`` would crash the
table) with control characters shown as visible escapes (rankmeter._escape)."""

from __future__ import annotations

from typing import Any

from rankmeter._escape import visible


def shown(text: str, style: str = "") -> Any:
    """``text`` as a rich ``Text``, exactly as given but for visible control characters."""
    from rich.text import Text

    return Text(visible(text), style=style)


# A text column is never folded narrower than this (or its widest cell, if narrower): a name
# folded into a few characters a line is there but unreadable; the table is stacked instead.
_NARROWEST_TEXT = 10
_UNBOUNDED = 1_000_000


class FittedTable:
    """A rich table that shows every value at any width.

    Rich fits a table that is too wide by shrinking its columns, cutting numbers and headers
    with "…" and dropping narrow columns to nothing, so that rows could no longer be told
    apart. This one is laid out, at the width it is rendered at, as the first of:

    1. the plain table, when every cell fits on one line;
    2. the table with its text columns (names, ids) folded onto several lines, numbers and
       headers whole, when the text columns can keep at least a few characters;
    3. stacked: one block per row, a line per column (``header  value``), long values folded.

    Columns and rows are added as to a ``rich.table.Table`` (``text=True`` marks a column of
    names, which may be folded); the table's own options go to the constructor.
    """

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.columns: list[tuple[Any, bool, dict[str, Any]]] = []
        self.rows: list[tuple[list[Any], Any]] = []
        self.section_ends: set[int] = set()

    def add_column(self, header: Any, *, text: bool = False, **options: Any) -> None:
        self.columns.append((header, text, options))

    def add_row(self, *cells: Any, style: Any = None) -> None:
        self.rows.append((list(cells), style))

    def add_section(self) -> None:
        if self.rows:
            self.section_ends.add(len(self.rows) - 1)

    def table(self, widths: list[int] | None = None) -> Any:
        """The rich Table: as declared, or with these column widths (text columns folded)."""
        from rich.table import Table

        table = Table(**self.options)
        for index, (header, text, options) in enumerate(self.columns):
            if widths is not None:
                options = {
                    **options,
                    "width": widths[index],
                    "min_width": None,
                    "no_wrap": not text,
                    "overflow": "fold",
                }
            table.add_column(header, **options)
        for index, (cells, style) in enumerate(self.rows):
            table.add_row(*cells, style=style, end_section=index in self.section_ends)
        return table

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.table())

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        table = self.table()
        natural = [_width(header) for header, _, _ in self.columns]
        for cells, _ in self.rows:
            natural = [max(w, _width(cell)) for w, cell in zip(natural, cells, strict=False)]
        whole = Measurement.get(console, options.update_width(_UNBOUNDED), table).maximum
        if whole <= options.max_width:
            yield table
            return
        text = [i for i, (_, is_text, _) in enumerate(self.columns) if is_text]
        room = options.max_width - (whole - sum(natural[i] for i in text))
        floors = {i: min(natural[i], _NARROWEST_TEXT) for i in text}
        if text and room >= sum(floors.values()):
            yield self.table(_share(natural, floors, room))
            return
        yield from self._stacked(options.max_width)

    def _stacked(self, width: int) -> Any:
        """One block per row: its names on a line, then ``header: value`` pairs, as many to a
        line as fit (a pair wider than the line is split after its header, a value wider than
        the line folded); a blank line between sections."""
        from rich.text import Text

        title = self.options.get("title")
        if title is not None:
            yield title if isinstance(title, Text) else Text(str(title), style="table.title")
        headers = [_plain(header) for header, _, _ in self.columns]
        names = [is_text for _, is_text, _ in self.columns]
        for index, (cells, style) in enumerate(self.rows):
            texts = [_text(cell) for cell in cells]
            heading = [t for t, is_name in zip(texts, names, strict=False) if is_name]
            if heading:
                names_line = Text(" · ").join(heading)
                names_line.stylize(style or "bold")
                yield _folded(names_line)
            line = Text("  ", style=style or "")
            for header, value, is_name in zip(headers, texts, names, strict=False):
                if is_name or not (header or value.plain):
                    continue
                pair = Text(f"{header}: ") + value if header else value
                if header and 2 + pair.cell_len > width and 2 + value.cell_len <= width:
                    # The pair is wider than the line but its value is not: the header on a
                    # line of its own, the value whole on the next (a number is never folded).
                    if line.plain.strip():
                        yield _folded(line)
                    yield _folded(Text(f"  {header}:", style=style or ""))
                    line = Text("  ", style=style or "") + value
                    continue
                if line.plain.strip() and line.cell_len + 2 + pair.cell_len > width:
                    yield _folded(line)
                    line = Text("  ", style=style or "")
                line += (Text("  ") if line.plain.strip() else Text("")) + pair
            if line.plain.strip():
                yield _folded(line)
            if index in self.section_ends or index == len(self.rows) - 1:
                yield Text("")


def _plain(cell: Any) -> str:
    from rich.text import Text

    return cell.plain if isinstance(cell, Text) else str(cell)


def _text(cell: Any) -> Any:
    from rich.text import Text

    return cell.copy() if isinstance(cell, Text) else Text(str(cell))


def _folded(line: Any) -> Any:
    line.overflow = "fold"
    return line


def _width(cell: Any) -> int:
    """The width of a cell's text on one line (its widest line)."""
    from rich.cells import cell_len

    return max((cell_len(line) for line in _plain(cell).split("\n")), default=0)


def _share(natural: list[int], floors: dict[int, int], room: int) -> list[int]:
    """Column widths: numbers at their natural width; the text columns first at their floors,
    then widened one character at a time, narrowest first, up to their natural width."""
    widths = list(natural)
    for index, floor in floors.items():
        widths[index] = floor
    left = room - sum(floors.values())
    while left > 0:
        growing = [i for i in floors if widths[i] < natural[i]]
        if not growing:
            break
        narrowest = min(growing, key=lambda i: widths[i])
        widths[narrowest] += 1
        left -= 1
    return widths
