"""`rankmeter label --pool P --queries Q --corpus C --labeler module:function -o QRELS`: grade
every item of a pool with a labeler, written as TREC qrels."""

from __future__ import annotations

from typing import Annotated

import typer

from rankmeter.cli._common import QuietOption, check_output, emit

# -o as every command declares it (checked before any work), but required: the qrels are the
# command's product.
LabelOutputOption = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Write the model's labels here as TREC qrels (atomically); - for stdout.",
        callback=check_output,
    ),
]


def label(
    pool: Annotated[str, typer.Option("--pool", help="The pool file (from rankmeter pool).")],
    queries: Annotated[
        str,
        typer.Option(help="Query texts: BEIR queries.jsonl, qid<TAB>text, or a table."),
    ],
    corpus: Annotated[str, typer.Option(help="The documents: BEIR corpus.jsonl.")],
    labeler: Annotated[
        str,
        typer.Option(
            help="module:function, a callable (query_text, doc_text) -> grade; the current "
            "directory is searched first."
        ),
    ],
    output: LabelOutputOption,
    scale: Annotated[str, typer.Option(help="The grades the labeler may give.")] = "0-3",
    quiet: QuietOption = False,
) -> None:
    """Label a pool with a model: every (query, doc) item graded by the labeler, the grades
    written as TREC qrels (check them against human labels with rankmeter audit-labels)."""
    import sys

    from rankmeter.cli._progress import Steps
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_pool, trec_qrels_text
    from rankmeter.judgments import label_pool, load_labeler
    from rankmeter.report import terminal_safe

    if [pool, queries, corpus].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    function = load_labeler(labeler)
    items = read_pool(pool)
    # One step per item: a model may take seconds each, and the bar says how far it is.
    with Steps(total=len(items), enabled=False if quiet else None) as steps:
        qrels = label_pool(
            items,
            queries,
            corpus,
            function,
            scale=scale,
            progress=steps.start,
            source="<stdin>" if pool == "-" else pool,
        )
    text = trec_qrels_text(qrels)
    emit(terminal_safe(text, output), output)
    print(
        f"{len(qrels)} items of {qrels.n_queries} queries labelled by {labeler}",
        file=sys.stderr if output == "-" else sys.stdout,
    )


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(label)
