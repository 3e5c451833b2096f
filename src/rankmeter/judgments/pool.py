"""Pooling: which (query, document) pairs to judge next, and what judging them will buy.

Depth-k pooling (TREC's): for every query, the union over the runs of each run's top ``depth``
documents, in the order rankmeter and trec_eval rank them (score descending, equal scores by
doc id descending unless ``ties="input"``), minus the pairs the qrels already judge. A pair
with a negative grade counts as unjudged (trec_eval's "judged-unjudged"; the Judged metric
reads it so too), so it is pooled again.

When a query's pool is larger than ``max_per_query``, a stratified sample of it is kept.
Strata follow each item's best rank over the runs: ranks 1-5, 6-10, 11-20, 21-40, 41-80, ...
(each stratum below the second twice as deep as the one before). The budget fills the strata
from the top: a stratum is kept whole when it fits, always leaving one item for each
non-empty stratum below it, so the top of every run stays covered and every pooled document
keeps a non-zero chance; the first stratum that does not fit gets what is left but those
reserved items, drawn uniformly without replacement, and the ones below get their one item
each. (When ``max_per_query`` is smaller than the number of strata, nothing is reserved: the
top strata take the budget and the deepest get no item.) The number drawn from each stratum
depends on the stratum sizes alone, so an item's inclusion probability is exact: drawn / size
of its stratum. Each query is drawn with its own generator, seeded by ``seed`` and the query
id: a query's sample does not depend on the other queries in the pool.

Inclusion probabilities make unbiased estimates possible from a sampled pool once it is
judged: weigh each judged item by ``1 / inclusion_probability`` (Horvitz-Thompson), e.g. the
number of relevant documents of a query, or the precision of a stratum, as infAP and
stratified infAP (Yilmaz, Kanoulas and Aslam, SIGIR 2008) do. Items of a stratum that got no
sample cannot be estimated; with ``max_per_query`` at least the number of strata every
stratum gets one.

Judged@k (the ``Judged`` metric, through :func:`rankmeter.evaluate`) is reported per run, with
k = ``depth``: ``now``, with the qrels given, and ``after``, with the qrels extended by every
item of the pool (any grade >= 0 counts as judged). Both are means over the run's pooled
queries; a query without any judgment counts 0 ``now`` (evaluate would leave it out).
"""

from __future__ import annotations

import hashlib
import os
import statistics
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter._validate import choice, integer
from rankmeter.data import Qrels, Run
from rankmeter.data.ids import natural_key
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError
from rankmeter.io import as_qrels, load_runs
from rankmeter.io.pool import PoolItem

__all__ = ["JudgedCoverage", "Pool", "PoolItem", "pool", "strata_bounds"]

#: Which queries are pooled: every query of the runs, or those the qrels judge.
QUERY_SETS = ("runs", "qrels")


@dataclass(frozen=True)
class JudgedCoverage:
    """One run's Judged@k (k = the pool's depth) before and after the pool is judged.

    Attributes
    ----------
    run : str
    queries : int
        The run's pooled queries (the means run over them).
    now : float
        Judged@k with the qrels given (0 for a query without judgments).
    after : float
        Judged@k once every item of the pool is judged.
    """

    run: str
    queries: int
    now: float
    after: float

    def to_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "now": self.now, "after": self.after}


@dataclass(frozen=True)
class Pool:
    """The items to judge (iterate over it: :class:`~rankmeter.io.pool.PoolItem`, queries in
    natural order, each query's items by best rank, then doc id) and what judging them buys.

    Attributes
    ----------
    items : tuple of PoolItem
    depth : int
        Results pooled from each run per query.
    runs : tuple of str
        The runs' names, in the order given.
    queries : tuple of str
        The pooled queries, in natural order (a query may have no item left to judge).
    judged : Mapping[str, JudgedCoverage]
        Run name -> its Judged@depth now and after.
    n_candidates : int
        Items in the pool before sampling (the number of unjudged pairs in the top depth).
    n_judged : int
        The (query, doc) pairs in the runs' top depth that were judged already (left out).
    sampled_queries : tuple of str
        The queries whose pool was larger than ``max_per_query`` and was sampled.
    max_per_query : int or None
    seed : int
    ties : str
    """

    items: tuple[PoolItem, ...]
    depth: int
    runs: tuple[str, ...]
    queries: tuple[str, ...]
    judged: Mapping[str, JudgedCoverage]
    n_candidates: int
    n_judged: int
    sampled_queries: tuple[str, ...]
    max_per_query: int | None
    seed: int
    ties: str
    _per_query: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "judged", MappingProxyType(dict(self.judged)))
        counts = dict.fromkeys(self.queries, 0)
        for item in self.items:
            counts[item.query_id] += 1
        object.__setattr__(self, "_per_query", MappingProxyType(counts))

    def __iter__(self) -> Iterator[PoolItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def metric(self) -> str:
        """The label of the Judged metric reported: ``Judged@depth``."""
        return f"Judged@{self.depth}"

    @property
    def sampled(self) -> bool:
        """Whether any query's pool was sampled."""
        return bool(self.sampled_queries)

    @property
    def items_per_query(self) -> Mapping[str, int]:
        """Query -> its number of items (0 for a query whose top depth is judged already)."""
        return self._per_query

    def to_dict(self, *, items: bool = True) -> dict[str, Any]:
        """The summary (parameters, counts, Judged@depth per run) and, unless ``items`` is
        False, the items as the pool file holds them."""
        counts = list(self._per_query.values())
        out: dict[str, Any] = {
            "depth": self.depth,
            "max_per_query": self.max_per_query,
            "seed": self.seed,
            "ties": self.ties,
            "metric": self.metric,
            "runs": list(self.runs),
            "n_queries": len(self.queries),
            "n_candidates": self.n_candidates,
            "n_judged": self.n_judged,
            "n_items": len(self.items),
            "items_per_query": {
                "min": min(counts, default=0),
                "median": statistics.median(counts) if counts else 0,
                "max": max(counts, default=0),
            },
            "sampled": self.sampled,
            "sampled_queries": len(self.sampled_queries),
            "judged": {name: coverage.to_dict() for name, coverage in self.judged.items()},
        }
        if items:
            out["items"] = [item.to_dict() for item in self.items]
        return out


def strata_bounds(depth: int) -> list[tuple[int, int]]:
    """The rank ranges of the sampling strata down to ``depth``.

    >>> strata_bounds(100)
    [(1, 5), (6, 10), (11, 20), (21, 40), (41, 80), (81, 100)]
    """
    bounds, low, high = [], 1, 5
    while low <= depth:
        bounds.append((low, min(high, depth)))
        low, high = high + 1, max(2 * high, 10)
    return bounds


def _stratum(rank: int) -> int:
    """The stratum of a best rank: 0 for 1-5, 1 for 6-10, 2 for 11-20, 3 for 21-40, ..."""
    return ((rank + 4) // 5 - 1).bit_length()


def pool(
    runs: Any,
    *,
    depth: int = 20,
    qrels: Any = None,
    max_per_query: int | None = None,
    seed: int = 0,
    queries: str = "runs",
    ties: str = "trec_eval",
) -> Pool:
    """Pool the top ``depth`` documents of each run, minus what ``qrels`` judge already.

    Parameters
    ----------
    runs : a run (path, Run, dict, frame) or several (a list, or ``{name: run}``), as
        :func:`rankmeter.io.load_runs` takes them; runs that share a name are told apart
    depth : documents pooled from each run per query (and the k of Judged@k)
    qrels : the judgments made so far (anything :func:`rankmeter.io.as_qrels` takes), or None
    max_per_query : if given, a query whose pool is larger keeps a stratified sample of this
        many items (see the module's text)
    seed : seeds the sampling: the same seed, the same pool
    queries : ``"runs"`` pools every query of the runs; ``"qrels"`` only the queries the qrels
        judge
    ties : how equal scores are ordered (``"trec_eval"``: doc id descending; ``"input"``)

    Returns
    -------
    Pool: the items (``for item in result``), Judged@depth per run now and after, counts.

    Examples
    --------
    Two runs share document c; a is judged already; b loses the tie with c for rank 2
    (equal scores go to the larger doc id, as in trec_eval).

    >>> bm25 = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0}}
    >>> dense = {"q1": {"c": 0.9, "e": 0.8}}
    >>> result = pool({"bm25": bm25, "dense": dense}, depth=2, qrels={"q1": {"a": 1}})
    >>> [(item.doc_id, dict(item.runs)) for item in result]
    [('c', {'bm25': 2, 'dense': 1}), ('e', {'dense': 2})]
    >>> result.judged["bm25"].now, result.judged["bm25"].after
    (0.5, 1.0)
    """
    depth = integer("depth", depth, low=1, what="documents pooled from each run per query")
    if max_per_query is not None:
        max_per_query = integer(
            "max_per_query", max_per_query, low=1, what="items kept per query at most"
        )
    seed = _validate.seed(seed)
    queries = choice("queries", queries, QUERY_SETS, what="which queries are pooled")
    ties = check_ties(ties)
    judgments = None if qrels is None else as_qrels(qrels)
    if queries == "qrels" and judgments is None:
        raise PolicyError("queries='qrels' needs qrels (the queries they judge are pooled)")
    if isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    loaded = load_runs(runs, ties=ties)
    pooled_queries = _pooled_queries(loaded, judgments, queries)
    heads = [run.subset(pooled_queries).head(depth) for run in loaded]
    judged_pairs = set() if judgments is None else _judged_pairs(judgments, set(pooled_queries))
    candidates, n_judged = _candidates(heads, judged_pairs)
    items: list[PoolItem] = []
    sampled: list[str] = []
    for query in pooled_queries:
        found = candidates.get(query, [])
        if max_per_query is not None and len(found) > max_per_query:
            items += _sample(query, found, max_per_query, seed)
            sampled.append(query)
        else:
            items += found
    coverage = _coverage(heads, judgments, items, depth, ties)
    return Pool(
        items=tuple(items),
        depth=depth,
        runs=tuple(run.name for run in loaded),
        queries=tuple(pooled_queries),
        judged=coverage,
        n_candidates=sum(len(found) for found in candidates.values()),
        n_judged=n_judged,
        sampled_queries=tuple(sampled),
        max_per_query=max_per_query,
        seed=seed,
        ties=ties,
    )


def _pooled_queries(runs: list[Run], judgments: Qrels | None, queries: str) -> list[str]:
    """Every query of the runs (or those the qrels judge too), in natural order."""
    ids = {q for run in runs for q in run.query_ids}
    if queries == "qrels" and judgments is not None:
        judged = set(judgments.query_ids)
        if not ids & judged:
            raise PolicyError(
                f"no query to pool: none of the runs' {len(ids)} queries is judged in the "
                f"qrels ({judgments.n_queries} queries); check that they belong together, or "
                "pool every query of the runs (queries='runs')"
            )
        ids &= judged
    return sorted(ids, key=natural_key)


def _judged_pairs(judgments: Qrels, wanted: set[str]) -> set[tuple[str, str]]:
    """The (query, doc) pairs with a judgment (grade >= 0), among the wanted queries."""
    table = judgments.to_arrow()
    rows = zip(
        table.column("query_id").to_pylist(),
        table.column("doc_id").to_pylist(),
        table.column("relevance").to_numpy() >= 0,
        strict=True,
    )
    return {(q, d) for q, d, judged in rows if judged and q in wanted}


def _candidates(
    heads: list[Run], judged_pairs: set[tuple[str, str]]
) -> tuple[dict[str, list[PoolItem]], int]:
    """Query -> its unjudged pairs in the runs' heads, by best rank then doc id; and how many
    distinct pairs in the heads are judged."""
    ranks: dict[tuple[str, str], dict[str, int]] = {}
    judged_seen: set[tuple[str, str]] = set()
    for head in heads:
        table = head.to_arrow()
        for query, doc, rank in zip(
            table.column("query_id").to_pylist(),
            table.column("doc_id").to_pylist(),
            table.column("rank").to_pylist(),
            strict=True,
        ):
            if (query, doc) in judged_pairs:
                judged_seen.add((query, doc))
            else:
                ranks.setdefault((query, doc), {})[head.name] = rank
    out: dict[str, list[PoolItem]] = {}
    for (query, doc), by_run in ranks.items():
        best = min(by_run.values())
        out.setdefault(query, []).append(PoolItem(query, doc, by_run, best, 1.0))
    for found in out.values():
        found.sort(key=lambda item: (item.best_rank, item.doc_id))
    return out, len(judged_seen)


def _allocation(sizes: list[int], budget: int) -> list[int]:
    """How many items each stratum (top first, all non-empty) keeps: whole while it fits,
    one reserved for each stratum below when the budget allows it."""
    reserve = budget >= len(sizes)
    left, out = budget, []
    for position, size in enumerate(sizes):
        below = len(sizes) - position - 1 if reserve else 0
        kept = max(min(size, left - below), 0)
        out.append(kept)
        left -= kept
    return out


def _query_generator(seed: int, query: str) -> np.random.Generator:
    """A generator for one query: the seed and a stable hash of the query id."""
    digest = hashlib.blake2b(query.encode("utf-8"), digest_size=8).digest()
    return np.random.default_rng([seed, int.from_bytes(digest, "little")])


def _sample(query: str, found: list[PoolItem], budget: int, seed: int) -> list[PoolItem]:
    """A stratified sample of one query's items (sorted by best rank), each with its
    inclusion probability."""
    strata: dict[int, list[PoolItem]] = {}
    for item in found:
        strata.setdefault(_stratum(item.best_rank), []).append(item)
    groups = [strata[s] for s in sorted(strata)]
    generator = _query_generator(seed, query)
    kept: list[PoolItem] = []
    for group, size in zip(groups, _allocation([len(g) for g in groups], budget), strict=True):
        if size == 0:
            continue
        chosen = (
            range(len(group))
            if size == len(group)
            else sorted(generator.choice(len(group), size=size, replace=False).tolist())
        )
        probability = size / len(group)
        kept += [
            PoolItem(item.query_id, item.doc_id, item.runs, item.best_rank, probability)
            for item in (group[i] for i in chosen)
        ]
    return kept


def _coverage(
    heads: list[Run],
    judgments: Qrels | None,
    items: Iterable[PoolItem],
    depth: int,
    ties: str,
) -> dict[str, JudgedCoverage]:
    """Judged@depth of each run with the qrels, and with the qrels extended by the pool."""
    pooled = list(items)
    pairs = {(item.query_id, item.doc_id) for item in pooled}
    queries: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    if judgments is not None:
        table = judgments.to_arrow()
        for q, d, g in zip(
            table.column("query_id").to_pylist(),
            table.column("doc_id").to_pylist(),
            table.column("relevance").to_pylist(),
            strict=True,
        ):
            if (q, d) not in pairs:  # a judged-unjudged (negative) pair in the pool is replaced
                queries.append(q)
                docs.append(d)
                grades.append(g)
    # Any grade >= 0 is a judgment to Judged; 0 stands for the grade a rater will give.
    queries += [item.query_id for item in pooled]
    docs += [item.doc_id for item in pooled]
    grades += [0.0] * len(pooled)
    extended = Qrels.from_columns(queries, docs, grades) if grades else None
    now = _judged(heads, judgments, depth, ties)
    after = _judged(heads, extended, depth, ties)
    return {
        head.name: JudgedCoverage(head.name, head.n_queries, now[head.name], after[head.name])
        for head in heads
    }


def _judged(heads: list[Run], judgments: Qrels | None, depth: int, ties: str) -> dict[str, float]:
    """Each run's mean Judged@depth over its queries, by evaluate; a query the qrels do not
    judge counts 0 (nothing in it is judged)."""
    from rankmeter.evaluation import evaluate

    out: dict[str, float] = {}
    judged_queries = set() if judgments is None else set(judgments.query_ids)
    for head in heads:
        if head.n_queries == 0:
            out[head.name] = float("nan")
            continue
        if judgments is None or not judged_queries & set(head.query_ids):
            out[head.name] = 0.0
            continue
        metric = f"Judged@{depth}"
        result = evaluate(judgments, head, [metric], ties=ties)
        out[head.name] = float(np.sum(result.per_query[metric])) / head.n_queries
    return out
