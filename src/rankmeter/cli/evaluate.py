"""`rankmeter evaluate QRELS RUN [RUN ...]`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    EvalEngine,
    EvalEngineOption,
    GoalCommand,
    GoalOption,
    IncludeMissingOption,
    JudgedBelowOption,
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    PerQueryOption,
    PoolOption,
    QrelsArgument,
    QrelsFormatOption,
    QuietOption,
    RelOption,
    RunFormatOption,
    SparkConfOption,
    SparkMasterOption,
    Ties,
    TiesOption,
    keep_inputs,
)
from rankmeter.cli._evaluating import evaluate_files


class OutputFormat(str, Enum):
    """The choices of ``--format`` (the fast start reads them as OUTPUT_FORMATS: a test keeps
    the two equal)."""

    table = "table"
    json = "json"
    tsv = "tsv"
    trec = "trec"


def evaluate(
    qrels: QrelsArgument,
    runs: Annotated[
        list[str], typer.Argument(help="One or more run files (NAME=PATH names a run).")
    ],
    metric: MetricOption = None,
    goal: GoalOption = None,
    rel: RelOption = 1,
    include_missing: IncludeMissingOption = False,
    judged_only: JudgedOnlyOption = False,
    per_query: PerQueryOption = False,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutputFormat.table,
    ties: TiesOption = Ties.trec_eval,
    qrels_format: QrelsFormatOption = None,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
    stream: Annotated[
        bool | None,
        typer.Option(
            "--stream/--no-stream",
            help="Read TREC runs in chunks of whole queries, in bounded memory (the file must be "
            "grouped by query). Default: TREC run files are streamed when they are grouped by "
            "query, and read whole otherwise.",
        ),
    ] = None,
    judged_below: JudgedBelowOption = 0.9,
    worst: Annotated[
        int | None,
        typer.Option(
            "--worst",
            metavar="N",
            help="Also list each metric's N worst queries (lowest values) per run: a table per "
            'run, "worst" in the JSON, their per-query lines in tsv and trec.',
        ),
    ] = None,
    quiet: QuietOption = False,
    engine: EvalEngineOption = EvalEngine.process,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
    pool: PoolOption = None,
) -> None:
    """Evaluate runs against qrels with trec_eval's semantics.

    Default metrics: nDCG@10 P@10 R@100 RR AP. With --goal, the table format ends with the
    reasons for the goal's metrics. A run whose Judged@k is below --judged-below gets a
    warning: under the table, in the JSON ("warnings"), on stderr for tsv and trec.

    A run matching the qrels' queries only in part, or whose scores rise with the rank, gets
    a warning on stderr. --worst N lists each metric's N worst queries per run. With --engine
    spark the per-query values are computed on Spark (docs/spark.md): the same numbers.
    """
    keep_inputs(output, {"QRELS": qrels, "RUNS": runs, "--pool": pool})
    evaluate_files(
        qrels,
        runs,
        metric=metric,
        goal=goal,
        rel=rel,
        include_missing=include_missing,
        judged_only=judged_only,
        per_query=per_query,
        output_format=output_format.value,
        ties=ties.value,
        qrels_format=qrels_format.value if qrels_format else None,
        run_format=run_format.value if run_format else None,
        output=output,
        stream=stream,
        judged_below=judged_below,
        worst=worst,
        quiet=quiet,
        engine=engine.value,
        spark_master=spark_master,
        spark_conf=spark_conf,
        pool=pool,
    )


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True, cls=GoalCommand)(evaluate)
