"""Renderings of an ANN recall measurement (:class:`rankmeter.vector.ann.AnnRecall`): the
trade-off table as text rows, a terminal table, Markdown (through the one table writer,
:mod:`rankmeter.report._markdown`), and an HTML page with settings, the table and a
recall-vs-QPS plot: the template ``templates/ann.html.j2`` in the shell every page shares
(:mod:`rankmeter.report._html`), the plot drawn by :func:`rankmeter.report._svg.xy_chart`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.vector.ann import TIMED_RUNS

if TYPE_CHECKING:
    from rankmeter.vector.ann import AnnRecall

__all__ = [
    "describe",
    "render_html",
    "render_json",
    "render_markdown",
    "render_table",
    "tradeoff_table",
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


def render_json(result: AnnRecall) -> str:
    """The measurement as strict JSON (``AnnRecall.to_dict``)."""
    from rankmeter.report._json import json_text

    return json_text(result.to_dict())


def render_markdown(result: AnnRecall) -> str:
    """A Markdown section: title, what was measured, the trade-off table, the recall rule."""
    from rankmeter.report._markdown import markdown_table

    header, body = tradeoff_table(result)
    lines = [f"## ANN recall: {result.title}", "", describe(result) + ".", ""]
    lines += markdown_table(header, body, [None] + ["right"] * (len(header) - 1))
    lines += ["", f"{result.recall_rule[0].upper()}{result.recall_rule[1:]}.", ""]
    return "\n".join(lines)


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
