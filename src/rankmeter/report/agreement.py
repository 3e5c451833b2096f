"""Render an Agreement (rankmeter.judgments): a terminal table (rich), Markdown and JSON.

Rater names and ids come from files: the tables show their control characters as visible
escapes, Markdown escapes what Markdown would read, JSON escapes as JSON does
(rankmeter._escape). An undefined kappa or alpha (NaN) is ``undefined`` in the tables and ``null`` in JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.judgments.agreement import Agreement, PairAgreement
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, signed, statistic

__all__ = ["render_json", "render_markdown", "render_table"]


@renders("rankmeter.judgments.Agreement", "json")
def render_json(result: Agreement) -> str:
    return json_text(result.to_dict())


def _label(value: float | int) -> str:
    return f"{value:g}"


def _headline(result: Agreement) -> str:
    scale = "" if result.scale is None else f", scale {result.scale[0]}-{result.scale[1]}"
    return (
        f"{len(result.raters)} raters, {result.n_labels} labels on {result.n_items} items "
        f"({result.n_compared} labelled by two raters or more{scale})"
    )


def _summary_rows(result: Agreement) -> Iterator[tuple[str, str, str, str]]:
    """(statistic, value, interval, over what)."""
    yield "raw agreement", num(result.raw, 3), "", "pairs of labels given to one item"
    yield (
        "Fleiss' kappa",
        statistic(result.fleiss_kappa),
        "",
        f"{result.fleiss_items} items with {result.fleiss_raters} labels each",
    )
    for alpha in result.alpha:
        yield (
            f"Krippendorff's alpha ({alpha.level})",
            statistic(alpha.value),
            f"[{num(alpha.low, 3)}, {num(alpha.high, 3)}]",
            f"{result.n_compared} items labelled twice or more",
        )


def _interval_sentence(result: Agreement) -> str:
    return (
        f"alpha's interval: {result.confidence:.0%} percentile bootstrap, items resampled "
        f"{result.resamples} times (seed {result.seed})"
    )


def _pair_cells(pair: PairAgreement) -> list[str]:
    return [
        str(pair.n_shared),
        num(pair.raw, 3),
        statistic(pair.kappa),
        statistic(pair.kappa_linear),
        statistic(pair.kappa_quadratic),
    ]


_RIGHT: tuple[Align] = ("right",)
_PAIR_HEADER = ["shared", "raw", "Cohen's κ", "κ linear", "κ quadratic"]
_LENIENCY_HEADER = ["rater", "labels", "mean label", "shared", "mean diff. to others"]


def _disputed_labels(labels: tuple[tuple[str, float | int], ...]) -> str:
    return ", ".join(f"{rater}={_label(value)}" for rater, value in labels)


@renders("rankmeter.judgments.Agreement", "table")
def render_table(result: Agreement) -> Any:
    """A rich renderable: the summary, the pairs, leniency, the confusion matrices and the
    most disputed items; the notes on undefined statistics under them."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [Text(_headline(result), style="bold")]
    summary = FittedTable(title="agreement", title_justify="left")
    for header, justify in (("statistic", "left"), ("value", "right"), ("interval", "right")):
        summary.add_column(header, justify=justify)
    summary.add_column("over", text=True, style="dim")
    for row in _summary_rows(result):
        summary.add_row(*row)
    parts.append(summary)
    parts.append(Text(_interval_sentence(result), style="dim"))

    pairs = FittedTable(title="pairs of raters", title_justify="left")
    pairs.add_column("rater A", text=True, style="bold")
    pairs.add_column("rater B", text=True, style="bold")
    for header in _PAIR_HEADER:
        pairs.add_column(header, justify="right")
    for pair in result.pairs:
        pairs.add_row(shown(pair.rater_a), shown(pair.rater_b), *_pair_cells(pair))
    parts.append(pairs)

    leniency = FittedTable(title="leniency (mean diff. > 0: more lenient)", title_justify="left")
    leniency.add_column(_LENIENCY_HEADER[0], text=True, style="bold")
    for header in _LENIENCY_HEADER[1:]:
        leniency.add_column(header, justify="right")
    for r in result.leniency:
        leniency.add_row(
            shown(r.rater),
            str(r.n_labels),
            num(r.mean_label, 3),
            str(r.n_shared),
            signed(r.mean_difference, 3),
        )
    parts.append(leniency)

    for pair in result.pairs:
        if not pair.n_shared:
            continue
        # A line of its own, not the table's title: a title wraps at the table's narrow width.
        parts.append(
            shown(f"confusion: {pair.rater_a} (rows) × {pair.rater_b} (columns)", "table.title")
        )
        matrix = FittedTable()
        matrix.add_column("", style="bold")
        for category in result.categories:
            matrix.add_column(_label(category), justify="right")
        for category, counts in zip(result.categories, pair.confusion, strict=True):
            matrix.add_row(_label(category), *(str(n) for n in counts))
        parts.append(matrix)

    if result.disagreements:
        disputed = FittedTable(title="most disputed items", title_justify="left")
        disputed.add_column("query", text=True, style="bold")
        disputed.add_column("doc", text=True, style="bold")
        disputed.add_column("spread", justify="right")
        disputed.add_column("labels", text=True)
        for d in result.disagreements:
            disputed.add_row(
                shown(d.query_id),
                shown(d.doc_id),
                _label(d.spread),
                shown(_disputed_labels(d.labels)),
            )
        parts.append(disputed)
    parts.extend(shown(f"note: {note}", style="dim") for note in result.notes)
    return Group(*parts)


@renders("rankmeter.judgments.Agreement", "markdown")
def render_markdown(result: Agreement) -> str:
    """The same tables as Markdown (every rater name and id escaped)."""
    lines = [f"**{_headline(result)}**", ""]
    lines += markdown_table(
        ["statistic", "value", "interval", "over"],
        _summary_rows(result),
        [None, "right", "right", None],
    )
    lines += ["", markdown_text(_interval_sentence(result)) + ".", "", "Pairs of raters:", ""]
    lines += markdown_table(
        ["rater A", "rater B", *_PAIR_HEADER],
        ([p.rater_a, p.rater_b, *_pair_cells(p)] for p in result.pairs),
        [None, None, *_RIGHT * len(_PAIR_HEADER)],
    )
    lines += ["", "Leniency (mean difference > 0: more lenient than the others):", ""]
    lines += markdown_table(
        _LENIENCY_HEADER,
        (
            [
                r.rater,
                str(r.n_labels),
                num(r.mean_label, 3),
                str(r.n_shared),
                signed(r.mean_difference, 3),
            ]
            for r in result.leniency
        ),
        [None, "right", "right", "right", "right"],
    )
    for pair in result.pairs:
        if not pair.n_shared:
            continue
        names = f"{markdown_text(pair.rater_a)} (rows) × {markdown_text(pair.rater_b)} (columns)"
        lines += ["", f"Confusion: {names}:", ""]
        lines += markdown_table(
            ["", *(_label(c) for c in result.categories)],
            (
                [_label(c), *(str(n) for n in row)]
                for c, row in zip(result.categories, pair.confusion, strict=True)
            ),
            [None, *_RIGHT * len(result.categories)],
        )
    if result.disagreements:
        lines += ["", "Most disputed items:", ""]
        lines += markdown_table(
            ["query", "doc", "spread", "labels"],
            (
                [d.query_id, d.doc_id, _label(d.spread), _disputed_labels(d.labels)]
                for d in result.disagreements
            ),
            [None, None, "right", None],
        )
    if result.notes:
        lines.append("")
        lines += [f"- {markdown_text(note)}" for note in result.notes]
    return "\n".join(lines) + "\n"
