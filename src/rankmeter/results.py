"""Evaluation results: frozen, always keyed by metric, exportable to dicts, pandas and Arrow."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from rankmeter.data.arrays import import_pandas
from rankmeter.data.run import Run, unique_names
from rankmeter.metrics import Metric

__all__ = [
    "EXAMPLES",
    "JUDGED_BELOW",
    "WRITTEN_DEPTH",
    "ByMetric",
    "DepthGap",
    "EvalResult",
    "EvalResults",
    "JudgedWarning",
    "Overlap",
    "OverlapTally",
    "PerQuery",
    "Policies",
    "RunFacts",
    "ScoreOrder",
    "check_judged_below",
    "check_worst",
    "depth_gap",
    "depth_of",
    "favours_deeper",
    "judged_cutoff",
    "no_relevant",
    "overlap_of",
    "relevant_only",
    "unique_names",
]

#: Reports warn about a run whose Judged@k is below this (``--judged-below``; 0: never).
JUDGED_BELOW = 0.9
#: The k of Judged@k when no metric asked for has a cutoff (AP, RR, R-Prec look at the whole
#: ranking, whose depth says nothing about how far anyone judged).
JUDGED_DEFAULT_K = 10

V = TypeVar("V")
FloatArray = npt.NDArray[np.float64]


#: How deep into each query :attr:`EvalResult.written_order` looks: a swapped rank column
#: or lower-is-better scores show at the top as everywhere, and the look stays cheap.
WRITTEN_DEPTH = 10
#: Examples kept for each list of ids (queries without results, duplicate pairs, ...).
EXAMPLES = 5


@dataclass(frozen=True)
class Overlap:
    """The query ids of a run against the qrels'.

    Attributes
    ----------
    judged : queries in the qrels
    with_results : queries in the run
    common : queries in both (what ``evaluate`` averages over by default)
    judged_without_results, results_without_judgments : how many queries are only in the
        qrels, only in the run
    judged_without_results_examples, results_without_judgments_examples : the first few of
        each (natural order), at most :data:`EXAMPLES`
    """

    judged: int
    with_results: int
    common: int
    judged_without_results: int
    results_without_judgments: int
    judged_without_results_examples: tuple[str, ...]
    results_without_judgments_examples: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """No query in common: nothing of the run can be evaluated."""
        return self.common == 0

    @property
    def partial(self) -> bool:
        """Some queries are only in the qrels or only in the run."""
        return not self.empty and bool(
            self.judged_without_results or self.results_without_judgments
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "judged": self.judged,
            "with_results": self.with_results,
            "common": self.common,
            "judged_without_results": self.judged_without_results,
            "judged_without_results_examples": list(self.judged_without_results_examples),
            "results_without_judgments": self.results_without_judgments,
            "results_without_judgments_examples": list(self.results_without_judgments_examples),
        }


@dataclass(frozen=True)
class ScoreOrder:
    """Whether a run's scores fall with its rank, as they should (see
    :func:`rankmeter.checking.score_order`).

    Attributes
    ----------
    by : ``"rank column"``, ``"file order"`` or ``"written order"`` (each query's top
        :data:`WRITTEN_DEPTH`, as the evaluation saw them): what the written ranking was read
        from
    queries : queries whose scores are not all equal (the others say nothing)
    rising : those among them whose score rises with the rank
    rank_fractions : whether the rank column holds fractions (as scores do): then the rank
        and score columns look swapped, rather than the scores meaning lower-is-better
    """

    by: str
    queries: int
    rising: int
    rank_fractions: bool

    @property
    def reversed(self) -> bool:
        """The scores rise with the rank in most queries (more than half)."""
        return self.queries > 0 and self.rising * 2 > self.queries

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "queries": self.queries,
            "rising": self.rising,
            "rank_fractions": self.rank_fractions,
            "reversed": self.reversed,
        }


@dataclass(frozen=True)
class RunFacts:
    """What an evaluation saw of a run's data, at no extra cost: the warnings that
    ``rankmeter evaluate`` and ``rankmeter compare`` print beside their numbers come from it
    (:func:`rankmeter.checking.result_warnings`).

    Attributes
    ----------
    source : where the run was read from (a path, ``<dict>``, ...)
    overlap : its query ids against the qrels'
    written_order : whether its results were given lowest score first, by the order they were
        written in (``by="written order"``: the file's lines or the rows given), in each
        query's top :data:`WRITTEN_DEPTH` (``rankmeter check`` reads the rank column too)
    """

    source: str
    overlap: Overlap
    written_order: ScoreOrder

    @classmethod
    def of(cls, source: str, judged_ids: Any, run_ids: Any, written: Sequence[int]) -> RunFacts:
        """The facts of a run: its ``source``, the qrels' query ids and its own (strings, or
        Arrow string arrays: see :func:`overlap_of`), and its ``written`` order as
        ``(queries, rising)`` (:meth:`Run.written_order <rankmeter.data.Run.written_order>` at
        :data:`WRITTEN_DEPTH`, summed over chunks)."""
        return cls.of_tally(source, OverlapTally.of(judged_ids, run_ids), written)

    @classmethod
    def of_tally(cls, source: str, tally: OverlapTally, written: Sequence[int]) -> RunFacts:
        """The facts of a run whose query ids were counted part by part (a streamed run's
        chunks) by ``tally``; ``source`` and ``written`` as :meth:`of` takes them."""
        queries, rising = written
        order = ScoreOrder("written order", queries, rising, rank_fractions=False)
        return cls(source, tally.overlap(), order)

    @classmethod
    def of_run(cls, judged: Any, run: Run) -> RunFacts:
        """The facts of a run given whole, against ``judged``: the qrels (a
        :class:`~rankmeter.data.Qrels`: their ids are found in the table the joins use) or
        their query ids."""
        tally = OverlapTally.of(judged)
        tally.add(run.segment_strings)  # (no Python string per query: see OverlapTally)
        return cls.of_tally(run.source, tally, run.written_order(WRITTEN_DEPTH))


class OverlapTally:
    """An :class:`Overlap` counted from a run's query ids part by part (the chunks of a
    streamed run, each query in one part only), with no Python object per id: the judged ids
    stay an Arrow string array, which of them have results is a bool array, and of the ids
    only in the run the count and the first :data:`EXAMPLES` (natural order) are kept. Only
    the ids an :class:`Overlap` names become Python strings.

    >>> tally = OverlapTally.of(["1", "2", "3", "10"])
    >>> tally.add(["3", "x"]); tally.add(["1", "b", "a"])
    >>> overlap = tally.overlap()
    >>> overlap.common, overlap.judged_without_results_examples, overlap.results_without_judgments_examples
    (2, ('2', '10'), ('a', 'b', 'x'))
    """

    def __init__(self, judged: Any, rows_of: Any, *, natural: bool) -> None:
        # judged: distinct ids (an Arrow string array); rows_of: ids -> their rows in judged
        # (-1: not judged); natural: judged is in natural order already (the qrels' ids).
        self._judged = judged
        self._rows_of = rows_of
        self._natural = natural
        self._answered = np.zeros(len(judged), dtype=bool)
        self._with_results = 0
        self._only_ran = 0
        self._examples: list[str] = []

    @classmethod
    def of(cls, judged: Any, run_ids: Any = None) -> OverlapTally:
        """A tally against ``judged`` (a :class:`~rankmeter.data.Qrels`, or query ids:
        strings or an Arrow string array), with ``run_ids`` counted already when given."""
        from rankmeter.data.qrels import Qrels

        if isinstance(judged, Qrels):
            tally = cls(judged.query_strings, judged.rows_of, natural=True)
        else:
            ids = _distinct_strings(judged)
            tally = cls(ids, lambda found: _rows_in(found, ids), natural=False)
        if run_ids is not None:
            tally.add(run_ids)
        return tally

    def add(self, run_ids: Any) -> None:
        """Count a part of the run: its query ids (strings, or an Arrow string array), none
        counted before (repeats within the part count once)."""
        from rankmeter.data.arrays import take

        ids = _distinct_strings(run_ids)
        rows = np.asarray(self._rows_of(ids), dtype=np.int64)
        found = rows >= 0
        self._answered[rows[found]] = True
        self._with_results += len(ids)
        missing = np.flatnonzero(~found)
        if len(missing):
            self._only_ran += len(missing)
            firsts = _first_natural(take(ids, missing))
            self._examples = list(_first_natural([*self._examples, *firsts]))

    def overlap(self) -> Overlap:
        """The overlap of the ids counted so far with the judged ids."""
        from rankmeter.data.arrays import take

        unanswered = np.flatnonzero(~self._answered)
        if self._natural:  # (the first few rows are the first few ids)
            judged_examples = tuple(take(self._judged, unanswered[:EXAMPLES]).to_pylist())
        else:
            judged_examples = _first_natural(take(self._judged, unanswered))
        return Overlap(
            len(self._judged),
            self._with_results,
            len(self._judged) - len(unanswered),
            len(unanswered),
            self._only_ran,
            judged_examples,
            tuple(self._examples),
        )


def overlap_of(judged_ids: Any, run_ids: Any) -> Overlap:
    """The :class:`Overlap` of a run's query ids (``run_ids``) with the qrels' (``judged_ids``):
    each strings, or an Arrow string array (compared as they are, vectorised: only the ids the
    overlap names become Python strings).

    >>> overlap_of(["1", "2", "3"], ["2", "3", "9"]).to_dict()["judged_without_results_examples"]
    ['1']
    """
    return OverlapTally.of(judged_ids, run_ids).overlap()


def _distinct_strings(ids: Any) -> Any:
    """``ids`` as an Arrow string array without repeats (first seen kept, in their order)."""
    import pyarrow as pa

    from rankmeter.data.arrays import arrow_strings, compute, compute_options, one_chunk

    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        strings = one_chunk(ids)
    else:
        # (ids are checked on the way in: valid Unicode, so arrow_strings takes them)
        strings = arrow_strings([str(q) for q in ids])
    if not pa.types.is_string(strings.type) and not pa.types.is_large_string(strings.type):
        strings = compute(
            "cast", strings, options=compute_options("CastOptions", target_type=pa.string())
        )
    unique = compute("unique", strings)
    return strings if len(unique) == len(strings) else unique


def _rows_in(ids: Any, judged: Any) -> Any:
    """The row of each of ``ids`` in ``judged`` (Arrow string arrays), -1 where absent."""
    from rankmeter.data.arrays import compute, compute_options, numpy_of

    if ids.type != judged.type:  # (string and large_string)
        ids = ids.cast(judged.type)
    lookup = compute_options("SetLookupOptions", value_set=judged)
    return numpy_of(compute("index_in", ids, options=lookup), fill=-1).astype(np.int64)


def _first_natural(ids: Any) -> tuple[str, ...]:
    """The first :data:`EXAMPLES` of distinct ``ids`` (strings, or an Arrow string array) in
    natural order, as Python strings (vectorised for many: no sort key per id)."""
    import pyarrow as pa

    from rankmeter.data.arrays import take
    from rankmeter.data.ids import natural_order

    first = natural_order(ids)[:EXAMPLES]
    if isinstance(ids, pa.Array):
        return tuple(take(ids, first).to_pylist())
    return tuple(str(ids[i]) for i in first)


@dataclass(frozen=True)
class Policies:
    """How an evaluation was done; every result carries the policies that produced it.

    Attributes
    ----------
    rel : float
        Minimum grade counted relevant by binary metrics (trec_eval -l; default 1).
    include_missing : bool
        True: judged queries without results are evaluated as empty rankings and score 0
        (trec_eval -c). False (default): only queries in both run and qrels.
    judged_only : bool
        Unjudged documents are removed from rankings before evaluation (trec_eval -J).
    ties : str
        How equal scores are ordered: ``"trec_eval"`` (doc id descending) or ``"input"``.
    """

    rel: float = 1
    include_missing: bool = False
    judged_only: bool = False
    ties: str = "trec_eval"

    def __post_init__(self) -> None:
        # Checked here, once, for every caller (evaluate, explain, compare): a result never
        # carries policies that could not have been applied.
        from rankmeter._validate import boolean, real
        from rankmeter.data.run import check_ties

        rel = real("rel", self.rel, what="the minimum relevant grade")
        # Kept as given (1 stays 1, 1.5 stays 1.5); a NumPy number becomes Python's.
        object.__setattr__(self, "rel", int(rel) if isinstance(self.rel, Integral) else rel)
        boolean("include_missing", self.include_missing)
        boolean("judged_only", self.judged_only)
        check_ties(self.ties)

    def to_dict(self) -> dict[str, Any]:
        rel: float | int = int(self.rel) if float(self.rel).is_integer() else self.rel
        return {
            "rel": rel,
            "include_missing": self.include_missing,
            "judged_only": self.judged_only,
            "ties": self.ties,
        }

    def describe(self, *, queries: str | None = None) -> str:
        """The policies as one sentence, the one way every output words them.

        ``queries`` words which queries count where the caller decides that (a comparison
        counts every judged query some system answered); ``""`` leaves it out. By default it
        follows ``include_missing``.

        >>> Policies().describe()
        'relevant: grade >= 1; ties: trec_eval; queries in both run and qrels'
        >>> Policies(rel=2, judged_only=True).describe(queries="")
        'relevant: grade >= 2; ties: trec_eval; judged documents only'
        """
        if queries is None:
            queries = (
                "all judged queries" if self.include_missing else "queries in both run and qrels"
            )
        parts = [f"relevant: grade >= {self.to_dict()['rel']}", f"ties: {self.ties}"]
        if queries:
            parts.append(queries)
        if self.judged_only:
            parts.append("judged documents only")
        return "; ".join(parts)


def _plain(metric: Metric, value: float) -> float | int:
    return round(value) if metric.spec.integer else float(value)


class ByMetric(Mapping[str, V], Generic[V]):
    """A read-only mapping keyed by the metrics' labels (the names the user wrote), in the
    order they were asked for; a lookup accepts any name of a metric (``"MRR@10"``,
    ``"RR@10"``, ``"recip_rank"`` where it has no cutoff, a :class:`Metric`).

    >>> from rankmeter.metrics import parse_metrics
    >>> means = ByMetric(parse_metrics(["MRR@10", "ndcg_cut.10"]), {"MRR@10": 0.5, "ndcg_cut.10": 0.25})
    >>> list(means), means["RR@10"], means["nDCG@10"], "P@10" in means
    (['MRR@10', 'ndcg_cut.10'], 0.5, 0.25, False)
    """

    __slots__ = ("_data", "_done", "_measures")

    def __init__(
        self,
        measures: Sequence[Metric | str],
        values: Mapping[str, V],
        *,
        done: str = "evaluated",
    ) -> None:
        self._measures = tuple(measures)
        labels = [m.label if isinstance(m, Metric) else m for m in self._measures]
        self._data = {label: values[label] for label in labels}
        self._done = done

    def __getitem__(self, metric: str | Metric) -> V:
        return self._data[metric_key(metric, self._measures, self._done)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)


def _frozen_column(values: Any) -> FloatArray:
    copy = np.array(values, dtype=np.float64)
    copy.flags.writeable = False
    return copy


class _QueryIds:
    """:attr:`PerQuery.query_ids`: given as strings, or as an Arrow string array (what
    ``evaluate`` gives: a million queries make no million strings until they are asked for),
    a tuple of str when read."""

    def __get__(self, obj: Any, owner: Any = None) -> tuple[str, ...]:
        if obj is None:
            raise AttributeError("query_ids")
        ids = obj.__dict__["_query_ids"]
        if not isinstance(ids, tuple):
            ids = tuple(ids.to_pylist())
            obj.__dict__["_query_ids"] = ids
        return ids

    def __set__(self, obj: Any, ids: Any) -> None:
        import pyarrow as pa

        if "_query_ids" in obj.__dict__:
            raise dataclasses.FrozenInstanceError("cannot assign to field 'query_ids'")
        obj.__dict__["_query_ids"] = (
            ids if isinstance(ids, (tuple, pa.Array, pa.ChunkedArray)) else tuple(ids)
        )


@dataclass(frozen=True)
class PerQuery:
    """Per-query values: one row per evaluated query, one column per metric (named by its
    label). ``query_ids`` may be given as an Arrow string array (made a tuple of str when
    first read)."""

    query_ids: tuple[str, ...]
    metrics: tuple[Metric, ...]
    values: Mapping[str, FloatArray] = field(repr=False)

    def __post_init__(self) -> None:
        frozen = {m.label: _frozen_column(self.values[m.label]) for m in self.metrics}
        object.__setattr__(self, "values", ByMetric(self.metrics, frozen))

    def __len__(self) -> int:
        return len(self.__dict__["_query_ids"])

    def __getitem__(self, metric: str | Metric) -> FloatArray:
        return self.values[metric_key(metric, self.metrics)]

    def worst(self, metric: str | Metric, n: int) -> tuple[tuple[str, float], ...]:
        """The ``n`` queries with the lowest values of ``metric``, lowest first, as
        ``(query_id, value)`` pairs; equal values keep the queries' order (``evaluate
        --worst N``). Fewer when there are fewer queries.

        >>> import rankmeter
        >>> result = rankmeter.evaluate({"q1": {"a": 1}, "q2": {"a": 1}},
        ...                             {"q1": {"b": 2.0, "a": 1.0}, "q2": {"a": 1.0}}, "RR")
        >>> result.per_query.worst("RR", 1)
        (('q1', 0.5),)
        """
        n = check_worst(n)
        values = self[metric]
        order = np.argsort(values, kind="stable")[:n]
        ids = self.__dict__["_query_ids"]
        if isinstance(ids, tuple):
            named = [ids[i] for i in order]
        else:  # (the few ids named, not every query's, made Python strings)
            from rankmeter.data.arrays import take

            named = take(ids, order).to_pylist()
        return tuple((q, float(values[i])) for q, i in zip(named, order, strict=True))

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        """``{query_id: {metric: value}}``."""
        columns = [(m.label, m, self.values[m.label]) for m in self.metrics]
        return {
            q: {name: _plain(m, float(col[i])) for name, m, col in columns}
            for i, q in enumerate(self.query_ids)
        }

    def to_arrow(self) -> Any:
        import pyarrow as pa

        data: dict[str, Any] = {"query_id": pa.array(self.query_ids, type=pa.string())}
        for m in self.metrics:
            col = self.values[m.label]
            data[m.label] = pa.array(col.astype(np.int64) if m.spec.integer else col)
        return pa.table(data)

    def to_pandas(self) -> Any:
        """A DataFrame indexed by query id with one column per metric."""
        import_pandas()
        return self.to_arrow().to_pandas().set_index("query_id")


# (set once the dataclass is made, so the field stays required: its __init__ sets the ids
# through the descriptor, and __repr__ and __eq__ read them through it)
setattr(PerQuery, "query_ids", _QueryIds())  # noqa: B010


def metric_key(
    metric: str | Metric, measures: Sequence[Metric | str], done: str = "evaluated"
) -> str:
    """The label under which ``metric`` (any name of it: ``"MRR@10"``, ``"ndcg_cut.10"``, a
    Metric) was ``done`` among ``measures`` (Metrics, or labels); KeyError naming them
    otherwise."""
    from rankmeter.errors import MetricError
    from rankmeter.metrics import parse_metric

    labels = [m.label if isinstance(m, Metric) else m for m in measures]
    if isinstance(metric, str) and metric in labels:
        return metric
    try:
        wanted = metric if isinstance(metric, Metric) else parse_metric(metric)
    except MetricError as exc:
        raise KeyError(
            f"{metric!r} was not {done} ({exc}); {done} metrics: {', '.join(labels)}"
        ) from None
    for measure, label in zip(measures, labels, strict=True):
        if isinstance(measure, str):
            try:
                measure = parse_metric(measure)
            except MetricError:
                continue
        if measure == wanted:
            return label
    raise KeyError(f"{metric!r} was not {done}; {done} metrics: {', '.join(labels)}")


def judged_cutoff(measures: Sequence[Metric]) -> int:
    """The k of the Judged@k that results carry: the largest cutoff among the metrics asked
    for (nDCG@10 and R@100 -> 100: every rank a metric looks at should be judged), or 10 when
    none has one.

    >>> from rankmeter.metrics import parse_metrics
    >>> judged_cutoff(parse_metrics(["nDCG@10", "R@100", "AP"])), judged_cutoff(parse_metrics(["AP"]))
    (100, 10)
    """
    cutoffs = [m.cutoff for m in measures if m.cutoff is not None]
    return max(cutoffs, default=JUDGED_DEFAULT_K)


def check_judged_below(value: Any) -> float:
    """The threshold of the Judged@k warning, checked: a number from 0 (never warn) to 1."""
    from rankmeter._validate import real

    return real(
        "judged_below",
        value,
        low=0,
        high=1,
        what="reports warn about a run whose Judged@k is below it; 0: never",
    )


def check_worst(value: Any) -> int:
    """How many of the worst queries to list (``evaluate --worst``), checked: an integer >= 1."""
    from rankmeter._validate import integer

    return integer("worst", value, low=1, what="how many of the worst queries to list")


def depth_of(offsets: Any) -> int:
    """A run's *depth*: the most results any one of its queries has (0 for no query), from its
    per-query ``offsets``. The largest count rather than the typical one: a run made with
    ``-k 100`` is 100 deep even when a few queries match fewer documents."""
    counts = np.diff(np.asarray(offsets))
    return int(counts.max()) if len(counts) else 0


def reads_past(metric: Metric, depth: int) -> bool:
    """Whether ``metric`` can read past rank ``depth``: any metric without a cutoff (AP,
    R-Prec, Bpref, R, nDCG, RR, ... read the whole ranking), or one whose cutoff is beyond it
    (R@1000, and P@k/nDCG@k too: a run cut shallower has nothing there, counted as not
    relevant, where a deeper run can still find relevant documents). NumRel counts the qrels
    only."""
    if metric.spec.name == "NumRel":
        return False
    return metric.cutoff is None or metric.cutoff > depth


#: Metrics a deeper run is not favoured on: P without a cutoff (relevant retrieved over
#: retrieved) favours the shallower run, NumRet counts results and Judged how much is
#: judged, not how much is relevant, and NumRel counts the qrels only.
_NOT_FAVOURING_DEEPER = frozenset({"NumRet", "Judged", "NumRel"})


def favours_deeper(metric: Metric, depth: int) -> bool:
    """Whether ``metric`` favours a run deeper than ``depth`` over one cut there: it reads
    past rank ``depth`` (:func:`reads_past`), where the shallower run's missing results count
    as not relevant and the deeper run's relevant documents still count (AP, R, R-Prec,
    Bpref, nDCG, DCG, RR, Success, NumRelRet, and P@k, R@k, nDCG@k with k beyond ``depth``).
    Not P without a cutoff (relevant retrieved over retrieved: it favours the shallower run),
    nor NumRet, Judged and NumRel, which count results, judgments or the qrels, not relevance.

    >>> from rankmeter.metrics import parse_metric
    >>> [favours_deeper(parse_metric(m), 100) for m in ["AP", "P", "P@1000", "NumRet", "RR"]]
    [True, False, True, False, True]
    """
    if metric.spec.name in _NOT_FAVOURING_DEEPER:
        return False
    if metric.spec.name == "P" and metric.cutoff is None:
        return False
    return reads_past(metric, depth)


@dataclass(frozen=True)
class DepthGap:
    """Runs cut at different depths (each run's depth: :func:`depth_of`), and the metrics
    asked for that favour the deeper runs (:func:`favours_deeper`): they read past the
    shallowest depth, where the deeper runs' relevant documents count and the shallower runs
    have none.

    Attributes
    ----------
    depths : ``(run, depth)`` of every run, in the runs' order
    metrics : the labels of the metrics asked for that favour the deeper runs
        (:func:`favours_deeper` than :attr:`shallow`; may be empty: then no number asked for
        is affected)
    """

    depths: tuple[tuple[str, int], ...]
    metrics: tuple[str, ...]

    @property
    def shallow(self) -> int:
        return min(d for _, d in self.depths)

    @property
    def deep(self) -> int:
        return max(d for _, d in self.depths)

    def to_dict(self) -> dict[str, Any]:
        return {
            "depths": dict(self.depths),
            "shallow": self.shallow,
            "deep": self.deep,
            "metrics": list(self.metrics),
        }


def depth_gap(
    depths: Mapping[str, int | None] | Iterable[tuple[str, int | None]],
    measures: Iterable[Metric] = (),
) -> DepthGap | None:
    """The :class:`DepthGap` of runs whose depths differ (None when they are equal, or fewer
    than two runs have a known depth above 0).

    >>> from rankmeter.metrics import parse_metrics
    >>> gap = depth_gap({"minilm": 100, "bm25": 1000}, parse_metrics(["nDCG@10", "R@1000", "AP"]))
    >>> gap.shallow, gap.deep, gap.metrics
    (100, 1000, ('R@1000', 'AP'))
    >>> depth_gap({"a": 100, "b": 100}) is None
    True
    """
    pairs = depths.items() if isinstance(depths, Mapping) else depths
    known = tuple((str(run), int(d)) for run, d in pairs if d is not None and d > 0)
    if len(known) < 2 or len({d for _, d in known}) == 1:
        return None
    shallow = min(d for _, d in known)
    return DepthGap(known, tuple(m.label for m in measures if favours_deeper(m, shallow)))


@dataclass(frozen=True)
class JudgedWarning:
    """A run whose top k is judged less than a threshold: its numbers count the unjudged
    documents as not relevant.

    Attributes
    ----------
    run : str
        The run's name.
    k : int
        The k of Judged@k (see :func:`judged_cutoff`).
    judged : float
        The run's mean Judged@k.
    threshold : float
        The threshold it is below.
    relevant_only : bool
        The qrels hold only relevant documents (:func:`relevant_only`): an unjudged document
        is then assumed not relevant by design, and Judged@k is the run's precision at k, not
        how far it is judged. Reports then say so once instead of warning per run.
    """

    run: str
    k: int
    judged: float
    threshold: float
    relevant_only: bool = field(default=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run": self.run,
            "k": self.k,
            "judged": self.judged,
            "threshold": self.threshold,
        }
        if self.relevant_only:
            out["relevant_only"] = True
        return out


def judged_warning(
    run: str, k: int, judged: float, threshold: float, relevant_only: bool = False
) -> JudgedWarning | None:
    """The warning for a run with mean Judged@k ``judged``, if it is below ``threshold``
    (checked; NaN, a run that answered no query, never warns)."""
    threshold = check_judged_below(threshold)
    if judged < threshold:
        return JudgedWarning(run, k, float(judged), threshold, relevant_only)
    return None


def relevant_only(grades: Any, rel: float) -> bool:
    """Whether qrels hold only relevant judgments: some judgment, and none judged not
    relevant (no grade from 0 up to ``rel``; a negative grade is judged-unjudged, as in
    trec_eval). CISI, many legacy collections and click-derived qrels are so: every document
    not listed is assumed not relevant, and Judged@k is the share of the top k that is
    relevant.

    Qrels with no relevant judgment at all (only negative grades, say) are not relevant-only:
    they judge nothing, and every metric is 0 (:func:`no_relevant`).

    >>> relevant_only([1, 2, 1], 1), relevant_only([0, 1], 1), relevant_only([1, 2], 2)
    (True, False, False)
    >>> relevant_only([-1, -1], 1)
    False
    """
    values = np.asarray(grades, dtype=np.float64)
    return not no_relevant(values, rel) and not bool(np.any((values >= 0) & (values < rel)))


def no_relevant(grades: Any, rel: float) -> bool:
    """Whether qrels judge no document relevant (no grade of ``rel`` or more): every metric of
    every run is then 0, or undefined, and nothing can be learned from them. Qrels holding only
    negative grades (trec_eval's "pooled but not judged") are so.

    >>> no_relevant([-1, -1], 1), no_relevant([0, 2], 1), no_relevant([1, 1], 2)
    (True, False, True)
    """
    values = np.asarray(grades, dtype=np.float64)
    return not bool(np.any(values >= rel))


def judged_mean(judged: FloatArray, num_ret: Any) -> float:
    """The mean Judged@k over the queries a run answered: a query it returned nothing for has
    no top k to judge (under trec_eval -c, or in a comparison, it scores 0 on every metric)."""
    answered = np.asarray(num_ret) > 0
    return float(np.mean(judged[answered])) if answered.any() else math.nan


@dataclass(frozen=True)
class EvalResult:
    """The evaluation of one run.

    Attributes
    ----------
    run : str
        The run's name.
    metrics : Mapping[str, float]
        Metric -> aggregate over queries (mean; sum for counts), keyed by the names the
        metrics were asked for (``"MRR@10"`` stays ``"MRR@10"``); a lookup accepts any name of
        a metric (``result.metrics["RR@10"]``). Always a mapping, even for one metric.
    per_query : PerQuery
        Per-query values (``to_dict``, ``to_pandas``, ``to_arrow``).
    policies : Policies
        The policies used.
    measures : tuple of Metric
        The metrics, parsed, in the order they were asked for.
    judged : float
        The run's mean Judged@k (the ``Judged`` metric at ``judged_k``) over the queries it
        answered, computed with the same qrels and policies whether or not it was asked for:
        how much of what the metrics looked at has a judgment. NaN when not computed.
    judged_k : int
        Its k: the largest cutoff of the metrics asked for, 10 when none has one
        (:func:`judged_cutoff`).
    depth : int or None
        The most results any evaluated query of the run has (so a cutoff beyond it measures
        no deeper); None when not known.
    facts : RunFacts or None
        What the evaluation saw of the run's data (its source, query overlap with the qrels,
        written order), for the warnings beside the numbers; None when not known.
    relevant_only : bool
        The qrels hold only relevant judgments (:func:`relevant_only` at the policies' rel):
        the Judged@k warning then says what such qrels mean instead.
    """

    run: str
    metrics: Mapping[str, float]
    per_query: PerQuery
    policies: Policies
    measures: tuple[Metric, ...]
    judged: float = math.nan
    judged_k: int = JUDGED_DEFAULT_K
    depth: int | None = None
    facts: RunFacts | None = field(default=None, compare=False, repr=False)
    relevant_only: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", ByMetric(self.measures, self.metrics))

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    def __getitem__(self, metric: str | Metric) -> float:
        return self.metrics[metric_key(metric, self.measures)]

    def judged_warning(self, threshold: float = JUDGED_BELOW) -> JudgedWarning | None:
        """A :class:`JudgedWarning` if the run's Judged@k is below ``threshold`` (0: never)."""
        return judged_warning(self.run, self.judged_k, self.judged, threshold, self.relevant_only)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """``{"metrics": {...}}``, plus ``"per_query": {qid: {...}}`` when asked."""
        out: dict[str, Any] = {
            "metrics": {m.label: _plain(m, self.metrics[m.label]) for m in self.measures}
        }
        if per_query:
            out["per_query"] = self.per_query.to_dict()
        return out

    def to_pandas(self) -> Any:
        """Per-query values as a DataFrame (index: query id; columns: metrics)."""
        return self.per_query.to_pandas()

    def to_arrow(self) -> Any:
        return self.per_query.to_arrow()

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.metrics.items())
        return f"EvalResult(run={self.run!r}, n_queries={self.n_queries}, {means})"


#: What one run's result has and several runs' results do not (see EvalResults.__getattr__).
_ONE_RUN = frozenset(name for name in dir(EvalResult) if not name.startswith("_")) | frozenset(
    f.name for f in dataclasses.fields(EvalResult)
)


@dataclass(frozen=True)
class EvalResults(Mapping[str, EvalResult]):
    """Evaluations of several runs against the same qrels, keyed by run name (in input order).

    Take one run's :class:`EvalResult` by its name (``results["bm25"].per_query``), or go
    through them all (``for name, result in results.items()``).

    >>> import rankmeter
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> runs = {"bm25": {"q1": {"d1": 1.0}}, "dense": {"q1": {"d2": 1.0}, "q2": {"d2": 1.0}}}
    >>> results = rankmeter.evaluate(qrels, runs, ["P@1"])
    >>> list(results), results["dense"].metrics["P@1"]
    (['bm25', 'dense'], 0.5)
    >>> results["bm25"].per_query.to_dict()
    {'q1': {'P@1': 1.0}}
    """

    results: tuple[EvalResult, ...]

    @classmethod
    def named(cls, results: Sequence[EvalResult], sources: Sequence[str]) -> EvalResults:
        """The evaluations of runs evaluated one by one, keyed by unique names: runs that
        share a name are renamed as :func:`unique_names` says (``sources``: their files), as
        :func:`rankmeter.evaluate` names several runs evaluated together."""
        names = unique_names([r.run for r in results], sources)
        return cls(
            tuple(
                r if r.run == n else dataclasses.replace(r, run=n)
                for r, n in zip(results, names, strict=True)
            )
        )

    def __getitem__(self, run: str) -> EvalResult:
        for result in self.results:
            if result.run == run:
                return result
        raise KeyError(f"no run named {run!r}; runs: {', '.join(self)}")

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: what one run's EvalResult has (per_query,
        # metrics, ...) is asked of several runs. Say how to take one run, by name.
        if name in _ONE_RUN and name != "results":
            runs = list(self)
            first = runs[0] if runs else "NAME"
            raise AttributeError(
                f"{name!r} is one run's: these are the results of {len(runs)} runs "
                f"({', '.join(map(repr, runs))}); take one by name, e.g. "
                f"results[{first!r}].{name}, or loop over results.items()"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __iter__(self) -> Iterator[str]:
        return (r.run for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def policies(self) -> Policies:
        return self.results[0].policies

    def judged_warnings(self, threshold: float = JUDGED_BELOW) -> tuple[JudgedWarning, ...]:
        """The runs whose Judged@k is below ``threshold`` (0: none), in run order."""
        threshold = check_judged_below(threshold)
        found = (r.judged_warning(threshold) for r in self.results)
        return tuple(w for w in found if w is not None)

    @property
    def measures(self) -> tuple[Metric, ...]:
        return self.results[0].measures

    def to_dict(self, *, per_query: bool = False) -> list[dict[str, Any]]:
        """A list of ``{"run": name, "metrics": {...}[, "per_query": {...}]}``."""
        return [{"run": r.run, **r.to_dict(per_query=per_query)} for r in self.results]

    def to_pandas(self) -> Any:
        """Aggregates as a DataFrame: one row per run, one column per metric."""
        pd = import_pandas()
        rows = [{"run": r.run, **dict(r.metrics)} for r in self.results]
        return pd.DataFrame(rows).set_index("run")

    def __repr__(self) -> str:
        return f"EvalResults({', '.join(repr(r.run) for r in self.results)})"
