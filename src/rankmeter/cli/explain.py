"""`rankmeter explain QRELS RUN --query Q -m nDCG@10` and `rankmeter explain --grades 3,0,2`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter._escape import terminal_safe
from rankmeter.cli._common import (
    JudgedOnlyOption,
    OutputOption,
    QrelsFormatOption,
    RelOption,
    RunFormatOption,
    Ties,
    TiesOption,
    emit,
)


class ExplainFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"


def explain(
    ctx: typer.Context,
    qrels: Annotated[
        str | None,
        typer.Argument(help="Qrels file (TREC, CSV/TSV, JSONL, Parquet; .gz; - for stdin)."),
    ] = None,
    run: Annotated[str | None, typer.Argument(help="Run file.")] = None,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="The query to explain (with files).")
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to explain, repeatable: nDCG@10, nDCG(gain=exp)@10, P@10, RR, AP, ... "
            "Default: nDCG@10 P@10 R@100 RR AP. See `rankmeter metrics`.",
        ),
    ] = None,
    grades: Annotated[
        str | None,
        typer.Option(
            "--grades",
            help="Explain a ranking given by hand instead of files: the grade of each result, "
            "top first, e.g. 3,0,2 (? for an unjudged result).",
        ),
    ] = None,
    judgments: Annotated[
        str | None,
        typer.Option(
            "--judgments",
            help="With --grades: the grades of all the query's judged documents, e.g. 3,2,2,1 "
            "(for the ideal ordering and the number relevant). Default: the grades given.",
        ),
    ] = None,
    rel: RelOption = 1,
    judged_only: JudgedOnlyOption = False,
    ties: TiesOption = Ties.trec_eval,
    output_format: Annotated[
        ExplainFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ExplainFormat.text,
    qrels_format: QrelsFormatOption = None,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
) -> None:
    """Explain a number: the per-rank table and the steps from it to one query's value."""
    from rankmeter.errors import PolicyError
    from rankmeter.explanation import _build, _from_files, _from_grades
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.report.explanation import render_html, render_markdown, render_text

    measures = parse_metrics(metric or DEFAULT_METRICS)
    rel_value: float = int(rel) if float(rel).is_integer() else rel
    if grades is not None:
        if qrels is not None or run is not None:
            ctx.fail(
                "--grades explains a ranking given by hand: give it without QRELS and RUN "
                "files (or give the files and --query instead)"
            )
        for given, name in ((query, "--query"), (judged_only or None, "--judged-only")):
            if given is not None:
                ctx.fail(f"{name} needs QRELS and RUN files; it does not go with --grades")
        case = _from_grades(grades, judgments, rel_value)
        header: dict[str, Any] = {"query": None, "run": None, "grades": case.shown_grades}
    else:
        if judgments is not None:
            ctx.fail("--judgments goes with --grades (a ranking given by hand)")
        if qrels is None or run is None:
            ctx.fail("give QRELS and RUN files and --query, or --grades (e.g. --grades 3,0,2)")
        if query is None:
            ctx.fail("give --query: the query to explain (e.g. --query 1)")
        if [qrels, run].count("-") > 1:
            raise PolicyError("only one input can be read from stdin ('-')")
        from rankmeter.io import read_qrels, read_run

        loaded_qrels = read_qrels(qrels, format=qrels_format.value if qrels_format else None)
        loaded_run = read_run(run, format=run_format.value if run_format else None, ties=ties.value)
        case = _from_files(loaded_qrels, loaded_run, query, rel_value, judged_only, ties.value)
        header = {"query": case.query, "run": case.run}
    explanations = [_build(case, m) for m in measures]
    if output_format is ExplainFormat.json:
        from rankmeter.report._json import json_text

        document = {
            **header,
            "policies": dict(case.policies),
            "metrics": {e.metric: e.to_dict() for e in explanations},
        }
        text = json_text(document)
    elif output_format is ExplainFormat.markdown:
        text = render_markdown(explanations)
    elif output_format is ExplainFormat.html:
        text = render_html(explanations)
    else:
        text = render_text(explanations)
    emit(terminal_safe(text, output), output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(explain)
