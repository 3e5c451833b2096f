"""Render a retrieve-then-rerank evaluation (:func:`rankmeter.vector.pipeline.two_stage`): each
stage's values in one terminal table, or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report.evaluation import _fmt

if TYPE_CHECKING:
    from rankmeter.vector.pipeline import TwoStage

__all__ = ["render_json", "render_table"]


@renders("rankmeter.vector.TwoStage", "json")
def render_json(result: TwoStage, *, per_query: bool = False) -> str:
    return json_text(result.to_dict(per_query=per_query))


def _per_query_tables(result: TwoStage) -> list[Any]:
    """One table per stage: a row per query, the stage's mean last (as evaluate's)."""
    measures = result.retriever.measures
    tables = []
    for stage, evaluated in result.stages.items():
        title = shown(f"{stage}: per query", style="table.title")
        table = FittedTable(title=title, title_justify="left")
        table.add_column("query", text=True, style="bold")
        for m in measures:
            table.add_column(m.label, justify="right")
        columns = [evaluated.per_query.values[m.label] for m in measures]
        for i, query in enumerate(evaluated.per_query.query_ids):
            table.add_row(
                shown(query),
                *(_fmt(m, float(c[i])) for m, c in zip(measures, columns, strict=True)),
            )
        table.add_section()
        table.add_row("all", *(_fmt(m, evaluated.metrics[m.label]) for m in measures), style="bold")
        tables.append(table)
    return tables


@renders("rankmeter.vector.TwoStage", "table")
def render_table(result: TwoStage, *, per_query: bool = False) -> Any:
    """One row per stage (retriever, reranked, ceiling), and a line on the pool; with
    ``per_query``, a table per stage with every query's values first."""
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report.vector import query_notes
    from rankmeter.vector.retrieval import QUERIES_RULE

    measures = result.retriever.measures
    table = FittedTable(title_justify="left")
    table.add_column("stage", text=True, style="bold")
    table.add_column("run", text=True)
    table.add_column("queries", justify="right")
    for m in measures:
        table.add_column(m.label, justify="right")
    for stage, evaluated in result.stages.items():
        table.add_row(
            stage,
            shown(evaluated.run),
            str(evaluated.n_queries),
            *(_fmt(m, evaluated.metrics[m.label]) for m in measures),
        )
    notes = [
        f"pool: the retriever's top {result.pool} per query; ceiling: the pool sorted by grade",
        QUERIES_RULE,
    ]
    if result.outside_pool:
        notes.append(f"{result.outside_pool} reranked results outside the pool left out")
    if result.unscored:
        notes.append(f"{result.unscored} pool documents missing from the reranked run")
    said = [shown(f"note: {note}", style="yellow") for note in result.notes]
    said += [
        shown(line, style="yellow") for line in query_notes(result.unanswered, (), result.n_queries)
    ]
    tables = _per_query_tables(result) if per_query else []
    return Group(*tables, table, Text("; ".join(notes), style="dim"), *said)
