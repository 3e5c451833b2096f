"""`rankmeter sample-queries LOG --n 200`: draw a stratified evaluation query set from traffic."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, emit


class SampleFormat(str, Enum):
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"


class Weighting(str, Enum):
    traffic = "traffic"
    uniform = "uniform"


def sample_queries(
    log: Annotated[
        str,
        typer.Argument(
            help="A search log (the online log schema) or a table query_id,count[,segment] "
            "(.csv, .tsv, .jsonl or .parquet)."
        ),
    ],
    n: Annotated[int, typer.Option("--n", help="Queries to draw.")] = 200,
    stratify: Annotated[
        str | None,
        typer.Option(
            help="bucket (head, torso, tail: thirds of the traffic by frequency) or a segment "
            "column."
        ),
    ] = None,
    weighting: Annotated[
        Weighting,
        typer.Option(
            help="traffic: strata by traffic share, queries drawn in proportion to their "
            "counts; uniform: strata by distinct queries, queries equally likely."
        ),
    ] = Weighting.traffic,
    holdout: Annotated[
        float | None,
        typer.Option(help="Mark this fraction of the drawn queries test, the rest tuning."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same set.")] = 0,
    output_format: Annotated[
        SampleFormat, typer.Option("--format", "-f", help="Output format.")
    ] = SampleFormat.csv,
    output: OutputOption = None,
) -> None:
    """Draw a stratified evaluation query set from a query log, with an optional tuning/test
    split (a split column) so that no one tunes on the test queries.

    Prints a one-line summary of the strata on stderr.
    """
    from rankmeter.online import sample_queries as draw
    from rankmeter.report import sampling as report
    from rankmeter.report import terminal_safe, visible

    sample = draw(
        log,
        n,
        stratify=stratify,
        weighting=weighting.value,
        holdout=holdout,
        seed=seed,
    )
    if output_format is SampleFormat.jsonl:
        text = report.render_jsonl(sample)
    else:
        text = report.render_csv(
            sample, delimiter="\t" if output_format is SampleFormat.tsv else ","
        )
    emit(terminal_safe(text, output), output)
    print(visible(report.summary(sample)), file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("sample-queries", no_args_is_help=True)(sample_queries)
