"""Render an A/B analysis (:class:`rankmeter.online.ABResult`): a terminal table (rich), strict
JSON, Markdown and a self-contained HTML page (the template ``templates/ab.html.j2`` in the
shell and stylesheet every page shares, :mod:`rankmeter.report._html`).

A failed sample-ratio check leads every format: a warning before anything else (the first
lines of the terminal and Markdown output, ``warnings`` in JSON, an alert at the top of the
page). Variant names and segment values come from the log: the tables show their control
characters as visible escapes, Markdown escapes what Markdown would read, HTML goes through
the one escaper, JSON escapes as JSON does (:mod:`rankmeter._escape`). An undefined statistic
(NaN: a metric without variance) is ``–`` in the tables and ``null`` in JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rankmeter._escape import markdown_text
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._text import num, pvalue, signed

if TYPE_CHECKING:
    from rankmeter.online import ABResult, MetricEffect, SegmentEffect

__all__ = ["render_html", "render_json", "render_markdown", "render_table"]

TEMPLATE = "ab.html.j2"


@renders("rankmeter.online.ABResult", "json")
def render_json(result: ABResult) -> str:
    """The analysis as strict JSON (``ABResult.to_dict``; ``warnings`` first)."""
    return json_text(result.to_dict())


def _digits(metric: str) -> int:
    """The decimals of the metric's declaration (:data:`rankmeter.online.AB_METRICS`)."""
    from rankmeter.online import AB_METRICS

    declared = AB_METRICS.get(metric)
    return 4 if declared is None else declared.digits


def _percent(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value * 100:+.1f}%"


def _interval(low: float, high: float, digits: int, *, percent: bool = False) -> str:
    if percent:
        return f"[{_percent(low)}, {_percent(high)}]"
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def _direction(effect: MetricEffect) -> str:
    return "higher" if effect.higher_is_better else "lower"


METRIC_HEADER = [
    "metric",
    "better",
    "control",
    "treatment",
    "difference",
    "95% interval",
    "relative",
    "relative interval",
    "p",
    "p (adj.)",
    "MDE",
    "verdict",
]
SEGMENT_HEADER = ["segment", "metric", "users C/T", *METRIC_HEADER[2:10], "verdict"]
#: With CUPED the means are shown twice: raw (unadjusted) and CUPED-adjusted.
CUPED_MEANS_HEADER = ["control (raw)", "treatment (raw)", "control (CUPED)", "treatment (CUPED)"]


def _level(result: ABResult) -> str:
    return f"{(1 - result.alpha) * 100:g}% interval"


def _means_header(result: ABResult) -> list[str]:
    return CUPED_MEANS_HEADER if result.cuped else ["control", "treatment"]


def _effect_header(result: ABResult) -> list[str]:
    """The columns of :func:`_effect_cells`: the means, then the effect and its p-values."""
    stats = METRIC_HEADER[4:10]
    return [*_means_header(result), *(_level(result) if h == "95% interval" else h for h in stats)]


def _metric_header(result: ABResult) -> list[str]:
    return [*METRIC_HEADER[:2], *_effect_header(result), *METRIC_HEADER[10:]]


def _segment_header(result: ABResult) -> list[str]:
    return [*SEGMENT_HEADER[:3], *_effect_header(result), "verdict"]


def _means(effect: MetricEffect, cuped: bool) -> list[str]:
    d = _digits(effect.metric)
    adjusted = [num(effect.control, d), num(effect.treatment, d)]
    if not cuped:
        return adjusted
    return [num(effect.control_raw, d), num(effect.treatment_raw, d), *adjusted]


def _effect_cells(effect: MetricEffect, cuped: bool = False) -> list[str]:
    d = _digits(effect.metric)
    return [
        *_means(effect, cuped),
        signed(effect.difference, d),
        _interval(effect.difference_low, effect.difference_high, d),
        _percent(effect.relative),
        _interval(effect.relative_low, effect.relative_high, d, percent=True),
        pvalue(effect.pvalue),
        pvalue(effect.adjusted),
    ]


def _verdict(verdict: str) -> str:
    return "n.s." if verdict == "no significant difference" else verdict


def metric_rows(result: ABResult) -> list[list[str]]:
    """One row per metric (as text), in :data:`METRIC_HEADER`'s order."""
    return [
        [
            e.metric,
            _direction(e),
            *_effect_cells(e, result.cuped),
            "–" if not math.isfinite(e.mde_relative) else f"±{abs(e.mde_relative) * 100:.1f}%",
            _verdict(e.verdict),
        ]
        for e in result.metrics
    ]


def _segment_name(s: SegmentEffect) -> str:
    return f"{s.column}={s.value}"


def segment_rows(result: ABResult) -> list[list[str]]:
    """One row per segment value and metric; the verdict of a flagged one reads ``WORSE``."""
    return [
        [
            _segment_name(s),
            s.effect.metric,
            f"{s.control_users}/{s.treatment_users}",
            *_effect_cells(s.effect, result.cuped),
            "WORSE" if s.worse else _verdict(s.effect.verdict),
        ]
        for s in result.segments
    ]


LATENCY_HEADER = ["variant", "requests", "p50 ms", "p95 ms", "p99 ms"]
COUNT_HEADER = ["variant", "users", "sessions", "requests", "impressions", "clicks"]


def latency_rows(result: ABResult) -> list[list[str]]:
    return [
        [q.variant, f"{q.requests:,}", num(q.p50, 1), num(q.p95, 1), num(q.p99, 1)]
        for q in result.latency
    ]


def count_rows(result: ABResult) -> list[list[str]]:
    return [
        [
            c.variant,
            f"{c.users:,}",
            f"{c.sessions:,}",
            f"{c.requests:,}",
            f"{c.impressions:,}",
            f"{c.clicks:,}",
        ]
        for c in result.counts
    ]


def headline(result: ABResult) -> str:
    """One sentence: which variant is compared with which, and what moved."""
    better = [e.metric for e in result.metrics if e.verdict == "better"]
    worse = [e.metric for e in result.metrics if e.verdict == "worse"]
    parts = [f"{result.treatment} vs {result.control}"]
    parts.append(f"better: {', '.join(better)}" if better else "nothing significantly better")
    parts.append(f"worse: {', '.join(worse)}" if worse else "nothing significantly worse")
    flagged = result.worse_segments
    if flagged:
        names = sorted({f"{_segment_name(s)} ({s.effect.metric})" for s in flagged})
        parts.append(f"segments worse: {', '.join(names)}")
    return "; ".join(parts)


def srm_line(result: ABResult) -> str:
    srm = result.srm
    state = "MISMATCH" if srm.failed else "ok"
    return (
        f"sample ratio: {srm.control_users:,} control / {srm.treatment_users:,} treatment "
        f"users, expected ratio {srm.expected_ratio:g}, p = {pvalue(srm.pvalue)} "
        f"(fails below {srm.alpha:g}): {state}"
    )


def settings_line(result: ABResult) -> str:
    from rankmeter.stats import correction_phrase

    cuped = (
        "CUPED on the pre-period: the difference, its interval, the relative difference, the "
        "p-values and the MDE are CUPED-adjusted, as are the means labelled CUPED; the raw "
        "means are the unadjusted ones"
        if result.cuped
        else "no CUPED (no pre-period)"
    )
    experiment = "" if result.experiment is None else f"experiment {result.experiment}; "
    return (
        f"{experiment}Welch's t on delta-method variances (tea-tasting), alpha {result.alpha:g}, "
        f"{correction_phrase(result.correction)} across metrics and per metric across "
        f"segments; MDE at power {result.power:g}; {cuped}; success: dwell >= "
        f"{result.success_dwell:g} s; reformulation: another query within "
        f"{result.reformulation_window:g} s; n.s.: no significant difference after the "
        "correction"
    )


def _notes(result: ABResult) -> Iterator[str]:
    yield settings_line(result)
    yield from result.notes


_RIGHT: list[Align] = ["right"]


def _align(header: list[str], text: int) -> list[Align]:
    """The first ``text`` columns and the last (the verdict) left, the numbers right."""
    return [None] * text + _RIGHT * (len(header) - text - 1) + [None]


@renders("rankmeter.online.ABResult", "markdown")
def render_markdown(result: ABResult) -> str:
    """Warnings first, then the tables (every variant name and segment value escaped)."""
    lines: list[str] = []
    for warning in result.warnings:
        lines += [f"> **Warning:** {markdown_text(warning)}", ""]
    lines += [f"**A/B: {markdown_text(headline(result))}**", ""]
    lines += [markdown_text(srm_line(result)), ""]
    lines += markdown_table(COUNT_HEADER, count_rows(result), [None, *_RIGHT * 5])
    lines += ["", "Metrics:", ""]
    header = _metric_header(result)
    lines += markdown_table(header, metric_rows(result), _align(header, 2))
    lines += ["", "Latency (exact quantiles over requests):", ""]
    lines += markdown_table(LATENCY_HEADER, latency_rows(result), [None, *_RIGHT * 4])
    if result.segments:
        header = _segment_header(result)
        lines += ["", "Segments:", ""]
        lines += markdown_table(header, segment_rows(result), _align(header, 2))
    lines.append("")
    lines += [f"- {markdown_text(note)}" for note in _notes(result)]
    return "\n".join(lines) + "\n"


@renders("rankmeter.online.ABResult", "table")
def render_table(result: ABResult) -> Any:
    """A rich renderable: the warning (if any), the headline, the tables, the notes."""
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report._rich import FittedTable, shown

    parts: list[Any] = [shown(f"WARNING: {w}", "bold red") for w in result.warnings]
    parts.append(shown(f"A/B: {headline(result)}", "bold"))
    parts.append(Text(srm_line(result), style="bold red" if result.srm.failed else ""))

    def table(title: str, header: list[str], rows: list[list[str]], text: int) -> Any:
        out = FittedTable(title=title, title_justify="left")
        for i, h in enumerate(header):
            out.add_column(h, text=i < text, justify="left" if i < text else "right")
        for row in rows:
            style = "bold red" if row[-1] in {"worse", "WORSE"} else None
            out.add_row(*(shown(cell) for cell in row), style=style)
        return out

    parts.append(table("variants", COUNT_HEADER, count_rows(result), 1))
    parts.append(table("metrics", _metric_header(result), metric_rows(result), 2))
    parts.append(table("latency (exact quantiles over requests)", LATENCY_HEADER,
                       latency_rows(result), 1))  # fmt: skip
    if result.segments:
        parts.append(table("segments", _segment_header(result), segment_rows(result), 2))
    parts.extend(shown(f"note: {note}", "dim") for note in _notes(result))
    return Group(*parts)


def _cell(text: str, sub: str = "", *, kind: str = "num") -> dict[str, str]:
    """One HTML cell: its value, an optional second line (an interval, a raw mean) and its
    class (``num``, ``num delta`` for the coloured effects, or ``""`` for text)."""
    return {"text": text, "sub": sub, "kind": kind}


def _html_effect_cells(effect: MetricEffect, cuped: bool) -> list[dict[str, str]]:
    """The means (the raw one beneath a CUPED mean), the difference and the relative
    difference each with its interval beneath, the p-values: stacked so that the table fits
    a narrow page."""
    d = _digits(effect.metric)

    def mean(value: float, raw: float) -> dict[str, str]:
        return _cell(num(value, d), f"raw {num(raw, d)}" if cuped else "")

    return [
        mean(effect.control, effect.control_raw),
        mean(effect.treatment, effect.treatment_raw),
        _cell(
            signed(effect.difference, d),
            _interval(effect.difference_low, effect.difference_high, d),
            kind="num delta",
        ),
        _cell(
            _percent(effect.relative),
            _interval(effect.relative_low, effect.relative_high, d, percent=True),
            kind="num delta",
        ),
        _cell(pvalue(effect.pvalue)),
        _cell(pvalue(effect.adjusted)),
    ]


def _html_effect_header(result: ABResult) -> list[dict[str, str]]:
    means = "CUPED; raw" if result.cuped else ""
    return [
        _cell("control", means),
        _cell("treatment", means),
        _cell("difference", _level(result)),
        _cell("relative", _level(result)),
        _cell("p"),
        _cell("p (adj.)"),
    ]


@renders("rankmeter.online.ABResult", "html")
def render_html(result: ABResult) -> str:
    """One self-contained page: the warning first, the verdicts, the tables, the settings.

    The effect tables put each interval beneath its difference (with CUPED, each raw mean
    beneath its adjusted one; in the segments table, the users beneath the segment) rather
    than in a column of its own, so that the tables fit a page 1100 px wide.
    """
    from rankmeter.report._html import render

    def sig(effect: MetricEffect) -> str:
        return effect.verdict if effect.verdict in {"better", "worse"} else ""

    metrics = [
        {
            "name": e.metric,
            "sub": "",
            "sig": sig(e),
            "flagged": False,
            "cells": [
                _cell(_direction(e), kind=""),
                *_html_effect_cells(e, result.cuped),
                _cell(row[-2]),
                _cell(row[-1], kind=""),
            ],
        }
        for e, row in zip(result.metrics, metric_rows(result), strict=True)
    ]
    segments = [
        {
            "name": _segment_name(s),
            "sub": f"users C/T {row[2]}",
            "sig": sig(s.effect),
            "flagged": s.worse,
            "cells": [
                _cell(s.effect.metric, kind=""),
                *_html_effect_cells(s.effect, result.cuped),
                _cell(row[-1], kind="flag"),
            ],
        }
        for s, row in zip(result.segments, segment_rows(result), strict=True)
    ]
    metric_header = [
        _cell("metric", kind=""),
        _cell("better", kind=""),
        *_html_effect_header(result),
        _cell("MDE"),
        _cell("verdict", kind=""),
    ]
    segment_header = [
        _cell("segment", "users C/T", kind=""),
        _cell("metric", kind=""),
        *_html_effect_header(result),
        _cell("verdict", kind=""),
    ]
    return render(
        TEMPLATE,
        title=f"rankmeter: A/B {result.treatment} vs {result.control}",
        control=result.control,
        treatment=result.treatment,
        warnings=list(result.warnings),
        headline=headline(result),
        srm=srm_line(result),
        srm_failed=result.srm.failed,
        count_header=COUNT_HEADER,
        counts=count_rows(result),
        metric_header=metric_header,
        metrics=metrics,
        latency_header=LATENCY_HEADER,
        latency=latency_rows(result),
        segment_header=segment_header,
        segments=segments,
        cuped=result.cuped,
        notes=list(_notes(result)),
    )
