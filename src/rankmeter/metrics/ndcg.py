"""DCG and nDCG: graded gain discounted by rank, normalised by the ideal ordering.

Gains beyond float64 (``gain=exp`` of a grade of 1024 or more, or gains that add up past
1.8e308) are an error naming the query and the grade, never inf or NaN: DCG has no finite value
there, and nDCG would be inf / inf.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankmeter.errors import RankmeterError
from rankmeter.metrics._spec import Breakdown, Metric, MetricSpec, Param, approx, num, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked

GAIN = Param(
    "gain",
    "choice",
    "linear",
    "gain of a grade g: linear = g (trec_eval), exp = 2^g - 1 (Burges et al.); exp takes grades "
    "up to 1023, as 2^1024 is beyond float64: a larger grade is an error that names it",
    choices=("linear", "exp"),
)
# The largest grade whose exp gain 2^g - 1 is a finite float64.
MAX_EXP_GRADE = 1023


def gain(grades: FloatArray, kind: str) -> FloatArray:
    """Gain of each grade; grades <= 0 (and unjudged documents) gain nothing.

    An exp gain beyond float64 is inf here, without NumPy's overflow warning: the kernels
    refuse it with an error that names the grade (see :func:`_finite`).
    """
    positive = np.maximum(grades, 0.0)
    if kind != "exp":
        return positive
    with np.errstate(over="ignore"):
        return np.exp2(positive) - 1.0


def _finite(
    sums: FloatArray, ranked: Ranked, metric: Metric, groups: IntArray, grades: FloatArray
) -> FloatArray:
    """``sums`` (per-query DCGs), or an error naming the query and the grade whose gain is beyond
    float64: an infinite DCG is no number, and nDCG as inf / inf would be NaN.

    Computing nDCG finitely in log space was considered and rejected: DCG of the same grades
    cannot be finite, the explanation's gains could not be shown, and a grade of 1024 or more
    with gain=exp is far more likely a score in the grade column than a real judgment.
    """
    bad = np.flatnonzero(~np.isfinite(sums))
    if len(bad) == 0:
        return sums
    query = int(bad[0])
    top = float(grades[groups == query].max())
    single = not np.isfinite(gain(np.array([top]), metric.get("gain"))[0])
    raise GainOverflow(metric, top, f"query {str(ranked.query_ids[query])!r}", single=single)


class GainOverflow(RankmeterError):
    """A DCG beyond float64: one gain (a grade of 1024 or more with gain=exp), or the sum of a
    query's gains. ``where`` names the ranking (``"query 'q1'"``, ``"the grades given"``)."""

    def __init__(self, metric: Metric, grade: float, where: str, *, single: bool) -> None:
        self.metric, self.grade, self.where, self.single = metric, grade, where, single
        if metric.get("gain") == "exp":
            fix = "use gain=linear (trec_eval's gain) or smaller grades"
        else:
            fix = "use smaller grades (gain=linear: each gain is its grade)"
        if single:
            message = (
                f"{metric}: grade {num(grade)} of {where} has the gain 2^{num(grade)} - 1, "
                "beyond the largest float (about 1.8e308; gain=exp takes grades up to "
                f"{MAX_EXP_GRADE}); {fix}"
            )
        else:
            message = (
                f"{metric}: the gains of {where} (grades up to {num(grade)}) add up beyond the "
                f"largest float (about 1.8e308); {fix}"
            )
        super().__init__(message)

    def elsewhere(self, where: str, error: type[RankmeterError]) -> RankmeterError:
        """The same error about another ranking, as another class of error."""
        return error(str(GainOverflow(self.metric, self.grade, where, single=self.single)))


def discount(positions: FloatArray) -> FloatArray:
    """1 / log2(rank + 1) for 0-based positions (rank = position + 1)."""
    return 1.0 / np.log2(positions + 2.0)


def _one(metric: Metric) -> tuple[int] | None:
    """The metric's own cutoff as the cutoffs of the ``*_at`` kernels (None: the whole list)."""
    return None if metric.cutoff is None else (metric.cutoff,)


def dcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """DCG@k for every k of ``cutoffs`` (None: the whole list): (n_queries, len(cutoffs))."""
    from rankmeter.metrics._ranked import totals_within  # not on the import path of names

    top = ranked.within(None if cutoffs is None else max(cutoffs, default=0))
    grades, groups, positions = ranked.grades[top], ranked.groups[top], ranked.positions[top]
    g = gain(grades, metric.get("gain"))
    with np.errstate(over="ignore"):
        sums = totals_within(groups, positions, ranked.n_queries, cutoffs, g * discount(positions))
    # Gains are >= 0, so a sum beyond float64 at any cutoff is one at the deepest.
    if sums.shape[1]:
        _finite(sums[:, -1], ranked, metric, groups, grades)
    return sums


def ideal_dcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """The DCG@k of the ideal ordering of each query's judgments, for every k of ``cutoffs``."""
    from rankmeter.metrics._ranked import totals_within  # not on the import path of names

    groups = ranked.judgment_groups
    positions = np.arange(len(groups), dtype=np.int64) - ranked.judgment_offsets[groups]
    if cutoffs is None:
        keep = np.ones(len(groups), dtype=bool)
    else:
        keep = positions < max(cutoffs, default=0)
    groups, positions = groups[keep], positions[keep]
    grades = ranked.judgment_grades[keep]
    g = gain(grades, metric.get("gain"))
    with np.errstate(over="ignore"):
        sums = totals_within(groups, positions, ranked.n_queries, cutoffs, g * discount(positions))
    if sums.shape[1]:
        _finite(sums[:, -1], ranked, metric, groups, grades)
    return sums


def ndcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """nDCG@k for every k of ``cutoffs`` (None: the whole list): (n_queries, len(cutoffs))."""
    return ratio(dcg_at(ranked, metric, cutoffs), ideal_dcg_at(ranked, metric, cutoffs))


def dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return dcg_at(ranked, metric, _one(metric))[:, 0]


def ideal_dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return ideal_dcg_at(ranked, metric, _one(metric))[:, 0]


def ndcg(ranked: Ranked, metric: Metric) -> FloatArray:
    return ndcg_at(ranked, metric, _one(metric))[:, 0]


#: the most ideal-ordering rows an explanation lists
IDEAL_ROWS = 20


def _terms(gains: FloatArray, positions: FloatArray) -> str:
    """``7/1 + 0/1.585 + 3/2``: gain / log2(rank + 1) per rank; zero gains are left out of
    long sums, and very long sums are shortened."""
    pairs = [(g, p) for g, p in zip(gains.tolist(), positions.tolist(), strict=True)]
    if not pairs:
        return "0"
    if len(pairs) > 10:
        pairs = [(g, p) for g, p in pairs if g != 0] or pairs[:1]
    shown = [f"{num(g)}/{num(np.log2(p + 2.0))}" for g, p in pairs]
    if len(shown) > 12:
        shown = [*shown[:10], f"... ({len(shown) - 11} more)", shown[-1]]
    return " + ".join(shown)


def explain_dcg(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    kind = metric.get("gain")
    gains = gain(ranked.grades, kind)
    positions = ranked.positions
    top = ranked.within(metric.cutoff)
    rule = "2^grade - 1 (gain=exp)" if kind == "exp" else "grade (gain=linear, as trec_eval)"
    steps = [
        f"gain = {rule}; discount = log2(rank + 1); a rank adds gain / discount "
        "(unjudged documents and grades <= 0 gain 0)"
    ]
    label = "DCG" if metric.cutoff is None else f"DCG@{metric.cutoff}"
    if metric.spec is DCG:
        label = str(metric)
    dcg = float(dcg_values(ranked, metric)[0])
    steps.append(f"{label} = {_terms(gains[top], positions[top])} = {approx(dcg)}")
    ideal: tuple[dict[str, object], ...] = ()
    if metric.spec is NDCG:
        grades = np.asarray(ranked.judgment_grades, dtype=np.float64)
        places = np.arange(len(grades), dtype=np.float64)
        if metric.cutoff is not None:
            grades, places = grades[: metric.cutoff], places[: metric.cutoff]
        ideal_gains = gain(grades, kind)
        idcg = float(ideal_dcg_values(ranked, metric)[0])
        positive = int((ideal_gains > 0).sum())
        ideal = tuple(
            {
                "rank": int(p) + 1,
                "grade": grades[i].item(),
                "gain": ideal_gains[i].item(),
                "discount": float(np.log2(p + 2.0)),
                "contribution": float(ideal_gains[i] * discount(places[i : i + 1])[0]),
            }
            for i, p in enumerate(places[: min(positive, IDEAL_ROWS)].tolist())
        )
        order = ", ".join(num(g) for g in grades[:12].tolist()) + (
            ", ..." if len(grades) > 12 else ""
        )
        steps.append(
            f"ideal ordering (the query's judgments, best first): grades {order or 'none'}"
        )
        steps.append(f"ideal {label} = {_terms(ideal_gains, places)} = {approx(idcg)}")
        if idcg == 0:
            steps.append(
                f"no judgment has a positive grade, so the ideal {label} is 0: {metric} = 0"
            )
        else:
            steps.append(f"{metric} = {approx(dcg)} / {approx(idcg)} = {approx(value)}")
        if positive > IDEAL_ROWS:
            steps.append(
                f"the ideal ordering lists its first {IDEAL_ROWS} of {positive} ranks with gain"
            )
    columns = {
        "gain": gains,
        "discount": np.log2(positions + 2.0),
        "contribution": gains * discount(positions),
    }
    return Breakdown(
        steps=tuple(steps),
        columns=columns,
        contributes=gains > 0,
        limit=metric.cutoff,
        ideal=ideal,
    )


NDCG = MetricSpec(
    name="nDCG",
    description="Normalised discounted cumulative gain over the top k: DCG divided by the DCG of "
    "the ideal ordering of the query's judgments. Uses raw grades (not --rel). 0 when no "
    "judgment has a positive grade.",
    formula="nDCG@k = DCG@k / IDCG@k;  DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)",
    kernel=ndcg,
    params=(GAIN,),
    aliases=("NDCG",),
    trec_names=(("ndcg_cut", True), ("ndcg", False)),
    reference="Järvelin & Kekäläinen 2002; trec_eval ndcg and ndcg_cut.k",
    uses=("grade", "gain", "discount", "contribution"),
    explain=explain_dcg,
    at_cutoffs=ndcg_at,
)

DCG = MetricSpec(
    name="DCG",
    description="Discounted cumulative gain over the top k (not normalised). Uses raw grades.",
    formula="DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)",
    kernel=dcg_values,
    params=(GAIN,),
    high=None,
    reference="Järvelin & Kekäläinen 2002",
    uses=("grade", "gain", "discount", "contribution"),
    explain=explain_dcg,
    at_cutoffs=dcg_at,
)

SPECS = (NDCG, DCG)
