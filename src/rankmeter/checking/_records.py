"""What :func:`~rankmeter.checking.check` finds, as frozen records that know ``to_dict()``:
one run's :class:`RunCheck` (its :class:`Duplicates`, :class:`Ties` and their
:class:`TieRange`), the qrels' :class:`QrelsSummary`, the whole :class:`DataCheck`, and each
finding as a :class:`DataWarning` (:func:`depth_warning` for runs cut at different depths)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rankmeter.results import Overlap, ScoreOrder, depth_gap

__all__ = [
    "JUDGED_BELOW",
    "TIE_SPREAD",
    "DataCheck",
    "DataWarning",
    "Duplicates",
    "QrelsSummary",
    "RunCheck",
    "TieRange",
    "Ties",
    "depth_warning",
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


def _order_and_overlap(
    name: str, source: str, overlap: Overlap, order: ScoreOrder | None
) -> Iterable[DataWarning]:
    if overlap.empty:
        yield DataWarning(name, source, "no_overlap", True, overlap)
    if order is not None and order.reversed:
        yield DataWarning(name, source, "score_order", True, order)
    if overlap.partial:
        yield DataWarning(name, source, "partial_overlap", False, overlap)


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
