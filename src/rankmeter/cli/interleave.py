"""`rankmeter interleave LOG`: credit an interleaved log's clicks to each ranker and test which
one users prefer."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import Engine, EngineOption, OutputOption, keep_inputs


class InterleaveFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


class Unit(str, Enum):
    user = "user"
    request = "request"


class Method(str, Enum):
    team_draft = "team-draft"
    balanced = "balanced"


class Interval(str, Enum):
    wilson = "wilson"
    exact = "exact"


def interleave(
    log: Annotated[
        str,
        typer.Argument(
            help="The search log of interleaved requests (Parquet, CSV, JSONL, or a folder of "
            "Parquet files) with request_id, clicked, interleave_team (A or B), and user_id "
            "for --unit user; balanced: request_id, query_id, doc_id, position, clicked."
        ),
    ],
    unit: Annotated[
        Unit,
        typer.Option(
            help="What one vote is: a user (default: a user's requests are not independent, so "
            "each user's requests become one vote) or a request."
        ),
    ] = Unit.user,
    method: Annotated[
        Method,
        typer.Option(
            help="Credit rule: team-draft (a click counts for the ranker that showed the "
            "document, from interleave_team) or balanced (Joachims' rule, from the documents' "
            "ranks in --run-a and --run-b)."
        ),
    ] = Method.team_draft,
    run_a: Annotated[
        str | None,
        typer.Option(
            help="With --method balanced: ranker A's run (TREC, CSV/TSV, JSONL, Parquet)."
        ),
    ] = None,
    run_b: Annotated[
        str | None, typer.Option(help="With --method balanced: ranker B's run.")
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="Significance level; intervals at confidence 1 - alpha.")
    ] = 0.05,
    interval: Annotated[
        Interval,
        typer.Option(
            help="Interval of B's share: wilson (Wilson score, default) or exact "
            "(Clopper-Pearson, conservative)."
        ),
    ] = Interval.wilson,
    engine: EngineOption = Engine.duckdb,
    output_format: Annotated[
        InterleaveFormat, typer.Option("--format", "-f", help="Output format.")
    ] = InterleaveFormat.table,
    output: OutputOption = None,
) -> None:
    """Credit each click to the ranker that showed the document (team-draft; or balanced
    interleaving's rule), count the requests (or users) each ranker won, and test the
    preference: exact binomial sign test and an interval of B's share of the wins."""
    keep_inputs(output, {"LOG": log, "--run-a": run_a, "--run-b": run_b})
    from rankmeter.online import interleaving_test
    from rankmeter.report import render

    result = interleaving_test(
        log,
        unit=unit.value,
        alpha=alpha,
        interval=interval.value,
        method=method.value,
        run_a=run_a,
        run_b=run_b,
        engine=engine.value,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(interleave)
