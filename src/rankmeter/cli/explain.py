"""`rankmeter explain QRELS RUN --query Q -m nDCG@10` and `rankmeter explain --grades 3,0,2`.

With ``--corpus``, the documents' titles and texts beside their ranks, and the relevant
documents the run missed; with ``--pool``, the judgments a sample of that pool, as statAP,
stat_nDCG and stat_P weigh them (:func:`rankmeter.explanation_text.explain_files`).

The query is named by ``--query`` alone: ``-q`` is ``--per-query`` in every command that has it
(as trec_eval's ``-q``), so it is not given a second meaning here.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    QRELS_HELP,
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    PoolOption,
    QrelsFormatOption,
    RelOption,
    RunFormatOption,
    Ties,
    TiesOption,
    keep_inputs,
)


class ExplainFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"


def explain(
    ctx: typer.Context,
    qrels: Annotated[str | None, typer.Argument(help=QRELS_HELP)] = None,
    run: Annotated[str | None, typer.Argument(help="Run file (NAME=PATH names it).")] = None,
    query: Annotated[
        str | None, typer.Option("--query", help="The query to explain (with files).")
    ] = None,
    metric: MetricOption = None,
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
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="Query texts (TSV qid<TAB>text, or BEIR queries.jsonl): the query's text is "
            "shown under the title (and as query_text in the JSON).",
        ),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option(
            "--corpus",
            help='Documents: BEIR corpus.jsonl ({"_id", "title", "text"} a line) or a BEIR '
            "folder holding it. Shows each ranked document's title and the start of its "
            "text, and below the table the relevant documents the run missed (the corpus "
            "is read in one pass that keeps only the query's documents).",
        ),
    ] = None,
    pool: PoolOption = None,
    output: OutputOption = None,
) -> None:
    """Explain a number: the per-rank table and the steps from it to one query's value.

    Default metrics: nDCG@10 P@10 R@100 RR AP.
    """
    from rankmeter.explanation import Explanations
    from rankmeter.explanation_text import explain_files
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.report import render

    measures = parse_metrics(metric or DEFAULT_METRICS)
    if grades is not None:
        if qrels is not None or run is not None:
            ctx.fail(
                "--grades explains a ranking given by hand: give it without QRELS and RUN "
                "files (or give the files and --query instead)"
            )
        for given, name in (
            (query, "--query"),
            (judged_only or None, "--judged-only"),
            (queries, "--queries"),
            (corpus, "--corpus"),
            (pool, "--pool"),
        ):
            if given is not None:
                ctx.fail(f"{name} needs QRELS and RUN files; it does not go with --grades")
        explained = Explanations.for_grades(grades, measures, judgments=judgments, rel=rel)
    else:
        if judgments is not None:
            ctx.fail("--judgments goes with --grades (a ranking given by hand)")
        if qrels is None or run is None:
            ctx.fail("give QRELS and RUN files and --query, or --grades (e.g. --grades 3,0,2)")
        if query is None:
            ctx.fail("give --query: the query to explain (e.g. --query 1)")
        keep_inputs(
            output,
            {"QRELS": qrels, "RUN": run, "--corpus": corpus, "--queries": queries, "--pool": pool},
        )
        explained = explain_files(
            qrels, run, query, measures, corpus=corpus, queries=queries, pool=pool, rel=rel,
            judged_only=judged_only,
            ties=ties.value, qrels_format=qrels_format.value if qrels_format else None,
            run_format=run_format.value if run_format else None,
        )  # fmt: skip
    render(explained, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(explain)
