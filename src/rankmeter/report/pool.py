"""Render a pool (:func:`rankmeter.judgments.pool`): the pool file (its items as JSON lines,
read back by :func:`rankmeter.io.read_pool`); and the summary: per run, Judged@k now and once
the pool is judged, in a terminal table with the counts (items, per query, sampling) under it,
or as JSON."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_line, json_text
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import decimal

if TYPE_CHECKING:
    from rankmeter.io.pool import PoolItem
    from rankmeter.judgments.pool import Pool

__all__ = ["pool_text", "render_json", "render_table", "summary_lines", "write_pool"]


def pool_text(items: Iterable[PoolItem]) -> str:
    """The pool file's text: one compact JSON object per item and line (strict JSON; ids
    byte-exact in UTF-8 but for the controls JSON leaves raw, escaped as ``\\uXXXX``), in the
    order given. The fields are :data:`rankmeter.io.pool.FIELDS`.

    >>> from rankmeter.io.pool import PoolItem
    >>> print(pool_text([PoolItem("q1", "d7", {"bm25": 1}, 1, 1.0)]), end="")
    {"query_id": "q1", "doc_id": "d7", "runs": {"bm25": 1}, "best_rank": 1, "inclusion_probability": 1.0}
    """
    return "".join(json_line(item.to_dict()) for item in items)


def write_pool(items: Iterable[PoolItem], path: str | os.PathLike[str]) -> None:
    """Write a pool file (see :func:`pool_text`) atomically: the file is replaced whole, or
    not at all."""
    from rankmeter.io import atomic_write

    text = pool_text(items)
    with atomic_write(path) as handle:
        handle.write(text)


@renders("rankmeter.judgments.Pool", "json")
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


@renders("rankmeter.judgments.Pool", "table")
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
