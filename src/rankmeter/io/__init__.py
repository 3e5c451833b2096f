"""Readers and writers for qrels and runs.

Formats: TREC (whitespace separated; qrels ``qid iter docid grade``, runs ``qid Q0 docid rank
score tag``; comments and extra run fields as trec_eval reads them), CSV/TSV with a header, JSON
lines, Parquet; any of them gzip-compressed; ``-`` reads standard input. An input may be a FIFO
or a process substitution (``/dev/fd/N``): every input is read once, as a stream. Column names for tables: ``query_id`` (or qid, query-id), ``doc_id`` (or docid,
corpus-id, docno), ``relevance`` (or rel, grade, label, score) for qrels and ``score`` for runs.
"""

from __future__ import annotations

import os

from rankmeter.data import Qrels, Run
from rankmeter.io._source import FORMATS, Source
from rankmeter.io.beir import read_corpus
from rankmeter.io.tables import qrels_from_table, read_table, run_from_table
from rankmeter.io.trec import read_trec_qrels, read_trec_run, trec_run_lines

__all__ = ["FORMATS", "read_corpus", "read_qrels", "read_run", "trec_run_text", "write_trec_run"]


def read_qrels(path: str | os.PathLike[str], *, format: str | None = None) -> Qrels:
    """Read qrels from a file (``"-"`` for standard input); the format is detected unless given."""
    source = Source(path)
    fmt = source.detect_format(format)
    if fmt == "trec":
        return read_trec_qrels(source)
    table, origin = read_table(source, fmt)
    return qrels_from_table(table, origin)


def read_run(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    format: str | None = None,
    ties: str = "trec_eval",
) -> Run:
    """Read a run from a file (``"-"`` for standard input); the format is detected unless given.

    The name defaults to the TREC tag (or a run/name column), else the file name.
    """
    from rankmeter.data.run import check_ties
    from rankmeter.io.tables import default_run_name

    check_ties(ties)
    source = Source(path)
    fmt = source.detect_format(format)
    if fmt == "trec":
        return read_trec_run(source, name=name, ties=ties)
    table, origin = read_table(source, fmt)
    if name is None and not any(
        c.lower() in ("run", "name", "tag", "system") for c in table.column_names
    ):
        name = default_run_name(source.name)
    return run_from_table(table, origin, name=name, ties=ties)


def trec_run_text(run: Run) -> str:
    """The run in TREC format, one ``qid Q0 docid rank score tag`` line per result, queries in
    natural order, exactly as :func:`write_trec_run` writes it.

    >>> print(trec_run_text(Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9}}, name="my run")), end="")
    q1 Q0 d2 1 0.9 my_run
    q1 Q0 d1 2 0.5 my_run
    """
    return "".join(trec_run_lines(run))


def write_trec_run(run: Run, path: str | os.PathLike[str]) -> None:
    """Write a run in TREC format (see :func:`trec_run_text`), atomically (a temporary file
    renamed into place)."""
    from rankmeter.io._atomic import atomic_write

    with atomic_write(path) as handle:
        handle.writelines(trec_run_lines(run))
