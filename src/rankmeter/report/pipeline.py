"""Render a retrieve-then-rerank evaluation (:func:`rankmeter.vector.pipeline.two_stage`): each
stage's values in one terminal table, or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report.evaluation import _fmt

if TYPE_CHECKING:
    from rankmeter.vector.pipeline import TwoStage

__all__ = ["render_json", "render_table"]


def render_json(result: TwoStage) -> str:
    return json_text(result.to_dict())


def render_table(result: TwoStage) -> Any:
    """One row per stage (retriever, reranked, ceiling), and a line on the pool."""
    from rich.console import Group
    from rich.text import Text

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
        f"pool: the retriever's top {result.pool} per query; ceiling: the pool sorted by grade"
    ]
    if result.outside_pool:
        notes.append(f"{result.outside_pool} reranked results outside the pool left out")
    if result.unscored:
        notes.append(f"{result.unscored} pool documents missing from the reranked run")
    said = [shown(f"note: {note}", style="yellow") for note in result.notes]
    return Group(table, Text("; ".join(notes), style="dim"), *said)
