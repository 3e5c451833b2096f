"""Two runs side by side, query by query: :func:`diff_runs` -> :class:`RunDiff`.

For every query judged in the qrels and answered by either run: the value of one metric for
run A and for run B and its change, and the top ``depth`` results of each run with their
grades and how each document moved from A to B (up or down by how many ranks, new in B,
dropped from A). The queries come ordered by the change, the largest loss first. With a
corpus, the shown documents' titles and texts are read (only those ids, in one streaming
pass); with query texts, each query carries its text.

A RunDiff is data (``to_dict``: a documented, stable shape); :mod:`rankmeter.report.diff`
renders it as a self-contained HTML page, text, Markdown or JSON.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    from rankmeter.data import Run
    from rankmeter.io.beir import Document

__all__ = ["DIFF_SHAPE", "DiffRow", "QueryDiff", "RunDiff", "diff_runs", "diffs_against"]

#: The name and version of :meth:`RunDiff.to_dict`'s shape, written in it as ``"shape"``.
DIFF_SHAPE = "rankmeter.diff/1"

#: How a document moved from run A to run B (see :class:`DiffRow`).
MOVES = ("up", "down", "same", "new", "dropped")


@dataclass(frozen=True)
class DiffRow:
    """One result in one run's top ``depth``, and where it is in the other run.

    Attributes
    ----------
    rank : its rank in this run (1 = first)
    doc : the document id
    grade : its grade in the qrels for this query (None: not judged)
    other_rank : its rank in the other run's whole ranking (None: the other run does not
        have it)
    move : how it moved from A to B: ``"up"`` or ``"down"`` (by ``by`` ranks), ``"same"``,
        ``"new"`` (a row of B that A does not have) or ``"dropped"`` (a row of A that B does
        not have)
    by : how many ranks it moved (0 for same, new and dropped)
    """

    rank: int
    doc: str
    grade: float | None
    other_rank: int | None
    move: str
    by: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "doc": self.doc,
            "grade": _number(self.grade),
            "other_rank": self.other_rank,
            "move": self.move,
            "by": self.by,
        }


@dataclass(frozen=True)
class QueryDiff:
    """One query: both runs' values and rankings.

    Attributes
    ----------
    query : the query id
    text : its text (None: no texts were given, or none for it)
    value_a, value_b : the metric's value for run A and for run B (a run without results
        for the query scores as an empty ranking, as trec_eval -c does)
    delta : ``value_b - value_a``
    a, b : the top ``depth`` results of each run (empty: no results)
    """

    query: str
    text: str | None
    value_a: float
    value_b: float
    delta: float
    a: tuple[DiffRow, ...]
    b: tuple[DiffRow, ...]

    @property
    def moved(self) -> int:
        """How many of B's shown results are new or sit at another rank than in A."""
        return sum(row.move != "same" for row in self.b)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "text": self.text,
            "a": _number(self.value_a),
            "b": _number(self.value_b),
            "delta": _number(self.delta),
            "ranking_a": [row.to_dict() for row in self.a],
            "ranking_b": [row.to_dict() for row in self.b],
        }


@dataclass(frozen=True)
class RunDiff:
    """Two runs compared query by query (:func:`diff_runs`).

    Attributes
    ----------
    metric : the metric's name as asked for
    depth : how many results of each run are shown per query
    run_a, run_b : the runs' names (B is compared with A: a positive delta is B's gain, a
        negative one where lower is better)
    queries : the queries, the largest loss of B first (equal deltas in the qrels' order)
    documents : ``{doc_id: Document}`` for the shown documents found in the corpus (empty
        without a corpus)
    notes : what the diff left out or could not find, one line each
    better : which way the metric is better, its spec's ``better``: ``"higher"``, or
        ``"lower"`` (RBP_resid: a query B is lower on is a win, the largest rise comes first)
    geometric : the metric's per-query values are logarithms (GMAP: ln AP, as trec_eval's
        gm_map): each delta is ln(B's AP / A's AP), and the means are geometric means
    """

    metric: str
    depth: int
    run_a: str
    run_b: str
    queries: tuple[QueryDiff, ...]
    documents: Mapping[str, Document] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = ()
    better: str = "higher"
    geometric: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", MappingProxyType(dict(self.documents)))

    @property
    def mean_a(self) -> float:
        """A's mean (for GMAP the geometric mean: exp of the mean log)."""
        return self._shown_mean(_mean([q.value_a for q in self.queries]))

    @property
    def mean_b(self) -> float:
        """B's mean (for GMAP the geometric mean: exp of the mean log)."""
        return self._shown_mean(_mean([q.value_b for q in self.queries]))

    @property
    def mean_delta(self) -> float:
        """The mean of the deltas: ``mean_b - mean_a``; for GMAP the difference of the mean
        logs, ln(mean_b / mean_a)."""
        return _mean([q.delta for q in self.queries])

    def _shown_mean(self, mean: float) -> float:
        return math.exp(mean) if self.geometric and mean == mean else mean

    def gain(self, delta: float) -> float:
        """A delta turned so that positive is B's gain (negated where lower is better)."""
        return -delta if self.better == "lower" else delta

    @property
    def wins(self) -> int:
        """Queries where B is better than A (higher; lower where lower is better)."""
        return sum(self.gain(q.delta) > 0 for q in self.queries)

    @property
    def ties(self) -> int:
        return sum(q.delta == 0 for q in self.queries)

    @property
    def losses(self) -> int:
        """Queries where B is worse than A (lower; higher where lower is better)."""
        return sum(self.gain(q.delta) < 0 for q in self.queries)

    def query(self, query_id: str) -> QueryDiff:
        """The diff of one query; a KeyError naming it when it is not in the diff."""
        for q in self.queries:
            if q.query == query_id:
                return q
        raise KeyError(query_id)

    def to_dict(self) -> dict[str, Any]:
        """The diff without the documents' texts, in the shape :data:`DIFF_SHAPE` names:

        ``{"shape", "metric", "better", "depth", "run_a", "run_b", "n_queries", "mean_a",
        "mean_b", "mean_delta", "wins", "ties", "losses", "notes", "queries": [{"query", "text", "a",
        "b", "delta", "ranking_a": [{"rank", "doc", "grade", "other_rank", "move", "by"}],
        "ranking_b": [...]}]}``; the queries the largest loss first, numbers as numbers (NaN
        as null), a grade null when the document is not judged, ``other_rank`` null when the
        other run does not have the document.
        """
        return {
            "shape": DIFF_SHAPE,
            "metric": self.metric,
            "better": self.better,
            "depth": self.depth,
            "run_a": self.run_a,
            "run_b": self.run_b,
            "n_queries": len(self.queries),
            "mean_a": _number(self.mean_a),
            "mean_b": _number(self.mean_b),
            "mean_delta": _number(self.mean_delta),
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "notes": list(self.notes),
            "queries": [q.to_dict() for q in self.queries],
        }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _number(value: float | None) -> float | int | None:
    if value is None or value != value:
        return None
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(value)


def diff_runs(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    *,
    metric: str = "nDCG@10",
    corpus: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    queries: str | os.PathLike[str] | Mapping[str, str] | None = None,
    depth: int = 10,
    rel: float = 1,
    ties: str = "trec_eval",
    inclusion: Any = None,
) -> RunDiff:
    """Two runs side by side, query by query, the largest loss of B first.

    Parameters
    ----------
    qrels : Qrels, path or dict ``{query: {doc: grade}}`` (as :func:`rankmeter.io.as_qrels`)
    run_a, run_b : runs as :func:`rankmeter.io.as_run` takes them; a path may be given as
        ``NAME=PATH`` to name the run. B is compared with A: a positive delta is B's gain
    metric : one metric name (``"nDCG@10"``, ``"AP"``, ``"P@5"``), any that
        :func:`rankmeter.evaluate` takes: the qrels are read with their subtopics for a
        diversity metric (``alpha_nDCG@20``); a lower-is-better metric (RBP_resid) counts a
        fall as B's gain; GMAP's per-query values are logs (see :class:`RunDiff`)
    corpus : a BEIR ``corpus.jsonl`` (or the folder holding one) from which only the shown
        documents are read, or a dict ``{doc_id: text}`` (values may also be ``Document``
        objects or ``{"title": ..., "text": ...}`` dicts); None: no texts
    queries : query texts: a path (TSV ``qid<TAB>text`` or BEIR ``queries.jsonl``) or a dict
    depth : how many results of each run to show per query (at least 1)
    rel, ties : as :func:`rankmeter.evaluate` takes them
    inclusion : a sampled pool's inclusion probabilities (a pool file's path: ``diff --pool``),
        as :func:`rankmeter.evaluate` takes them, for statAP, stat_nDCG and stat_P

    Returns
    -------
    RunDiff
        Every query judged in the qrels and answered by either run; a run without results for
        a query scores as an empty ranking (trec_eval -c).

    Examples
    --------
    >>> qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
    >>> old = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"c": 1.0}}
    >>> new = {"q1": {"x": 3.0, "b": 2.0, "a": 1.0}, "q2": {"c": 2.0, "y": 1.0}}
    >>> diff = diff_runs(qrels, old, new, metric="P@1", depth=3)
    >>> [(q.query, q.delta) for q in diff.queries]
    [('q1', -1.0), ('q2', 0.0)]
    >>> [(r.doc, r.move, r.by) for r in diff.queries[0].b]
    [('x', 'up', 2), ('b', 'same', 0), ('a', 'down', 2)]
    """
    from rankmeter._validate import integer
    from rankmeter.comparison._annotations import load_texts
    from rankmeter.data.run import check_ties
    from rankmeter.evaluation import evaluate
    from rankmeter.io import as_qrels, sampled_qrels
    from rankmeter.io.beir import corpus_file
    from rankmeter.metrics import parse_metrics, pool_notes, reads_subtopics, subtopic_notes

    depth = integer("depth", depth, low=1, what="results shown per query")
    ties = check_ties(ties)
    if not isinstance(metric, str) or len(parse_metrics([metric])) != 1:
        raise PolicyError(f"metric= must be one metric name, not {metric!r}")
    (measure,) = parse_metrics([metric])
    stdin = [x for x in (qrels, run_a, run_b, corpus, queries, inclusion) if isinstance(x, str)]
    if [x for x in stdin if x == "-"][1:]:
        raise PolicyError("only one input can be read from stdin ('-')")
    if isinstance(corpus, (str, os.PathLike)):
        corpus = corpus_file(corpus)  # a folder without a corpus is told now, before the work
    loaded_qrels = sampled_qrels(as_qrels(qrels, subtopics=reads_subtopics([metric])), inclusion)
    first, second = _two_runs(run_a, run_b, ties)
    texts = load_texts(queries)
    # Every judged query gets a value (a run without results for it: an empty ranking), so a
    # query only the other run answered scores as evaluate -c scores it: 0 for most metrics,
    # 1 for RBP_resid, ln 0.00001 for GMAP.
    values = [
        _values(
            evaluate(loaded_qrels, run, [metric], rel=rel, ties=ties, include_missing=True),
            metric,
        )
        for run in (first, second)
    ]
    answered = set(first.query_ids) | set(second.query_ids)
    judged = loaded_qrels.query_ids
    shown = [q for q in judged if q in answered]
    notes = _coverage_notes(judged, answered, first, second)
    notes += subtopic_notes(loaded_qrels, [metric]) + pool_notes(loaded_qrels, [metric])
    geometric = measure.spec.aggregate == "geometric"
    if geometric:
        notes.append(
            f"{metric}'s per-query values are logs, ln max(AP, 0.00001), as trec_eval's "
            "gm_map: each Δ is ln(B's AP / A's AP), and the means are geometric means"
        )
    lists = (_rankings(first), _rankings(second))
    judgments = _judgments(loaded_qrels)
    made = []
    for q in shown:
        a_list, b_list = lists[0].get(q, []), lists[1].get(q, [])
        grades = judgments.get(q, {})
        a_rows = _rows(a_list[:depth], b_list, grades, side="a")
        b_rows = _rows(b_list[:depth], a_list, grades, side="b")
        value_a, value_b = values[0][q], values[1][q]
        made.append(QueryDiff(q, texts.get(q), value_a, value_b, value_b - value_a, a_rows, b_rows))
    turn = -1.0 if measure.spec.better == "lower" else 1.0  # turn * delta: positive is a gain
    order = sorted(range(len(made)), key=lambda i: (turn * made[i].delta, i))
    diffs = tuple(made[i] for i in order)
    documents, missing = _documents(corpus, diffs)
    if missing:
        notes.append(
            f"{missing} shown document{'s are' if missing != 1 else ' is'} not in the corpus "
            "(shown without a text)"
        )
    return RunDiff(
        metric=metric,
        depth=depth,
        run_a=first.name,
        run_b=second.name,
        queries=diffs,
        documents=documents,
        notes=tuple(notes),
        better=measure.spec.better,
        geometric=geometric,
    )


def diffs_against(
    qrels: Any,
    runs: Mapping[str, Any],
    baseline: str,
    systems: Sequence[str],
    *,
    metric: str,
    corpus: Any,
    queries: Any = None,
    depth: int = 10,
    rel: float = 1,
    ties: str = "trec_eval",
    inclusion: Any = None,
) -> tuple[RunDiff, ...]:
    """Each system diffed against the baseline (the baseline as A), the corpus read once for
    all of them: what ``rankmeter compare --corpus`` links its worst queries to."""
    import dataclasses

    from rankmeter.comparison._annotations import load_texts
    from rankmeter.io import as_run

    texts = load_texts(queries)
    made = [
        diff_runs(
            qrels,
            as_run(runs[baseline], name=baseline, ties=ties),
            as_run(runs[s], name=s, ties=ties),
            metric=metric,
            queries=texts,
            depth=depth,
            rel=rel,
            ties=ties,
            inclusion=inclusion,
        )
        for s in systems
    ]
    documents, _ = _documents(corpus, [q for d in made for q in d.queries])
    out = []
    for d in made:
        shown = {row.doc for q in d.queries for row in (*q.a, *q.b)}
        missing = len(shown - set(documents))
        notes = d.notes + (
            (
                f"{missing} shown document{'s are' if missing != 1 else ' is'} not in the corpus "
                "(shown without a text)",
            )
            if missing
            else ()
        )
        kept = {k: v for k, v in documents.items() if k in shown}
        out.append(dataclasses.replace(d, documents=kept, notes=notes))
    return tuple(out)


def _two_runs(run_a: Any, run_b: Any, ties: str) -> tuple[Run, Run]:
    """Both runs loaded, named (``NAME=PATH`` names a path), their names told apart."""
    from rankmeter.io import as_run
    from rankmeter.io.run_args import read_one_run

    loaded = [
        read_one_run(run, ties=ties)
        if isinstance(run, (str, os.PathLike))
        else as_run(run, ties=ties)
        for run in (run_a, run_b)
    ]
    first, second = loaded
    if first.name == second.name:
        first, second = first.renamed(f"{first.name} (A)"), second.renamed(f"{second.name} (B)")
    return first, second


def _values(result: Any, metric: str) -> dict[str, float]:
    """``{query: value}`` of one run's evaluation (judged queries it answered)."""
    column = result.per_query[metric]
    return {q: float(v) for q, v in zip(result.per_query.query_ids, column, strict=True)}


def _coverage_notes(
    judged: Sequence[str], answered: set[str], first: Run, second: Run
) -> list[str]:
    notes = []
    judged_set = set(judged)
    unjudged = len(answered - judged_set)
    if unjudged:
        notes.append(
            f"{unjudged} quer{'ies' if unjudged != 1 else 'y'} answered by a run but not judged "
            f"in the qrels {'are' if unjudged != 1 else 'is'} left out"
        )
    unanswered = len(judged_set - answered)
    if unanswered:
        notes.append(
            f"{unanswered} judged quer{'ies' if unanswered != 1 else 'y'} that neither run "
            f"answered {'are' if unanswered != 1 else 'is'} left out"
        )
    for run, other in ((first, second), (second, first)):
        only = len((set(other.query_ids) - set(run.query_ids)) & judged_set)
        if only:
            notes.append(
                f"{run.name} has no results for {only} judged quer"
                f"{'ies' if only != 1 else 'y'} that {other.name} answered: "
                f"{'they score' if only != 1 else 'it scores'} as an empty ranking"
            )
    return notes


def _rankings(run: Run) -> dict[str, list[str]]:
    """``{query: [doc, ...]}`` in rank order."""
    docs = [str(d) for d in run.doc_ids(slice(None)).to_pylist()]
    offsets = run.offsets.tolist()
    return {str(q): docs[offsets[i] : offsets[i + 1]] for i, q in enumerate(run.segment_ids)}


def _judgments(qrels: Any) -> dict[str, dict[str, float]]:
    """``{query: {doc: grade}}``, negative grades too."""
    docs = [str(d) for d in qrels.doc_ids(slice(None)).to_pylist()]
    grades = qrels.grades.tolist()
    offsets = qrels.offsets.tolist()
    return {
        q: dict(
            zip(docs[offsets[i] : offsets[i + 1]], grades[offsets[i] : offsets[i + 1]], strict=True)
        )
        for i, q in enumerate(qrels.segment_ids)
    }


def _rows(
    shown: Sequence[str], other: Sequence[str], grades: Mapping[str, float], *, side: str
) -> tuple[DiffRow, ...]:
    """The rows of one run's top results; ``side`` "a" or "b" says which run they are from,
    so that the move reads from A to B either way."""
    where: dict[str, int] = {}
    for rank, doc in enumerate(other, start=1):
        where.setdefault(doc, rank)
    rows = []
    for rank, doc in enumerate(shown, start=1):
        other_rank = where.get(doc)
        if other_rank is None:
            move, by = ("dropped" if side == "a" else "new"), 0
        else:
            rank_a, rank_b = (rank, other_rank) if side == "a" else (other_rank, rank)
            by = abs(rank_a - rank_b)
            move = "same" if by == 0 else ("up" if rank_b < rank_a else "down")
        rows.append(DiffRow(rank, doc, grades.get(doc), other_rank, move, by))
    return tuple(rows)


def _documents(corpus: Any, diffs: Sequence[QueryDiff]) -> tuple[dict[str, Document], int]:
    """The shown documents' titles and texts, and how many shown ids the corpus lacks."""
    from rankmeter.io.beir import read_documents

    if corpus is None:
        return {}, 0
    wanted = {row.doc for q in diffs for row in (*q.a, *q.b)}
    if isinstance(corpus, Mapping):
        found = {str(d): _as_document(v) for d, v in corpus.items() if str(d) in wanted}
    elif isinstance(corpus, (str, os.PathLike)):
        found = read_documents(corpus, wanted)  # a BEIR folder: its corpus.jsonl
    else:
        raise PolicyError(
            f"corpus must be a path to a BEIR corpus.jsonl (or its folder) or a dict "
            f"{{doc_id: text}}, not {type(corpus).__name__}"
        )
    return found, len(wanted - set(found))


def _as_document(value: Any) -> Document:
    """A corpus dict's value: a Document, a ``{"title", "text"}`` dict or a text."""
    from rankmeter.io.beir import Document

    if isinstance(value, Document):
        return value
    if isinstance(value, Mapping):
        title, text = value.get("title"), value.get("text")
        return Document("" if title is None else str(title), "" if text is None else str(text))
    return Document("", str(value))
