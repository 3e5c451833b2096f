"""Renderings of an ANN recall measurement (:class:`rankmeter.vector.ann.AnnRecall`): the
trade-off table as text rows, a terminal table, Markdown, and an HTML page with settings, the
table and a recall-vs-QPS plot, in the style of the comparison report (rankmeter.report.html),
drawn with its SVG helpers (rankmeter.report._svg)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from rankmeter._escape import visible
from rankmeter.vector.ann import TIMED_RUNS

if TYPE_CHECKING:
    from rankmeter.vector.ann import AnnRecall

__all__ = ["describe", "render_html", "render_markdown", "render_table", "tradeoff_table"]


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


def render_markdown(result: AnnRecall) -> str:
    """A Markdown section: title, what was measured, the trade-off table, the recall rule."""
    header, body = tradeoff_table(result)
    lines = [
        f"## ANN recall: {result.title}",
        "",
        describe(result) + ".",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    lines += ["", f"{result.recall_rule[0].upper()}{result.recall_rule[1:]}.", ""]
    return "\n".join(lines)


def render_table(result: AnnRecall) -> Any:
    """The trade-off table for a terminal (a rich Table), what was measured in its caption."""
    from rich import box
    from rich.table import Table

    header, body = tradeoff_table(result)
    notes = [f"{describe(result)}.", f"{result.recall_rule}."]
    # Columns that are the same on every row (one build; one setting) go to the caption,
    # so that the table fits a terminal.
    keep = list(range(len(header)))
    if len({(cells[1], cells[2]) for cells in body}) == 1:
        keep = [i for i in keep if i not in (1, 2)]
        notes.insert(0, f"Built in {body[0][1]} s; index size {body[0][2]}.")
    if len(body) == 1:
        keep.remove(0)
    table = Table(title=f"ANN recall: {result.title}", title_justify="left")
    table.box = box.SIMPLE_HEAD
    for i in keep:
        table.add_column(header[i], justify="left" if i == 0 else "right", no_wrap=True)
    for cells in body:
        table.add_row(*(cells[i] for i in keep))
    table.caption = "\n".join(notes)
    table.caption_justify = "left"
    return table


def _e(text: object) -> str:
    return escape(visible(str(text)), quote=True)


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


def _tradeoff_chart(result: AnnRecall) -> str:
    from rankmeter.report import _svg
    from rankmeter.report.html import DASHES, PALETTE

    width, height = 720, 420
    series = [
        _svg.Series(
            name=f"recall@{k}",
            values=(),
            color=PALETTE[i % len(PALETTE)],
            dash=DASHES[i % len(DASHES)],
            points=True,
        )
        for i, k in enumerate(result.k)
    ]
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
    legend_height = 20 * _svg._legend_rows(series, width - 70)
    plot_height = height - 12 - 58 - legend_height
    frame = _svg._Frame(70, 12, width - 70 - 18, plot_height, x_min, 1.0, y_min, y_max)
    title = f"Recall vs queries per second: {result.title} ({result.backend}, {result.metric})"
    desc = "; ".join(
        f"{result.label(r.setting)}: recall@{r.k} {r.recall:.4f} at {r.qps:,.0f} queries/s"
        for r in result.rows
    )
    out = _svg._open("tradeoff-plot", "ann-tradeoff", title, desc, width, height)
    out += _svg._y_axis(frame, y_ticks, y_label)
    out += _svg._x_axis(frame, x_ticks, [_svg.tick_label(t, x_ticks) for t in x_ticks], "recall@k")
    for k, style in zip(result.k, series, strict=True):
        rows = [r for r in result.rows if r.k == k]
        coords = [f"{frame.x(r.recall):.1f},{frame.y(r.qps / unit):.1f}" for r in rows]
        dash = f' stroke-dasharray="{_e(style.dash)}"' if style.dash else ""
        out.append(
            f'<g class="series" data-series="{_e(style.name)}">'
            f'<polyline class="line" points="{" ".join(coords)}" fill="none" '
            f'stroke="{_e(style.color)}" stroke-width="2" stroke-linejoin="round"{dash}>'
            f"<title>{_e(style.name)}</title></polyline>"
        )
        for r in rows:
            tip = f"{result.label(r.setting)}: recall@{k} {r.recall:.4f}, {r.qps:,.0f} queries/s"
            out.append(
                f'<circle class="point" cx="{frame.x(r.recall):.1f}" '
                f'cy="{frame.y(r.qps / unit):.1f}" r="3.2" fill="{_e(style.color)}">'
                f"<title>{_e(tip)}</title></circle>"
            )
        out.append("</g>")
    out += _svg._legend(series, frame.left, frame.bottom + 58, width - 70)
    out.append("</svg>")
    return "\n".join(out)


def render_html(result: AnnRecall) -> str:
    """One self-contained page: settings, the trade-off table, the recall-vs-QPS plot."""
    from rankmeter.report.html import page_head

    header, body = tradeoff_table(result)
    head = "".join(
        f'<th scope="col"{" class=num" if i else ""}>{_e(h)}</th>' for i, h in enumerate(header)
    )
    rows = "\n".join(
        f'<tr><th scope="row">{_e(cells[0])}</th>'
        + "".join(f'<td class="num">{_e(c)}</td>' for c in cells[1:])
        + "</tr>"
        for cells in body
    )
    threads = "all" if result.threads is None else str(result.threads)
    settings = [
        ("Index", result.title),
        ("Backend", result.backend),
        ("Metric", result.metric),
        ("Corpus", f"{result.corpus}: {result.n_corpus:,} vectors x {result.dim} dimensions"),
        ("Queries", f"{result.queries}: {result.n_queries:,}"),
        ("k", ", ".join(str(k) for k in result.k)),
        (
            "Sweep",
            "; ".join(f"{n} = {', '.join(map(str, v))}" for n, v in result.sweep.items()) or "none",
        ),
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
    items = "\n".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in settings)
    title = f"rankmeter: ANN recall of {result.title}"
    parts = [
        page_head(title),
        "<body>",
        "<main>",
        "<header>",
        f"<h1>ANN recall: {_e(result.title)}</h1>",
        f'<p class="headline">{_e(_headline(result))}</p>',
        '<nav aria-label="Sections"><ul><li><a href="#settings">Settings</a></li>'
        '<li><a href="#tradeoff">Recall and speed</a></li>'
        '<li><a href="#plot">Plot</a></li></ul></nav>',
        "</header>",
        '<section id="settings" aria-labelledby="settings-h">',
        '<h2 id="settings-h">Settings</h2>',
        f'<dl class="settings">\n{items}\n</dl>',
        "</section>",
        '<section id="tradeoff" aria-labelledby="tradeoff-h">',
        '<h2 id="tradeoff-h">Recall and speed</h2>',
        '<table class="tradeoff">',
        "<caption>One row per index setting: build time, memory, and for each k the recall "
        "against the exact neighbours and the queries per second.</caption>",
        f"<thead><tr>{head}</tr></thead>",
        f"<tbody>\n{rows}\n</tbody>",
        "</table>",
        f'<p class="legend-text">{_e(result.recall_rule[0].upper() + result.recall_rule[1:])}.</p>',
        "</section>",
        '<section id="plot" aria-labelledby="plot-h">',
        '<h2 id="plot-h">Recall vs queries per second</h2>',
        '<figure class="wide">',
        _tradeoff_chart(result),
        "<figcaption>Each point is one setting; up and to the right is better. "
        "QPS depends on the machine and its load.</figcaption>",
        "</figure>",
        "</section>",
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"
