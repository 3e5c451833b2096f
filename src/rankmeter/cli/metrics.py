"""`rankmeter metrics`: every metric with its formula and description, from the specs.

``rankmeter metrics --goal GOAL`` shows instead the metrics that answer one goal, and why.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import GoalCommand, GoalOption


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
    from rankmeter.metrics import metric_catalogue
    from rankmeter.report import render

    render(metric_catalogue(), output_format.value)


def _goal(name: str, output_format: ListFormat) -> None:
    from rankmeter.metrics.goals import get_goal
    from rankmeter.report import render

    goal = get_goal(name)
    render(goal, output_format.value)


def register(app: typer.Typer) -> None:
    app.command(cls=GoalCommand)(metrics)
