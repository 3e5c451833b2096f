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
from rankmeter.report._text import num, signed

if TYPE_CHECKING:
    from rankmeter.online import ABResult, MetricEffect, SegmentEffect

__all__ = ["render_html", "render_json", "render_markdown", "render_table"]

TEMPLATE = "ab.html.j2"


def render_json(result: ABResult) -> str:
    """The analysis as strict JSON (``ABResult.to_dict``; ``warnings`` first)."""
    return json_text(result.to_dict())


def _digits(metric: str) -> int:
    return 1 if metric == "latency" else 4


def _percent(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value * 100:+.1f}%"


def _interval(low: float, high: float, digits: int, *, percent: bool = False) -> str:
    if percent:
        return f"[{_percent(low)}, {_percent(high)}]"
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def _direction(effect: MetricEffect) -> str:
    return "higher" if effect.higher_is_better else "lower"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


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


def _metric_header(result: ABResult) -> list[str]:
    level = f"{(1 - result.alpha) * 100:g}% interval"
    return [level if h == "95% interval" else h for h in METRIC_HEADER]


def _effect_cells(effect: MetricEffect) -> list[str]:
    d = _digits(effect.metric)
    return [
        num(effect.control, d),
        num(effect.treatment, d),
        signed(effect.difference, d),
        _interval(effect.difference_low, effect.difference_high, d),
        _percent(effect.relative),
        _interval(effect.relative_low, effect.relative_high, d, percent=True),
        _p(effect.pvalue),
        _p(effect.adjusted),
    ]


def _verdict(verdict: str) -> str:
    return "n.s." if verdict == "no significant difference" else verdict


def metric_rows(result: ABResult) -> list[list[str]]:
    """One row per metric (as text), in :data:`METRIC_HEADER`'s order."""
    return [
        [
            e.metric,
            _direction(e),
            *_effect_cells(e),
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
            *_effect_cells(s.effect),
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
        f"users, expected ratio {srm.expected_ratio:g}, p = {_p(srm.pvalue)} "
        f"(fails below {srm.alpha:g}): {state}"
    )


def settings_line(result: ABResult) -> str:
    from rankmeter.stats import correction_phrase

    cuped = "CUPED on the pre-period" if result.cuped else "no CUPED (no pre-period)"
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
_METRIC_ALIGN: list[Align] = [None, None, *_RIGHT * 9, None]
_SEGMENT_ALIGN: list[Align] = [None, None, *_RIGHT * 9, None]


def render_markdown(result: ABResult) -> str:
    """Warnings first, then the tables (every variant name and segment value escaped)."""
    lines: list[str] = []
    for warning in result.warnings:
        lines += [f"> **Warning:** {markdown_text(warning)}", ""]
    lines += [f"**A/B: {markdown_text(headline(result))}**", ""]
    lines += [markdown_text(srm_line(result)), ""]
    lines += markdown_table(COUNT_HEADER, count_rows(result), [None, *_RIGHT * 5])
    lines += ["", "Metrics:", ""]
    lines += markdown_table(_metric_header(result), metric_rows(result), _METRIC_ALIGN)
    lines += ["", "Latency (exact quantiles over requests):", ""]
    lines += markdown_table(LATENCY_HEADER, latency_rows(result), [None, *_RIGHT * 4])
    if result.segments:
        header = _metric_header(result)[2:10]
        lines += ["", "Segments:", ""]
        lines += markdown_table(
            [*SEGMENT_HEADER[:3], *header, "verdict"], segment_rows(result), _SEGMENT_ALIGN
        )
    lines.append("")
    lines += [f"- {markdown_text(note)}" for note in _notes(result)]
    return "\n".join(lines) + "\n"


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
        header = [*SEGMENT_HEADER[:3], *_metric_header(result)[2:10], "verdict"]
        parts.append(table("segments", header, segment_rows(result), 2))
    parts.extend(shown(f"note: {note}", "dim") for note in _notes(result))
    return Group(*parts)


def render_html(result: ABResult) -> str:
    """One self-contained page: the warning first, the verdicts, the tables, the settings."""
    from rankmeter.report._html import render

    def classed(rows: list[list[str]], effects: list[MetricEffect]) -> list[dict[str, Any]]:
        out = []
        for cells, effect in zip(rows, effects, strict=True):
            kind = effect.verdict if effect.verdict in {"better", "worse"} else ""
            out.append({"cells": cells, "sig": kind})
        return out

    metrics = classed(metric_rows(result), [e for e in result.metrics])
    segments = classed(segment_rows(result), [s.effect for s in result.segments])
    for row, s in zip(segments, result.segments, strict=True):
        row["flagged"] = s.worse
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
        metric_header=_metric_header(result),
        metrics=metrics,
        latency_header=LATENCY_HEADER,
        latency=latency_rows(result),
        segment_header=[*SEGMENT_HEADER[:3], *_metric_header(result)[2:10], "verdict"],
        segments=segments,
        notes=list(_notes(result)),
    )
