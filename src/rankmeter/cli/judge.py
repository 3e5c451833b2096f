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
from pathlib import Path
from typing import Annotated, Any

import typer

from rankmeter.cli._common import OutputOption, check_output, emit, render_rich

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


def _items(pool: str, queries: str, corpus: str) -> list[Any]:
    """The pool's items with their texts; a query or document without text is an error."""
    from rankmeter.errors import FormatError
    from rankmeter.io import read_corpus, read_pool
    from rankmeter.io.annotations import read_queries
    from rankmeter.judgments.app.store import Item

    pooled = read_pool(pool)
    texts = read_queries(queries)
    documents = read_corpus(corpus)
    items = []
    for entry in pooled:
        if entry.query_id not in texts:
            raise FormatError(
                queries, f"query {entry.query_id!r} of the pool {pool} has no text here"
            )
        document = documents.get(entry.doc_id)
        if document is None:
            raise FormatError(
                corpus,
                f"document {entry.doc_id!r} of the pool {pool} (query {entry.query_id!r}) is "
                "not in the corpus",
            )
        items.append(
            Item(entry.query_id, entry.doc_id, texts[entry.query_id], document.title, document.text)
        )
    return items


def _guidelines(path: str) -> str:
    from rankmeter.errors import FormatError

    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FormatError(path, f"cannot read the guidelines: {reason}") from None


def _url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/r/{token}"


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
    import math
    import socket

    from rankmeter.errors import PolicyError
    from rankmeter.judgments.app import create_app
    from rankmeter.judgments.app.server import serve as serve_app
    from rankmeter.judgments.app.store import Store, check_rater, parse_scale
    from rankmeter.report import visible
    from rankmeter.report.judging import pages

    # Every option is checked before anything is written: a refused option leaves no database.
    if not (math.isfinite(request_timeout) and request_timeout > 0):
        raise PolicyError(
            f"--request-timeout {request_timeout!r} must be a positive number of seconds"
        )
    names = [n.strip() for n in raters.split(",")]
    if not all(names):
        raise PolicyError(f"--raters {raters!r} has an empty name")
    for name in names:
        check_rater(name)
    grades = parse_scale(scale)
    if not 0 <= port <= 65535:
        raise PolicyError(f"--port {port} must be a port number from 0 to 65535 (0: any free port)")
    text = _guidelines(guidelines) if guidelines is not None else None
    items = _items(pool, queries, corpus)
    # Listening comes before the database too: a port in use (or an address that is not this
    # machine's) is one line, and no new database is left behind.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except (OSError, OverflowError) as exc:
        listener.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PolicyError(f"cannot listen on {host}:{port}: {reason}") from None
    try:
        store = Store.create(db, items, names, scale=grades, overlap=overlap, seed=seed)
        if text is not None:
            store.set_guidelines(text)
        app = create_app(db, pages=pages())
    except BaseException:
        listener.close()
        raise
    listener.listen(128)
    bound = listener.getsockname()[1]
    for name, token in store.raters().items():
        print(f"{visible(name)} {_url(host, bound, token)}", flush=True)
    serve_app(app, listener, request_timeout=request_timeout)


@judge_app.command(no_args_is_help=True)
def status(db: DbOption, output: OutputOption = None) -> None:
    """How far each rater is: labels given of the items assigned."""
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
    from rankmeter.errors import PolicyError
    from rankmeter.io import atomic_write_bytes
    from rankmeter.judgments.app.export import check_trec_ids, unadjudicated
    from rankmeter.judgments.app.export import resolve as resolved
    from rankmeter.judgments.app.store import Store
    from rankmeter.report import terminal_safe, visible
    from rankmeter.report.judging import labels_csv, labels_parquet, qrels_text

    store = Store(db, read_only=True)
    store.quick_check()
    if adjudicator is not None and resolve is Resolve.adjudicated:
        raters = list(store.raters())
        if adjudicator not in raters:
            raise PolicyError(
                f"--adjudicator {adjudicator!r} is not a rater of this database (its raters: "
                f"{', '.join(raters)})"
            )
    given = store.labels()
    grades = resolved(given, resolve.value, adjudicator=adjudicator)
    left_out = unadjudicated(given, adjudicator) if adjudicator is not None else []
    if labels is not None:  # first: the labels table holds any id, the qrels may not
        if labels.lower().endswith((".parquet", ".pq")):
            atomic_write_bytes(labels, labels_parquet(given))
        else:
            emit(terminal_safe(labels_csv(given), labels), labels)
    check_trec_ids(
        grades,
        db,
        advice=(
            f"the labels were written to {labels} (--labels), the qrels nowhere"
            if labels is not None
            else "export the labels alone as a table with --labels FILE (CSV or Parquet)"
        ),
    )
    emit(terminal_safe(qrels_text(grades), output), output)
    if left_out:
        items = "item has" if len(left_out) == 1 else "items have"
        print(
            visible(
                f"warning: {len(left_out)} disputed {items} no grade from the adjudicator "
                f"{adjudicator!r} and {'is' if len(left_out) == 1 else 'are'} left out of the "
                "qrels; see rankmeter judge status"
            ),
            file=sys.stderr,
        )


def register(app: typer.Typer) -> None:
    app.add_typer(judge_app)
