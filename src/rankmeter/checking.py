"""check(qrels, runs) -> DataCheck: is the data fit to be evaluated, before a number is trusted?

A run can evaluate without an error and still give a meaningless number. :func:`check` looks
at the data itself, run by run:

- **query overlap**: judged queries without results and result queries without judgments
  (ids from another id scheme, such as ir_datasets' Cranfield ids, match only in part). No
  query in common is fatal; a partial overlap is a warning.
- **score order**: whether the scores rise with the rank, as when the rank and score columns
  are swapped or lower scores mean better (distances). Defined in :func:`score_order`. Fatal:
  rankmeter ranks by score descending, so the ranking it evaluates is upside down.
- **duplicates**: every repeated (query, doc) pair, counted (the readers stop at the first).
  Fatal: the readers refuse the run.
- **ties**: the share of tied positions in the top k, and how far each metric can move across
  the orders of the tied results (:class:`TieRange`); a warning when it can move by
  :data:`TIE_SPREAD` or more.
- **Judged@k**: how much of each run's top k is judged; a warning below :data:`JUDGED_BELOW`.
- **depth**: each run's depth (the most results any of its queries has); runs cut at
  different depths get a warning (:func:`depth_warning`), since every metric that reads past
  the shallower depth favours the deeper run.
- the qrels' **grade distribution**, and whether they hold only relevant documents (some
  grade of ``rel`` or more and none from 0 up to it, as CISI's and click-derived qrels):
  then every unjudged document is assumed not relevant, Judged@k is precision rather than
  coverage, and one ``"relevant_only"`` warning says so in place of each run's Judged@k
  warning. Qrels that judge no document relevant (only negative grades, trec_eval's "pooled
  but not judged", or none of ``rel`` or more) make every metric 0: a fatal
  ``"no_relevant"`` finding.

:func:`data_warnings` gives the cheap checks (overlap and score order) for commands that
evaluate (``rankmeter evaluate``, ``rankmeter compare``), to be printed beside their numbers.

Result objects are frozen and know ``to_dict()``; :mod:`rankmeter.report.checking` words them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import integer, real
from rankmeter.data import Qrels, Run
from rankmeter.data.run import unique_names
from rankmeter.errors import PolicyError
from rankmeter.io import as_qrels, read_qrels
from rankmeter.io.rows import RunRows, read_run_rows
from rankmeter.results import (
    EXAMPLES,
    DepthGap,
    Overlap,
    ScoreOrder,
    depth_gap,
    depth_of,
    no_relevant,
    overlap_of,
    relevant_only,
)

__all__ = [
    "EXAMPLES",
    "JUDGED_BELOW",
    "TIE_SPREAD",
    "DataCheck",
    "DataWarning",
    "DepthGap",
    "Duplicates",
    "Overlap",
    "QrelsSummary",
    "RunCheck",
    "ScoreOrder",
    "TieRange",
    "Ties",
    "check",
    "clearly_rising",
    "data_warnings",
    "depth_warning",
    "result_warnings",
    "score_order",
]

#: A metric that can move by this much (absolute) across tie orders gets a warning.
TIE_SPREAD = 0.01
#: Judged@k below this gets a warning (the default of ``rankmeter evaluate --judged-below``).
JUDGED_BELOW = 0.9


@dataclass(frozen=True)
class Duplicates:
    """Repeated (query, doc) pairs of a run.

    Attributes
    ----------
    lines : rows that repeat a pair seen before (rows minus distinct pairs)
    pairs : distinct pairs written more than once
    examples : ``(query, doc, times written)`` of the first few pairs, in file order
    """

    lines: int
    pairs: int
    examples: tuple[tuple[str, str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "pairs": self.pairs,
            "examples": [{"query": q, "doc": d, "times": n} for q, d, n in self.examples],
        }


@dataclass(frozen=True)
class TieRange:
    """How far one metric can move across the orders of tied results.

    Attributes
    ----------
    metric : the metric's label
    value : its mean under trec_eval's tie order (score descending, then doc id descending)
    best, worst : its mean with every group of equal scores ordered by grade descending (best)
        or ascending (worst; unjudged counts as grade 0), evaluated by ``evaluate`` with
        ``ties="input"`` on the run so reordered
    """

    metric: str
    value: float
    best: float
    worst: float

    @property
    def spread(self) -> float:
        return self.best - self.worst

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "best": self.best,
            "worst": self.worst,
            "spread": self.spread,
        }


@dataclass(frozen=True)
class Ties:
    """Tied scores in a run's top k, and what they can do to its metrics.

    Attributes
    ----------
    k : the cutoff
    positions : top-k positions over the queries in common with the qrels
    tied : those whose score another result of the same query shares (anywhere in its
        ranking: a tie across the cutoff decides what is in the top k)
    ranges : one :class:`TieRange` per metric
    """

    k: int
    positions: int
    tied: int
    ranges: tuple[TieRange, ...]

    @property
    def share(self) -> float:
        """The share of tied positions in the top k (0 when there are none)."""
        return self.tied / self.positions if self.positions else 0.0

    @property
    def luck(self) -> tuple[TieRange, ...]:
        """The metrics that can move by :data:`TIE_SPREAD` or more."""
        return tuple(r for r in self.ranges if r.spread >= TIE_SPREAD)

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "positions": self.positions,
            "tied": self.tied,
            "share": self.share,
            "metrics": [r.to_dict() for r in self.ranges],
        }


@dataclass(frozen=True)
class DataWarning:
    """One thing found in a run: ``kind`` is ``"no_overlap"``, ``"partial_overlap"``,
    ``"score_order"``, ``"duplicates"``, ``"ties"``, ``"judged"``, ``"depth"``,
    ``"relevant_only"`` or ``"no_relevant"`` (fatal: the qrels judge no document relevant);
    ``fatal`` when it makes the run's numbers meaningless. ``detail`` is
    the finding's record (an :class:`Overlap`, :class:`ScoreOrder`, :class:`Duplicates`,
    :class:`Ties` or, for ``"depth"``, a :class:`DepthGap` of every run, found on the
    shallowest; for ``"judged"``, the run's Judged@k as a float; for ``"relevant_only"`` and
    ``"no_relevant"``, findings on the qrels (``run`` empty, ``source`` the qrels'), the
    :class:`QrelsSummary`). Worded by :func:`rankmeter.report.checking.warning_line`."""

    run: str
    source: str
    kind: str
    fatal: bool
    detail: Any
    k: int | None = None
    #: For an overlap found by an evaluation: whether it scored the judged queries without
    #: results as 0 (``compare``'s default, ``evaluate -c``) rather than leaving them out.
    missing_scored: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        detail = self.detail
        return {
            "run": self.run,
            "source": self.source,
            "kind": self.kind,
            "fatal": self.fatal,
            "detail": detail.to_dict() if hasattr(detail, "to_dict") else detail,
            **({"k": self.k} if self.k is not None else {}),
            **({"missing_scored": self.missing_scored} if self.missing_scored is not None else {}),
        }


@dataclass(frozen=True)
class RunCheck:
    """What :func:`check` found in one run.

    ``order`` is None when the input keeps no written order (a Run object); ``ties`` and
    ``judged`` (mean Judged@k over the queries in common) are None when the run has no query
    in common with the qrels.
    """

    name: str
    source: str
    rows: int
    overlap: Overlap
    order: ScoreOrder | None
    duplicates: Duplicates
    ties: Ties | None
    judged: float | None
    k: int
    #: The most results any of its queries has (:func:`rankmeter.results.depth_of`).
    depth: int = 0
    #: The qrels hold only relevant documents: its low Judged@k is then precision, said
    #: once for the qrels (:attr:`DataCheck.warnings`), not as this run's warning.
    relevant_only: bool = False

    @property
    def warnings(self) -> tuple[DataWarning, ...]:
        """Every finding, the fatal ones first."""
        found = [*_order_and_overlap(self.name, self.source, self.overlap, self.order)]
        if self.duplicates.lines:
            found.append(DataWarning(self.name, self.source, "duplicates", True, self.duplicates))
        if self.ties is not None and self.ties.luck:
            found.append(DataWarning(self.name, self.source, "ties", False, self.ties, self.k))
        if self.judged is not None and self.judged < JUDGED_BELOW and not self.relevant_only:
            found.append(DataWarning(self.name, self.source, "judged", False, self.judged, self.k))
        return tuple(sorted(found, key=lambda w: not w.fatal))

    @property
    def ok(self) -> bool:
        """No fatal finding."""
        return not any(w.fatal for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "rows": self.rows,
            "ok": self.ok,
            "overlap": self.overlap.to_dict(),
            "score_order": None if self.order is None else self.order.to_dict(),
            "duplicates": self.duplicates.to_dict(),
            "ties": None if self.ties is None else self.ties.to_dict(),
            "judged": self.judged,
            "depth": self.depth,
            "warnings": [w.to_dict() for w in self.warnings],
        }


@dataclass(frozen=True)
class QrelsSummary:
    """The qrels: where from, how many queries and judgments, each grade's count (ascending
    by grade), whether they hold only relevant documents (some grade of ``rel`` or more and
    none from 0 up to it: :func:`rankmeter.results.relevant_only`) and whether they judge no
    document relevant (:func:`rankmeter.results.no_relevant`)."""

    source: str
    queries: int
    judgments: int
    grades: tuple[tuple[float, int], ...]
    relevant_only: bool = False
    no_relevant: bool = False
    #: The minimum grade counted relevant.
    rel: float = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "queries": self.queries,
            "judgments": self.judgments,
            "grades": [{"grade": _number(g), "count": n} for g, n in self.grades],
            "relevant_only": self.relevant_only,
            "no_relevant": self.no_relevant,
            "rel": _number(self.rel),
        }


@dataclass(frozen=True)
class DataCheck:
    """What :func:`check` found: the qrels' summary and one :class:`RunCheck` per run.
    ``asked``: the metrics were asked for (not the default ``nDCG@k``), so the depth warning
    names only those of them the depths affect."""

    qrels: QrelsSummary
    runs: tuple[RunCheck, ...]
    k: int
    metrics: tuple[str, ...]
    asked: bool = False

    @property
    def warnings(self) -> tuple[DataWarning, ...]:
        """The qrels' fatal finding (no relevant judgment), each run's findings, then the
        qrels' relevant-only note and runs cut at different depths: with the metrics asked
        for, when they are affected; with none asked for, whatever the metrics (the data are
        being checked before any metric is chosen)."""
        found = []
        if self.qrels.no_relevant:
            found.append(DataWarning("", self.qrels.source, "no_relevant", True, self.qrels))
        found += [w for r in self.runs for w in r.warnings]
        if self.qrels.relevant_only:
            found.append(
                DataWarning("", self.qrels.source, "relevant_only", False, self.qrels, self.k)
            )
        gap = depth_warning(
            {r.name: r.depth for r in self.runs},
            _measures(self.metrics),
            sources={r.name: r.source for r in self.runs},
            unaffected=not self.asked,
        )
        return tuple(found if gap is None else [*found, gap])

    @property
    def ok(self) -> bool:
        """No fatal finding: in a run, or in the qrels (``rankmeter check`` exits 1
        otherwise)."""
        return not self.qrels.no_relevant and all(r.ok for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "k": self.k,
            "metrics": list(self.metrics),
            "qrels": self.qrels.to_dict(),
            "runs": [r.to_dict() for r in self.runs],
            # Every finding, as the table and Markdown list them: the qrels' and those across
            # runs (depth) too, which no one run holds.
            "warnings": [w.to_dict() for w in self.warnings],
        }


def check(
    qrels: Any,
    runs: Any,
    *,
    k: int = 10,
    metrics: str | Iterable[str] | None = None,
    rel: float = 1,
    qrels_format: str | None = None,
    run_format: str | None = None,
) -> DataCheck:
    """Check qrels and runs before trusting the numbers they give.

    Parameters
    ----------
    qrels : what :func:`rankmeter.evaluate` takes (a path, a dict, a frame, a Qrels)
    runs : one run (a path, a dict, a frame, a Run) or a list of them, or ``{name: run}``
    k : the top k looked at for ties and Judged@k (an integer >= 1)
    metrics : the metrics whose range across tie orders is reported; default ``nDCG@k``.
        Asked for, they are also the metrics the depth warning names (those the runs'
        depths affect: none, no warning); by default it warns of any difference in depth
    rel : the minimum grade counted relevant (trec_eval -l), for the metrics and for what
        the qrels hold (relevant only, no relevant judgment)
    qrels_format, run_format : the file formats, when not detected (``"trec"``, ``"csv"``, ...)

    Returns
    -------
    DataCheck, whose ``ok`` is False when a run's numbers would be meaningless: no query in
    common with the qrels, scores rising with the rank, or repeated (query, doc) pairs; or
    when the qrels judge no document relevant.

    Examples
    --------
    A run whose scores rise with its rank (the best document last):

    >>> qrels = {"q1": {"a": 1, "n": 0}, "q2": {"b": 1}}
    >>> run = {"q1": {"a": 1.0, "x": 2.0, "y": 3.0}, "q3": {"b": 1.0}}
    >>> result = check(qrels, run, k=3)
    >>> result.ok, [w.kind for w in result.warnings]
    (False, ['score_order', 'partial_overlap', 'judged'])
    >>> result.runs[0].overlap.judged_without_results_examples
    ('q2',)
    """
    from rankmeter.evaluation import resolve_metrics

    k = integer("k", k, low=1, what="the cutoff looked at")
    rel = real("rel", rel, what="the minimum grade counted relevant")
    measures = resolve_metrics(f"nDCG@{k}" if metrics is None else metrics)
    loaded = (
        read_qrels(qrels, format=qrels_format)
        if qrels_format is not None and isinstance(qrels, str)
        else as_qrels(qrels)
    )
    named = _named_runs(runs)
    read = [read_run_rows(value, format=run_format, name=name) for name, value in named]
    # Runs that share a name (their TREC tag) are told apart by their files, as evaluate does.
    unique = unique_names([r.name for r in read], [r.source for r in read])
    summary = _qrels_summary(loaded, rel)
    checked = [
        replace(
            _check_run(loaded, replace(rows, name=name), k, measures, rel),
            relevant_only=summary.relevant_only,
        )
        for rows, name in zip(read, unique, strict=True)
    ]
    labels = tuple(m.label for m in measures)
    return DataCheck(summary, tuple(checked), k, labels, asked=metrics is not None)


def data_warnings(
    qrels: Any, runs: Any, *, run_format: str | None = None
) -> tuple[DataWarning, ...]:
    """The warnings a command that evaluates prints beside its numbers: for each run, its
    query overlap with the qrels (``"no_overlap"``, fatal; ``"partial_overlap"``) and its
    score order (``"score_order"``, fatal: scores rising with the rank). Cheap: one read of
    each run, no evaluation.

    ``runs``: one run or several, as :func:`check` takes them; a Run object has no written
    order, so only its overlap is checked. Word each with
    :func:`rankmeter.report.checking.warning_line`.

    >>> [w.kind for w in data_warnings({"q1": {"a": 1}}, {"q2": {"a": 1.0}})]
    ['no_overlap']
    """
    loaded = as_qrels(qrels)
    found: list[DataWarning] = []
    for name, value in _named_runs(runs):
        rows = read_run_rows(value, format=run_format, name=name, docs=False)
        queries = _query_codes(rows)
        overlap = _overlap(loaded, queries[1])
        order = score_order(rows, queries[0]) if rows.written else None
        found += _order_and_overlap(rows.name, rows.source, overlap, order)
    return tuple(found)


def result_warnings(result: Any, *, run_format: str | None = None) -> tuple[DataWarning, ...]:
    """The warnings to print beside the numbers of an evaluation or a comparison, from what
    it saw of each run (:class:`~rankmeter.results.RunFacts`): a partial query overlap, and
    scores that rise with the rank; for a comparison (``compare``, ``all-pairs``), last, runs
    cut at different depths when a metric compared reads past the shallower depth
    (:func:`depth_warning`).

    No second read of a run, but for one case: when a run's written order says its results
    were given lowest score first, a run read from a regular file is read again and judged by
    its rank column as :func:`check` does (a run written bottom-up, rank 1000 first, is then
    fine); a run from a pipe or an object is judged by its written order. The evaluation went
    on, so each finding is a warning here (``fatal`` False), even one that :func:`check`
    calls fatal. An empty overlap gets here only from ``evaluate(..., include_missing=True)``
    (``compare`` and ``evaluate`` without it refuse such a run), as a ``no_overlap`` warning.

    Parameters
    ----------
    result : an :class:`~rankmeter.results.EvalResult`, an
        :class:`~rankmeter.results.EvalResults`, a :class:`~rankmeter.comparison.Comparison`
        or an :class:`~rankmeter.comparison.AllPairsComparison`
    run_format : the runs' format, for the one re-read (None: from the file name)

    >>> from rankmeter import evaluate
    >>> result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, "P@1")
    >>> [w.kind for w in result_warnings(result)]
    ['partial_overlap']
    """
    import os

    depths: dict[str, int | None] = {}
    measures: tuple[Any, ...] = ()
    if hasattr(result, "facts") and hasattr(result, "policies"):  # one EvalResult
        named = [(result.run, result.facts)]
        scored = bool(result.policies.include_missing)
    elif hasattr(result, "results"):  # EvalResults: their numbers side by side
        named = [(r.run, r.facts) for r in result.results]
        scored = bool(result.policies.include_missing)
        depths = {r.run: r.depth for r in result.results}
        measures = tuple(result.results[0].measures) if result.results else ()
    else:  # a Comparison (every judged query is compared unless include_missing is False)
        # or an all-pairs comparison, which keeps no facts
        named = list(getattr(result, "facts", {}).items())
        scored = bool(result.settings.policies.include_missing)
        depths = dict(getattr(result, "depths", {}))
        measures = _measures(getattr(result, "metrics", ())) if depths else ()
    # Runs cut at different depths, shown side by side (evaluate of several runs, compare,
    # all-pairs): a warning naming the metrics asked for that favour the deeper runs.
    sources = {name: facts.source for name, facts in named if facts is not None}
    gap = depth_warning(depths, measures, sources=sources)
    found: list[DataWarning] = []
    for name, facts in named:
        if facts is None:
            continue
        order: ScoreOrder | None = facts.written_order
        if (
            order is not None
            and order.reversed
            and order.by == "written order"  # not yet read by its rank column
            and os.path.isfile(facts.source)
        ):
            rows = read_run_rows(facts.source, format=run_format, name=name, docs=False)
            order = score_order(rows) if rows.written else order
        if facts.overlap.empty:
            # Only with include_missing (every judged query scored 0 here) does such a run
            # get this far; it would read as a plain 0 without a word.
            found.append(DataWarning(name, facts.source, "no_overlap", False, facts.overlap))
        if facts.overlap.partial:
            found.append(
                DataWarning(
                    name, facts.source, "partial_overlap", False, facts.overlap, None, scored
                )
            )
        if order is not None and order.reversed:
            found.append(DataWarning(name, facts.source, "score_order", False, order))
    return tuple(found if gap is None else [*found, gap])


def depth_warning(
    depths: Mapping[str, int | None],
    measures: Iterable[Any] = (),
    *,
    sources: Mapping[str, str] | None = None,
    unaffected: bool = False,
) -> DataWarning | None:
    """The warning about runs cut at different depths (``depths``: run -> the most results
    any of its queries has), found on the shallowest run: a ``"depth"`` :class:`DataWarning`
    whose detail is the :class:`DepthGap`, naming the ``measures`` that read past the
    shallowest depth. None when the depths are equal, or when no measure is affected and
    not ``unaffected`` (``rankmeter check`` warns before any metric is chosen).

    >>> from rankmeter.metrics import parse_metrics
    >>> w = depth_warning({"minilm": 100, "bm25": 1000}, parse_metrics(["nDCG@10", "AP"]))
    >>> w.run, w.detail.metrics
    ('minilm', ('AP',))
    >>> depth_warning({"minilm": 100, "bm25": 1000}, parse_metrics(["nDCG@10"])) is None
    True
    """
    gap = depth_gap(depths, measures)
    if gap is None or not (gap.metrics or unaffected):
        return None
    run = next(name for name, d in gap.depths if d == gap.shallow)
    return DataWarning(run, (sources or {}).get(run, ""), "depth", False, gap)


def _measures(labels: Iterable[str]) -> tuple[Any, ...]:
    """The metrics of a result's labels (each parses back)."""
    from rankmeter.metrics import parse_metric

    return tuple(parse_metric(label).labelled(label) for label in labels)


def score_order(rows: RunRows, query_codes: npt.NDArray[np.int64] | None = None) -> ScoreOrder:
    """Whether a run's scores fall as its rank grows.

    The written ranking of a query is its rank column's order (ascending; equal ranks in
    file order) when every rank of the run is a whole number, else the order of its lines (a
    rank column of fractions holds scores: the columns are swapped). Along it, each step to
    the next result with a different score either rises or falls; a query *rises* when it
    has more rising steps than falling ones. Queries whose scores are all equal say nothing.
    The run is *reversed* when more than half of the other queries rise.

    >>> rows = read_run_rows({"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 3.0, "d": 2.0}})
    >>> order = score_order(rows)
    >>> order.queries, order.rising, order.reversed
    (2, 1, False)
    """
    if query_codes is None:
        query_codes = _query_codes(rows)[0]
    scores = _scores(rows)
    n = len(scores)
    position = np.arange(n, dtype=np.int64)
    ranks = rows.ranks
    whole = ranks is not None and bool(np.all(np.isfinite(ranks) & (ranks == np.floor(ranks))))
    fractions = ranks is not None and not whole and bool(np.any(np.isfinite(ranks)))
    if whole and ranks is not None:
        order = np.lexsort((position, ranks, query_codes))
        by = "rank column"
    else:
        order = np.lexsort((position, query_codes))
        by = "file order"
    q, s = query_codes[order], scores[order]
    same = q[1:] == q[:-1]
    steps = np.sign(s[1:] - s[:-1])
    n_queries = int(query_codes.max(initial=-1)) + 1
    up = np.bincount(q[1:][same & (steps > 0)], minlength=n_queries)
    down = np.bincount(q[1:][same & (steps < 0)], minlength=n_queries)
    moving = (up + down) > 0
    return ScoreOrder(by, int(moving.sum()), int(clearly_rising(up, down).sum()), fractions)


def clearly_rising(up: npt.NDArray[np.int64], down: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Which queries *rise*: at least three in four of their steps rise (``up``: rising steps,
    ``down``: falling ones, per query). A query written in no order (a shuffled file, rank
    column all 0) has about as many of each and does not count, however many queries there
    are; one written lowest score first has only rising steps."""
    return (up > 0) & (up >= 3 * down)


# -- the parts -------------------------------------------------------------------------------


def _named_runs(runs: Any) -> list[tuple[str | None, Any]]:
    """``(name or None, run)`` for one run, a list of runs or ``{name: run}``."""
    if isinstance(runs, (list, tuple)):
        if not runs:
            raise PolicyError("no runs given")
        return [(None, r) for r in runs]
    if isinstance(runs, Mapping) and runs:
        first = next(iter(runs.values()))
        inner = next(iter(first.values()), None) if isinstance(first, Mapping) else None
        if not isinstance(first, Mapping) or isinstance(inner, Mapping):
            return [(str(name), r) for name, r in runs.items()]
    return [(None, runs)]


def _order_and_overlap(
    name: str, source: str, overlap: Overlap, order: ScoreOrder | None
) -> Iterable[DataWarning]:
    if overlap.empty:
        yield DataWarning(name, source, "no_overlap", True, overlap)
    if order is not None and order.reversed:
        yield DataWarning(name, source, "score_order", True, order)
    if overlap.partial:
        yield DataWarning(name, source, "partial_overlap", False, overlap)


def _check_run(
    qrels: Qrels, rows: RunRows, k: int, measures: Sequence[Any], rel: float = 1
) -> RunCheck:
    codes, query_ids = _query_codes(rows)
    overlap = _overlap(qrels, query_ids)
    duplicates, kept = _duplicates(rows)
    run = rows.to_run(kept)
    order = score_order(rows, codes) if rows.written else None
    ties = judged = None
    if not overlap.empty:
        ties, judged = _ties(qrels, run, k, measures, rel)
    return RunCheck(
        run.name,
        rows.source,
        len(rows),
        overlap,
        order,
        duplicates,
        ties,
        judged,
        k,
        depth_of(run.offsets),
    )


def _query_codes(rows: RunRows) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Each row's query as a code, and the query id of each code."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    ids = rows.query_ids
    if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
        ids = pa.array([str(q) for q in ids], type=pa.string())
    if not pa.types.is_string(ids.type):
        ids = pc.cast(ids, pa.string())
    encoded = pc.dictionary_encode(ids)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries().combine_chunks()
    codes = numpy_of(encoded.indices).astype(np.int64)
    return codes, [str(q) for q in encoded.dictionary.to_pylist()]


def _scores(rows: RunRows) -> npt.NDArray[np.float64]:
    """The rows' scores as float64, in written order (the Run was built from them, so they
    are numbers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    scores = rows.scores
    if not isinstance(scores, (pa.Array, pa.ChunkedArray)):
        return np.asarray(scores, dtype=np.float64)
    return np.asarray(numpy_of(pc.cast(scores, pa.float64())), dtype=np.float64)


def _overlap(qrels: Qrels, run_queries: Iterable[str]) -> Overlap:
    return overlap_of(qrels.query_ids, run_queries)


def _duplicates(rows: RunRows) -> tuple[Duplicates, npt.NDArray[np.int64] | None]:
    """Every repeated (query, doc) pair, and the rows to keep (the first of each pair; None:
    all of them)."""
    import pyarrow as pa

    from rankmeter.data.arrays import numpy_of

    n = len(rows)
    if not isinstance(rows.query_ids, (pa.Array, pa.ChunkedArray)):
        return Duplicates(0, 0, ()), None  # a dict or a Run holds each pair once
    table = pa.table(
        {"q": rows.query_ids, "d": rows.doc_ids, "row": pa.array(np.arange(n, dtype=np.int64))}
    )
    groups = table.group_by(["q", "d"]).aggregate([("row", "min"), ("row", "count")])
    if groups.num_rows == n:
        return Duplicates(0, 0, ()), None
    first = numpy_of(groups.column("row_min")).astype(np.int64)
    count = numpy_of(groups.column("row_count")).astype(np.int64)
    repeated = np.flatnonzero(count > 1)
    shown = repeated[np.argsort(first[repeated], kind="stable")][:EXAMPLES]
    queries = groups.column("q").take(pa.array(shown)).to_pylist()
    docs = groups.column("d").take(pa.array(shown)).to_pylist()
    examples = tuple(
        (str(q), str(d), int(c)) for q, d, c in zip(queries, docs, count[shown], strict=True)
    )
    found = Duplicates(int(n - groups.num_rows), len(repeated), examples)
    return found, np.sort(first)


def _ties(
    qrels: Qrels, run: Run, k: int, measures: Sequence[Any], rel: float = 1
) -> tuple[Ties, float]:
    """The run's ties in the top k over the queries in common with the qrels, each metric's
    range across tie orders, and the run's Judged@k."""
    from rankmeter.evaluation import evaluate
    from rankmeter.metrics import parse_metric

    judged = set(qrels.query_ids)
    common = run.subset(q for q in run.query_ids if q in judged)
    positions, tied = _tied_positions(common, k)
    judged_metric = parse_metric(f"Judged@{k}")
    asked = [m for m in measures if m != judged_metric]
    as_ranked = evaluate(qrels, common, [*asked, judged_metric], rel=rel)
    ranges: tuple[TieRange, ...] = ()
    if asked:
        best = evaluate(qrels, _reordered(qrels, common, best=True), asked, ties="input", rel=rel)
        worst = evaluate(qrels, _reordered(qrels, common, best=False), asked, ties="input", rel=rel)
        ranges = tuple(
            TieRange(
                m.label,
                float(as_ranked.metrics[m.label]),
                float(best.metrics[m.label]),
                float(worst.metrics[m.label]),
            )
            for m in asked
        )
    return Ties(k, positions, tied, ranges), float(as_ranked.metrics[judged_metric.label])


def _tied_positions(run: Run, k: int) -> tuple[int, int]:
    """Top-k positions, and those whose score another result of its query shares."""
    offsets, scores = run.offsets, run.scores
    n = len(scores)
    segment = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    rank = np.arange(n) - offsets[segment]
    equal_next = (scores[1:] == scores[:-1]) & (segment[1:] == segment[:-1])
    tied = np.zeros(n, dtype=bool)
    tied[:-1] |= equal_next
    tied[1:] |= equal_next
    top = rank < k
    return int(top.sum()), int((tied & top).sum())


def _reordered(qrels: Qrels, run: Run, *, best: bool) -> Run:
    """The run with each group of equal scores ordered by grade (descending for ``best``,
    else ascending; unjudged as 0), for the "input" tie policy to keep."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    table = run.to_arrow()
    n = table.num_rows
    table = table.append_column("row", pa.array(np.arange(n, dtype=np.int64)))
    joined = table.join(
        qrels.to_arrow(), ["query_id", "doc_id"], ["query_id", "doc_id"], join_type="left outer"
    )
    rows = numpy_of(joined.column("row")).astype(np.int64)
    grades = np.zeros(n, dtype=np.float64)
    grades[rows] = numpy_of(joined.column("relevance").cast(pa.float64()), fill=0.0)
    scores = numpy_of(table.column("score"))
    queries = numpy_of(pc.dictionary_encode(table.column("query_id")).combine_chunks().indices)
    keys = grades if not best else -grades
    # The rows are in rank order: query, score descending; within a score, the grade decides.
    order = np.lexsort((np.arange(n), keys, -scores, queries))
    pick = pa.array(order)
    return Run.from_columns(
        table.column("query_id").take(pick),
        table.column("doc_id").take(pick),
        table.column("score").take(pick),
        name=run.name,
        ties="input",
        origin=run.source,
    )


def _qrels_summary(qrels: Qrels, rel: float = 1) -> QrelsSummary:
    grades, counts = np.unique(np.asarray(qrels.grades, dtype=np.float64), return_counts=True)
    return QrelsSummary(
        qrels.source,
        qrels.n_queries,
        len(qrels),
        tuple((float(g), int(c)) for g, c in zip(grades, counts, strict=True)),
        relevant_only(qrels.grades, rel),
        no_relevant(qrels.grades, rel),
        rel,
    )


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
