"""Explanations with the documents' texts: what ``rankmeter explain --corpus`` shows.

:func:`explain_files` explains one query of a run from files as
:meth:`rankmeter.Explanations.for_files` does and, given a corpus, reads the texts of the
query's ranked and judged documents from it (one streaming pass that keeps only those:
:func:`rankmeter.io.beir.read_documents`). The result, :class:`ExplanationsWithText`, is the
same sequence of explanations with

- each ranked document's title and text (``None`` where the corpus lacks the document);
- for each metric, the judged-relevant documents it does not see (:class:`MissedDocument`):
  those the run does not have, and those ranked below the metric's cutoff, best grade first.

It is data (``to_dict``: the explanations' JSON with ``title``/``text`` in each row, a
``missed`` list per metric and the corpus's name); :mod:`rankmeter.report.explanation` renders
it, the texts escaped for each format.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "corpus.jsonl").write_text(
...     '{"_id": "a", "title": "Wings", "text": "flutter of wings"}\\n'
...     '{"_id": "c", "title": "Heat", "text": "conduction"}\\n')
>>> _ = (folder / "qrels").write_text("q1 0 a 1\\nq1 0 c 2\\n")
>>> _ = (folder / "run").write_text("q1 Q0 a 1 0.9 r\\nq1 Q0 b 2 0.8 r\\n")
>>> explained = explain_files(folder / "qrels", folder / "run", "q1", "P@2",
...                           corpus=folder / "corpus.jsonl")
>>> explained.document("a")
Document(title='Wings', text='flutter of wings')
>>> [(m.doc, m.grade, m.where) for m in explained.missed[0]]
[('c', 2, 'not in the run')]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from rankmeter.errors import PolicyError
from rankmeter.explanation import Explanation, Explanations

if TYPE_CHECKING:
    from rankmeter.io.beir import Document

__all__ = ["ExplanationsWithText", "MissedDocument", "explain_files"]


@dataclass(frozen=True)
class MissedDocument:
    """A judged-relevant document of the query that a metric does not see.

    Attributes
    ----------
    doc : the document id
    grade : its grade in the qrels
    rank : its rank in the run, below the metric's cutoff; None when the run does not have it
    cutoff : the ranks the metric reads (the top ``cutoff``), when it has one
    document : its title and text; None when the corpus does not have it
    """

    doc: str
    grade: float
    rank: int | None = None
    cutoff: int | None = None
    document: Document | None = None

    @property
    def where(self) -> str:
        """``"not in the run"``, or ``"ranked 14, below the cutoff of 10"``."""
        if self.rank is None:
            return "not in the run"
        return f"ranked {self.rank}, below the cutoff of {self.cutoff}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready): ``doc``, ``grade``, ``rank``, ``where``, ``title``,
        ``text`` (title and text null when the corpus lacks the document)."""
        return {
            "doc": self.doc,
            "grade": self.grade,
            "rank": self.rank,
            "where": self.where,
            **_texts(self.document),
        }


@dataclass(frozen=True)
class ExplanationsWithText(Explanations):
    """:class:`~rankmeter.Explanations` of a query of a run, with its documents' texts.

    Attributes (besides those of :class:`~rankmeter.Explanations`)
    ----------
    documents : mapping
        ``{doc_id: Document}`` of the query's ranked and judged-relevant documents found in
        the corpus (a document the corpus lacks is not there: :meth:`document` gives None).
    missed : tuple
        One tuple of :class:`MissedDocument` per explanation, in the same order: the
        judged-relevant documents its metric does not see, best grade first (equal grades in
        doc id order).
    corpus : str or None
        The corpus read (its path).
    """

    documents: Mapping[str, Document] = field(default_factory=dict)
    missed: tuple[tuple[MissedDocument, ...], ...] = ()
    corpus: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", dict(self.documents))
        missed = tuple(tuple(m) for m in self.missed)
        if not missed:  # made by a constructor that reads no corpus: nothing known missed
            missed = tuple(() for _ in self.explanations)
        if len(missed) != len(self.explanations):
            raise PolicyError(
                f"missed= needs one tuple per explanation: {len(self.explanations)}, "
                f"not {len(missed)}"
            )
        object.__setattr__(self, "missed", missed)

    def document(self, doc: str | None) -> Document | None:
        """The title and text of ``doc``; None when the corpus lacks it."""
        return None if doc is None else self.documents.get(doc)

    def to_dict(self) -> dict[str, Any]:
        """:meth:`Explanations.to_dict`, every field as there, with ``title`` and ``text`` in
        each row (null for a document the corpus lacks), a ``missed`` list in each metric's
        explanation, and the ``corpus``."""
        out = super().to_dict()
        out["corpus"] = self.corpus
        for explanation, missed in zip(self.explanations, self.missed, strict=True):
            entry = explanation.to_dict()
            entry["rows"] = [
                {**row, **_texts(self.document(row.get("doc")))} for row in entry["rows"]
            ]
            entry["missed"] = [m.to_dict() for m in missed]
            out["metrics"][explanation.metric] = entry
        return out


def explain_files(
    qrels: Any,
    run: Any,
    query: str,
    metrics: Any = None,
    *,
    corpus: str | os.PathLike[str] | None = None,
    queries: str | os.PathLike[str] | None = None,
    pool: str | os.PathLike[str] | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    **policies: Any,
) -> Explanations:
    """Explain one query of a run from files, as ``rankmeter explain`` does.

    The qrels are read as :func:`rankmeter.evaluate` reads them: with their subtopics where a
    diversity metric is asked (:func:`rankmeter.metrics.reads_subtopics`), and with ``pool``
    each judgment's inclusion probability (:func:`rankmeter.io.sampled_qrels`), which
    statAP, stat_nDCG and stat_P weigh by. Without ``corpus`` the result is an
    :class:`Explanations`. With ``corpus`` (BEIR ``corpus.jsonl``, ``{"_id", "title", "text"}``
    a line, possibly gzip-compressed) it is an :class:`ExplanationsWithText`: the texts of the
    documents ranked and of the judged-relevant ones, read in one pass that keeps only those,
    and the relevant documents each metric misses.

    Parameters
    ----------
    qrels, run : paths (``NAME=PATH`` names the run; one of them may be ``"-"``, stdin)
    query : the query id
    metrics : metric names (default: nDCG@10, P@10, R@100, RR, AP)
    corpus : the corpus file (or a BEIR collection's folder, holding ``corpus.jsonl``); None:
        no texts
    queries : query texts (TSV ``qid<TAB>text`` or BEIR ``queries.jsonl``)
    pool : the pool file ``rankmeter pool`` wrote, where the judgments are a sample of it
        (``explain --pool``); None: every judgment made in full
    qrels_format, run_format : the files' formats when their names do not say
    policies : ``rel``, ``judged_only``, ``ties``, as in :func:`rankmeter.evaluate`
    """
    from rankmeter.io import as_run, read_documents, read_qrels, sampled_qrels
    from rankmeter.io.annotations import read_queries
    from rankmeter.io.beir import corpus_file
    from rankmeter.io.run_args import input_path, read_one_run
    from rankmeter.metrics import pool_notes, reads_subtopics

    if queries is not None:
        queries = input_path(queries, "queries")
    corpus_path = None
    if corpus is not None:  # a folder: its corpus (a folder without one is told now)
        corpus_path = os.fspath(corpus_file(input_path(corpus, "corpus")))
    pool_path = None if pool is None else input_path(pool, "pool")
    paths = [input_path(qrels, "qrels"), run, corpus_path, queries, pool_path]
    if paths.count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    ties = policies.get("ties", "trec_eval")
    loaded_qrels = read_qrels(paths[0], format=qrels_format, subtopics=reads_subtopics(metrics))
    if pool_path is not None:
        loaded_qrels = sampled_qrels(loaded_qrels, pool_path)
    loaded_run = read_one_run(run, format=run_format, ties=ties)
    text = None if queries is None else read_queries(queries).get(query)
    explained = Explanations.for_query(
        loaded_qrels, loaded_run, query, metrics, query_text=text, **policies
    )
    told = pool_notes(loaded_qrels, metrics)
    if told and explained.explanations:  # told once, under the first metric
        first = explained.explanations[0]
        explained = replace(
            explained,
            explanations=(replace(first, notes=first.notes + told), *explained.explanations[1:]),
        )
    if corpus_path is None:
        return explained
    judgments = _judgments(loaded_qrels, explained.query)
    ranking = [
        str(d)
        for d in as_run(loaded_run, ties=ties).subset([query]).doc_ids(slice(None)).to_pylist()
    ]
    if policies.get("judged_only"):  # trec_eval -J: ranks count the judged documents only
        ranking = [d for d in ranking if d in judgments]
    rels = [_rel(e, explained.policies) for e in explained]
    wanted = {str(row["doc"]) for e in explained for row in e.rows if row.get("doc") is not None}
    wanted.update(d for d, g in judgments.items() if rels and g >= min(rels))
    documents = read_documents(corpus_path, wanted)
    rank_of = {doc: i + 1 for i, doc in reversed(list(enumerate(ranking)))}
    missed = tuple(
        _missed(judgments, rank_of, rel, e.cutoff, documents)
        for e, rel in zip(explained, rels, strict=True)
    )
    base = {f.name: getattr(explained, f.name) for f in fields(Explanations)}
    return ExplanationsWithText(
        **base,
        documents=documents,
        missed=missed,
        corpus="<stdin>" if corpus_path == "-" else corpus_path,
    )


def _judgments(qrels: Any, query: str | None) -> dict[str, float]:
    """doc id -> grade of the query's judgments (none when the qrels lack the query)."""
    row = qrels.query_rows().get(query)
    if row is None:
        return {}
    start, stop = int(qrels.offsets[row]), int(qrels.offsets[row + 1])
    docs = qrels.doc_ids(slice(start, stop)).to_pylist()
    return dict(zip(map(str, docs), qrels.grades[start:stop].tolist(), strict=True))


def _rel(explanation: Explanation, policies: Mapping[str, Any]) -> float:
    """The grade from which a judged document is relevant to the explanation's metric: the
    metric's own ``rel`` if given, else the evaluation's."""
    from rankmeter.metrics import parse_metric

    metric = parse_metric(explanation.metric)
    own = metric.get("rel") if metric.spec.param("rel") else None
    return float(policies.get("rel", 1) if own is None else own)


def _missed(
    judgments: Mapping[str, float],
    rank_of: Mapping[str, int],
    rel: float,
    cutoff: int | None,
    documents: Mapping[str, Document],
) -> tuple[MissedDocument, ...]:
    out = []
    for doc, grade in sorted(judgments.items(), key=lambda item: (-item[1], item[0])):
        if grade < rel:
            continue
        rank = rank_of.get(doc)
        if rank is not None and (cutoff is None or rank <= cutoff):
            continue  # the metric sees it
        out.append(MissedDocument(doc, _plain(grade), rank, cutoff, documents.get(doc)))
    return tuple(out)


def _texts(document: Document | None) -> dict[str, str | None]:
    if document is None:
        return {"title": None, "text": None}
    return {"title": document.title, "text": document.text}


def _plain(value: float) -> Any:
    """A grade as the qrels give it: int when integral."""
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value
