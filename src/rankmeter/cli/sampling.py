"""`rankmeter sample-queries LOG --n 200`: draw a stratified evaluation query set from traffic;
`rankmeter query-mix QUERIES LOG`: does an evaluation set mix its queries as traffic does?"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, keep_inputs


class SampleFormat(str, Enum):
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"


class MixFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


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
    keep_inputs(output, {"LOG": log})
    from rankmeter.online import sample_queries as draw
    from rankmeter.report import render, visible
    from rankmeter.report import sampling as report

    sample = draw(
        log,
        n,
        stratify=stratify,
        weighting=weighting.value,
        holdout=holdout,
        seed=seed,
    )
    render(sample, output_format.value, output)
    print(visible(report.summary(sample)), file=sys.stderr)


def query_mix(
    queries: Annotated[
        str,
        typer.Argument(
            help="The evaluation set's queries: qrels, BEIR queries (JSONL), or a table with a "
            "query_id column (such as sample-queries' output)."
        ),
    ],
    log: Annotated[
        str,
        typer.Argument(
            help="A search log (the online log schema) or a table query_id,count[,segment]."
        ),
    ],
    stratify: Annotated[
        str,
        typer.Option(help="bucket (head, torso, tail by frequency) or a segment column."),
    ] = "bucket",
    weighting: Annotated[
        Weighting,
        typer.Option(
            help="traffic: compare with each stratum's share of the traffic; uniform: with its "
            "share of distinct queries."
        ),
    ] = Weighting.traffic,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    target: Annotated[
        float, typer.Option("--power", help="Power of the detectable differences.")
    ] = 0.8,
    sd: Annotated[
        float,
        typer.Option(
            help="Spread of per-query differences for the detectable differences (default 1: "
            "in units of the spread)."
        ),
    ] = 1.0,
    output_format: Annotated[
        MixFormat, typer.Option("--format", "-f", help="Output format.")
    ] = MixFormat.table,
    output: OutputOption = None,
) -> None:
    """Does the evaluation set mix head, torso and tail (or segments) as traffic does? Shares
    side by side, a chi-square goodness-of-fit test, and each stratum's queries with the
    difference they can detect.
    """
    keep_inputs(output, {"QUERIES": queries, "LOG": log})
    from rankmeter.online import query_mix as measure
    from rankmeter.report import render

    mix = measure(
        queries,
        log,
        stratify=stratify,
        weighting=weighting.value,
        alpha=alpha,
        power=target,
        sd=sd,
    )
    render(mix, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command("sample-queries", no_args_is_help=True)(sample_queries)
    app.command("query-mix", no_args_is_help=True)(query_mix)
