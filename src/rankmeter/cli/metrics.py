"""`rankmeter metrics`: every metric with its formula and description, from the specs."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import emit, render_rich


class ListFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    json = "json"


def metrics(
    output_format: Annotated[
        ListFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ListFormat.table,
) -> None:
    """List every metric: name, aliases, trec_eval names, parameters, formula, description."""
    from rankmeter.metrics.docs import metric_rows, render_markdown

    rows = metric_rows()
    if output_format is ListFormat.json:
        import json

        emit(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", None)
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


def register(app: typer.Typer) -> None:
    app.command()(metrics)
