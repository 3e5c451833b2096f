"""The one plain-text table writer: columns padded to their widest cell, two spaces apart,
numbers right-aligned. Cells show control characters as visible escapes (rankmeter._escape)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from rankmeter._escape import visible

__all__ = ["decimal", "num", "signed", "text_table"]

#: From here on, a number is written in scientific notation: 1.6309e+308, not 309 digits.
LONG_NUMBER = 1e15


def decimal(value: float, digits: int = 4, *, sign: bool = False) -> str:
    """``value`` to ``digits`` decimals (``+`` for positives with ``sign``); beyond 1e15 in
    scientific notation with as many digits after the point.

    >>> decimal(0.35204), decimal(-0.02, 3, sign=True), decimal(1.6309297e308)
    ('0.3520', '-0.020', '1.6309e+308')
    """
    plus = "+" if sign else ""
    kind = "e" if abs(value) >= LONG_NUMBER else "f"
    return f"{value:{plus}.{digits}{kind}}"


def num(value: float, digits: int = 4) -> str:
    """:func:`decimal`, or ``–`` where the value is undefined (NaN) or infinite.

    >>> num(0.123456, 3), num(float("nan"))
    ('0.123', '–')
    """
    return "–" if not math.isfinite(value) else decimal(value, digits)


def statistic(value: float, digits: int = 3) -> str:
    """An agreement statistic (a kappa, an alpha): :func:`decimal`, or ``undefined`` where it
    is undefined (NaN: one label throughout), not a dash that could read as "not computed".

    >>> statistic(0.41234), statistic(float("nan"))
    ('0.412', 'undefined')
    """
    return "undefined" if math.isnan(value) else num(value, digits)


def pvalue(value: float) -> str:
    """A p-value as every report shows it: four decimals, ``<0.0001`` below that, ``–`` where
    there is none.

    >>> pvalue(0.04321), pvalue(9.8e-63), pvalue(float("nan"))
    ('0.0432', '<0.0001', '–')
    """
    if not math.isfinite(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def signed(value: float, digits: int = 4) -> str:
    """:func:`num` with a ``+`` before positive values.

    >>> signed(0.5, 3), signed(-0.25, 3), signed(float("inf"))
    ('+0.500', '-0.250', '–')
    """
    return "–" if not math.isfinite(value) else decimal(value, digits, sign=True)


def text_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()
) -> list[str]:
    """The lines of a table; columns whose index is in ``right`` are right-aligned.

    >>> print("\\n".join(text_table(["rank", "doc"], [["1", "a"], ["10", "b\\x1b"]], right={0})))
    rank  doc
       1  a
      10  b\\x1b
    """
    body = [[visible(cell) for cell in row] for row in rows]
    heads = [visible(h) for h in header]
    widths = [max([len(h)] + [len(row[i]) for row in body]) for i, h in enumerate(heads)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    return [line(heads), *(line(row) for row in body)]
