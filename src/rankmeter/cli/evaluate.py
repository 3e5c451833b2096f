"""`rankmeter evaluate QRELS RUN [RUN ...]`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter.cli._common import (
    GoalCommand,
    GoalOption,
    InputFormat,
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    PerQueryOption,
    QrelsArgument,
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


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    tsv = "tsv"
    trec = "trec"


def evaluate(
    qrels: QrelsArgument,
    runs: Annotated[list[str], typer.Argument(help="One or more run files.")],
    metric: MetricOption = None,
    goal: GoalOption = None,
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
    quiet: QuietOption = False,
) -> None:
    """Evaluate runs against qrels with trec_eval's semantics.

    Default metrics: nDCG@10 P@10 R@100 RR AP. With --goal, the table format ends with the
    reasons for the goal's metrics.
    """
    from rankmeter.errors import PolicyError
    from rankmeter.evaluation import evaluate as run_evaluation
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.metrics.goals import get_goal
    from rankmeter.report import terminal_safe
    from rankmeter.report.evaluation import render_json, render_table, render_trec, render_tsv
    from rankmeter.results import EvalResults

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    chosen = get_goal(goal) if goal is not None else None
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    measures = parse_metrics([*(metric or []), *goal_metrics] or DEFAULT_METRICS)
    with Steps(total=len(runs) + 1, enabled=False if quiet else None) as steps:
        steps.start(f"reading {qrels}")
        loaded_qrels = read_qrels(qrels, format=qrels_format.value if qrels_format else None)

        def run_with(runs_: Any, streaming: bool | None) -> Any:
            return run_evaluation(
                loaded_qrels,
                runs_,
                measures,
                rel=rel,
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
        results = EvalResults.named(evaluated, list(runs))
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
