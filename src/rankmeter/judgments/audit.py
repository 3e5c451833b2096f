"""Model labels checked against human ones: can the model's labels stand in for the humans'?

:func:`audit_labels` answers in three parts, each from the room that already computes it:

- agreement on the (query, doc) items both label sets hold: :func:`rankmeter.judgments.agreement`
  on ``{"human": human, "model": model}`` (kappas, alpha, the confusion matrix);
- leniency: the model's mean grade minus the human one on those items (agreement's leniency of
  the rater ``model``), and the confusion matrix (human rows, model columns);
- given two runs or more, whether the conclusions survive the label swap: for each metric the
  systems' order under each label set (:func:`rankmeter.evaluate`), Kendall's tau-b between the
  two orders (``scipy.stats.kendalltau``) with the pairs of systems that flip, and the pairwise
  differences whose significance changes (:func:`rankmeter.compare`'s paired tests, corrected
  over every pair of systems and metric with :func:`rankmeter.stats.correct`).

Written here, and only here: choosing the queries both label sets cover, pairing the systems,
and reading the flips and significance changes off the numbers those functions return.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankmeter import _validate
from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments.agreement import Agreement, PairAgreement

__all__ = ["HUMAN", "MODEL", "LabelAudit", "MetricOrdering", "PairSignificance", "audit_labels"]

#: The rater names the two label sets get in the agreement.
HUMAN = "human"
MODEL = "model"

#: How a pair's significance can change from the human labels to the model's.
CHANGES = ("appears", "vanishes", "reverses")


@dataclass(frozen=True)
class MetricOrdering:
    """One metric: each system's mean under either label set, the two orders, Kendall's tau-b.

    Attributes
    ----------
    metric : str
    human_means, model_means : tuple of (system, mean)
        In the runs' order, from :func:`rankmeter.evaluate` on the shared queries.
    human_order, model_order : tuple of str
        The systems best first (equal means: in the runs' order).
    kendall_tau : float
        Kendall's tau-b between the two vectors of means (``scipy.stats.kendalltau``): 1 when
        the orders agree, -1 when one reverses the other; NaN where undefined (every system has
        the same mean under one label set).
    flips : tuple of (str, str)
        The pairs of systems whose order reverses: ``(a, b)`` with ``a`` ahead under the human
        labels and ``b`` ahead under the model's (a tie on either side is not a flip).
    """

    metric: str
    human_means: tuple[tuple[str, float], ...]
    model_means: tuple[tuple[str, float], ...]
    human_order: tuple[str, ...]
    model_order: tuple[str, ...]
    kendall_tau: float
    flips: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "human_means": dict(self.human_means),
            "model_means": dict(self.model_means),
            "human_order": list(self.human_order),
            "model_order": list(self.model_order),
            "kendall_tau": self.kendall_tau,
            "flips": [list(pair) for pair in self.flips],
        }


@dataclass(frozen=True)
class PairSignificance:
    """Two systems on one metric, tested under either label set.

    ``*_difference`` is ``system_b``'s mean minus ``system_a``'s (on compare's queries),
    ``*_p`` the paired test's p-value corrected over every pair and metric, ``*_significant``
    whether that is below ``alpha``. ``change`` is ``None`` when both label sets reach the
    same conclusion, else ``"appears"`` (significant under the model labels only),
    ``"vanishes"`` (under the human labels only) or ``"reverses"`` (significant under both,
    in opposite directions).
    """

    metric: str
    system_a: str
    system_b: str
    human_difference: float
    human_p: float
    human_significant: bool
    model_difference: float
    model_p: float
    model_significant: bool
    change: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "system_a": self.system_a,
            "system_b": self.system_b,
            "human": {
                "difference": self.human_difference,
                "p_corrected": self.human_p,
                "significant": self.human_significant,
            },
            "model": {
                "difference": self.model_difference,
                "p_corrected": self.model_p,
                "significant": self.model_significant,
            },
            "change": self.change,
        }


@dataclass(frozen=True)
class LabelAudit:
    """Whether model labels can stand in for human ones: the result of :func:`audit_labels`.

    Attributes
    ----------
    human_source, model_source : str
        Where the labels came from.
    n_human, n_model : int
        Labels (grade >= 0) in each set.
    n_shared : int
        (query, doc) items both sets label: what agreement and leniency are measured on.
    agreement : Agreement
        :func:`rankmeter.judgments.agreement` on the two label sets (raters ``human`` and
        ``model``).
    mean_difference : float
        Leniency: the model's grade minus the human one, averaged over the shared items
        (positive: the model is more lenient).
    confusion : tuple of tuple of int
        ``confusion[i][j]``: shared items the humans gave ``categories[i]`` and the model
        ``categories[j]``.
    categories : tuple of numbers
    systems, metrics : tuple of str
        The runs (empty without runs) and the metrics.
    query_ids : tuple of str
        The queries both label sets cover: the orders and tests use these only.
    orderings : tuple of MetricOrdering
        One per metric (empty without runs).
    pairs : tuple of PairSignificance
        Every pair of systems on every metric.
    test, correction, alpha, seed, resamples, rel : the settings of the tests and evaluation.
    notes : tuple of str
    """

    human_source: str
    model_source: str
    n_human: int
    n_model: int
    n_shared: int
    agreement: Agreement
    mean_difference: float
    confusion: tuple[tuple[int, ...], ...]
    categories: tuple[float | int, ...]
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    query_ids: tuple[str, ...]
    orderings: tuple[MetricOrdering, ...]
    pairs: tuple[PairSignificance, ...]
    test: str
    correction: str
    alpha: float
    seed: int
    resamples: int
    rel: float
    notes: tuple[str, ...]

    @property
    def pair_agreement(self) -> PairAgreement:
        """The human-model pair of :attr:`agreement`."""
        return self.agreement.pairs[0]

    @property
    def changes(self) -> tuple[PairSignificance, ...]:
        """The pairs whose significance differs between the label sets."""
        return tuple(p for p in self.pairs if p.change is not None)

    @property
    def flips(self) -> tuple[tuple[str, str, str], ...]:
        """Every flip as ``(metric, a, b)``."""
        return tuple((o.metric, a, b) for o in self.orderings for a, b in o.flips)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN stays NaN: the JSON writer makes it null)."""
        pair = self.pair_agreement
        return {
            "human_source": self.human_source,
            "model_source": self.model_source,
            "human_labels": self.n_human,
            "model_labels": self.n_model,
            "shared_items": self.n_shared,
            "agreement": {
                "raw_agreement": pair.raw,
                "cohen_kappa": pair.kappa,
                "weighted_kappa_linear": pair.kappa_linear,
                "weighted_kappa_quadratic": pair.kappa_quadratic,
                "krippendorff_alpha": {a.level: a.value for a in self.agreement.alpha},
            },
            "leniency": {
                "mean_difference": self.mean_difference,
                "categories": list(self.categories),
                "confusion": [list(row) for row in self.confusion],
            },
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "queries": len(self.query_ids),
            "orderings": [o.to_dict() for o in self.orderings],
            "significance": {
                "test": self.test,
                "correction": self.correction,
                "alpha": self.alpha,
                "seed": self.seed,
                "resamples": self.resamples,
                "pairs": [p.to_dict() for p in self.pairs],
                "changes": [p.to_dict() for p in self.changes],
            },
            "rel": self.rel,
            "notes": list(self.notes),
        }


def audit_labels(
    human: Any,
    model: Any,
    runs: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    metrics: str | Iterable[str] | None = None,
    rel: float = 1,
    alpha: float = 0.05,
    seed: int = 0,
    test: str = "randomization",
    correction: str = "holm",
    resamples: int = 10_000,
    scale: Any = None,
) -> LabelAudit:
    """Check model labels against human ones: agreement, leniency and, given runs, whether the
    systems' order and significant differences survive the swap.

    Parameters
    ----------
    human, model : qrels
        Paths, Qrels, dicts or tables (:func:`rankmeter.io.as_qrels`); a negative grade is
        "not judged" and is no label.
    runs : two runs or more, optional
        As for :func:`rankmeter.compare` (paths, Runs, dicts; or ``{name: run}``).
    metrics : metric names; default nDCG@10, P@10, R@100, RR, AP
    rel : minimum grade counted relevant by the metrics
    alpha, test, correction, resamples, seed
        The paired tests, as for :func:`rankmeter.compare` (resamples from 20, checked as it
        checks them, runs given or not); the correction runs over every pair of systems and
        every metric under one label set.
    scale : str or (int, int), optional
        The grades both sets may use, ``"0-3"`` (a label off it is an error).

    Returns
    -------
    LabelAudit

    Notes
    -----
    Both label sets are cut to the queries they both cover before anything is evaluated, so
    that a query judged by one side only does not move one order and not the other. The orders
    come from :func:`rankmeter.evaluate` (queries in the run and the qrels); the tests from
    :func:`rankmeter.compare` (judged queries that some system answered, a missing answer
    scoring 0). A pair's significance "appears" when the model labels make it significant and
    the human ones do not, "vanishes" in the opposite case, "reverses" when both do with
    opposite signs.

    Examples
    --------
    >>> human = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 0, "b": 3}}
    >>> model = {"q1": {"a": 3, "b": 1, "c": 1}, "q2": {"a": 1, "b": 3}}
    >>> audit = audit_labels(human, model, scale="0-3")
    >>> audit.n_shared, audit.mean_difference
    (5, 0.6)
    """
    from rankmeter import stats
    from rankmeter.evaluation import resolve_metrics
    from rankmeter.io import as_qrels, load_runs
    from rankmeter.judgments.agreement import agreement

    rel = _validate.real("rel", rel, what="the minimum grade counted relevant")
    alpha = _validate.alpha(alpha)
    seed = _validate.seed(seed)
    test = _validate.choice("test", test, stats.TESTS, what="the paired test")
    correction = _validate.choice(
        "correction", correction, stats.CORRECTIONS, what="the multiple-comparison correction"
    )
    # compare's check (its low, MIN_RESAMPLES, is the fewest that can give a p-value below
    # 0.05): the one check of resamples, with or without runs, whatever the count given
    resamples = _validate.resamples(
        resamples,
        low=stats.MIN_RESAMPLES,
        what="randomizations and bootstrap resamples; fewer cannot give a p-value below 0.05",
    )
    measures = resolve_metrics(metrics)
    human_qrels = as_qrels(human)
    model_qrels = as_qrels(model)
    human_labels = _labels(human_qrels)
    model_labels = _labels(model_qrels)
    shared = human_labels.keys() & model_labels.keys()
    if not shared:
        raise FormatError(
            model_qrels.source,
            f"labels no (query, doc) item that {human_qrels.source} labels: nothing to compare "
            "(label a sample of the items the humans judged, e.g. from the same pool)",
        )
    result = agreement({HUMAN: human_qrels, MODEL: model_qrels}, scale=scale, seed=seed)
    pair = result.pairs[0]
    leniency = {r.rater: r for r in result.leniency}
    notes: list[str] = []

    loaded = [] if runs is None else load_runs(runs)
    if runs is not None and len(loaded) < 2:
        raise PolicyError(
            f"an audit of the systems' order needs two runs or more; got {len(loaded)}"
        )
    both_cover = set(human_qrels.query_ids) & set(model_qrels.query_ids)
    query_ids = tuple(q for q in human_qrels.query_ids if q in both_cover)
    orderings: tuple[MetricOrdering, ...] = ()
    pairs: tuple[PairSignificance, ...] = ()
    if loaded:
        names = tuple(r.name for r in loaded)
        only = len(set(human_qrels.query_ids) | set(model_qrels.query_ids)) - len(query_ids)
        notes.append(
            f"the systems are evaluated and tested on the {len(query_ids)} queries both label "
            f"sets cover"
            + (f" ({only} queries labelled by one side only are left out)" if only else "")
        )
        human_cut = _restricted(human_qrels, both_cover)
        model_cut = _restricted(model_qrels, both_cover)
        by_name = {r.name: r for r in loaded}
        orderings = tuple(_orderings(human_cut, model_cut, by_name, measures, rel))
        pairs = _significance(
            human_cut,
            model_cut,
            by_name,
            measures,
            rel=rel,
            alpha=alpha,
            seed=seed,
            test=test,
            correction=correction,
            resamples=resamples,
        )
        for ordering in orderings:
            if math.isnan(ordering.kendall_tau):
                notes.append(
                    f"Kendall's tau of {ordering.metric} is undefined (NaN, null in JSON): "
                    "every system has the same mean under one label set"
                )
    else:
        names = ()
    return LabelAudit(
        human_source=human_qrels.source,
        model_source=model_qrels.source,
        n_human=len(human_labels),
        n_model=len(model_labels),
        n_shared=len(shared),
        agreement=result,
        mean_difference=leniency[MODEL].mean_difference,
        confusion=pair.confusion,
        categories=result.categories,
        systems=names,
        metrics=tuple(m.label for m in measures),
        query_ids=query_ids if loaded else (),
        orderings=orderings,
        pairs=pairs,
        test=test,
        correction=correction,
        alpha=alpha,
        seed=seed,
        resamples=resamples,
        rel=rel,
        notes=(*result.notes, *notes),
    )


def _labels(qrels: Any) -> dict[tuple[str, str], float]:
    """The judged items (grade >= 0: a negative grade is "not judged")."""
    return {(q, d): g for q, d, g in qrels if g >= 0}


def _restricted(qrels: Any, queries: set[str]) -> Any:
    from rankmeter.data import Qrels

    return Qrels.from_dict({q: docs for q, docs in qrels.to_dict().items() if q in queries})


def _order(means: Sequence[tuple[str, float]]) -> tuple[str, ...]:
    """Best first; equal means keep the runs' order (a stable sort)."""
    return tuple(name for name, _ in sorted(means, key=lambda pair: -pair[1]))


def _orderings(
    human: Any, model: Any, runs: Mapping[str, Any], measures: Sequence[Any], rel: float
) -> Iterable[MetricOrdering]:
    from scipy.stats import kendalltau

    from rankmeter.evaluation import evaluate

    names = list(runs)
    under_human = evaluate(human, list(runs.values()), list(measures), rel=rel)
    under_model = evaluate(model, list(runs.values()), list(measures), rel=rel)
    for measure in measures:
        h = [float(under_human[n][measure.label]) for n in names]
        m = [float(under_model[n][measure.label]) for n in names]
        tau = float(kendalltau(h, m, variant="b").statistic)
        flips = tuple(
            (a, b) if h[i] > h[j] else (b, a)
            for (i, a), (j, b) in itertools.combinations(enumerate(names), 2)
            if (h[i] - h[j]) * (m[i] - m[j]) < 0
        )
        human_means = tuple(zip(names, h, strict=True))
        model_means = tuple(zip(names, m, strict=True))
        yield MetricOrdering(
            measure.label,
            human_means,
            model_means,
            _order(human_means),
            _order(model_means),
            tau,
            flips,
        )


def _significance(
    human: Any,
    model: Any,
    runs: Mapping[str, Any],
    measures: Sequence[Any],
    *,
    rel: float,
    alpha: float,
    seed: int,
    test: str,
    correction: str,
    resamples: int,
) -> tuple[PairSignificance, ...]:
    """Every pair of systems on every metric, tested by compare under each label set.

    compare tests each system against one baseline, so it runs once per system as the baseline
    (always with every run: its queries, the judged ones some system answered, stay the same);
    a p-value does not depend on the other systems compared beside it. The correction is then
    applied over all pairs and metrics of one label set, as compare applies it over its own.
    """
    from rankmeter import stats
    from rankmeter.comparison import compare

    names = list(runs)
    keys = [
        (m.label, names[i], names[j])
        for m in measures
        for i, j in itertools.combinations(range(len(names)), 2)
    ]
    found: dict[str, dict[tuple[str, str, str], tuple[float, float]]] = {}
    for side, qrels in ((HUMAN, human), (MODEL, model)):
        tested: dict[tuple[str, str, str], tuple[float, float]] = {}
        for baseline in names[:-1]:
            result = compare(
                qrels,
                dict(runs),
                list(measures),
                baseline=baseline,
                test=test,
                correction=correction,
                alpha=alpha,
                resamples=resamples,
                seed=seed,
                worst=0,
                rel=rel,
            )
            for d in result.differences:
                tested[(d.metric, baseline, d.system)] = (d.difference, d.p_value)
        found[side] = tested
    corrected = {
        side: stats.correct([found[side][k][1] for k in keys], correction, alpha=alpha)
        for side in (HUMAN, MODEL)
    }
    out = []
    for index, (metric, a, b) in enumerate(keys):
        h_diff, _ = found[HUMAN][(metric, a, b)]
        m_diff, _ = found[MODEL][(metric, a, b)]
        h_sig = bool(corrected[HUMAN].significant[index])
        m_sig = bool(corrected[MODEL].significant[index])
        change = None
        if m_sig and not h_sig:
            change = "appears"
        elif h_sig and not m_sig:
            change = "vanishes"
        elif h_sig and m_sig and h_diff * m_diff < 0:
            change = "reverses"
        out.append(
            PairSignificance(
                metric,
                a,
                b,
                h_diff,
                float(corrected[HUMAN].adjusted[index]),
                h_sig,
                m_diff,
                float(corrected[MODEL].adjusted[index]),
                m_sig,
                change,
            )
        )
    return tuple(out)
