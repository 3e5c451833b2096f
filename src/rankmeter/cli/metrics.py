"""`rankmeter metrics`: every metric with its formula and description, from the specs.

``rankmeter metrics --goal GOAL`` shows instead the metrics that answer one goal, and why.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import GoalCommand, GoalOption, emit, render_rich


class ListFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    json = "json"


def metrics(
    output_format: Annotated[
        ListFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ListFormat.table,
    goal: GoalOption = None,
) -> None:
    """List every metric: name, aliases, trec_eval names, parameters, formula, description.

    With --goal, only the metrics that answer that goal, with one line on why each fits.
    """
    if goal is not None:
        _goal(goal, output_format)
        return
    from rankmeter.metrics.docs import metric_rows
    from rankmeter.report import metrics as report

    rows = metric_rows()
    if output_format is ListFormat.json:
        emit(report.render_json(rows), None)
    elif output_format is ListFormat.markdown:
        emit(report.render_markdown(rows), None)
    else:
        render_rich(report.render_table(rows), None)


def _goal(name: str, output_format: ListFormat) -> None:
    from rankmeter.metrics.goals import get_goal
    from rankmeter.report import metrics as report

    goal = get_goal(name)
    if output_format is ListFormat.json:
        emit(report.render_goal_json(goal), None)
    elif output_format is ListFormat.markdown:
        emit(report.render_goal_markdown(goal), None)
    else:
        render_rich(report.render_goal_table(goal), None)


def register(app: typer.Typer) -> None:
    app.command(cls=GoalCommand)(metrics)
