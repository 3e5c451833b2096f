"""`rankmeter logs check|simulate`: search logs.

``check`` reads a log and reports its per-variant counts and every problem of the log schema
(the first offending row of each, with file and row); it exits 1 when it found any.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, emit, render_rich

logs_app = typer.Typer(
    name="logs",
    help="Search logs: check one against the log schema; simulate one from a collection.",
    no_args_is_help=True,
)


class LogsFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


class Engine(str, Enum):
    duckdb = "duckdb"
    spark = "spark"


LogArgument = Annotated[
    str,
    typer.Argument(
        help="The log: a .parquet, .csv or .jsonl file (one row per impression), or a folder "
        "of .parquet files."
    ),
]
EngineOption = Annotated[
    Engine,
    typer.Option(help="Where the log is read: duckdb (embedded) or spark (local[2])."),
]


@logs_app.command("check", no_args_is_help=True)
def check(
    log: LogArgument,
    output_format: Annotated[
        LogsFormat, typer.Option("--format", "-f", help="Output format.")
    ] = LogsFormat.table,
    engine: EngineOption = Engine.duckdb,
    output: OutputOption = None,
) -> None:
    """Check a search log against the log schema: per-variant counts (users, sessions,
    requests, impressions, clicks) and every problem, at its first offending row. Exit 1
    when a problem was found."""
    from rankmeter.online import check_log
    from rankmeter.report import terminal_safe, visible
    from rankmeter.report.logs import render_json, render_markdown, render_table

    result = check_log(log, engine=engine.value)
    if output_format is LogsFormat.json:
        emit(terminal_safe(render_json(result), output), output)
    elif output_format is LogsFormat.markdown:
        emit(render_markdown(result), output)
    else:
        render_rich(render_table(result), output)
    if not result.ok:
        count = len(result.problems)
        print(
            visible(
                f"rankmeter: {log}: {count} problem{'s' if count > 1 else ''} in the log "
                f"(the first: {result.problems[0]})"
            ),
            file=sys.stderr,
        )
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(logs_app)
