"""`rankmeter evaluate QRELS RUN [RUN ...]`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter._escape import terminal_safe
from rankmeter.cli._common import (
    InputFormat,
    JudgedOnlyOption,
    OutputOption,
    QrelsFormatOption,
    QuietOption,
    RelOption,
    RunFormatOption,
    Ties,
    TiesOption,
    emit,
    render_rich,
)
from rankmeter.cli._progress import Steps
from rankmeter.cli.metrics import GOAL_HELP, GoalCommand


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    tsv = "tsv"
    trec = "trec"


def evaluate(
    qrels: Annotated[
        str, typer.Argument(help="Qrels file (TREC, CSV/TSV, JSONL, Parquet; .gz; - for stdin).")
    ],
    runs: Annotated[list[str], typer.Argument(help="One or more run files.")],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to compute, repeatable: nDCG@10, P@10, R@100, RR, AP, "
            "nDCG(gain=exp)@10, P(rel=2)@5, trec_eval names (ndcg_cut.10, map). "
            "Default: nDCG@10 P@10 R@100 RR AP. See `rankmeter metrics`.",
        ),
    ] = None,
    goal: Annotated[
        str | None,
        typer.Option(
            "--goal",
            metavar="GOAL",
            help=GOAL_HELP.replace("Show the metrics", "Evaluate the metrics")
            + " Added after any -m metrics; the table format ends with the reasons.",
        ),
    ] = None,
    rel: RelOption = 1,
    include_missing: Annotated[
        bool,
        typer.Option(
            "--include-missing",
            "-c",
            help="Score judged queries that have no results as 0 (trec_eval -c).",
        ),
    ] = False,
    judged_only: JudgedOnlyOption = False,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also print every query's values.")
    ] = False,
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
    quiet: QuietOption = False,
) -> None:
    """Evaluate runs against qrels with trec_eval's semantics."""
    from rankmeter.errors import PolicyError
    from rankmeter.evaluation import _named
    from rankmeter.evaluation import evaluate as run_evaluation
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.metrics.goals import get_goal
    from rankmeter.report.evaluation import render_json, render_table, render_trec, render_tsv

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    chosen = get_goal(goal) if goal is not None else None
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    measures = parse_metrics([*(metric or []), *goal_metrics] or DEFAULT_METRICS)
    rel_value: float = int(rel) if float(rel).is_integer() else rel
    with Steps(total=len(runs) + 1, enabled=False if quiet else None) as steps:
        steps.start(f"reading {qrels}")
        loaded_qrels = read_qrels(qrels, format=qrels_format.value if qrels_format else None)

        def run_with(runs_: Any, streaming: bool | None) -> Any:
            return run_evaluation(
                loaded_qrels,
                runs_,
                measures,
                rel=rel_value,
                include_missing=include_missing,
                judged_only=judged_only,
                ties=ties.value,
                stream=streaming,
            )

        evaluated = []
        for path in runs:
            steps.start(f"evaluating {path}")
            if run_format is None or stream:
                if stream and run_format not in (None, InputFormat.trec):
                    raise PolicyError("--stream reads TREC run files")
                # TREC run files are streamed in chunks of whole queries unless --no-stream.
                evaluated.append(run_with(path, stream))
            else:
                loaded = read_run(path, format=run_format.value, ties=ties.value)
                evaluated.append(run_with(loaded, False))
        results = _named(evaluated, list(runs))
    listed = list(results.results)
    if output_format is OutputFormat.json:
        emit(
            terminal_safe(render_json(listed, per_query=per_query, single=len(runs) == 1), output),
            output,
        )
    elif output_format is OutputFormat.tsv:
        emit(terminal_safe(render_tsv(listed, per_query=per_query), output), output)
    elif output_format is OutputFormat.trec:
        emit(terminal_safe(render_trec(listed, per_query=per_query), output), output)
    else:
        render_rich(render_table(listed, per_query=per_query, goal=chosen), output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True, cls=GoalCommand)(evaluate)
