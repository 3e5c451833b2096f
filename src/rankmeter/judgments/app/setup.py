"""Setting up a rating session: the pool's items with their texts, the guidelines, the
database filled, the app built and a socket listening, every option checked before anything
is written (what ``rankmeter judge serve`` does before it serves), and the labels exported
as one grade per item (``rankmeter judge export``)."""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments.app.export import Resolved, resolve, unadjudicated
from rankmeter.judgments.app.store import Item, Label, Store, check_rater, parse_scale

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from rankmeter.judgments.app import Pages

__all__ = [
    "Export",
    "Session",
    "export_labels",
    "listen",
    "pool_items",
    "rater_url",
    "read_guidelines",
    "start_session",
]


def pool_items(pool: Any, queries: Any, corpus: Any) -> list[Item]:
    """The pool's items (a pool file or what :func:`rankmeter.io.read_pool` reads) with their
    texts: ``queries`` as :func:`rankmeter.io.annotations.read_queries` reads them, ``corpus``
    as :func:`rankmeter.io.read_corpus` does. A query without text, or a document not in the
    corpus, is a :class:`FormatError` naming the file."""
    from rankmeter.io import read_corpus, read_pool
    from rankmeter.io.annotations import read_queries

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


def read_guidelines(path: str | os.PathLike[str]) -> str:
    """The raters' guidelines (UTF-8 text) at ``path``; one that cannot be read is a
    :class:`FormatError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FormatError(str(path), f"cannot read the guidelines: {reason}") from None


def rater_url(host: str, port: int, token: str) -> str:
    """A rater's link: ``http://HOST:PORT/r/TOKEN`` (an IPv6 address in brackets).

    >>> rater_url("::1", 8080, "abc")
    'http://[::1]:8080/r/abc'
    """
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/r/{token}"


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: any free port), not yet listening; a port in
    use or an address that is not this machine's is a :class:`PolicyError`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except (OSError, OverflowError) as exc:
        listener.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PolicyError(f"cannot listen on {host}:{port}: {reason}") from None
    return listener


@dataclass
class Session:
    """A rating session ready to serve: the filled database, the app over it and the socket
    it listens on (``serve(session.app, session.listener)``)."""

    store: Store
    app: Starlette
    listener: socket.socket
    host: str
    port: int
    links: dict[str, str] = field(default_factory=dict)


def start_session(
    pool: Any,
    queries: Any,
    corpus: Any,
    db: str | os.PathLike[str],
    raters: str | Sequence[str],
    *,
    pages: Pages,
    guidelines: str | os.PathLike[str] | None = None,
    overlap: float = 0.0,
    scale: str = "0-3",
    host: str = "127.0.0.1",
    port: int = 8080,
    seed: int = 0,
    request_timeout: float = 10.0,
) -> Session:
    """Check every option, read the pool's items with their texts, bind ``host``:``port``,
    fill (or reopen) the database ``db`` and build the app with ``pages``; the socket is
    listening when this returns, and ``links`` holds each rater's link (its secret token).

    Nothing is written before the options, the texts and the port are found good: a refused
    option or a port in use leaves no database. ``raters``: names, or one comma-separated
    string. ``request_timeout`` is checked here for the server that serves the session.
    """
    from rankmeter.judgments.app import create_app

    if not (math.isfinite(request_timeout) and request_timeout > 0):
        raise PolicyError(
            f"--request-timeout {request_timeout!r} must be a positive number of seconds"
        )
    given = raters if isinstance(raters, str) else ",".join(raters)
    names = [n.strip() for n in given.split(",")]
    if not all(names):
        raise PolicyError(f"--raters {given!r} has an empty name")
    for name in names:
        check_rater(name)
    grades = parse_scale(scale)
    if not 0 <= port <= 65535:
        raise PolicyError(f"--port {port} must be a port number from 0 to 65535 (0: any free port)")
    text = read_guidelines(guidelines) if guidelines is not None else None
    items = pool_items(pool, queries, corpus)
    # Listening comes before the database too: a port in use (or an address that is not this
    # machine's) is one line, and no new database is left behind.
    listener = listen(host, port)
    try:
        store = Store.create(db, items, names, scale=grades, overlap=overlap, seed=seed)
        if text is not None:
            store.set_guidelines(text)
        app = create_app(db, pages=pages)
    except BaseException:
        listener.close()
        raise
    listener.listen(128)
    bound = listener.getsockname()[1]
    links = {name: rater_url(host, bound, token) for name, token in store.raters().items()}
    return Session(store, app, listener, host, bound, links)


@dataclass(frozen=True)
class Export:
    """A judgments database's labels (``labels``: every rater's), one grade per item
    (``grades``) and the disputed items the adjudicator has not graded (``left_out``)."""

    labels: list[Label]
    grades: list[Resolved]
    left_out: list[tuple[str, str]]


def export_labels(
    db: str | os.PathLike[str], how: str = "majority", *, adjudicator: str | None = None
) -> Export:
    """Open the database ``db`` read-only (a damaged one is an error) and resolve its labels
    to one grade per item (:func:`rankmeter.judgments.app.export.resolve`); an adjudicator
    who is not one of its raters is a :class:`PolicyError`."""
    store = Store(db, read_only=True)
    store.quick_check()
    if adjudicator is not None and how == "adjudicated":
        raters = list(store.raters())
        if adjudicator not in raters:
            raise PolicyError(
                f"--adjudicator {adjudicator!r} is not a rater of this database (its raters: "
                f"{', '.join(raters)})"
            )
    given = store.labels()
    grades = resolve(given, how, adjudicator=adjudicator)
    left_out = unadjudicated(given, adjudicator) if adjudicator is not None else []
    return Export(given, grades, left_out)
