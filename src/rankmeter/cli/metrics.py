"""`rankmeter metrics`: every metric with its formula and description, from the specs.

``rankmeter metrics --goal GOAL`` shows instead the metrics that answer one goal, and why.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from rankmeter.cli._common import emit, render_rich
from rankmeter.errors import MetricError
from rankmeter.metrics.goals import GOAL_NAMES

GOAL_HELP = (
    f"Show the metrics that answer a goal, and why: {', '.join(GOAL_NAMES)} "
    "(finding everything relevant; a good first page; one right answer; the pool a reranker "
    "reads)."
)


class GoalCommand(TyperCommand):
    """A command with a ``--goal`` option: ``--goal`` without a value lists the valid goals."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            # Typer vendors click, so its "Option '--goal' requires an argument" is matched by
            # the option it names; the main entry point turns MetricError into exit 2.
            if getattr(exc, "option_name", None) == "--goal":
                raise MetricError(
                    f"--goal needs a value; choose one of {', '.join(GOAL_NAMES)}"
                ) from None
            raise


class ListFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    json = "json"


def metrics(
    output_format: Annotated[
        ListFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ListFormat.table,
    goal: Annotated[str | None, typer.Option("--goal", metavar="GOAL", help=GOAL_HELP)] = None,
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
