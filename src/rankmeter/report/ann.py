"""Renderings of an ANN recall measurement (:class:`rankmeter.vector.ann.AnnRecall`): the
trade-off table as text rows, a terminal table, Markdown (through the one table writer,
:mod:`rankmeter.report._markdown`), and an HTML page with settings, the table and a
recall-vs-QPS plot: the template ``templates/ann.html.j2`` in the shell every page shares
(:mod:`rankmeter.report._html`), the plot drawn by :func:`rankmeter.report._svg.xy_chart`."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankmeter.report._registry import renders
from rankmeter.vector.ann import TIMED_RUNS

if TYPE_CHECKING:
    from collections.abc import Callable

    from rankmeter.vector.ann import AnnBenchmark, AnnPoint, AnnRecall, QualityLoss

__all__ = [
    "benchmark_chart",
    "benchmark_table",
    "describe",
    "describe_benchmark",
    "family_label",
    "frontier_line",
    "quality_table",
    "render_benchmark_html",
    "render_benchmark_json",
    "render_benchmark_markdown",
    "render_benchmark_table",
    "render_html",
    "render_json",
    "render_markdown",
    "render_table",
    "result_file_name",
    "tradeoff_table",
    "write_results",
]

TEMPLATE = "ann.html.j2"


def tradeoff_table(result: AnnRecall) -> tuple[list[str], list[list[str]]]:
    """The trade-off table as text: one row per setting, recall@k and QPS@k per k."""
    header = ["setting", "build s", "memory"]
    for k in result.k:
        header += [f"recall@{k}", f"QPS@{k}"]
    body = []
    for setting in result.settings:
        rows = {r.k: r for r in result.rows if r.setting == setting}
        first = rows[result.k[0]]
        line = [result.label(setting), f"{first.build_s:.2f}", _size(first.nbytes)]
        for k in result.k:
            line += [f"{rows[k].recall:.4f}", f"{rows[k].qps:,.0f}"]
        body.append(line)
    return header, body


def _size(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{nbytes} B"  # pragma: no cover


def describe(result: AnnRecall) -> str:
    """One line: what was measured, on what."""
    threads = "all threads" if result.threads is None else f"{result.threads} thread(s)"
    return (
        f"{result.title} ({result.backend}, {result.metric}) on {result.n_corpus:,} corpus "
        f"vectors x {result.dim} dimensions, {result.n_queries:,} queries; QPS: one batch, "
        f"{threads}, best of up to {TIMED_RUNS} runs; "
        f"exact neighbours in {result.exact_s:.2f} s; memory: {result.memory_method}"
    )


@renders("rankmeter.vector.AnnRecall", "json")
def render_json(result: AnnRecall) -> str:
    """The measurement as strict JSON (``AnnRecall.to_dict``)."""
    from rankmeter.report._json import json_text

    return json_text(result.to_dict())


@renders("rankmeter.vector.AnnRecall", "markdown")
def render_markdown(result: AnnRecall) -> str:
    """A Markdown section: title, what was measured, the trade-off table, the recall rule."""
    from rankmeter.report._markdown import markdown_table

    header, body = tradeoff_table(result)
    lines = [f"## ANN recall: {result.title}", "", describe(result) + ".", ""]
    lines += markdown_table(header, body, [None] + ["right"] * (len(header) - 1))
    lines += ["", f"{result.recall_rule[0].upper()}{result.recall_rule[1:]}.", ""]
    return "\n".join(lines)


@renders("rankmeter.vector.AnnRecall", "table")
def render_table(result: AnnRecall) -> Any:
    """The trade-off table for a terminal: a title, the table (fitted to the width: text
    columns folded or rows stacked, numbers whole) and what was measured under it, as lines
    that wrap at the terminal's width, not at the table's."""
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report._rich import FittedTable, shown

    header, body = tradeoff_table(result)
    notes = [f"{describe(result)}.", f"{result.recall_rule}."]
    # Columns that are the same on every row (one build; one setting) go under the table.
    keep = list(range(len(header)))
    if len({(cells[1], cells[2]) for cells in body}) == 1:
        keep = [i for i in keep if i not in (1, 2)]
        notes.insert(0, f"Built in {body[0][1]} s; index size {body[0][2]}.")
    if len(body) == 1:
        keep.remove(0)
    table = FittedTable()
    for i in keep:
        table.add_column(header[i], text=i == 0, justify="left" if i == 0 else "right")
    for cells in body:
        table.add_row(*(shown(cells[i]) if i == 0 else cells[i] for i in keep))
    title = shown(f"ANN recall: {result.title}", style="table.title")
    return Group(title, table, *(Text(note, style="dim") for note in notes))


def _headline(result: AnnRecall) -> str:
    k = result.k[len(result.k) // 2]
    at_k = [r for r in result.rows if r.k == k]
    if len(at_k) == 1:
        parts = [f"recall@{r.k} {r.recall:.4f}" for r in result.rows]
        return f"{', '.join(parts)}; {at_k[0].qps:,.0f} queries/s at k={k}"
    best = max(at_k, key=lambda r: (r.recall, r.qps))
    fastest = max(at_k, key=lambda r: (r.qps, r.recall))
    return (
        f"recall@{k} from {min(r.recall for r in at_k):.4f} to {best.recall:.4f} over "
        f"{len(at_k)} settings; best at {result.label(best.setting)} ({best.qps:,.0f} "
        f"queries/s), fastest {result.label(fastest.setting)} ({fastest.qps:,.0f} queries/s, "
        f"recall {fastest.recall:.4f})"
    )


def _tradeoff_chart(result: AnnRecall, ident: str) -> str:
    from rankmeter.report import _svg
    from rankmeter.report.html import DASHES, PALETTE

    recalls = [r.recall for r in result.rows]
    speeds = [r.qps for r in result.rows]
    x_min, _, _ = _svg.nice_ticks(min(recalls), 1.0)
    x_min = max(x_min, 0.0)
    _, _, x_ticks = _svg.nice_ticks(x_min, 1.0)
    x_ticks = [t for t in x_ticks if x_min - 1e-9 <= t <= 1.0 + 1e-9]
    # Thousands past 10,000 queries/s, so that tick labels stay short.
    unit, y_label = (1000.0, "thousand queries per second") if max(speeds) >= 1e4 else (1.0, "")
    y_label = y_label or "queries per second"
    y_min, y_max, y_ticks = _svg.nice_ticks(0.0, max(speeds) / unit)
    lines = []
    for i, k in enumerate(result.k):
        style = _svg.Series(
            name=f"recall@{k}",
            values=(),
            color=PALETTE[i % len(PALETTE)],
            dash=DASHES[i % len(DASHES)],
            points=True,
        )
        points = [
            _svg.Point(
                r.recall,
                r.qps / unit,
                f"{result.label(r.setting)}: recall@{k} {r.recall:.4f}, {r.qps:,.0f} queries/s",
            )
            for r in result.rows
            if r.k == k
        ]
        lines.append((style, points))
    return _svg.xy_chart(
        ident=ident,
        kind="ann-tradeoff",
        title=f"Recall vs queries per second: {result.title} ({result.backend}, {result.metric})",
        desc="; ".join(
            f"{result.label(r.setting)}: recall@{r.k} {r.recall:.4f} at {r.qps:,.0f} queries/s"
            for r in result.rows
        ),
        x_label="recall@k",
        y_label=y_label,
        lines=lines,
        x_range=(x_min, 1.0),
        x_ticks=x_ticks,
        y_range=(y_min, y_max),
        y_ticks=y_ticks,
        width=720,
        height=420,
    )


def _settings(result: AnnRecall) -> list[tuple[str, str]]:
    threads = "all" if result.threads is None else str(result.threads)
    sweep = "; ".join(f"{n} = {', '.join(map(str, v))}" for n, v in result.sweep.items())
    return [
        ("Index", result.title),
        ("Backend", result.backend),
        ("Metric", result.metric),
        ("Corpus", f"{result.corpus}: {result.n_corpus:,} vectors x {result.dim} dimensions"),
        ("Queries", f"{result.queries}: {result.n_queries:,}"),
        ("k", ", ".join(str(k) for k in result.k)),
        ("Sweep", sweep or "none"),
        ("Seed", str(result.seed)),
        ("Search threads", threads),
        ("Exact search", f"{result.exact_s:.3f} s (NumPy, float64)"),
        ("Memory", result.memory_method),
        (
            "QPS",
            "queries / wall time of one batched search of all queries "
            f"(the fastest of up to {TIMED_RUNS} runs)",
        ),
    ]


@renders("rankmeter.vector.AnnRecall", "html")
def render_html(result: AnnRecall) -> str:
    """One self-contained page: settings, the trade-off table, the recall-vs-QPS plot.

    The page is the template ``templates/ann.html.j2`` in the shared shell (one stylesheet, a
    Content-Security-Policy that loads nothing); every value goes through the one HTML escaper.
    """
    from rankmeter.report._html import PageIds, render, safe, template_ids

    header, body = tradeoff_table(result)
    ids = PageIds(reserved=template_ids(TEMPLATE))
    return render(
        TEMPLATE,
        title=f"rankmeter: ANN recall of {result.title}",
        index=result.title,
        headline=_headline(result),
        settings=_settings(result),
        header=header,
        rows=body,
        recall_rule=f"{result.recall_rule[0].upper()}{result.recall_rule[1:]}.",
        plot=safe(_tradeoff_chart(result, ids.claim("tradeoff-plot"))),
    )


# -- several indexes (rankmeter.vector.ann.ann_benchmark) ---------------------------------------
BENCH_TEMPLATE = "ann-bench.html.j2"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def benchmark_table(bench: AnnBenchmark) -> tuple[list[str], list[list[str]]]:
    """One row per index setting: build time (threads), memory, recall@k and batch QPS@k per
    k, single-query latency p50/p95/p99 in milliseconds, and ``yes`` on the Pareto frontier of
    recall and QPS at :attr:`~rankmeter.vector.ann.AnnBenchmark.chart_k` (the chart in text)."""
    header = ["setting", "build s (threads)", "memory"]
    header += [f"recall@{k}" for k in bench.k] + [f"QPS@{k}" for k in bench.k]
    header += [f"p{q} ms@{bench.chart_k}" for q in (50, 95, 99)] + ["Pareto"]
    body = []
    for point, on in zip(bench.points, bench.frontier(), strict=True):
        line = [point.setting, f"{point.build_s:.2f} ({point.build_threads})", _size(point.nbytes)]
        line += [f"{point.recall[k]:.4f}" for k in bench.k]
        line += [f"{point.qps[k]:,.0f}" for k in bench.k]
        line += [_ms(point.p50_s), _ms(point.p95_s), _ms(point.p99_s), "yes" if on else ""]
        body.append(line)
    return header, body


def frontier_line(bench: AnnBenchmark) -> str:
    """The Pareto frontier in words: its settings from the fastest to the most accurate."""
    k = bench.chart_k
    on = [p for p, flag in zip(bench.points, bench.frontier(), strict=True) if flag]
    on.sort(key=lambda p: (p.recall[k], -p.qps[k]))
    steps = [f"{p.setting} ({p.recall[k]:.4f}, {p.qps[k]:,.0f}/s)" for p in on]
    return f"Pareto frontier of recall@{k} and QPS@{k}, fastest first: " + " -> ".join(steps)


def family_label(bench: AnnBenchmark, index: str) -> str:
    """An index with ``*`` for the parameters its sweep varied: ``hnsw(M=16,...,efSearch=*)``."""
    points = [p for p in bench.points if p.index == index]
    if not points or not points[0].params:
        return index
    kind = index.split("(")[0]
    shown = ",".join(
        f"{name}={'*' if len({p.params[name] for p in points}) > 1 else value}"
        for name, value in points[0].params.items()
    )
    return f"{kind}({shown})"


def _interval(loss: QualityLoss) -> str:
    return f"{loss.difference:+.4f} [{loss.low:+.4f}, {loss.high:+.4f}]"


def quality_table(bench: AnnBenchmark) -> tuple[list[str], list[list[str]]]:
    """Quality lost per setting: for each metric, the index's mean, the difference from exact
    search with its interval, the corrected p; and whether any loss is significant."""
    if not bench.points or not bench.points[0].quality:
        return [], []
    header = ["setting"]
    for loss in bench.points[0].quality:
        header += [loss.metric, f"Δ{loss.metric} [95% CI]", "p (Holm)"]
    header += [f"QPS@{bench.chart_k}", "quality lost"]
    body = []
    for point in bench.points:
        line = [point.setting]
        for loss in point.quality:
            line += [f"{loss.ann:.4f}", _interval(loss), f"{loss.p_corrected:.4f}"]
        lost = [q.metric for q in point.quality if q.significant and q.difference < 0]
        line += [f"{point.qps[bench.chart_k]:,.0f}", ", ".join(lost) if lost else "none"]
        body.append(line)
    return header, body


def _exact_line(bench: AnnBenchmark) -> str:
    quality = bench.points[0].quality if bench.points else ()
    shown = ", ".join(f"{q.metric} {q.exact:.4f}" for q in quality)
    return f"Exact search: {shown}."


def _pick(bench: AnnBenchmark) -> AnnPoint | None:
    """The fastest setting (batch QPS at the chart's k) that loses no significant quality."""
    safe = [
        p for p in bench.points if not any(q.significant and q.difference < 0 for q in p.quality)
    ]
    return max(safe, key=lambda p: p.qps[bench.chart_k]) if safe else None


def _pick_line(bench: AnnBenchmark) -> str:
    pick = _pick(bench)
    if pick is None:
        return "Every setting loses significant quality against exact search."
    # Not significant is not nothing: the intervals say how much it may still lose.
    bounds = ", ".join(f"{q.metric} {q.low:+.4f}" for q in pick.quality)
    return (
        f"Fastest setting that loses no significant quality: {pick.setting} "
        f"({pick.qps[bench.chart_k]:,.0f} queries/s at k={bench.chart_k}); the lower ends of "
        f"its intervals: {bounds}."
    )


def describe_benchmark(bench: AnnBenchmark, shown: Callable[[str], str] | None = None) -> str:
    """One line: what was measured, on what, and how. The corpus name (a path: untrusted)
    goes through ``shown``: control characters made visible by default, Markdown's escaper
    for Markdown."""
    from rankmeter._escape import visible

    threads = "all threads" if bench.threads is None else f"{bench.threads} thread(s)"
    return (
        f"{len(bench.points)} settings of {len(bench.indexes)} indexes ({bench.metric}) on "
        f"{(shown or visible)(bench.corpus)}: {bench.n_corpus:,} vectors x {bench.dim} dimensions, "
        f"{bench.n_queries:,} queries; QPS: one batch, {threads}, best of up to {TIMED_RUNS} "
        f"runs; latency: each query searched alone at k={bench.chart_k}; build threads in "
        f"brackets (HNSW graphs are built on one); memory: {', '.join(bench.memory_methods)}; "
        f"rankmeter {bench.version}"
    )


@renders("rankmeter.vector.AnnBenchmark", "json")
def render_benchmark_json(bench: AnnBenchmark) -> str:
    """The whole benchmark as strict JSON (``AnnBenchmark.to_dict``)."""
    from rankmeter.report._json import json_text

    return json_text(bench.to_dict())


@renders("rankmeter.vector.AnnBenchmark", "markdown")
def render_benchmark_markdown(bench: AnnBenchmark) -> str:
    """A Markdown section: the settings table, the frontier, and the quality lost."""
    from rankmeter._escape import markdown_text
    from rankmeter.report._markdown import markdown_table

    header, body = benchmark_table(bench)
    names = ", ".join(family_label(bench, index) for index in bench.indexes)
    lines = [f"## ANN benchmark: {names}", "", describe_benchmark(bench, markdown_text) + "."]
    lines += ["", *markdown_table(header, body, [None] + ["right"] * (len(header) - 1))]
    lines += ["", frontier_line(bench) + ".", ""]
    q_header, q_body = quality_table(bench)
    if q_header:
        lines += ["### Quality lost against exact search", "", _exact_line(bench), ""]
        lines += markdown_table(q_header, q_body, [None] + ["right"] * (len(q_header) - 1))
        lines += ["", f"{bench.quality_note}.", "", _pick_line(bench), ""]
    lines += [f"{bench.recall_rule[0].upper()}{bench.recall_rule[1:]}.", ""]
    return "\n".join(lines)


def _fitted(header: list[str], body: list[list[str]]) -> Any:
    from rankmeter.report._rich import FittedTable, shown

    table = FittedTable()
    for i, head in enumerate(header):
        table.add_column(head, text=i == 0, justify="left" if i == 0 else "right")
    for cells in body:
        table.add_row(shown(cells[0]), *cells[1:])
    return table


@renders("rankmeter.vector.AnnBenchmark", "table")
def render_benchmark_table(bench: AnnBenchmark) -> Any:
    """The settings table (and the quality lost) for a terminal, with the notes under it."""
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report._rich import shown

    header, body = benchmark_table(bench)
    parts: list[Any] = [shown("ANN benchmark", style="table.title"), _fitted(header, body)]
    notes = [f"{frontier_line(bench)}.", f"{describe_benchmark(bench)}.", f"{bench.recall_rule}."]
    parts += [Text(note, style="dim") for note in notes]
    q_header, q_body = quality_table(bench)
    if q_header:
        parts += [shown("Quality lost against exact search", style="table.title")]
        parts += [_fitted(q_header, q_body), Text(_exact_line(bench), style="dim")]
        parts += [Text(f"{bench.quality_note}.", style="dim"), Text(_pick_line(bench))]
    return Group(*parts)


def _qps_ticks(low: float, high: float) -> tuple[float, float, list[float], list[str]]:
    """A log10 axis of queries per second: the range in log10 units and ticks at 1, 2 and 5
    times powers of ten (only the powers when the range spans more than two decades)."""
    lo, hi = math.floor(math.log10(max(low, 1e-9))), math.ceil(math.log10(max(high, 1e-9)))
    hi = max(hi, lo + 1)
    steps = (1.0,) if hi - lo > 2 else (1.0, 2.0, 5.0)
    ticks = [math.log10(step * 10.0**power) for power in range(lo, hi + 1) for step in steps]
    ticks = [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9]
    labels = [_count(10.0**t) for t in ticks]
    return float(lo), float(hi), ticks, labels


def _count(value: float) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{value / size:g}{unit}"
    return f"{value:g}"


def benchmark_chart(bench: AnnBenchmark, ident: str) -> str:
    """Recall@k against batch QPS@k (log scale) at the chart's k: one line per index through
    its sweep, and the Pareto frontier drawn over them (black, dashed)."""
    from rankmeter.report import _svg
    from rankmeter.report.html import DASHES, PALETTE

    k = bench.chart_k
    recalls = [p.recall[k] for p in bench.points]
    speeds = [p.qps[k] for p in bench.points]
    x_min, _, _ = _svg.nice_ticks(min(recalls), 1.0)
    x_min = max(x_min, 0.0)
    _, _, x_ticks = _svg.nice_ticks(x_min, 1.0)
    x_ticks = [t for t in x_ticks if x_min - 1e-9 <= t <= 1.0 + 1e-9]
    y_min, y_max, y_ticks, y_labels = _qps_ticks(min(speeds), max(speeds))

    def point(p: AnnPoint) -> Any:
        tip = f"{p.setting}: recall@{k} {p.recall[k]:.4f}, {p.qps[k]:,.0f} queries/s"
        return _svg.Point(p.recall[k], math.log10(max(p.qps[k], 1e-9)), tip)

    lines = []
    for i, index in enumerate(bench.indexes):
        backend = next(p.backend for p in bench.points if p.index == index)
        style = _svg.Series(
            name=f"{family_label(bench, index)} ({backend})",
            values=(),
            color=PALETTE[i % len(PALETTE)],
            dash=DASHES[(i // len(PALETTE)) % len(DASHES)],
            points=True,
        )
        lines.append((style, [point(p) for p in bench.points if p.index == index]))
    on = [p for p, flag in zip(bench.points, bench.frontier(), strict=True) if flag]
    on.sort(key=lambda p: (p.recall[k], -p.qps[k]))
    frontier = _svg.Series(name="Pareto frontier", values=(), color="#000000", dash="4 3")
    lines.append((frontier, [point(p) for p in on]))
    return _svg.xy_chart(
        ident=ident,
        kind="ann-benchmark",
        title=f"Recall@{k} vs queries per second ({bench.metric}, {bench.corpus})",
        desc="; ".join(
            f"{p.setting}: recall@{k} {p.recall[k]:.4f} at {p.qps[k]:,.0f} queries/s"
            + (" (Pareto frontier)" if flag else "")
            for p, flag in zip(bench.points, bench.frontier(), strict=True)
        ),
        x_label=f"recall@{k}",
        y_label="queries per second (log scale)",
        lines=lines,
        x_range=(x_min, 1.0),
        x_ticks=x_ticks,
        y_range=(y_min, y_max),
        y_ticks=y_ticks,
        y_tick_labels=y_labels,
        width=760,
        height=460 + 20 * (len(lines) // 3),
    )


@renders("rankmeter.vector.AnnBenchmark", "html")
def render_benchmark_html(bench: AnnBenchmark) -> str:
    """One self-contained page: what was measured, the chart with the Pareto frontier, the
    settings table and (with judgments) the quality lost against exact search."""
    from rankmeter.report._html import PageIds, render, safe, template_ids

    header, body = benchmark_table(bench)
    q_header, q_body = quality_table(bench)
    ids = PageIds(reserved=template_ids(BENCH_TEMPLATE))
    return render(
        BENCH_TEMPLATE,
        title=f"rankmeter: ANN benchmark of {len(bench.indexes)} indexes",
        indexes=", ".join(family_label(bench, index) for index in bench.indexes),
        description=describe_benchmark(bench) + ".",
        frontier=frontier_line(bench) + ".",
        header=header,
        rows=body,
        quality_header=q_header,
        quality_rows=q_body,
        exact=_exact_line(bench) if q_header else "",
        quality_note=f"{bench.quality_note}." if q_header else "",
        pick=_pick_line(bench) if q_header else "",
        recall_rule=f"{bench.recall_rule[0].upper()}{bench.recall_rule[1:]}.",
        plot=safe(benchmark_chart(bench, ids.claim("benchmark-plot"))),
    )


def result_file_name(bench: AnnBenchmark, point: AnnPoint) -> str:
    """The results file of one setting: the dataset's name (and a hash of everything that
    makes the measurement another one: corpus, queries, metric), the backend and the setting,
    in characters safe in any file system. Measuring the same setting again replaces it."""
    import hashlib
    import re

    key = "\x00".join((bench.corpus, bench.queries, bench.metric))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", bench.corpus.split(" (")[0].rstrip("/"))
    stem = stem.strip("._")[-40:] or "vectors"
    setting = re.sub(r"[^A-Za-z0-9._=-]+", "_", point.setting).strip("_")
    return f"{stem}-{bench.metric}-{digest}__{point.backend}__{setting}.json"


def write_results(bench: AnnBenchmark, folder: str | os.PathLike[str]) -> list[Path]:
    """Write one JSON file per setting into ``folder`` (made if missing), atomically; what
    :func:`rankmeter.vector.ann.load_results` reads back. Returns the paths written."""
    from rankmeter.io import atomic_write
    from rankmeter.report._json import json_text

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for point in bench.points:
        path = root / result_file_name(bench, point)
        with atomic_write(path) as handle:
            handle.write(json_text(bench.point_record(point)))
        written.append(path)
    return written
