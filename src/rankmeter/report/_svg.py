"""Inline SVG charts for the HTML report, drawn with the standard library only.

Four kinds of chart: bars with interval whiskers, lines over ranks 1..n (optionally with a
point per value), lines through points on two numeric axes (the ANN recall/QPS trade-off), and
a matrix of labelled, coloured cells (every pair of systems).
Each chart is a complete ``<svg>`` element with a ``<title>`` and a ``<desc>`` (what a screen
reader says), labelled axes with ticks and grid lines, and, for lines, a legend of the series.
Coordinates are written with fixed decimals, so the same data gives the same bytes.

The plots are drawn here in Python rather than in templates (they are geometry, not layout);
every name and text in them goes through the one HTML escaper, rankmeter._escape.html_text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rankmeter._escape import html_text

__all__ = [
    "Bar",
    "Cell",
    "Point",
    "Series",
    "bar_chart",
    "line_chart",
    "matrix_chart",
    "nice_ticks",
    "xy_chart",
]

FONT_SIZE = 12
#: Average advance of a character at FONT_SIZE in a sans-serif face, to lay out labels.
CHAR_WIDTH = 6.6
AXIS = "#333333"
GRID = "#e3e3e3"


@dataclass(frozen=True)
class Bar:
    """One bar: a value with its interval, a colour, and a tooltip."""

    label: str
    value: float
    low: float
    high: float
    color: str
    tooltip: str
    caption: str = ""


@dataclass(frozen=True)
class Series:
    """One line: ``values[i]`` is drawn at x = i + 1."""

    name: str
    values: Sequence[float]
    color: str
    dash: str = ""
    points: bool = False
    tooltips: Sequence[str] = ()


@dataclass(frozen=True)
class Point:
    """One point of an :func:`xy_chart` line, with its tooltip."""

    x: float
    y: float
    tooltip: str


@dataclass(frozen=True)
class Cell:
    """One cell of a :func:`matrix_chart`: its text, fill colour and tooltip."""

    text: str
    color: str
    tooltip: str


def _n(value: float) -> str:
    """A coordinate: one decimal, never ``-0.0``."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def nice_ticks(low: float, high: float, count: int = 5) -> tuple[float, float, list[float]]:
    """A rounded axis range that covers [low, high] and about ``count`` ticks of 1, 2, 2.5 or
    5 times a power of ten."""
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = 0.0, 1.0
    if high < low:
        low, high = high, low
    if high - low < 1e-12:
        pad = abs(high) / 2 if high else 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = magnitude
    for multiple in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = multiple * magnitude
        if step >= raw * (1 - 1e-9):
            break
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    ticks = [round(start + i * step, 12) for i in range(round((end - start) / step) + 1)]
    return ticks[0], ticks[-1], ticks


def tick_label(value: float, ticks: Sequence[float]) -> str:
    """A tick's label with as many decimals as the tick step needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def shorten(text: str, width: float) -> str:
    """The text, cut with an ellipsis to fit about ``width`` pixels."""
    fits = max(int(width / CHAR_WIDTH), 2)
    return text if len(text) <= fits else text[: fits - 1] + "…"


def _open(ident: str, kind: str, title: str, desc: str, width: int, height: int) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-plot="{html_text(kind)}" '
        f'id="{html_text(ident)}" role="img" aria-labelledby="{html_text(ident)}-title '
        f'{html_text(ident)}-desc" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f'<title id="{html_text(ident)}-title">{html_text(title)}</title>',
        f'<desc id="{html_text(ident)}-desc">{html_text(desc)}</desc>',
    ]


@dataclass(frozen=True)
class _Frame:
    """The plot area inside the margins and the two linear scales."""

    left: float
    top: float
    width: float
    height: float
    x_min: float
    x_max: float
    y_min: float
    y_max: float

    def x(self, value: float) -> float:
        return self.left + (value - self.x_min) / (self.x_max - self.x_min) * self.width

    def y(self, value: float) -> float:
        return self.top + (self.y_max - value) / (self.y_max - self.y_min) * self.height

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def right(self) -> float:
        return self.left + self.width


def _y_axis(
    frame: _Frame, ticks: Sequence[float], label: str, labels: Sequence[str] | None = None
) -> list[str]:
    out = ['<g class="axis y-axis">']
    texts = list(labels) if labels is not None else [tick_label(t, ticks) for t in ticks]
    for t, text in zip(ticks, texts, strict=True):
        y = _n(frame.y(t))
        out.append(
            f'<line class="grid" x1="{_n(frame.left)}" x2="{_n(frame.right)}" y1="{y}" '
            f'y2="{y}" stroke="{GRID}"/>'
        )
        out.append(
            f'<line x1="{_n(frame.left - 5)}" x2="{_n(frame.left)}" y1="{y}" y2="{y}" '
            f'stroke="{AXIS}"/>'
        )
        out.append(
            f'<text class="tick" x="{_n(frame.left - 8)}" y="{y}" text-anchor="end" '
            f'dominant-baseline="middle">{html_text(text)}</text>'
        )
    out.append(
        f'<line x1="{_n(frame.left)}" x2="{_n(frame.left)}" y1="{_n(frame.top)}" '
        f'y2="{_n(frame.bottom)}" stroke="{AXIS}"/>'
    )
    middle = _n(frame.top + frame.height / 2)
    out.append(
        f'<text class="axis-label" x="14" y="{middle}" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle})">{html_text(shorten(label, frame.height))}</text>'
    )
    out.append("</g>")
    return out


def _x_axis(frame: _Frame, ticks: Sequence[float], labels: Sequence[str], label: str) -> list[str]:
    out = [
        '<g class="axis x-axis">',
        f'<line x1="{_n(frame.left)}" x2="{_n(frame.right)}" y1="{_n(frame.bottom)}" '
        f'y2="{_n(frame.bottom)}" stroke="{AXIS}"/>',
    ]
    for t, text in zip(ticks, labels, strict=True):
        x = _n(frame.x(t))
        out.append(
            f'<line x1="{x}" x2="{x}" y1="{_n(frame.bottom)}" y2="{_n(frame.bottom + 5)}" '
            f'stroke="{AXIS}"/>'
        )
        out.append(
            f'<text class="tick" x="{x}" y="{_n(frame.bottom + 18)}" '
            f'text-anchor="middle">{html_text(text)}</text>'
        )
    out.append(
        f'<text class="axis-label" x="{_n(frame.left + frame.width / 2)}" '
        f'y="{_n(frame.bottom + 38)}" text-anchor="middle">{html_text(label)}</text>'
    )
    out.append("</g>")
    return out


def bar_chart(
    *,
    ident: str,
    title: str,
    desc: str,
    y_label: str,
    bars: Sequence[Bar],
    width: int = 380,
    height: int = 280,
) -> str:
    """Vertical bars from zero with interval whiskers; each bar labelled below the axis with
    its label and caption (e.g. the value)."""
    finite = [v for b in bars for v in (b.value, b.low, b.high) if math.isfinite(v)]
    y_min, y_max, ticks = nice_ticks(min([0.0, *finite]), max([0.0, *finite]))
    frame = _Frame(58, 14, width - 58 - 12, height - 14 - 62, 0, max(len(bars), 1), y_min, y_max)
    out = _open(ident, "means", title, desc, width, height)
    out += _y_axis(frame, ticks, y_label)
    band = frame.width / max(len(bars), 1)
    zero = frame.y(0.0)
    out.append('<g class="bars">')
    for i, bar in enumerate(bars):
        centre = frame.left + band * (i + 0.5)
        half = min(band * 0.32, 40)
        if math.isfinite(bar.value):
            top = min(frame.y(bar.value), zero)
            size = abs(frame.y(bar.value) - zero)
            out.append(
                f'<rect class="bar" x="{_n(centre - half)}" y="{_n(top)}" '
                f'width="{_n(2 * half)}" height="{_n(size)}" fill="{html_text(bar.color)}">'
                f"<title>{html_text(bar.tooltip)}</title></rect>"
            )
        if math.isfinite(bar.low) and math.isfinite(bar.high):
            lo, hi = _n(frame.y(bar.low)), _n(frame.y(bar.high))
            cx, cap = _n(centre), half * 0.45
            out.append(
                f'<path class="whisker" d="M{cx} {lo}V{hi}M{_n(centre - cap)} {hi}'
                f'H{_n(centre + cap)}M{_n(centre - cap)} {lo}H{_n(centre + cap)}" '
                f'stroke="{AXIS}" stroke-width="1.5" fill="none"/>'
            )
    out.append("</g>")
    out += [
        f'<line class="baseline-zero" x1="{_n(frame.left)}" x2="{_n(frame.right)}" '
        f'y1="{_n(zero)}" y2="{_n(zero)}" stroke="{AXIS}"/>',
        '<g class="axis x-axis">',
    ]
    for i, bar in enumerate(bars):
        x = _n(frame.left + band * (i + 0.5))
        out.append(
            f'<text class="tick" x="{x}" y="{_n(frame.bottom + 18)}" '
            f'text-anchor="middle"><title>{html_text(bar.label)}</title>'
            f"{html_text(shorten(bar.label, band - 4))}</text>"
        )
        if bar.caption:
            out.append(
                f'<text class="tick value" x="{x}" y="{_n(frame.bottom + 34)}" '
                f'text-anchor="middle">{html_text(bar.caption)}</text>'
            )
    out += ["</g>", "</svg>"]
    return "\n".join(out)


def _legend(series: Sequence[Series], left: float, top: float, width: float) -> list[str]:
    """Swatches with names, laid out in rows that wrap at ``width``."""
    out = ['<g class="legend">']
    x, y = left, top
    for s in series:
        label = shorten(s.name, width - 40)
        item = 34 + CHAR_WIDTH * len(label) + 18
        if x > left and x + item > left + width:
            x, y = left, y + 20
        dash = f' stroke-dasharray="{html_text(s.dash)}"' if s.dash else ""
        out.append(
            f'<g class="legend-item"><line x1="{_n(x)}" x2="{_n(x + 26)}" y1="{_n(y)}" '
            f'y2="{_n(y)}" stroke="{html_text(s.color)}" stroke-width="2.5"{dash}/>'
            f'<text x="{_n(x + 32)}" y="{_n(y)}" dominant-baseline="middle">'
            f"{html_text(label)}</text></g>"
        )
        x += item
    out.append("</g>")
    return out


def _legend_rows(series: Sequence[Series], width: float) -> int:
    rows, x = 1, 0.0
    for s in series:
        item = 34 + CHAR_WIDTH * len(shorten(s.name, width - 40)) + 18
        if x > 0 and x + item > width:
            rows, x = rows + 1, 0.0
        x += item
    return rows


def line_chart(
    *,
    ident: str,
    kind: str,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    width: int,
    height: int,
    zero_line: bool = False,
    y_from_zero: bool = False,
) -> str:
    """Lines over x = 1..n (n = the longest series), a legend below the axes."""
    length = max((len(s.values) for s in series), default=1)
    finite = [float(v) for s in series for v in s.values if math.isfinite(v)]
    low = min(finite, default=0.0)
    high = max(finite, default=1.0)
    if zero_line or y_from_zero:
        low, high = min(low, 0.0), max(high, 0.0)
    y_min, y_max, ticks = nice_ticks(low, high)
    legend_top_gap = 58
    legend_height = 20 * _legend_rows(series, width - 70)
    plot_height = height - 12 - legend_top_gap - legend_height
    x_min, x_max = (0.5, 1.5) if length == 1 else (1.0, float(length))
    frame = _Frame(62, 12, width - 62 - 18, plot_height, x_min, x_max, y_min, y_max)
    out = _open(ident, kind, title, desc, width, height)
    out += _y_axis(frame, ticks, y_label)
    _, _, x_ticks = nice_ticks(0.0, float(length), 5 if width > 500 else 4)
    positions = [max(t, 1.0) for t in x_ticks if t <= length] if length > 1 else [1.0]
    positions = list(dict.fromkeys(positions))
    out += _x_axis(frame, positions, [f"{p:.0f}" for p in positions], x_label)
    if zero_line:
        out.append(
            f'<line class="zero-line" x1="{_n(frame.left)}" x2="{_n(frame.right)}" '
            f'y1="{_n(frame.y(0.0))}" y2="{_n(frame.y(0.0))}" stroke="{AXIS}" '
            'stroke-width="1.2"/>'
        )
    for s in series:
        dash = f' stroke-dasharray="{html_text(s.dash)}"' if s.dash else ""
        coords = [
            f"{_n(frame.x(i + 1))},{_n(frame.y(float(v)))}"
            for i, v in enumerate(s.values)
            if math.isfinite(v)
        ]
        out.append(
            f'<g class="series" data-series="{html_text(s.name)}">'
            f'<polyline class="line" points="{" ".join(coords)}" fill="none" '
            f'stroke="{html_text(s.color)}" stroke-width="2" stroke-linejoin="round"{dash}>'
            f"<title>{html_text(s.name)}</title></polyline>"
        )
        if s.points:
            for i, v in enumerate(s.values):
                if not math.isfinite(v):
                    continue
                tip = f"<title>{html_text(s.tooltips[i])}</title>" if s.tooltips else ""
                out.append(
                    f'<circle class="point" cx="{_n(frame.x(i + 1))}" '
                    f'cy="{_n(frame.y(float(v)))}" r="2.6" fill="{html_text(s.color)}">{tip}</circle>'
                )
        out.append("</g>")
    out += _legend(series, frame.left, frame.bottom + legend_top_gap, width - 70)
    out.append("</svg>")
    return "\n".join(out)


def xy_chart(
    *,
    ident: str,
    kind: str,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    lines: Sequence[tuple[Series, Sequence[Point]]],
    x_range: tuple[float, float],
    x_ticks: Sequence[float],
    y_range: tuple[float, float],
    y_ticks: Sequence[float],
    width: int,
    height: int,
    y_tick_labels: Sequence[str] | None = None,
) -> str:
    """Lines through points on two numeric axes (the ranges and ticks chosen by the caller),
    a point with its tooltip at each, a legend of the lines below the axes. ``y_tick_labels``:
    the text of each y tick (a log scale's caller gives them), else the tick values."""
    series = [s for s, _ in lines]
    legend_height = 20 * _legend_rows(series, width - 70)
    plot_height = height - 12 - 58 - legend_height
    frame = _Frame(70, 12, width - 70 - 18, plot_height, *x_range, *y_range)
    out = _open(ident, kind, title, desc, width, height)
    out += _y_axis(frame, y_ticks, y_label, y_tick_labels)
    out += _x_axis(frame, x_ticks, [tick_label(t, x_ticks) for t in x_ticks], x_label)
    for style, points in lines:
        coords = [f"{frame.x(p.x):.1f},{frame.y(p.y):.1f}" for p in points]
        dash = f' stroke-dasharray="{html_text(style.dash)}"' if style.dash else ""
        out.append(
            f'<g class="series" data-series="{html_text(style.name)}">'
            f'<polyline class="line" points="{" ".join(coords)}" fill="none" '
            f'stroke="{html_text(style.color)}" stroke-width="2" stroke-linejoin="round"{dash}>'
            f"<title>{html_text(style.name)}</title></polyline>"
        )
        for p in points:
            out.append(
                f'<circle class="point" cx="{frame.x(p.x):.1f}" cy="{frame.y(p.y):.1f}" '
                f'r="3.2" fill="{html_text(style.color)}"><title>{html_text(p.tooltip)}</title>'
                "</circle>"
            )
        out.append("</g>")
    out += _legend(series, frame.left, frame.bottom + 58, width - 70)
    out.append("</svg>")
    return "\n".join(out)


def matrix_chart(
    *,
    ident: str,
    title: str,
    desc: str,
    labels: Sequence[str],
    cells: Sequence[Sequence[Cell]],
    cell_width: int = 72,
    cell_height: int = 30,
) -> str:
    """A square matrix: ``cells[i][j]`` at row ``labels[i]``, column ``labels[j]``, each a
    coloured rectangle with its text and a tooltip; the labels name the rows on the left and
    the columns on top."""
    k = len(labels)
    left = min(180, max([len(label) for label in labels] + [4]) * CHAR_WIDTH + 16)
    top = 26
    width = int(left + k * cell_width + 8)
    height = int(top + k * cell_height + 8)
    out = _open(ident, "matrix", title, desc, width, height)
    out.append('<g class="axis labels">')
    for i, label in enumerate(labels):
        x = _n(left + cell_width * (i + 0.5))
        out.append(
            f'<text class="tick" x="{x}" y="{_n(top - 9)}" text-anchor="middle">'
            f"<title>{html_text(label)}</title>{html_text(shorten(label, cell_width - 4))}</text>"
        )
        y = _n(top + cell_height * (i + 0.5))
        out.append(
            f'<text class="tick" x="{_n(left - 8)}" y="{y}" text-anchor="end" '
            f'dominant-baseline="middle"><title>{html_text(label)}</title>'
            f"{html_text(shorten(label, left - 12))}</text>"
        )
    out += ["</g>", '<g class="cells">']
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            cx, cy = left + cell_width * j, top + cell_height * i
            out.append(
                f'<g class="cell"><title>{html_text(cell.tooltip)}</title>'
                f'<rect x="{_n(cx)}" y="{_n(cy)}" width="{cell_width}" height="{cell_height}" '
                f'fill="{html_text(cell.color)}" stroke="#ffffff"/>'
                f'<text x="{_n(cx + cell_width / 2)}" y="{_n(cy + cell_height / 2)}" '
                f'text-anchor="middle" dominant-baseline="middle">'
                f"{html_text(shorten(cell.text, cell_width - 4))}</text></g>"
            )
    out += ["</g>", "</svg>"]
    return "\n".join(out)
