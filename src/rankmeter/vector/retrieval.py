"""A retriever's run evaluated over every judged query of a collection, with what it ran on.

Retrieval commands (``bm25``, ``embed-eval``) answer every judged query or fail to: a query of
stopwords only matches no document in BM25, an empty query text is not embedded. Such a query
is not dropped from the average (that would flatter the retriever and make two retrievers
cover different queries): it scores 0 on every metric, as ``evaluate --include-missing`` and
``trec_eval -c`` count it, and :attr:`RetrievalResult.unanswered` lists it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rankmeter.errors import PolicyError
from rankmeter.results import EvalResult

__all__ = [
    "IDENTICAL_IDS_RULE",
    "MTEB_CUTOFFS",
    "MTEB_METRICS",
    "QUERIES_RULE",
    "RetrievalResult",
    "drop_identical_ids",
    "evaluate_retrieval",
]

#: Which queries the scores average over, as every retrieval output states it.
QUERIES_RULE = (
    "every judged query counts: one without results scores 0 "
    "(as evaluate --include-missing, trec_eval -c)"
)

#: MTEB's retrieval cutoffs and metrics (nDCG, MAP, Recall, Precision, MRR at each cutoff);
#: the main score is nDCG@10.
MTEB_CUTOFFS = (1, 3, 5, 10, 100, 1000)
MTEB_METRICS = tuple(
    f"{family}@{k}" for family in ("nDCG", "AP", "R", "P", "RR") for k in MTEB_CUTOFFS
)
#: BEIR's rule, as outputs state it when it is on.
IDENTICAL_IDS_RULE = (
    "BEIR's rule: a retrieved document whose id equals its query's id is dropped "
    "(--keep-identical-ids keeps it)"
)


def drop_identical_ids(run: Any, cutoff: int) -> tuple[Any, int]:
    """BEIR's rule: drop every result whose doc id equals its query id, then keep each
    query's top ``cutoff``. Returns the run and how many results were dropped from the top
    ``cutoff`` (a retriever asked for ``cutoff + 1`` keeps ``cutoff`` results per query).

    >>> from rankmeter import Run
    >>> run = Run.from_dict({"1": {"1": 0.9, "2": 0.8, "3": 0.7}, "2": {"1": 0.5}})
    >>> kept, dropped = drop_identical_ids(run, 2)
    >>> kept.ranking("1"), kept.ranking("2"), dropped
    (['2', '3'], ['1'], 1)
    """
    import pyarrow.compute as pc

    from rankmeter.data import Run

    table = run.head(cutoff).to_arrow()
    dropped = int(pc.sum(pc.equal(table["query_id"], table["doc_id"])).as_py() or 0)
    table = run.to_arrow()
    kept = table.filter(pc.invert(pc.equal(table["query_id"], table["doc_id"])))
    if kept.num_rows == 0:
        raise PolicyError(
            "every retrieved document has its query's id: nothing is left under BEIR's rule; "
            "give --keep-identical-ids"
        )
    out = Run.from_columns(
        kept["query_id"], kept["doc_id"], kept["score"], name=run.name, origin=run.source
    )
    return out.head(cutoff), dropped


@dataclass(frozen=True, repr=False)
class RetrievalResult(EvalResult):
    """An :class:`~rankmeter.results.EvalResult` over all judged queries, and its provenance.

    Attributes (beyond EvalResult's)
    --------------------------------
    model : str
        What retrieved: the embedding model's name, or BM25 and its parameters.
    collection : str
        The collection's folder (or its files).
    unanswered : tuple of str
        Judged queries that got no results; each scores 0 in every metric and counts in the
        average (``policies.include_missing`` is True).
    empty_queries : tuple of str
        Judged queries whose text is empty (not embedded; they are also unanswered).
    details : mapping
        What else the retrieval reports, by topic (``embedding``: throughput, dimension,
        truncated texts; ``identical_ids``: BEIR's rule); in ``to_dict`` when not empty.
    notes : tuple of str
        The same for a person: the lines a table shows under the scores.
    """

    model: str = ""
    collection: str = ""
    unanswered: tuple[str, ...] = ()
    empty_queries: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """``{"run", "model", "collection", "n_queries", "queries", "unanswered",
        "empty_queries", "metrics"[, "per_query"]}``: ``metrics`` (and ``per_query``) are
        what ``rankmeter evaluate --include-missing`` gives for the run."""
        out: dict[str, Any] = {
            "run": self.run,
            "model": self.model,
            "collection": self.collection,
            "n_queries": self.n_queries,
            "queries": QUERIES_RULE,
            "unanswered": list(self.unanswered),
            "empty_queries": list(self.empty_queries),
        }
        out.update({key: dict(value) for key, value in self.details.items()})
        out.update(super().to_dict(per_query=per_query))
        return out


def evaluate_retrieval(
    qrels: Any,
    run: Any,
    metrics: str | Iterable[Any],
    *,
    model: str,
    collection: str,
    empty_queries: Iterable[str] = (),
) -> RetrievalResult:
    """Evaluate a retriever's run over every judged query: a judged query without results
    scores 0 (``include_missing=True``) and is listed in ``unanswered``.

    >>> from rankmeter import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
    >>> run = Run.from_dict({"q1": {"d1": 1.0}})
    >>> result = evaluate_retrieval(qrels, run, ["P@1"], model="m", collection="c")
    >>> result.metrics["P@1"], result.n_queries, result.unanswered
    (0.5, 2, ('q2',))
    """
    from rankmeter.evaluation import evaluate
    from rankmeter.io import as_qrels, as_run

    loaded_qrels = as_qrels(qrels)
    loaded_run = as_run(run)
    evaluated = evaluate(loaded_qrels, loaded_run, metrics, include_missing=True)
    answered = set(loaded_run.query_ids)
    unanswered = tuple(q for q in loaded_qrels.query_ids if q not in answered)
    fields = {name: getattr(evaluated, name) for name in EvalResult.__dataclass_fields__}
    return RetrievalResult(
        **fields,
        model=model,
        collection=collection,
        unanswered=unanswered,
        empty_queries=tuple(empty_queries),
    )
