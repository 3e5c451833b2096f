"""One self-contained HTML page for a Comparison: ``rankmeter compare ... --format html``.

The page needs nothing but itself: the styles are inline, the plots are inline SVG, there is no
script, and a Content-Security-Policy forbids loading anything from anywhere. The page is the
Jinja2 template ``templates/comparison.html.j2`` (autoescape on: every run name, query id and
text, segment name goes through the one HTML escaper), filled with the values this module
formats; the plots are drawn by :mod:`rankmeter.report._svg`. The ids of the page are given out
by one :class:`~rankmeter.report._html.PageIds`, so they are unique by construction. The same
comparison always gives the same bytes, so reports can be diffed and golden-tested.

Contents: the headline and settings; the summary table (mean [CI] and n per system and metric,
the difference from the baseline with its interval, relative change, d_z, p, corrected p,
wins/ties/losses) with its legend; notes; plots of the means with their intervals, of the
sorted per-query differences and of metric@k curves; the segment table; the failure lists
(the worst queries as a compact table, empty answers, misses, the spread of the differences).
Where the comparison was made with a corpus (``rankmeter compare --corpus``), each system's
diff against the baseline (:mod:`rankmeter.report.diff`) is written beside the report and its
worst queries link to their rankings side by side there; without one, a line says which
``rankmeter diff`` command shows them. (The explanations of the worst queries were stacked
here before issue 24: a report of three runs on Cranfield was 30,519 px tall.)
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankmeter.checking import DataWarning
from rankmeter.comparison import (
    CURVE_FAMILIES,
    ComparedFiles,
    Comparison,
    Difference,
    Failures,
    RunDiff,
)
from rankmeter.report import _svg
from rankmeter.report._html import PageIds, page_head, render, safe, template_ids
from rankmeter.report._registry import Rendered, emit, renders, with_notes
from rankmeter.report._text import num, pvalue, signed
from rankmeter.report.checking import warning_lines as data_warning_lines
from rankmeter.report.comparison import (
    filled_line,
    headline,
    interval,
    legend,
    log_scale_line,
    percent,
    queries_phrase,
    warning_texts,
)
from rankmeter.results import JUDGED_BELOW, Policies

__all__ = ["DASHES", "MAX_POINTS", "PALETTE", "diff_page_paths", "page_head", "render_html"]

#: Okabe-Ito colours (safe for the common colour-vision deficiencies), the baseline in dark grey.
BASELINE_COLOR = "#4d4d4d"
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
#: Dash patterns, cycled with the colours so that lines differ in more than hue.
DASHES = ("", "7 3", "2 3", "9 3 2 3")
#: Up to this many queries, the difference plot draws a point (with a tooltip) per query.
MAX_POINTS = 300

TEMPLATE = "comparison.html.j2"


def render_html(
    comparison: Comparison,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[str] = (),
    diff_pages: Mapping[str, str] | None = None,
) -> str:
    """The comparison as one self-contained HTML page (UTF-8 text, no external resources).

    Parameters
    ----------
    comparison : the result of :func:`rankmeter.compare`
    judged_below : a system whose Judged@k is below it gets a warning among the notes (0:
        never)
    data_warnings : lines of :func:`rankmeter.report.checking.warning_lines` (a partial query
        overlap, scores rising with the rank, runs cut at different depths), first among the
        notes, as the Markdown report and the terminal give them
    diff_pages : ``{system: href}``: the page of each system's diff against the baseline
        (:func:`rankmeter.report.diff.render_diff_html`, relative to this page); its worst
        queries link to their sections there. Without one, a line names the command that
        makes it.

    Returns
    -------
    str
        The page; the same comparison always gives the same text.

    Examples
    --------
    >>> import rankmeter
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
    >>> runs = {
    ...     "old": {"q1": {"x": 2.0, "a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}},
    ...     "new <v2>": {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}},
    ... }
    >>> page = render_html(rankmeter.compare(qrels, runs, ["nDCG@10", "AP"], resamples=200))
    >>> page.startswith("<!DOCTYPE html>"), page.count("<svg "), "new &lt;v2&gt;" in page
    (True, 6, True)
    """
    # The template's own ids first, then the plots' and the failure sections'.
    ids = PageIds(reserved=template_ids(TEMPLATE))
    styles = _Styles(comparison.systems, comparison.baseline)
    others = [s for s in comparison.systems if s != comparison.baseline]
    return render(
        TEMPLATE,
        title=f"rankmeter: {', '.join(others)} vs {comparison.baseline}",
        baseline=comparison.baseline,
        headline=headline(comparison),
        nav=_nav(),
        settings=_settings(comparison),
        summary=_summary(comparison),
        notes=[*data_warnings, *warning_texts(comparison, judged_below), *comparison.notes],
        plots=_plots(comparison, styles, ids),
        segments=_segments(comparison),
        failures=_failures(comparison, diff_pages or {}, ids),
    )


class _Styles:
    """Each system's colour and dash pattern: the baseline grey and solid, then the palette."""

    def __init__(self, systems: Sequence[str], baseline: str) -> None:
        self.color: dict[str, str] = {}
        self.dash: dict[str, str] = {}
        others = [s for s in systems if s != baseline]
        self.color[baseline] = BASELINE_COLOR
        self.dash[baseline] = ""
        for i, system in enumerate(others):
            self.color[system] = PALETTE[i % len(PALETTE)]
            self.dash[system] = DASHES[(i + 1) % len(DASHES)]


def _nav() -> list[tuple[str, str]]:
    return [
        ("settings", "Settings"),
        ("summary", "Summary"),
        ("plots", "Plots"),
        ("segments", "Segments"),
        ("failures", "Failures"),
    ]


def _policy_text(policies: Policies) -> str:
    """The evaluation policies, without the query-set part (the Queries row says it)."""
    return policies.describe(queries="")


def _level(comparison: Comparison) -> str:
    from rankmeter.stats import interval_phrase

    return interval_phrase(comparison.settings.interval, comparison.settings.level)


def _settings(comparison: Comparison) -> list[tuple[str, str]]:
    from rankmeter.stats import correction_label, paired_test_label

    s = comparison.settings
    test = paired_test_label(s.test, resamples=s.resamples, seed=s.seed)
    correction = correction_label(s.correction)
    metric = comparison.failures[0].metric if comparison.failures else comparison.metrics[0]
    return [
        ("Baseline", s.baseline),
        ("Systems", ", ".join(comparison.systems)),
        (
            "Queries",
            f"{comparison.n_queries} {'query' if comparison.n_queries == 1 else 'queries'}: "
            f"{queries_phrase(comparison).removeprefix('queries: ')}",
        ),
        *([("Without results", filled)] if (filled := filled_line(comparison)) else []),
        ("Metrics", ", ".join(comparison.metrics)),
        ("Test", test),
        ("Correction", f"{correction}, over {len(comparison.differences)} comparisons"),
        ("Alpha", f"{s.alpha:g}"),
        (
            "Intervals",
            f"{_level(comparison)}s ({s.resamples:,} resamples)"
            + (
                f"; differences: simultaneous, each at {comparison.difference_level:.2%} "
                "(Bonferroni)"
                if s.simultaneous and len(comparison.differences) > 1
                else ""
            ),
        ),
        ("Resamples", f"{s.resamples:,}"),
        ("Seed", str(s.seed)),
        ("Policies", _policy_text(s.policies)),
        ("Segments", f"segments under {s.min_segment} queries are shown but never flagged"),
        ("Failure lists", f"on {metric}; nothing relevant = none in the top {s.cutoff}"),
    ]


def _summary_header(comparison: Comparison) -> list[str]:
    from rankmeter.stats import correction_label

    s = comparison.settings
    level = f"{s.level:.0%} CI"
    correction = correction_label(s.correction, short=True)
    simultaneous = " simult." if s.simultaneous else ""
    return [
        "metric",
        "system",
        "n",
        f"mean [{level}]",
        f"Δ vs {comparison.baseline} [{level}{simultaneous}]",
        "rel.",
        "d_z",
        "p",
        f"p ({correction})",
        "W/T/L",
    ]


def _direction(d: Difference) -> str:
    if not d.significant:
        return ""
    return " sig better" if d.gain > 0 else " sig worse"


def _difference(d: Difference) -> dict[str, Any]:
    return {
        "difference": signed(d.difference),
        "interval": interval(d.low, d.high, sign=True),
        "relative": percent(d.relative),
        "effect_size": num(d.effect_size, 2),
        "p_value": pvalue(d.p_value),
        "p_corrected": pvalue(d.p_corrected),
        "significant": d.significant,
        "wtl": f"{d.wins}/{d.ties}/{d.losses}",
    }


def _summary(comparison: Comparison) -> dict[str, Any]:
    groups = []
    for metric in comparison.metrics:
        rows = []
        for system in comparison.systems:
            mean = comparison.mean(system, metric)
            row: dict[str, Any] = {
                "system": system,
                "n": mean.n,
                "mean": num(mean.mean),
                "interval": interval(mean.low, mean.high),
                "kind": "baseline",
                "difference": None,
            }
            if system != comparison.baseline:
                d = comparison.difference(system, metric)
                row["kind"] = "system" + _direction(d)
                row["difference"] = _difference(d)
            rows.append(row)
        groups.append({"metric": metric, "rows": rows})
    caption = (
        f"Mean of each metric over {comparison.n_queries} queries with its {_level(comparison)}; "
        f"every system against the baseline {comparison.baseline}, paired on the same queries."
    )
    filled = filled_line(comparison)
    if filled:
        caption += " " + filled
    return {
        "caption": caption,
        "header": _summary_header(comparison),
        "groups": groups,
        "legend": legend(comparison),
        "log_scale": log_scale_line(comparison),
        "mark": (
            "p below alpha (no correction)"
            if comparison.settings.correction == "none"
            else "significant after the correction"
        ),
    }


def _plots(comparison: Comparison, styles: _Styles, ids: PageIds) -> dict[str, Any]:
    swatches = [
        {
            "color": styles.color[system],
            "label": system + (" (baseline)" if system == comparison.baseline else ""),
        }
        for system in comparison.systems
    ]
    return {
        "swatches": swatches,
        "means": _mean_charts(comparison, styles, ids),
        "differences": _difference_chart(comparison, styles, ids),
        "curves": _curve_charts(comparison, styles, ids),
    }


def _chart_id(ids: PageIds, name: str) -> str:
    """An id for a plot; its title and description take ``<id>-title`` and ``<id>-desc``."""
    ident = ids.claim(name)
    for part in ("title", "desc"):
        ids.claim(f"{ident}-{part}")
    return ident


def _figure(svg: str, caption: str, wide: bool = False) -> dict[str, Any]:
    return {"svg": safe(svg), "caption": caption, "wide": wide}


def _mean_charts(comparison: Comparison, styles: _Styles, ids: PageIds) -> list[dict[str, Any]]:
    out = []
    level = _level(comparison)
    for i, metric in enumerate(comparison.metrics):
        bars = []
        described = []
        n = comparison.n_queries
        for system in comparison.systems:
            mean = comparison.mean(system, metric)
            n = mean.n
            text = f"{system}: {num(mean.mean)} {interval(mean.low, mean.high)}, n = {mean.n}"
            described.append(text)
            bars.append(
                _svg.Bar(
                    label=system,
                    value=mean.mean,
                    low=mean.low,
                    high=mean.high,
                    color=styles.color[system],
                    tooltip=f"{metric} of {text}",
                    caption=num(mean.mean),
                )
            )
        svg = _svg.bar_chart(
            ident=_chart_id(ids, f"chart-means-{i}"),
            title=f"Mean {metric} per system",
            desc=f"Mean {metric} of each system with its {level}: " + "; ".join(described),
            y_label=f"mean {metric}",
            bars=bars,
        )
        out.append(_figure(svg, f"Mean {metric} over n = {n} queries; whiskers: the {level}."))
    return out


def _difference_chart(
    comparison: Comparison, styles: _Styles, ids: PageIds
) -> dict[str, Any] | None:
    if not comparison.metrics or len(comparison.systems) < 2:
        return None
    metric = comparison.metrics[0]
    by_system = comparison.scores.get(metric)
    if by_system is None or comparison.baseline not in by_system:
        return None
    base = np.asarray(by_system[comparison.baseline], dtype=np.float64)
    n = len(base)
    series = []
    described = []
    # where lower is better a fall is a gain: the largest rise is the largest loss
    lower = any(d.better == "lower" for d in comparison.differences if d.metric == metric)
    for system in comparison.systems:
        if system == comparison.baseline or system not in by_system:
            continue
        diffs = np.asarray(by_system[system], dtype=np.float64) - base
        d = comparison.difference(system, metric)
        order = np.lexsort((np.arange(n), -diffs if lower else diffs))
        values = [float(diffs[k]) for k in order]
        wtl = f"{d.wins}/{d.ties}/{d.losses}"
        tips = (
            [f"{system}, {comparison.query_ids[k]}: {signed(float(diffs[k]))}" for k in order]
            if len(comparison.query_ids) == n
            else []
        )
        series.append(
            _svg.Series(
                name=f"{system} (W/T/L {wtl})",
                values=values,
                color=styles.color[system],
                dash=styles.dash[system],
                points=n <= MAX_POINTS,
                tooltips=tips,
            )
        )
        described.append(
            f"{system}: won {d.wins}, tied {d.ties}, lost {d.losses}; "
            f"from {signed(values[0]) if values else '–'} to "
            f"{signed(values[-1]) if values else '–'}"
        )
    if not series:
        return None
    svg = _svg.line_chart(
        ident=_chart_id(ids, "chart-differences"),
        kind="differences",
        title=f"Per-query {metric} differences against {comparison.baseline}, sorted",
        desc=f"For each system, its {n} per-query differences in {metric} from the baseline "
        f"{comparison.baseline}, sorted from the largest loss to the largest gain: "
        + "; ".join(described),
        x_label=f"queries, sorted by difference (n = {n})",
        y_label=f"Δ {metric} vs {comparison.baseline}",
        series=series,
        width=1160,
        height=400,
        zero_line=True,
    )
    return _figure(
        svg,
        f"Per-query difference in {metric} from the baseline {comparison.baseline}, each "
        f"system's {n} queries sorted from its largest loss to its largest gain; "
        f"{'below' if lower else 'above'} the zero line the system beats the baseline"
        f"{' (lower is better)' if lower else ''}. W/T/L: queries won, tied, lost.",
        wide=True,
    )


def _families(curves: Mapping[str, Any]) -> list[str]:
    known = [f for f in CURVE_FAMILIES if f in curves]
    return known + sorted(f for f in curves if f not in CURVE_FAMILIES)


def _curve_charts(comparison: Comparison, styles: _Styles, ids: PageIds) -> list[dict[str, Any]]:
    out = []
    for i, family in enumerate(_families(comparison.curves)):
        by_system = comparison.curves[family]
        series = []
        described = []
        depth = 0
        for system in comparison.systems:
            if system not in by_system:
                continue
            values = [float(v) for v in by_system[system]]
            depth = max(depth, len(values))
            series.append(
                _svg.Series(
                    name=system, values=values, color=styles.color[system], dash=styles.dash[system]
                )
            )
            described.append(
                f"{system}: "
                + ", ".join(
                    f"{family}@{k} = {num(values[k - 1])}" for k in (1, 10, 100) if k <= len(values)
                )
            )
        if not series:
            continue
        svg = _svg.line_chart(
            ident=_chart_id(ids, f"chart-curves-{i}"),
            kind="curves",
            title=f"Mean {family}@k for k = 1 to {depth}",
            desc=f"Mean {family}@k of each system over {comparison.n_queries} queries for k = 1 "
            f"to {depth}: " + "; ".join(described),
            x_label="k (cutoff)",
            y_label=f"mean {family}@k",
            series=series,
            width=380,
            height=330,
            y_from_zero=True,
        )
        out.append(
            _figure(
                svg, f"Mean {family}@k, k = 1..{depth}, over n = {comparison.n_queries} queries."
            )
        )
    return out


def _segments(comparison: Comparison) -> dict[str, Any] | None:
    if not comparison.segments:
        return None
    level = f"{comparison.settings.level:.0%} CI"
    header = [
        "segment",
        "n",
        "metric",
        "system",
        f"{comparison.baseline} mean",
        "system mean",
        f"Δ [{level}]",
        "p",
        "p (corr.)",
        "flag",
    ]
    numeric = {1, 4, 5, 6, 7, 8}
    rows = [
        {
            "kind": "flagged" if s.flagged else ("small" if s.small else "segment"),
            "flag": "WORSE" if s.flagged else ("small" if s.small else ""),
            "segment": s.segment,
            "system": s.system,
            "metric": s.metric,
            "n": s.n,
            "baseline_mean": num(s.baseline_mean),
            "system_mean": num(s.system_mean),
            "difference": signed(s.difference),
            "interval": interval(s.low, s.high, sign=True),
            "p_value": pvalue(s.p_value),
            "p_corrected": pvalue(s.p_corrected),
        }
        for s in comparison.segments
    ]
    means = [
        {
            "segment": m.segment,
            "system": m.system,
            "metric": m.metric,
            "n": m.n,
            "mean": num(m.mean),
            "interval": interval(m.low, m.high),
        }
        for m in comparison.segment_means
    ]
    return {
        "header": [(h, i in numeric) for i, h in enumerate(header)],
        "rows": rows,
        "flagged": sum(s.flagged for s in comparison.segments),
        "min_segment": comparison.settings.min_segment,
        "means": means,
        "level": level,
    }


def _query_list(
    ids: Sequence[str], texts: Mapping[str, str], what: str, kind: str
) -> dict[str, Any]:
    return {"what": what, "kind": kind, "queries": [(q, texts.get(q)) for q in ids]}


def _spread(comparison: Comparison, failures: Sequence[Failures]) -> dict[str, Any] | None:
    shown = [f for f in failures if f.system != comparison.baseline]
    if not shown:
        return None
    names = list(shown[0].quantiles)
    return {
        "metric": shown[0].metric,
        "n": comparison.n_queries,
        "names": names,
        "rows": [
            {
                "system": f.system,
                "cells": [signed(f.quantiles.get(k, float("nan"))) for k in names],
            }
            for f in shown
        ],
    }


def _worst(comparison: Comparison, f: Failures, page: str | None) -> list[dict[str, Any]]:
    from rankmeter.report.diff import query_anchor

    return [
        {
            "query": w.query,
            "link": None if page is None else f"{page}#{query_anchor(w.query)}",
            "text": w.text if w.text is not None else comparison.queries.get(w.query, ""),
            "baseline": num(w.baseline),
            "system": num(w.system),
            "difference": signed(w.difference),
        }
        for w in f.worst
    ]


def _failures(
    comparison: Comparison, diff_pages: Mapping[str, str], ids: PageIds
) -> dict[str, Any]:
    k = comparison.settings.cutoff
    texts = comparison.queries
    systems = []
    for i, f in enumerate(comparison.failures):
        systems.append(
            {
                "id": ids.claim(f"failures-{i}"),
                "system": f.system,
                "metric": f.metric,
                "baseline": f.system == comparison.baseline,
                "worst": _worst(comparison, f, diff_pages.get(f.system)),
                "diff_page": diff_pages.get(f.system),
                "no_results": _query_list(f.no_results, texts, "Returned nothing", "no-results"),
                "nothing_relevant": _query_list(
                    f.nothing_relevant,
                    texts,
                    f"Nothing relevant in the top {k}",
                    "nothing-relevant",
                ),
            }
        )
    return {
        "spread": _spread(comparison, comparison.failures),
        "systems": systems,
        "command": "rankmeter diff QRELS BASELINE.run SYSTEM.run --corpus CORPUS -f html",
    }


@renders("rankmeter.comparison.Comparison", "html")
def _page(
    comparison: Comparison,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
    diffs: Sequence[RunDiff] = (),
    written_to: str | None = None,
) -> str | Rendered:
    """:func:`render_html` with the data's warnings as found
    (:func:`rankmeter.checking.result_warnings`).

    With ``diffs`` (each system against the baseline: ``compare_files(..., corpus=...)``) and
    ``written_to``, the report's path, each diff page is written beside it first
    (:func:`diff_page_paths`, atomically) and the worst queries link to their rankings there;
    without a path, a note on standard error says why there are none."""
    lines = data_warning_lines(data_warnings)
    if not diffs:
        return render_html(comparison, judged_below=judged_below, data_warnings=lines)
    report = _report_file(written_to)
    if report is None:
        page = render_html(comparison, judged_below=judged_below, data_warnings=lines)
        note = "the diff pages of --corpus are written beside a report file: give -o REPORT.html"
        return Rendered(page, after=(f"note: {note}",))
    from rankmeter.io import check_outputs
    from rankmeter.report.diff import render_diff_html

    systems = [d.run_b for d in diffs]
    paths = diff_page_paths(report, len(systems))
    pages = [(f"the diff page of {s}", p) for s, p in zip(systems, paths, strict=True)]
    check_outputs([("-o", report), *pages])
    for diff, path in zip(diffs, paths, strict=True):  # every page checked: none half-written
        emit(render_diff_html(diff), path)
    hrefs = {
        s: urllib.parse.quote(os.path.basename(p)) for s, p in zip(systems, paths, strict=True)
    }
    return render_html(comparison, judged_below=judged_below, data_warnings=lines, diff_pages=hrefs)


@renders(ComparedFiles, "html")
def _files_page(
    done: ComparedFiles,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
    written_to: str | None = None,
) -> Rendered:
    """Run files compared (:func:`rankmeter.comparison.compare_files`) as the page of their
    comparison, linked to its diff pages where it has them (see :func:`_page`); the goal's
    notes on standard error, as ``rankmeter compare`` writes them."""
    made = _page(
        done.comparison,
        judged_below=judged_below,
        data_warnings=data_warnings,
        diffs=done.diffs,
        written_to=written_to,
    )
    return with_notes(made, done.goal_notes)


def _report_file(written_to: str | None) -> str | None:
    """The file the diff pages go beside: the report's path where it is (or will be) a regular
    file; ``/dev/stdout`` redirected to a file, that file; None for standard output, a pipe, a
    FIFO or a device, which nothing can be beside."""
    import stat

    if written_to is None or written_to == "-":
        return None
    path = written_to
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        path = os.path.realpath(path)  # /dev/stdout, /dev/fd/1: where the descriptor goes
        if path.startswith(("/dev/", "/proc/")):
            return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return path  # a new file
    return path if stat.S_ISREG(mode) else None


def diff_page_paths(report: str, count: int) -> list[str]:
    """Where the diff pages of a report go: beside it, ``REPORT.diff.html`` for one system,
    ``REPORT.diff-1.html``, ``REPORT.diff-2.html``, ... (in the systems' order) for more.

    >>> diff_page_paths("out/report.html", 1), diff_page_paths("r", 2)
    (['out/report.diff.html'], ['r.diff-1.html', 'r.diff-2.html'])
    """
    stem = report
    for suffix in (".html", ".htm"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if count == 1:
        return [f"{stem}.diff.html"]
    return [f"{stem}.diff-{i}.html" for i in range(1, count + 1)]
