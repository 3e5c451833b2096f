"""`rankmeter diff QRELS A.run B.run --corpus CORPUS -f html -o diff.html`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    OutputOption,
    PoolOption,
    QrelsArgument,
    RelOption,
    Ties,
    TiesOption,
    given_once,
    keep_inputs,
)


class DiffFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"


def diff(
    qrels: QrelsArgument,
    run_a: Annotated[
        str, typer.Argument(help="Run A, the one compared with (NAME=PATH names it).")
    ],
    run_b: Annotated[str, typer.Argument(help="Run B (NAME=PATH names it): Δ = B − A.")],
    corpus: Annotated[
        str | None,
        typer.Option(
            help="BEIR corpus.jsonl (or its folder): the shown documents' titles and texts "
            "(only those are read). Default: no texts."
        ),
    ] = None,
    queries: Annotated[
        str | None,
        typer.Option(help="Query texts (TSV qid<TAB>text, or BEIR queries.jsonl)."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            metavar="METRIC",
            help="The metric the queries are ordered by (one): any that evaluate takes (a "
            "diversity metric reads the qrels' subtopics; GMAP's per-query values and Δ are "
            "logs). Default: nDCG@10.",
            callback=given_once,
        ),
    ] = None,
    depth: Annotated[int, typer.Option(help="Results of each run shown per query.")] = 10,
    rel: RelOption = 1,
    ties: TiesOption = Ties.trec_eval,
    pool: PoolOption = None,
    output_format: Annotated[
        DiffFormat,
        typer.Option(
            "--format", "-f", help="Output format (html: one self-contained page with texts)."
        ),
    ] = DiffFormat.text,
    output: OutputOption = None,
) -> None:
    """Two runs side by side, query by query: both rankings with their grades, the documents
    that moved, the queries ordered by B's change on the metric (the largest loss first).

    -f html writes one self-contained page (a filter box, document texts on hover and in a
    list at the end); text, markdown and json give the per-query changes and the moved
    documents without the texts.
    """
    from rankmeter.comparison import diff_runs
    from rankmeter.report import render

    keep_inputs(
        output,
        {
            "QRELS": qrels,
            "RUN_A": run_a,
            "RUN_B": run_b,
            "--corpus": corpus,
            "--queries": queries,
            "--pool": pool,
        },
    )
    result = diff_runs(
        qrels,
        run_a,
        run_b,
        metric=metric[0] if metric else "nDCG@10",
        corpus=corpus,
        queries=queries,
        depth=depth,
        rel=rel,
        ties=ties.value,
        inclusion=pool,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(diff)
