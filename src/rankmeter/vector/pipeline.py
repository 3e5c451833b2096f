"""Two-stage pipelines: a retriever finds candidates, a reranker reorders them
(:func:`two_stage`; from files, as ``rankmeter two-stage`` reads them: :func:`two_stage_runs`).

Each stage has its own question. The retriever's: is every relevant document in the pool
(Recall@pool)? No reranker can bring back what the pool lacks. The reranker's: how well does it
order the pool (nDCG@10)? And the ceiling says how well any reordering of that pool could do:
the pool's documents sorted by grade. Reranked far below the ceiling: improve the reranker;
ceiling low: improve the retriever (or deepen the pool).

Examples
--------
The retriever's top 3 hold two of the three relevant documents (e is ranked 5th), so no
reranker can reach R@3 above 2/3; the reranker puts c (grade 2) first; the ceiling orders the
pool c, a, b.

>>> qrels = {"q1": {"a": 1, "c": 2, "e": 1}}
>>> first = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5}}
>>> reranked = {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}}
>>> result = two_stage(qrels, first, reranked, pool=3, metrics=["nDCG@3"])
>>> for stage, r in result.stages.items():
...     print(f"{stage:9}  R@3 {r.metrics['R@3']:.3f}  nDCG@3 {r.metrics['nDCG@3']:.3f}")
retriever  R@3 0.667  nDCG@3 0.639
reranked   R@3 0.667  nDCG@3 0.798
ceiling    R@3 0.667  nDCG@3 0.840
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rankmeter._validate import integer
from rankmeter.data import Qrels, Run
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.io import as_qrels, as_run
from rankmeter.results import EvalResult

__all__ = ["TwoStage", "cross_encoder", "two_stage", "two_stage_runs"]

#: Scores (query text, document text) pairs, a batch at a time: one float per pair.
Reranker = Callable[[list[tuple[str, str]]], Sequence[float]]

STAGES = ("retriever", "reranked", "ceiling")


@dataclass(frozen=True)
class TwoStage:
    """A two-stage pipeline evaluated stage by stage, on the same queries and metrics.

    Attributes
    ----------
    pool : how many of the retriever's results per query the reranker sees
    retriever : the retriever's top ``pool`` as it ranked them
    reranked : the reranker's order of the pool
    ceiling : the pool sorted by grade: the best any reranker can do with this pool
    outside_pool : results of a given reranked run outside the pool (left out)
    unscored : pool documents that a given reranked run does not hold (they count as not
        retrieved by the reranked stage)
    notes : what a reader must know to read the numbers: metrics whose cutoff is deeper than
        the pool (every stage ranks only the pool, so R@100 of a pool of 50 is R@50)
    unanswered : judged queries the retriever returned nothing for: they count in every
        stage and score 0 there (as ``evaluate --include-missing``, ``trec_eval -c``)

    Every stage reports ``R@pool`` first (the same for all three: reordering cannot change
    which documents are in the pool), then the metrics asked for.
    """

    pool: int
    retriever: EvalResult
    reranked: EvalResult
    ceiling: EvalResult
    outside_pool: int = 0
    unscored: int = 0
    notes: tuple[str, ...] = ()
    unanswered: tuple[str, ...] = ()

    @property
    def stages(self) -> dict[str, EvalResult]:
        """``{"retriever": ..., "reranked": ..., "ceiling": ...}``."""
        return {"retriever": self.retriever, "reranked": self.reranked, "ceiling": self.ceiling}

    @property
    def n_queries(self) -> int:
        return self.retriever.n_queries

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """``{"pool", "n_queries", "queries", "unanswered", "stages": {stage: {"metrics":
        {...}[, "per_query": {...}]}}, "outside_pool", "unscored", "notes"}``."""
        from rankmeter.vector.retrieval import QUERIES_RULE

        return {
            "pool": self.pool,
            "n_queries": self.n_queries,
            "queries": QUERIES_RULE,
            "unanswered": list(self.unanswered),
            "stages": {k: v.to_dict(per_query=per_query) for k, v in self.stages.items()},
            "outside_pool": self.outside_pool,
            "unscored": self.unscored,
            "notes": list(self.notes),
        }

    def to_pandas(self) -> Any:
        """A DataFrame: one row per stage (index ``stage``), one column per metric."""
        from rankmeter.data.arrays import import_pandas

        pd = import_pandas()
        rows = [{"stage": k, **v.metrics} for k, v in self.stages.items()]
        return pd.DataFrame(rows).set_index("stage")

    def __repr__(self) -> str:
        return (
            f"TwoStage(pool={self.pool}, n_queries={self.n_queries}, "
            + ", ".join(f"{k}={dict(v.metrics)}" for k, v in self.stages.items())
            + ")"
        )


def two_stage(
    qrels: Any,
    retriever_run: Any,
    reranker: Any,
    *,
    pool: int = 100,
    metrics: Iterable[str] = ("nDCG@10",),
    queries: Mapping[str, str] | None = None,
    docs: Mapping[str, Any] | None = None,
    batch_size: int = 256,
) -> TwoStage:
    """Evaluate a retriever and a reranker as a pipeline, next to the pool's ceiling.

    Parameters
    ----------
    qrels : Qrels, path, dict ``{query: {doc: grade}}``, DataFrame or Arrow table
    retriever_run : the first stage's run (anything :func:`rankmeter.io.as_run` takes); its
        top ``pool`` results per query are the candidates
    reranker : either a reranked run (Run, path, dict ...), restricted here to the pool; or a
        function scoring a batch of ``(query_text, doc_text)`` pairs, ``reranker(pairs) ->
        floats``; or an object with a ``predict(pairs)`` method, such as a
        sentence-transformers ``CrossEncoder`` (see :func:`cross_encoder`)
    pool : candidates per query (>= 1)
    metrics : metrics for every stage, after ``R@pool``
    queries : ``{query_id: text}``, needed by a reranker function
    docs : ``{doc_id: text}`` (or ``Document``, as ``load_beir(...).corpus`` holds), needed by
        a reranker function
    batch_size : pairs per call of a reranker function

    Returns
    -------
    TwoStage, with every stage evaluated on every judged query: one the retriever did not
    answer scores 0 in every stage (and is listed in ``unanswered``), one the reranked run
    lacks scores 0 in the reranked stage. Equal scores are ordered as trec_eval
    orders ties (doc id descending) in every stage.

    Notes
    -----
    The ceiling ranks the pool by grade (unjudged documents last), which maximises nDCG,
    precision, recall, RR and AP at every cutoff: it is computed by evaluating that ideal run
    with the same kernels as the others.
    """
    from rankmeter.evaluation import evaluate
    from rankmeter.metrics import parse_metric, parse_metrics

    pool = integer("pool", pool, low=1, what="candidates per query the reranker sees")
    if isinstance(metrics, str):
        metrics = [metrics]
    asked = parse_metrics(list(metrics))
    # R@pool comes first; asked for under another name (recall.100), it keeps that name.
    pool_recall = parse_metric(f"R@{int(pool)}")
    measures = parse_metrics([next((m for m in asked if m == pool_recall), pool_recall), *asked])
    loaded_qrels = as_qrels(qrels)
    retriever = as_run(retriever_run)
    judged, candidates, unanswered = _judged_queries(loaded_qrels, retriever.head(pool))
    scorer = _scorer(reranker)
    outside = unscored = 0
    if scorer is None:
        reranked, outside, unscored = _restrict(as_run(reranker), candidates)
    else:
        reranked = _rerank(candidates, scorer, queries, docs, batch_size)
    ceiling = _ideal(candidates, loaded_qrels)

    def score(run: Run) -> EvalResult:
        return evaluate(judged, run, measures, include_missing=True)

    return TwoStage(
        int(pool),
        score(candidates),
        score(reranked),
        score(ceiling),
        outside,
        unscored,
        _deeper_than_pool(measures, int(pool)),
        unanswered,
    )


def two_stage_runs(
    qrels: str,
    retriever_run: str,
    reranked_run: str,
    *,
    pool: int = 100,
    metrics: Iterable[str] | None = None,
    run_format: str | None = None,
) -> TwoStage:
    """A two-stage pipeline from files, as ``rankmeter two-stage`` evaluates it: the qrels,
    the retriever's run and the reranker's run over its top ``pool``, each a path (a run
    ``NAME=PATH`` names it; at most one ``"-"``, stdin), then :func:`two_stage`.

    ``metrics`` default to nDCG@10; ``run_format`` is the runs' format (None: found from each
    file).

    >>> two_stage_runs("-", "-", "reranked.run")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: only one input can be read from stdin ('-')
    """
    from rankmeter.io import read_qrels
    from rankmeter.io.run_args import read_run_list

    if [qrels, retriever_run, reranked_run].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    first, reranked = read_run_list(
        [retriever_run, reranked_run], format=run_format, distinct=False
    )
    return two_stage(read_qrels(qrels), first, reranked, pool=pool, metrics=metrics or ["nDCG@10"])


def _deeper_than_pool(measures: Sequence[Any], pool: int) -> tuple[str, ...]:
    """A note naming the metrics whose cutoff is deeper than the pool: no stage holds more
    than the pool, so such a cutoff acts as the pool's size (R@100 of a pool of 50 is R@50)."""
    deeper = [m.label for m in measures if m.cutoff is not None and m.cutoff > pool]
    if not deeper:
        return ()
    names = deeper[0] if len(deeper) == 1 else f"{', '.join(deeper[:-1])} and {deeper[-1]}"
    look, their = (
        ("looks", "its cutoff acts") if len(deeper) == 1 else ("look", "their cutoffs act")
    )
    return (
        f"{names} {look} deeper than the pool: every stage ranks only the pool's {pool} "
        f"results per query, so {their} as {pool}",
    )


def cross_encoder(model: Any, *, batch_size: int = 32) -> Reranker:
    """A reranker function from a sentence-transformers ``CrossEncoder`` (or a model name or
    local path to load one; nothing is downloaded when ``HF_HUB_OFFLINE=1``).

    rankmeter ships no cross-encoder model: bring your own, with the ``[embed]`` extra
    installed.
    """
    if isinstance(model, (str, os.PathLike)):
        from rankmeter.vector import require

        module = require("sentence_transformers", "embed", "a cross-encoder reranker")
        model = module.CrossEncoder(os.fspath(model))
    predict = getattr(model, "predict", None)
    if not callable(predict):
        raise PolicyError(
            f"{type(model).__name__} has no predict method; give a sentence-transformers "
            "CrossEncoder, or a function scoring (query, doc) pairs"
        )

    def score(pairs: list[tuple[str, str]]) -> Sequence[float]:
        values = predict(pairs, batch_size=batch_size, show_progress_bar=False)
        scores: list[float] = np.asarray(values, dtype=np.float64).reshape(-1).tolist()
        return scores

    score.__name__ = "cross-encoder"
    return score


def _scorer(reranker: Any) -> Reranker | None:
    """The function scoring pairs, or None for a reranked run."""
    if isinstance(reranker, (Run, str, os.PathLike, Mapping)):
        return None
    predict = getattr(reranker, "predict", None)
    if callable(predict):
        # A CrossEncoder: called through predict (calling a torch module runs forward()).
        return lambda pairs: predict(pairs)
    if callable(reranker):
        return cast(Reranker, reranker)
    return None


def _judged_queries(qrels: Qrels, candidates: Run) -> tuple[Qrels, Run, tuple[str, ...]]:
    """The judgments (every judged query counts, answered or not), the pool of the judged
    queries only (a reranker need not score queries that cannot be evaluated), and the judged
    queries that the retriever did not answer."""
    import pyarrow as pa
    import pyarrow.compute as pc

    answered = set(candidates.query_ids)
    unanswered = tuple(q for q in qrels.query_ids if q not in answered)
    if len(unanswered) == qrels.n_queries:
        raise RankmeterError(
            f"retriever run {candidates.name!r} ({candidates.source}) has no query in common "
            f"with the qrels ({qrels.source}); check that the files belong together"
        )
    judged = set(qrels.query_ids)
    if any(q not in judged for q in candidates.query_ids):
        pool = candidates.to_arrow()
        wanted = pa.array(list(qrels.query_ids), type=pa.string())
        pool = pool.filter(pc.is_in(pool.column("query_id"), value_set=wanted))
        candidates = Run.from_columns(
            pool.column("query_id"),
            pool.column("doc_id"),
            pool.column("score"),
            name=candidates.name,
            ties=candidates.ties,
            origin=candidates.source,
        )
    return qrels, candidates, unanswered


def _pair_keys(table: Any) -> Any:
    """One string per (query, doc) row: ids joined by a NUL, which no id holds."""
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(table.column("query_id"), table.column("doc_id"), "\x00")


def _restrict(reranked: Run, candidates: Run) -> tuple[Run, int, int]:
    """The reranked run's results that are in the pool; how many were outside it; how many
    pool documents it does not hold."""
    import pyarrow.compute as pc

    table = reranked.to_arrow()
    pool_keys = _pair_keys(candidates.to_arrow())
    keys = _pair_keys(table)
    inside = pc.is_in(keys, value_set=pool_keys)
    kept = table.filter(inside)
    outside = table.num_rows - kept.num_rows
    if kept.num_rows == 0:
        raise RankmeterError(
            f"reranked run {reranked.name!r} ({reranked.source}) holds none of the retriever's "
            f"top results; check that it reranks run {candidates.name!r}"
        )
    held = pc.is_in(pool_keys, value_set=pc.filter(keys, inside))
    unscored = len(pool_keys) - int(pc.sum(held.cast("int64")).as_py() or 0)
    run = Run.from_columns(
        kept.column("query_id"),
        kept.column("doc_id"),
        kept.column("score"),
        name=reranked.name,
        origin=reranked.source,
    )
    return run, outside, unscored


def _rerank(
    candidates: Run,
    scorer: Reranker,
    queries: Mapping[str, str] | None,
    docs: Mapping[str, Any] | None,
    batch_size: int,
) -> Run:
    """Score every (query, doc) pair of the pool with the reranker, a batch at a time."""
    if queries is None or docs is None:
        raise PolicyError(
            "a reranker function scores texts: pass queries={query_id: text} and "
            "docs={doc_id: text} (load_beir(path).queries and .corpus hold them)"
        )
    batch_size = integer("batch_size", batch_size, low=1, what="pairs per reranker call")
    table = candidates.to_arrow()
    query_ids = table.column("query_id").to_pylist()
    doc_ids = table.column("doc_id").to_pylist()
    pairs = [
        (_text(queries, q, "query"), _text(docs, d, "document"))
        for q, d in zip(query_ids, doc_ids, strict=True)
    ]
    scores: list[float] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        values = np.asarray(scorer(batch), dtype=np.float64).reshape(-1)
        if len(values) != len(batch):
            raise RankmeterError(
                f"the reranker returned {len(values)} scores for {len(batch)} pairs; it must "
                "return one score per (query, doc) pair"
            )
        if not np.isfinite(values).all():
            raise RankmeterError("the reranker returned a score that is not a finite number")
        scores.extend(values.tolist())
    name = getattr(scorer, "__name__", "reranked")
    return Run.from_columns(
        query_ids,
        doc_ids,
        scores,
        name="reranked" if name == "<lambda>" else str(name),
        origin="<reranker>",
    )


def _text(texts: Mapping[str, Any], key: str, what: str) -> str:
    try:
        value = texts[key]
    except KeyError:
        raise RankmeterError(
            f"no text for {what} {key!r}: the reranker needs the text of every {what} in the pool"
        ) from None
    content = getattr(value, "content", value)  # a Document: title and text
    return str(content)


def _ideal(candidates: Run, qrels: Qrels) -> Run:
    """The pool sorted by grade: the best order any reranker could give it."""
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    table = candidates.to_arrow()
    judgments = qrels.to_arrow()
    found_at = pc.index_in(_pair_keys(table), value_set=_pair_keys(judgments))
    at = numpy_of(found_at, fill=-1).astype(np.int64)
    grades = numpy_of(judgments.column("relevance")).astype(np.float64)
    judged = at >= 0
    found = grades[at[judged]]
    floor = min(float(found.min(initial=0.0)), 0.0) - 1.0  # unjudged documents go last
    scores = np.full(len(at), floor)
    scores[judged] = found
    return Run.from_columns(
        table.column("query_id"),
        table.column("doc_id"),
        scores,
        name="ceiling",
        origin="<ceiling>",
    )
