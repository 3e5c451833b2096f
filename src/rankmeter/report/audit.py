"""Render a LabelAudit (rankmeter.judgments.audit): a terminal table (rich), Markdown and JSON.

Run names, metric names and sources come from files: the tables show their control characters
as visible escapes, Markdown escapes what Markdown would read, JSON escapes as JSON does
(rankmeter._escape). An undefined kappa or alpha (NaN) is ``undefined`` in the tables and ``null`` in JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.judgments.audit import LabelAudit, MetricOrdering, PairSignificance
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, signed, statistic

__all__ = ["render_json", "render_markdown", "render_table"]


@renders("rankmeter.judgments.LabelAudit", "json")
def render_json(result: LabelAudit) -> str:
    return json_text(result.to_dict())


def _label(value: float | int) -> str:
    return f"{value:g}"


def _headline(result: LabelAudit) -> str:
    return (
        f"human labels {result.n_human}, model labels {result.n_model}, "
        f"{result.n_shared} items labelled by both"
    )


def _agreement_rows(result: LabelAudit) -> Iterator[tuple[str, str]]:
    pair = result.pair_agreement
    yield "raw agreement", num(pair.raw, 3)
    yield "Cohen's kappa", statistic(pair.kappa)
    yield "weighted kappa (linear)", statistic(pair.kappa_linear)
    yield "weighted kappa (quadratic)", statistic(pair.kappa_quadratic)
    for alpha in result.agreement.alpha:
        yield f"Krippendorff's alpha ({alpha.level})", statistic(alpha.value)
    yield "leniency: model − human (mean grade)", signed(result.mean_difference, 3)


def _ordering_row(o: MetricOrdering) -> list[str]:
    return [
        o.metric,
        " > ".join(o.human_order),
        " > ".join(o.model_order),
        num(o.kendall_tau, 3),
        "; ".join(f"{a} / {b}" for a, b in o.flips) or "none",
    ]


def _change_row(p: PairSignificance) -> list[str]:
    return [
        p.metric,
        f"{p.system_b} − {p.system_a}",
        f"{signed(p.human_difference, 3)} (p {num(p.human_p, 4)})",
        f"{signed(p.model_difference, 3)} (p {num(p.model_p, 4)})",
        str(p.change),
    ]


_RIGHT: tuple[Align] = ("right",)
_ORDER_HEADER = ["metric", "order (human)", "order (model)", "Kendall τ", "flips"]
_CHANGE_HEADER = ["metric", "pair", "human labels", "model labels", "significance"]


def _test_sentence(result: LabelAudit) -> str:
    return (
        f"significance: {result.test} test, {result.correction} correction over every pair and "
        f"metric, alpha {result.alpha:g}, {result.resamples} resamples, seed {result.seed}"
    )


@renders("rankmeter.judgments.LabelAudit", "table")
def render_table(result: LabelAudit) -> Any:
    """A rich renderable: agreement and leniency, the confusion matrix, and with runs the
    orders and the significance changes; the notes under them."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [Text(_headline(result), style="bold")]
    summary = FittedTable(title="agreement on the shared items", title_justify="left")
    summary.add_column("statistic", justify="left")
    summary.add_column("value", justify="right")
    for row in _agreement_rows(result):
        summary.add_row(*row)
    parts.append(summary)
    parts.append(shown("confusion: human (rows) × model (columns)", "table.title"))
    matrix = FittedTable()
    matrix.add_column("", style="bold")
    for category in result.categories:
        matrix.add_column(_label(category), justify="right")
    for category, counts in zip(result.categories, result.confusion, strict=True):
        matrix.add_row(_label(category), *(str(n) for n in counts))
    parts.append(matrix)
    if result.orderings:
        orders = FittedTable(title="system order under each label set", title_justify="left")
        for header in _ORDER_HEADER:
            orders.add_column(header, text=True, justify="right" if "τ" in header else "left")
        for o in result.orderings:
            orders.add_row(*(shown(cell) for cell in _ordering_row(o)))
        parts.append(orders)
        if result.changes:
            changes = FittedTable(title="significance that changes", title_justify="left")
            for header in _CHANGE_HEADER:
                changes.add_column(header, text=True)
            for p in result.changes:
                changes.add_row(*(shown(cell) for cell in _change_row(p)))
            parts.append(changes)
        else:
            parts.append(Text("no significant difference appears, vanishes or reverses"))
        parts.append(Text(_test_sentence(result), style="dim"))
    parts.extend(shown(f"note: {note}", style="dim") for note in result.notes)
    return Group(*parts)


@renders("rankmeter.judgments.LabelAudit", "markdown")
def render_markdown(result: LabelAudit) -> str:
    """The same tables as Markdown (every run and metric name escaped)."""
    lines = [f"**{markdown_text(_headline(result))}**", ""]
    lines += markdown_table(["statistic", "value"], _agreement_rows(result), [None, "right"])
    lines += ["", "Confusion: human (rows) × model (columns):", ""]
    lines += markdown_table(
        ["", *(_label(c) for c in result.categories)],
        (
            [_label(c), *(str(n) for n in row)]
            for c, row in zip(result.categories, result.confusion, strict=True)
        ),
        [None, *_RIGHT * len(result.categories)],
    )
    if result.orderings:
        lines += ["", "System order under each label set:", ""]
        lines += markdown_table(
            _ORDER_HEADER,
            (_ordering_row(o) for o in result.orderings),
            [None, None, None, "right", None],
        )
        lines.append("")
        if result.changes:
            lines += ["Significance that changes:", ""]
            lines += markdown_table(
                _CHANGE_HEADER, (_change_row(p) for p in result.changes), [None] * 5
            )
        else:
            lines.append("No significant difference appears, vanishes or reverses.")
        lines += ["", markdown_text(_test_sentence(result)) + "."]
    if result.notes:
        lines.append("")
        lines += [f"- {markdown_text(note)}" for note in result.notes]
    return "\n".join(lines) + "\n"
