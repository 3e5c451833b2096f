"""Render the stability of a query set's conclusion (:class:`rankmeter.comparison.QueryStability`):
a terminal table (rich), Markdown, strict JSON and one HTML page, under the title
"How much can this query set be trusted?".

Every format says the same things: the settings (queries, resamples, splits, seed), one row
per metric (the full order; how often bootstrap resamples give that order exactly; Kendall's
tau between the full and resampled orders, mean and quantiles; how often two random halves
give the same order, and their mean tau), one row per metric and pair (the difference on all
queries, the shares of resamples in which the pair keeps its order, ties or turns, and the
share of splits whose halves agree on it), what each number means, and the notes. Run names
and metric labels are untrusted text: rich ``Text``, the one Markdown table writer and
escaper, strict JSON and the HTML template's escaper.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rankmeter._escape import markdown_text
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, signed

if TYPE_CHECKING:
    from rankmeter.comparison import QueryStability
    from rankmeter.stats import PairStability, Stability

__all__ = [
    "ORDER_HEADER",
    "PAIR_HEADER",
    "TITLE",
    "payload",
    "render_html",
    "render_json",
    "render_markdown",
    "render_table",
]

TITLE = "How much can this query set be trusted?"
TEMPLATE = "stability.html.j2"

ORDER_HEADER = (
    "metric",
    "order (best first)",
    "same order",
    "τ mean",
    "τ 5%",
    "τ median",
    "τ 95%",
    "halves: same order",
    "halves: τ mean",
)
PAIR_HEADER = ("metric", "pair", "Δ", "kept", "tied", "turned", "halves agree")
_ORDER_ALIGN: tuple[Align, ...] = (None, None, *(("right",) * 7))
_PAIR_ALIGN: tuple[Align, ...] = (None, None, *(("right",) * 5))


def _share(value: float) -> str:
    """A share as a percentage: 100% and 0% only when exact (99.96% is not shown as 100%)."""
    if not math.isfinite(value):
        return "–"
    if 0.9995 <= value < 1:
        return ">99.9%"
    if 0 < value < 0.0005:
        return "<0.1%"
    return f"{value:.1%}"


def _order(result: Stability) -> str:
    """``idf > overlap = bm25``: ``=`` between systems tied on all queries."""
    text = result.order[0]
    for before, after in zip(result.order, result.order[1:], strict=False):
        text += f" {'=' if result.pair(before, after).full_tie else '>'} {after}"
    return text


def _pair_name(pair: PairStability) -> str:
    return f"{pair.first} {'=' if pair.full_tie else '>'} {pair.second}"


def _quantile(result: Stability, q: float) -> float:
    return dict(result.tau_quantiles).get(q, math.nan)


def order_rows(result: QueryStability) -> Iterator[tuple[str, ...]]:
    """One row per metric: the full order and how stable it is as a whole."""
    for label in result.metrics:
        s = result[label]
        yield (
            label,
            _order(s),
            _share(s.same_order),
            num(s.tau_mean, 3),
            num(_quantile(s, 0.05), 3),
            num(_quantile(s, 0.5), 3),
            num(_quantile(s, 0.95), 3),
            _share(s.split_same_order),
            num(s.split_tau_mean, 3),
        )


def pair_rows(result: QueryStability) -> Iterator[tuple[str, ...]]:
    """One row per metric and pair of systems."""
    for label in result.metrics:
        for pair in result[label].pairs:
            yield (
                label,
                _pair_name(pair),
                signed(pair.difference) if not pair.full_tie else "0",
                "–" if pair.full_tie else _share(pair.ahead),
                _share(pair.tied),
                "–" if pair.full_tie else _share(pair.behind),
                _share(pair.split_agreement),
            )


def settings_line(result: QueryStability) -> str:
    """``225 queries, 3 systems; 1,000 bootstrap resamples, 1,000 splits into halves of 112
    queries, seed 0; relevant: grade >= 1; ties: trec_eval; all judged queries``."""
    first = result[result.metrics[0]]
    systems = "system" if len(result.systems) == 1 else "systems"
    return (
        f"{result.n:,} queries, {len(result.systems)} {systems}; {first.resamples:,} bootstrap "
        f"resamples, {first.splits:,} splits into halves of {first.half:,} queries, seed "
        f"{first.seed}; {result.policies.describe()}"
    )


def legend(result: QueryStability) -> list[str]:
    """What each number means."""
    first = result[result.metrics[0]]
    lines = [
        f"same order: the share of {first.resamples:,} bootstrap resamples of the queries "
        "(drawn with replacement, as many as there are) that order all systems as all queries "
        "do; τ: Kendall's tau-b between the order on all queries and a resample's",
        f"halves: the queries split at random into two halves of {first.half:,}, "
        f"{first.splits:,} times; the share of splits whose halves order all systems the same "
        "way, and the mean τ between the halves' orders (a stricter check: each half has half "
        "the queries)",
        "per pair: Δ = the difference of the means on all queries; kept, tied, turned = the "
        "shares of resamples in which the first stays ahead, ties or falls behind; halves "
        "agree = the share of splits whose two halves order the pair the same way",
        "the bootstrap is centred on these queries: a pair that differs by chance alone keeps "
        "its order in 50% to 100% of the resamples (about 75% on average), and a kept share "
        "below 97.5% goes with a two-sided bootstrap p-value above 0.05 (p is about "
        "2 × (1 - kept)): an order these queries do not settle; halves of systems that differ "
        "by chance alone agree about half the time",
    ]
    if any(p.full_tie for label in result.metrics for p in result[label].pairs):
        lines.append(
            "a = b: tied on all queries, no order to keep: kept and turned are –, and tied is "
            "the share of resamples in which the pair stays tied"
        )
    undefined = [
        f"{label} {result[label].tau_undefined:,}"
        for label in result.metrics
        if result[label].tau_undefined
    ]
    if undefined:
        lines.append(
            "τ is undefined where every system ties (resamples left out of τ: "
            + ", ".join(undefined)
            + ")"
        )
    return lines


def payload(result: QueryStability) -> dict[str, Any]:
    """The JSON document: the title, the settings, every metric's numbers (``to_dict()``) and
    the notes."""
    return {"title": TITLE, **result.to_dict()}


@renders("rankmeter.comparison.QueryStability", "json")
def render_json(result: QueryStability) -> str:
    """:func:`payload` as strict JSON (NaN is null)."""
    return json_text(payload(result))


@renders("rankmeter.comparison.QueryStability", "table")
def render_table(result: QueryStability) -> Any:
    """A rich renderable: the title, the settings, the two tables, the legend, the notes."""
    from rich.console import Group

    orders = FittedTable(title="the order of the systems", title_justify="left")
    for index, header in enumerate(ORDER_HEADER):
        if index < 2:
            orders.add_column(header, text=True)
        else:
            orders.add_column(header, justify="right")
    for row in order_rows(result):
        orders.add_row(shown(row[0]), shown(row[1]), *row[2:])
    pairs = FittedTable(title="each pair", title_justify="left")
    for index, header in enumerate(PAIR_HEADER):
        if index < 2:
            pairs.add_column(header, text=True)
        else:
            pairs.add_column(header, justify="right")
    for row in pair_rows(result):
        pairs.add_row(shown(row[0]), shown(row[1]), *row[2:])
    parts: list[Any] = [shown(TITLE, "bold"), shown(settings_line(result)), orders, pairs]
    parts += [shown(line, "dim") for line in [*legend(result), *result.notes]]
    return Group(*parts)


@renders("rankmeter.comparison.QueryStability", "markdown")
def render_markdown(result: QueryStability) -> str:
    """The same as Markdown: a section, every cell and line escaped."""
    lines = [f"## {markdown_text(TITLE)}", "", markdown_text(settings_line(result)), ""]
    lines += markdown_table(ORDER_HEADER, order_rows(result), _ORDER_ALIGN)
    lines.append("")
    lines += markdown_table(PAIR_HEADER, pair_rows(result), _PAIR_ALIGN)
    lines.append("")
    lines += [f"- {markdown_text(line)}" for line in [*legend(result), *result.notes]]
    return "\n".join(lines) + "\n"


@renders("rankmeter.comparison.QueryStability", "html")
def render_html(result: QueryStability) -> str:
    """One self-contained page (``templates/stability.html.j2`` in the shared shell); every
    value goes through the one HTML escaper."""
    from rankmeter.report._html import render

    return render(
        TEMPLATE,
        title=f"rankmeter: {TITLE}",
        heading=TITLE,
        settings=settings_line(result),
        order_header=ORDER_HEADER,
        order_rows=list(order_rows(result)),
        pair_header=PAIR_HEADER,
        pair_rows=list(pair_rows(result)),
        legend=legend(result),
        notes=[*result.notes],
    )
