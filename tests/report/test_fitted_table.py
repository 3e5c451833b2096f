"""The shared table writer (report/_rich.py: FittedTable) at any width, for any table: every
row label and every name is shown whole (folded at worst, never cut or dropped), every number
and every number's header whole on one line, no line wider than the terminal, no "…" (issue 16,
section 3: the tables of evaluate, compare and check are built on it; tests/report/test_widths.py
and tests/cli/test_cli_table_snapshots.py check those).

Each text column's names are written in an alphabet of its own (upper-case letters split
between the columns), headers and numbers in others, so the characters of one alphabet, read
in the order shown, must spell that column's names in row order: a name cut or dropped, or a
column lost, changes the spelling whatever the layout (plain, folded or stacked).
"""

from __future__ import annotations

import io
import re
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankmeter.report._rich import FittedTable

ALPHABETS = ("ABCDEFGHIJKLM", "NOPQRSTUVWXYZ")
HEADERS = string.ascii_lowercase + "@()=."


def _render(renderable: Any, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@st.composite
def tables(draw: st.DrawFn) -> tuple[FittedTable, list[list[str]], list[list[str]], list[str]]:
    """A table of one or two name columns and up to six number columns."""
    n_text = draw(st.integers(1, 2))
    n_numbers = draw(st.integers(0, 6))
    n_rows = draw(st.integers(1, 5))
    header = st.text(HEADERS, min_size=1, max_size=18).map(lambda h: h.strip(".") or "m")
    headers = draw(st.lists(header, min_size=n_text + n_numbers, max_size=n_text + n_numbers))
    table = FittedTable(title=draw(st.sampled_from([None, "means over 30 queries"])))
    for index, text in enumerate(headers):
        if index < n_text:
            table.add_column(text, text=True)
        else:
            table.add_column(text, justify="right", no_wrap=True)
    names = [
        draw(
            st.lists(
                # A blank name becomes the column's own first letter ("A" in the second
                # column's alphabet N-Z was counted as the first column's).
                st.text(ALPHABETS[j] + "-_ ", min_size=1, max_size=40).map(
                    lambda s, first=ALPHABETS[j][0]: s.strip() or first
                ),
                min_size=n_rows,
                max_size=n_rows,
            )
        )
        for j in range(n_text)
    ]
    number = st.floats(-10, 10, allow_nan=False).map(lambda v: f"{v:+.4f}")
    interval = st.tuples(number, number).map(lambda p: f"[{p[0]}, {p[1]}]")
    numbers = [
        draw(st.lists(st.one_of(number, interval), min_size=n_numbers, max_size=n_numbers))
        for _ in range(n_rows)
    ]
    for row in range(n_rows):
        table.add_row(*[names[j][row] for j in range(n_text)], *numbers[row])
        if draw(st.booleans()):
            table.add_section()
    return table, names, numbers, headers[n_text:]


def _letters(text: str, alphabet: str) -> str:
    return "".join(c for c in text if c in alphabet)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=tables(), width=st.sampled_from([40, 60, 80, 120]))
def test_every_name_number_and_header_is_shown_whole(drawn: Any, width: int) -> None:
    _check_shown_whole(drawn, width)


def test_a_pair_wider_than_the_line_keeps_its_number_whole() -> None:
    # Found by the property above: stacked at 40 columns, an 18-character header and a
    # 19-character interval made a 39-character pair, folded inside the interval.
    headers = ["=", "=", "=", "=", "=", "=" * 18]
    numbers = [["+0.0000"] * 6, ["+0.0000"] * 5 + ["[+0.0000, +10.0000]"]]
    table = FittedTable()
    table.add_column("A", text=True)
    table.add_column("N", text=True)
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    for row in numbers:
        table.add_row("A", "N", *row)
    _check_shown_whole((table, [["A", "A"], ["N", "N"]], numbers, headers), 40)


def _check_shown_whole(drawn: Any, width: int) -> None:
    table, names, numbers, number_headers = drawn
    text = _render(table, width)
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= width, text
    for alphabet, column in zip(ALPHABETS, names, strict=False):
        assert _letters(text, alphabet) == _letters("".join(column), alphabet), text
    lines = text.splitlines()
    for row in numbers:
        for value in row:
            assert any(value in line for line in lines), (value, text)
    for header in number_headers:
        assert any(
            re.search(rf"(^|[\s┃│]){re.escape(header)}(:|\s|[┃│]|$)", line) for line in lines
        ), (
            header,
            text,
        )
