"""Render an InterleavingResult (rankmeter.online): a terminal table (rich), Markdown and JSON.

The result holds counts and numbers only; the texts come from rankmeter and still go through
the one Markdown table writer (which escapes every cell) and strict JSON (an undefined
statistic, NaN, is ``–`` in the tables and ``null`` in JSON).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.online.interleaving import InterleavingResult
from rankmeter.report._json import json_text
from rankmeter.report._markdown import markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, pvalue, signed

__all__ = ["render_json", "render_markdown", "render_table"]


@renders("rankmeter.online.InterleavingResult", "json")
def render_json(result: InterleavingResult) -> str:
    return json_text(result.to_dict())


def _units(result: InterleavingResult) -> str:
    return "users" if result.unit == "user" else "requests"


def headline(result: InterleavingResult) -> str:
    """One sentence: the verdict and its p-value."""
    shown = pvalue(result.p_value)
    p = f"p {shown}" if shown.startswith("<") else f"p = {shown}"
    if result.n == 0:
        return "no clicked request: nothing to credit"
    if result.preferred is None:
        return f"no significant preference at alpha {result.alpha:g} ({p})"
    return f"ranker {result.preferred} preferred ({p}, alpha {result.alpha:g})"


def _counts(result: InterleavingResult) -> str:
    users = f", {result.n_users:,} users" if result.n_users else ""
    return (
        f"{result.n_requests:,} requests ({result.n_clicked_requests:,} with a click){users}; "
        f"credited clicks A {result.clicks_a:,}, B {result.clicks_b:,}"
    )


def _rows(result: InterleavingResult) -> Iterator[tuple[str, str, str]]:
    """(statistic, value, interval)."""
    units = _units(result)
    yield f"{units} tested (with a click)", f"{result.n:,}", ""
    yield f"won by A ({units})", f"{result.wins_a:,}", ""
    yield f"won by B ({units})", f"{result.wins_b:,}", ""
    yield f"ties ({units})", f"{result.ties:,}", ""
    yield f"{units} without a click (left out)", f"{result.no_click:,}", ""
    yield (
        "B's share of the decided",
        num(result.share_b, 3),
        f"[{num(result.share_low, 3)}, {num(result.share_high, 3)}]",
    )
    yield (
        "Δ: (B wins + ties/2)/n - 1/2",
        signed(result.delta, 3),
        f"[{signed(result.delta_low, 3)}, {signed(result.delta_high, 3)}]",
    )
    yield "p-value", pvalue(result.p_value), ""


def _method_sentence(result: InterleavingResult) -> str:
    unit = (
        "each user's requests reduced to one vote (the ranker that won more of them)"
        if result.unit == "user"
        else "each request one trial"
    )
    credit = (
        "Team-draft credit: a click counts for the ranker that showed the document"
        if result.method == "team-draft"
        else "Balanced credit (Joachims): clicks in each ranking's top k, k the smaller rank "
        "of the lowest click"
    )
    return (
        f"{credit}; {unit}. Test: {result.test}. Interval: {result.interval_name}, "
        f"{1 - result.alpha:.0%}; Δ > 0 favours B"
    )


@renders("rankmeter.online.InterleavingResult", "table")
def render_table(result: InterleavingResult) -> Any:
    """A rich renderable: the verdict, the counts, the table and how it was computed."""
    from rich.console import Group
    from rich.text import Text

    table = FittedTable(title="interleaving", title_justify="left")
    table.add_column("statistic", text=True)
    table.add_column("value", justify="right")
    table.add_column("interval", justify="right")
    for row in _rows(result):
        table.add_row(*row)
    return Group(
        Text(headline(result), style="bold"),
        Text(_counts(result)),
        table,
        shown(_method_sentence(result), style="dim"),
    )


@renders("rankmeter.online.InterleavingResult", "markdown")
def render_markdown(result: InterleavingResult) -> str:
    """The same table as Markdown."""
    lines = [f"**{markdown_text(headline(result))}**", "", markdown_text(_counts(result)), ""]
    lines += markdown_table(
        ["statistic", "value", "interval"], _rows(result), [None, "right", "right"]
    )
    lines += ["", markdown_text(_method_sentence(result)) + "."]
    return "\n".join(lines) + "\n"
