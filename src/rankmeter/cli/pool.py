"""`rankmeter pool`: the (query, document) pairs that need judging, and what judging them buys."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    RunFormatOption,
    Ties,
    TiesOption,
    check_output,
    emit,
    keep_inputs,
)

# -o as every command declares it (checked before any work by check_output), but required: a
# pool is the command's product, and "-" sends it to stdout (the summary then goes to stderr).
PoolOutputOption = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Write the pool here (JSON lines, atomically); - for stdout.",
        callback=check_output,
    ),
]


class PoolFormat(str, Enum):
    table = "table"
    json = "json"


class PoolQueries(str, Enum):
    runs = "runs"
    qrels = "qrels"


def pool(
    runs: Annotated[
        list[str],
        typer.Argument(help="Run files (TREC, CSV/TSV, JSONL, Parquet; NAME=PATH names one)."),
    ],
    output: PoolOutputOption,
    depth: Annotated[
        int, typer.Option(help="Documents pooled from each run per query (the k of Judged@k).")
    ] = 20,
    qrels: Annotated[
        str | None,
        typer.Option(help="Judgments made so far: their pairs are left out of the pool."),
    ] = None,
    max_per_query: Annotated[
        int | None,
        typer.Option(
            help="Keep at most this many items per query: a stratified sample by best rank "
            "(ranks 1-5, 6-10, 11-20, ...; the top first), each item with its inclusion "
            "probability."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seeds the sampling: same seed, same pool.")] = 0,
    queries: Annotated[
        PoolQueries,
        typer.Option(help="Pool every query of the runs, or only those the qrels judge."),
    ] = PoolQueries.runs,
    ties: TiesOption = Ties.trec_eval,
    run_format: RunFormatOption = None,
    output_format: Annotated[
        PoolFormat, typer.Option("--format", "-f", help="The summary's format.")
    ] = PoolFormat.table,
) -> None:
    """Pool what needs judging: each run's top --depth per query, minus the pairs --qrels
    judge, written as JSON lines to -o (one item per line: query_id, doc_id, runs {name:
    rank}, best_rank, inclusion_probability).

    The summary (per run, Judged@depth now and once the pool is judged) goes to stdout; with
    -o - the pool goes to stdout and the summary to stderr.
    """
    keep_inputs(output, {"RUNS": runs, "--qrels": qrels, "--queries": queries})

    from rankmeter.cli._runs import read_runs
    from rankmeter.errors import PolicyError
    from rankmeter.judgments import pool as make_pool
    from rankmeter.report import pool as report
    from rankmeter.report import render, terminal_safe

    if [*runs, qrels].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    result = make_pool(
        read_runs(runs, format=run_format.value if run_format else None, ties=ties.value),
        depth=depth,
        qrels=qrels,
        max_per_query=max_per_query,
        seed=seed,
        queries=queries.value,
        ties=ties.value,
    )
    if output != "-":
        report.write_pool(result, output)
    else:  # the pool is the data on stdout; the summary is a diagnostic beside it
        emit(terminal_safe(report.pool_text(result), None), None)
    render(result, output_format.value, stderr=output == "-")


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(pool)
