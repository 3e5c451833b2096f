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
    from rankmeter.metrics.docs import metric_rows, render_markdown

    rows = metric_rows()
    if output_format is ListFormat.json:
        from rankmeter.report._json import json_text

        emit(json_text(rows), None)
        return
    if output_format is ListFormat.markdown:
        emit(render_markdown(rows), None)
        return
    from rich.table import Table

    table = Table(show_lines=True, title="rankmeter metrics", title_justify="left")
    table.add_column("metric", style="bold", no_wrap=True)
    table.add_column("also", no_wrap=False)
    table.add_column("what it measures")
    table.add_column("formula")
    for row in rows:
        also = ", ".join(row["aliases"] + row["trec_names"])
        params = "; ".join(f"{p['name']}: {p['description']}" for p in row["params"])
        what = row["description"] + (f"\nParameters: {params}" if params else "")
        table.add_row(row["usage"], also, what, row["formula"])
    render_rich(table, None)


def _goal(name: str, output_format: ListFormat) -> None:
    from rankmeter.metrics.goals import get_goal

    goal = get_goal(name)
    if output_format is ListFormat.json:
        from rankmeter.report._json import json_text

        payload = {
            "goal": goal.name,
            "description": goal.description,
            "metrics": [{"metric": m.metric, "why": m.why} for m in goal.metrics],
        }
        emit(json_text(payload), None)
        return
    if output_format is ListFormat.markdown:
        lines = [f"## Goal: {goal.name}", "", goal.description, "", "| metric | why |"]
        lines.append("| --- | --- |")
        for m in goal.metrics:
            why = m.why.replace("|", r"\|")  # a pipe would end the Markdown table cell
            lines.append(f"| `{m.metric}` | {why} |")
        emit("\n".join(lines) + "\n", None)
        return
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"goal: {goal.name}", title_justify="left")
    table.add_column("metric", style="bold", no_wrap=True)
    table.add_column("why")
    for m in goal.metrics:
        table.add_row(Text(m.metric), Text(m.why))
    render_rich(Group(Text(goal.description), table), None)


def register(app: typer.Typer) -> None:
    app.command(cls=GoalCommand)(metrics)
