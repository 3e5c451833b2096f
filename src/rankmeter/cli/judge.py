"""`rankmeter judge serve|status|export`: the rating app for human raters, and its labels.

``serve`` fills a judgments database from a pool, the queries' and documents' texts, and
starts the web server (uvicorn, 127.0.0.1 by default), printing each rater's link;
``status`` shows how far each rater is; ``export`` writes the labels as TREC qrels (one grade
per item) and as the long table ``rankmeter agree`` reads. ``status`` and ``export`` open the
database read-only: they change nothing, and read a database on a read-only file.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, check_output, emit, keep_inputs, render_rich

judge_app = typer.Typer(
    name="judge",
    help="The rating app: human raters judge a pool in their browser; progress; export.",
    no_args_is_help=True,
)

DbOption = Annotated[str, typer.Option("--db", help="The judgments database (SQLite).")]


class Resolve(str, Enum):
    majority = "majority"
    mean = "mean"
    adjudicated = "adjudicated"


@judge_app.command(no_args_is_help=True)
def serve(
    pool: Annotated[str, typer.Argument(help="The pool to judge (JSON lines: rankmeter pool).")],
    queries: Annotated[
        str, typer.Option(help="Query texts (BEIR queries.jsonl, TSV qid<TAB>text, a table).")
    ],
    corpus: Annotated[str, typer.Option(help="The documents (BEIR corpus.jsonl).")],
    db: DbOption,
    raters: Annotated[str, typer.Option(help="The raters' names, comma separated.")],
    guidelines: Annotated[
        str | None, typer.Option(help="Guidelines for the raters (Markdown, shown as text).")
    ] = None,
    overlap: Annotated[
        float, typer.Option(help="Share of the items a second rater judges too (agreement).")
    ] = 0.0,
    scale: Annotated[str, typer.Option(help="The grades, LOW-HIGH.")] = "0-3",
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8080,
    seed: Annotated[int, typer.Option(help="Seeds who judges what: same seed, same split.")] = 0,
    request_timeout: Annotated[
        float,
        typer.Option(help="Seconds a client has to send a whole request; slower ones are closed."),
    ] = 10.0,
) -> None:
    """Start the rating app and print each rater's link.

    One line per rater, NAME URL (the URL holds the rater's secret token); then it serves
    until interrupted. Running it again with the same --db keeps every label and every link.
    """
    keep_inputs(
        None,
        {"POOL": pool, "--queries": queries, "--corpus": corpus, "--guidelines": guidelines},
        more={"--db": db},
    )
    from rankmeter.judgments.app.server import serve as serve_app
    from rankmeter.judgments.app.setup import start_session
    from rankmeter.report import visible
    from rankmeter.report.judging import pages

    session = start_session(
        pool, queries, corpus, db, raters, pages=pages(), guidelines=guidelines,
        overlap=overlap, scale=scale, host=host, port=port, seed=seed,
        request_timeout=request_timeout,
    )  # fmt: skip
    for name, link in session.links.items():
        print(f"{visible(name)} {link}", flush=True)
    serve_app(session.app, session.listener, request_timeout=request_timeout)


@judge_app.command(no_args_is_help=True)
def status(db: DbOption, output: OutputOption = None) -> None:
    """How far each rater is: labels given of the items assigned."""
    keep_inputs(output, {"--db": db})
    from rankmeter.judgments.app.store import Store
    from rankmeter.report.judging import render_status

    store = Store(db, read_only=True)
    store.quick_check()  # a damaged database is reported, not summed up
    render_rich(render_status(store.progress()), output)


QrelsOutputOption = Annotated[
    str | None,
    typer.Option(
        "--output", "-o", help="Write the qrels here (atomically); - for stdout.",
        callback=check_output,
    ),
]  # fmt: skip
LabelsOption = Annotated[
    str | None,
    typer.Option(
        "--labels",
        help="Also write every label (query_id,doc_id,rater,label), for rankmeter agree: "
        "Parquet when the name ends in .parquet or .pq, CSV otherwise.",
        callback=check_output,
    ),
]


@judge_app.command(no_args_is_help=True)
def export(
    db: DbOption,
    output: QrelsOutputOption = None,
    resolve: Annotated[
        Resolve,
        typer.Option(help="One grade from several raters': the majority (ties: the lower), "
                     "the rounded mean, or adjudicated (disputes settled by --adjudicator)."),
    ] = Resolve.majority,
    adjudicator: Annotated[
        str | None,
        typer.Option(help="With --resolve adjudicated: the rater whose grade settles an item "
                     "the raters disagree on."),
    ] = None,
    labels: LabelsOption = None,
) -> None:  # fmt: skip
    """Write the labels as TREC qrels (query 0 doc grade; "can't judge" left out).

    With --resolve adjudicated, a disputed item the adjudicator has not graded is left out of
    the qrels, and one warning line on stderr says how many.
    """
    keep_inputs(output, {"--db": db}, more={"--labels": labels})
    from rankmeter.judgments.app.export import check_trec_ids
    from rankmeter.judgments.app.setup import export_labels
    from rankmeter.report import terminal_safe, visible
    from rankmeter.report.judging import left_out_line, qrels_text, write_labels

    exported = export_labels(db, resolve.value, adjudicator=adjudicator)
    if labels is not None:  # first: the labels table holds any id, the qrels may not
        write_labels(exported.labels, labels)
    check_trec_ids(
        exported.grades,
        db,
        advice=(
            f"the labels were written to {labels} (--labels), the qrels nowhere"
            if labels is not None
            else "export the labels alone as a table with --labels FILE (CSV or Parquet)"
        ),
    )
    emit(terminal_safe(qrels_text(exported.grades), output), output)
    if exported.left_out:
        print(visible(left_out_line(exported.left_out, adjudicator)), file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.add_typer(judge_app)
