"""Render a pool (:func:`rankmeter.judgments.pool`): per run, Judged@k now and once the pool is
judged, in a terminal table; the counts (items, per query, sampling) under it; or the same
summary as JSON. The items themselves are the pool file's business (:mod:`rankmeter.io.pool`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import decimal

if TYPE_CHECKING:
    from rankmeter.judgments.pool import Pool

__all__ = ["render_json", "render_table", "summary_lines"]


def render_json(result: Pool) -> str:
    """The summary as strict JSON: the pool's ``to_dict`` without its items."""
    return json_text(result.to_dict(items=False))


def _count(n: int) -> str:
    return f"{n:,}"


def _median(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def summary_lines(result: Pool) -> list[str]:
    """What the pool holds, in sentences: items and queries, per query, sampling.

    >>> from rankmeter.judgments import pool
    >>> result = pool({"bm25": {"q1": {"a": 2.0, "b": 1.0}}}, depth=2, qrels={"q1": {"a": 1}})
    >>> for line in summary_lines(result):
    ...     print(line)
    1 items to judge in 1 queries (the top 2 of 1 runs, minus 1 judged already)
    items per query: min 1, median 1, max 1
    not sampled: every unjudged document in a run's top 2 is in the pool
    """
    summary = result.to_dict(items=False)
    per_query = summary["items_per_query"]
    lines = [
        f"{_count(len(result))} items to judge in {_count(len(result.queries))} queries (the "
        f"top {result.depth} of {len(result.runs)} runs"
        + (f", minus {_count(result.n_judged)} judged already)" if result.n_judged else ")"),
        f"items per query: min {per_query['min']}, median {_median(per_query['median'])}, "
        f"max {per_query['max']}",
    ]
    if result.sampled:
        lines.append(
            f"sampled: {_count(len(result.sampled_queries))} of {_count(len(result.queries))} "
            f"queries had more than {result.max_per_query} items and kept a stratified sample "
            f"by best rank (seed {result.seed}; {_count(result.n_candidates)} candidates); each "
            "item carries its inclusion probability"
        )
    else:
        lines.append(
            f"not sampled: every unjudged document in a run's top {result.depth} is in the pool"
        )
    return lines


def render_table(result: Pool) -> Any:
    """One row per run: its queries, Judged@depth now and after judging the pool; the
    summary's lines under it."""
    from rich.console import Group
    from rich.text import Text

    table = FittedTable(title_justify="left")
    table.add_column("run", text=True, style="bold")
    table.add_column("queries", justify="right")
    table.add_column(f"{result.metric} now", justify="right")
    table.add_column("after judging", justify="right")
    for name, coverage in result.judged.items():
        table.add_row(
            shown(name),
            _count(coverage.queries),
            decimal(coverage.now) if coverage.queries else "–",
            f"→ {decimal(coverage.after)}" if coverage.queries else "–",
        )
    return Group(table, *(Text(line, style="dim") for line in summary_lines(result)))
