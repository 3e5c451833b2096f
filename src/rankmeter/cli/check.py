"""`rankmeter check QRELS RUN [RUN ...]`: is the data fit to be evaluated?

Prints one report (query overlap, score order, duplicates, ties and how far they can move a
metric, Judged@k, the qrels' grades) and exits 1 when a run's numbers would be meaningless: no
query in common with the qrels, scores rising with the rank, repeated (query, doc) pairs.
Warnings alone exit 0. See docs/check.md.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    QrelsArgument,
    QrelsFormatOption,
    RelOption,
    RunFormatOption,
    keep_inputs,
)


class CheckFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def check(
    qrels: QrelsArgument,
    runs: Annotated[
        list[str], typer.Argument(help="One or more run files (NAME=PATH names a run).")
    ],
    k: Annotated[int, typer.Option("-k", help="The top k looked at for ties and Judged@k.")] = 10,
    metric: MetricOption = None,
    rel: RelOption = 1,
    output_format: Annotated[
        CheckFormat, typer.Option("--format", "-f", help="Output format.")
    ] = CheckFormat.table,
    qrels_format: QrelsFormatOption = None,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
) -> None:
    """Check qrels and runs before trusting a number: query overlap, score order (rank and
    score columns swapped), every duplicate, ties in the top k and how far they can move the
    metrics (default nDCG@k), Judged@k, the qrels' grades. Exit 1 when a run's numbers would
    be meaningless (no query in common, scores rising with the rank, duplicates); warnings
    alone exit 0."""
    keep_inputs(output, {"QRELS": qrels, "RUNS": runs})
    from rankmeter.checking import check_files
    from rankmeter.report import render, visible
    from rankmeter.report.checking import failed_line

    result = check_files(
        qrels, runs, k=k, metrics=metric or None, rel=rel,
        qrels_format=qrels_format.value if qrels_format else None,
        run_format=run_format.value if run_format else None,
    )  # fmt: skip
    render(result, output_format.value, output)
    if not result.ok:
        print(visible(failed_line(result)), file=sys.stderr)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(check)
