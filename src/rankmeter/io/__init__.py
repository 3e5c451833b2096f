"""Readers and writers for qrels and runs, and the one front door that turns any input into them.

Formats: TREC (whitespace separated; qrels ``qid iter docid grade``, runs ``qid Q0 docid rank
score tag``; comments and extra run fields as trec_eval reads them), CSV/TSV with a header, JSON
lines, Parquet; any of them gzip-compressed; ``-`` reads standard input. An input may be a FIFO
or a process substitution (``/dev/fd/N``): every input is read once, as a stream. Column names for tables: ``query_id`` (or qid, query-id), ``doc_id`` (or docid,
corpus-id, docno), ``relevance`` (or rel, grade, label, score) for qrels and ``score`` for runs.

:func:`as_qrels` and :func:`as_run` take anything rankmeter accepts (a path, ``"-"``, a dict
``{query: {doc: value}}``, a pandas or polars DataFrame, an Arrow table, or a Qrels/Run) and give
the data object; every function that takes qrels or runs goes through them. The data classes
themselves (:mod:`rankmeter.data`) read nothing.

>>> from rankmeter.io import as_qrels, as_run
>>> as_qrels({"q1": {"d1": 1, "d2": 0}})
Qrels(1 queries, 2 judgments)
>>> as_run({"q1": {"d1": 0.5, "d2": 0.9}}, name="bm25").ranking("q1")
['d2', 'd1']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, TextIO

from rankmeter.data import Qrels, Run
from rankmeter.data.run import check_ties, unique_names
from rankmeter.errors import FormatError, PolicyError
from rankmeter.io._json import lone_surrogate
from rankmeter.io._source import FORMATS, Source
from rankmeter.io.beir import read_corpus, read_documents
from rankmeter.io.labels import as_labels, read_labels
from rankmeter.io.pool import read_pool, sampled_qrels
from rankmeter.io.tables import (
    default_run_name,
    frame_table,
    qrels_from_table,
    read_table,
    run_from_table,
)
from rankmeter.io.trec import (
    TREC_ID_RULE,
    read_trec_qrels,
    read_trec_run,
    trec_id_writable,
    trec_qrels_lines,
    trec_run_lines,
    trec_run_tag,
)

__all__ = [
    "FORMATS",
    "TREC_ID_RULE",
    "as_labels",
    "as_qrels",
    "as_run",
    "atomic_write",
    "atomic_write_bytes",
    "check_outputs",
    "check_target",
    "load_runs",
    "lone_surrogate",
    "read_corpus",
    "read_documents",
    "read_labels",
    "read_pool",
    "read_qrels",
    "read_run",
    "same_target",
    "sampled_qrels",
    "trec_id_writable",
    "trec_qrels_text",
    "trec_run_tag",
    "trec_run_text",
    "write_trec_qrels",
    "write_trec_run",
]


def read_qrels(
    path: str | os.PathLike[str], *, format: str | None = None, subtopics: bool = False
) -> Qrels:
    """Read qrels from a file (``"-"`` for standard input); the format is detected unless given.

    TREC (``qid 0 docid grade``), CSV/TSV with a header, JSONL or Parquet; ``.gz`` compressed.
    ``format`` overrides the detection (``"trec"``, ``"csv"``, ``"tsv"``, ``"jsonl"``,
    ``"parquet"``). ``subtopics``: a TREC file's second column is each line's subtopic, as
    the diversity metrics read it (``qid subtopic docid grade``; a document judged for
    several subtopics on several lines; see :meth:`Qrels.from_subtopic_columns`), and so is a
    table's ``subtopic`` (or ``iteration``) column where it has one.
    """
    source = Source(path, role="qrels")
    fmt = source.detect_format(format)
    if fmt == "trec":
        return read_trec_qrels(source, subtopics=subtopics)
    table, origin = read_table(source, fmt)
    return qrels_from_table(table, origin, subtopics=subtopics)


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
    check_ties(ties)
    source = Source(path, role="run")
    fmt = source.detect_format(format)
    if fmt == "trec":
        return read_trec_run(source, name=name, ties=ties)
    table, origin = read_table(source, fmt)
    if name is None and not any(
        c.lower() in ("run", "name", "tag", "system") for c in table.column_names
    ):
        name = default_run_name(source.name)
    return run_from_table(table, origin, name=name, ties=ties)


def as_qrels(value: Any, *, subtopics: bool = False) -> Qrels:
    """Qrels from any supported input: a Qrels (returned as is), a path or ``"-"`` (read by
    :func:`read_qrels`, ``subtopics`` passed on), a dict ``{query: {doc: grade}}``, a pandas or
    polars DataFrame or an Arrow table (columns query_id, doc_id, relevance; aliases accepted).

    Raises FormatError for anything else, saying what is accepted.
    """
    if isinstance(value, Qrels):
        return value
    if isinstance(value, (str, os.PathLike)):
        return read_qrels(value, subtopics=subtopics)
    if isinstance(value, Mapping):
        return Qrels.from_dict(value)
    table = frame_table(value)
    if table is not None:
        return qrels_from_table(*table, subtopics=subtopics)
    raise FormatError(
        "<qrels>",
        f"cannot use a {type(value).__name__} as qrels; give a path, a dict "
        "{query: {doc: grade}}, a pandas/polars DataFrame, an Arrow table or a Qrels",
    )


def as_run(value: Any, *, name: str | None = None, ties: str = "trec_eval") -> Run:
    """A Run from any supported input: a Run (ranked under ``ties``, renamed if ``name`` is
    given), a path or ``"-"`` (read by :func:`read_run`), a dict ``{query: {doc: score}}``, a
    pandas or polars DataFrame or an Arrow table (columns query_id, doc_id, score).

    ``name`` defaults to the file's (see :func:`read_run`), else ``"run"``. Raises FormatError
    for anything else, saying what is accepted.
    """
    if isinstance(value, Run):
        run = value.with_ties(ties)
        return run if name is None else run.renamed(name)
    if isinstance(value, (str, os.PathLike)):
        return read_run(value, name=name, ties=ties)
    if isinstance(value, Mapping):
        return Run.from_dict(value, name=name or "run", ties=ties)
    table = frame_table(value)
    if table is not None:
        return run_from_table(*table, name=name or "run", ties=ties)
    raise FormatError(
        "<run>",
        f"cannot use a {type(value).__name__} as a run; give a path, a dict "
        "{query: {doc: score}}, a pandas/polars DataFrame, an Arrow table or a Run",
    )


def load_runs(runs: Mapping[str, Any] | Iterable[Any], *, ties: str = "trec_eval") -> list[Run]:
    """Several runs, each loaded by :func:`as_run`: a list of them, or ``{name: run}`` (the
    keys name the runs). Runs that share a name are told apart by their files, else by a
    number (:func:`rankmeter.data.run.unique_names`).

    Raises PolicyError when no run is given.
    """
    if isinstance(runs, Mapping):
        loaded = [as_run(v, name=str(k), ties=ties) for k, v in runs.items()]
    else:
        loaded = [as_run(v, ties=ties) for v in runs]
    if not loaded:
        raise PolicyError("no runs given")
    names = unique_names([r.name for r in loaded], [r.source for r in loaded])
    return [r if r.name == n else r.renamed(n) for r, n in zip(loaded, names, strict=True)]


def trec_run_text(run: Run) -> str:
    """The run in TREC format, one ``qid Q0 docid rank score tag`` line per result, queries in
    natural order, exactly as :func:`write_trec_run` writes it.

    >>> print(trec_run_text(as_run({"q1": {"d1": 0.5, "d2": 0.9}}, name="my run")), end="")
    q1 Q0 d2 1 0.9 my_run
    q1 Q0 d1 2 0.5 my_run
    """
    return "".join(trec_run_lines(run))


def write_trec_run(run: Run, path: str | os.PathLike[str]) -> None:
    """Write a run in TREC format (see :func:`trec_run_text`), atomically (a temporary file
    renamed into place)."""
    with atomic_write(path) as handle:
        handle.writelines(trec_run_lines(run))


def trec_qrels_text(qrels: Qrels) -> str:
    """The qrels in TREC format, one ``qid 0 docid grade`` line per judgment, as
    :func:`write_trec_qrels` writes them (an id with whitespace is an error: TREC cannot hold
    it).

    >>> print(trec_qrels_text(as_qrels({"q1": {"d2": 3, "d1": 0}, "q2": {"d1": 1}})), end="")
    q1 0 d2 3
    q1 0 d1 0
    q2 0 d1 1
    """
    return "".join(trec_qrels_lines(qrels))


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    """Write qrels in TREC format (see :func:`trec_qrels_text`), atomically; every line is
    made before the file is touched, so a bad id leaves the target as it was."""
    text = trec_qrels_text(qrels)
    with atomic_write(path) as handle:
        handle.write(text)


def atomic_write(path: str | os.PathLike[str]) -> AbstractContextManager[TextIO]:
    """A text handle (UTF-8, ``\\n`` line ends) whose contents replace ``path`` only when the
    ``with`` block succeeds: nothing half-written, ever. Every file rankmeter writes goes
    through it.

    A regular file is written to a temporary file beside it, then renamed over it (keeping
    its permissions); FIFOs, character devices (``/dev/null``) and ``/dev/stdout`` or
    ``/dev/fd/N`` are written in place; a read-only file, a directory, a block device or a
    socket is refused. A failure raises FormatError naming the path and leaves an existing
    file untouched.
    """
    from rankmeter.io._atomic import atomic_write as write

    return write(path)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` (a binary file: Parquet) to ``path`` as :func:`atomic_write` writes text:
    a temporary file beside it renamed over it, FIFOs and devices in place, a failure raising
    FormatError and leaving an existing file untouched."""
    with atomic_write(path) as handle:
        handle.flush()  # nothing is buffered as text: the bytes go straight to the file
        handle.buffer.write(data)


def check_target(path: str | os.PathLike[str]) -> None:
    """Raise now the :class:`~rankmeter.errors.FormatError` that :func:`atomic_write` would
    raise for ``path``: outputs are checked before any work, so that an hour of work is not
    lost to a read-only file or a missing directory. Nothing is created."""
    from rankmeter.io._atomic import check_target as check

    check(path)


def check_outputs(
    outputs: Sequence[tuple[str, str | os.PathLike[str]]],
    inputs: Mapping[str, object] | None = None,
) -> None:
    """Check every output of one piece of work before it starts: each target as
    :func:`check_target` checks it, no two of them the same file (:func:`same_target`: the
    second write would replace the first), and none of them one of the work's ``inputs`` (the
    write would replace what was read: ``rankmeter evaluate qrels a.run -o a.run`` would lose
    the run). ``outputs`` are ``(name, path)`` pairs, the name saying in the message which
    output it is (a command line's option: ``-o``, ``--run-out``); ``inputs`` map a name to
    what was given as it: a path, a run's ``NAME=PATH``, a list of them, or anything else (a
    ``Qrels``, a mapping, None), which is no file. A BEIR folder stands for its files
    (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``). One file is one file under any
    name: after links and ``..``, and a hard link.

    >>> check_outputs([("-o", "/nonexistent-dir/out.json")])
    Traceback (most recent call last):
    ...
    rankmeter.errors.FormatError: /nonexistent-dir/out.json: cannot write: No such file or directory
    >>> check_outputs([("-o", "a.json"), ("--report", "./a.json")])
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: -o a.json and --report ./a.json are the same file: give each output its own
    >>> check_outputs([("-o", "a.run")], inputs={"RUNS": ["bm25=./a.run"]})
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: -o a.run is also an input (RUNS bm25=./a.run): writing it would replace what was read; give the output another name
    """
    for _, path in outputs:
        check_target(path)
    for name, path in outputs:
        _not_an_input(name, path, inputs or {})
    for at, (name, path) in enumerate(outputs):
        for earlier_name, earlier in outputs[:at]:
            if same_target(earlier, path):
                raise PolicyError(
                    f"{earlier_name} {os.fspath(earlier)} and {name} {os.fspath(path)} are the "
                    "same file: give each output its own"
                )


def _not_an_input(name: str, output: str | os.PathLike[str], inputs: Mapping[str, object]) -> None:
    """Refuse ``output`` where it is one of ``inputs``' files (see :func:`check_outputs`)."""
    if os.fspath(output) == "-":
        return
    for what, given in inputs.items():
        texts = [given] if isinstance(given, (str, os.PathLike)) else given
        if isinstance(texts, Mapping):  # runs by name: {"bm25": "a.run"}
            texts = list(texts.values())
        if not isinstance(texts, (list, tuple)):
            continue  # an object given in place of a file: nothing to overwrite
        for text in texts:
            if isinstance(text, (str, os.PathLike)) and any(
                same_target(output, file) for file in _input_files(text)
            ):
                raise PolicyError(
                    f"{name} {os.fspath(output)} is also an input ({what} {os.fspath(text)}): "
                    "writing it would replace what was read; give the output another name"
                )


def _input_files(given: str | os.PathLike[str]) -> list[str]:
    """The files an input names: itself, the path of a run's ``NAME=PATH``, the files read
    from a folder (a BEIR folder's, a log folder's Parquet, a results folder's JSON; a run
    written there before is not one of them); ``-`` (standard input) none."""
    import glob

    text = os.fspath(given)
    paths = [text]
    if "=" in text and not os.path.exists(text):
        paths.append(text.partition("=")[2])
    files = []
    for path in paths:
        if path in ("", "-"):
            continue
        if os.path.isdir(path):
            names = ("corpus.jsonl", "corpus.jsonl.gz", "queries.jsonl", "queries.jsonl.gz")
            files += [os.path.join(path, n) for n in names]
            for pattern in ("qrels/*", "*.json", "*.parquet", "*.pq"):
                files += sorted(glob.glob(os.path.join(glob.escape(path), pattern)))
        else:
            files.append(path)
    return files


def same_target(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two output paths write the same file (after links and ``..``; one file under
    two names; one descriptor): a command refuses two outputs that would overwrite each
    other."""
    from rankmeter.io._atomic import same_target as same

    return same(first, second)
