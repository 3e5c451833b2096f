"""Render the metric catalogue (``rankmeter metrics``) and a goal's metrics (``--goal``): terminal
tables, Markdown (docs/metrics.md is this module's output) and JSON.

The data comes from the specs (:func:`rankmeter.metrics.docs.metric_rows`) and the goals
(:mod:`rankmeter.metrics.goals`); nothing here decides what a metric is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._markdown import code, markdown_table
from rankmeter.report._registry import renders

if TYPE_CHECKING:
    from rankmeter.metrics.docs import MetricCatalogue
    from rankmeter.metrics.goals import Goal

__all__ = [
    "render_goal_json",
    "render_goal_markdown",
    "render_goal_table",
    "render_json",
    "render_markdown",
    "render_table",
]


def render_json(rows: list[dict[str, Any]]) -> str:
    """Every metric family as JSON: the rows of :func:`rankmeter.metrics.docs.metric_rows`."""
    return json_text(rows)


def render_markdown(rows: list[dict[str, Any]]) -> str:
    """The metric reference (docs/metrics.md): a section per metric family."""
    lines = ["# Metric reference", "", "Generated from the metric specs (`rankmeter metrics`).", ""]
    for row in rows:
        lines.append(f"## {row['usage']}")
        lines.append("")
        lines.append(row["description"])
        lines.append("")
        lines.append(f"- Formula: `{row['formula']}`")
        if row["aliases"]:
            lines.append(f"- Aliases: {', '.join(row['aliases'])}")
        if row["trec_names"]:
            lines.append(f"- trec_eval names: {', '.join(row['trec_names'])}")
        for p in row["params"]:
            lines.append(f"- Parameter `{p['name']}`: {p['description']}")
        lines.append(f"- Aggregated over queries as: {row['aggregate']}")
        lines.append(f"- Better: {row['better']}")
        if row["reference"]:
            lines.append(f"- Reference: {row['reference']}")
        if row["edge_cases"]:
            lines.append("- Edge cases:")
            lines.extend(f"  - {case}" for case in row["edge_cases"])
        example = row["example"]
        if example is not None:
            judged = ", ".join(f"{d}: {_grade(g)}" for d, g in example["judgments"].items())
            lines.append(
                f"- Worked example: judgments {{{judged or 'none'}}}, ranking "
                f"{', '.join(example['ranking']) or '(empty)'}: `{example['metric']} = "
                f"{example['value']}`. {example['working']}"
            )
        lines.append("")
    return "\n".join(lines)


def render_table(rows: list[dict[str, Any]]) -> Any:
    """A rich table: metric, other names, what it measures (with its parameters), formula."""
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
        if row["better"] == "lower":  # the exception: every other metric is higher-is-better
            what += "\nLower is better."
        table.add_row(row["usage"], also, what, row["formula"])
    return table


@renders("rankmeter.metrics.Goal", "json")
def render_goal_json(goal: Goal) -> str:
    """``{"goal", "description", "metrics": [{"metric", "why"}, ...]}``."""
    return json_text(
        {
            "goal": goal.name,
            "description": goal.description,
            "metrics": [{"metric": m.metric, "why": m.why} for m in goal.metrics],
        }
    )


@renders("rankmeter.metrics.Goal", "markdown")
def render_goal_markdown(goal: Goal) -> str:
    """A section: the goal, its description, and a table of its metrics with why each fits."""
    rows = [[code(m.metric), m.why] for m in goal.metrics]
    lines = [f"## Goal: {goal.name}", "", goal.description, ""]
    lines += markdown_table(["metric", "why"], rows, [None, None])
    return "\n".join(lines) + "\n"


@renders("rankmeter.metrics.Goal", "table")
def render_goal_table(goal: Goal) -> Any:
    """The goal's description above a rich table of its metrics and why each fits."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"goal: {goal.name}", title_justify="left")
    table.add_column("metric", style="bold", no_wrap=True)
    table.add_column("why")
    for m in goal.metrics:
        table.add_row(Text(m.metric), Text(m.why))
    return Group(Text(goal.description), table)


@renders("rankmeter.metrics.MetricCatalogue", "json")
def _catalogue_json(catalogue: MetricCatalogue) -> str:
    return render_json(list(catalogue.rows))


@renders("rankmeter.metrics.MetricCatalogue", "markdown")
def _catalogue_markdown(catalogue: MetricCatalogue) -> str:
    return render_markdown(list(catalogue.rows))


@renders("rankmeter.metrics.MetricCatalogue", "table")
def _catalogue_table(catalogue: MetricCatalogue) -> Any:
    return render_table(list(catalogue.rows))


def goal_reasons(goal: Goal, labels: Mapping[str, str] | None = None) -> Any:
    """The goal and its reasons, to follow a table of the goal's values (``evaluate --goal``).

    ``labels`` maps a goal metric (as the goal names it) to the name its column has in that
    table (``ndcg_cut.10`` when the user asked for it so): the reasons use the same name."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    names = labels or {}
    why = Table.grid(padding=(0, 2))
    why.add_column(no_wrap=True, style="bold")
    why.add_column()
    for m in goal.metrics:
        why.add_row(Text(names.get(m.metric, m.metric)), Text(m.why))
    return Group(Text(f"Goal {goal.name}: {goal.description}"), why)


def _grade(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else str(number)
