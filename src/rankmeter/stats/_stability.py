r"""Stability of a conclusion: would other queries like these order the systems the same way?

Two resampling checks on a matrix of per-query scores (``n`` queries by ``m`` systems, one
metric), the systems ordered by their mean on all ``n`` queries (the *full order*):

- **Bootstrap.** ``resamples`` query sets of ``n`` queries drawn with replacement. For each
  pair of systems, the share of resamples in which the one ahead on the full set stays ahead
  (its order *kept*), the share in which the two tie and the share in which it falls behind;
  for every resample, Kendall's :math:`\tau_b` between the full order and the resample's order,
  summarised by its mean and quantiles; and the share of resamples that give the full order
  exactly.
- **Split-half.** ``splits`` random splits of the queries into two disjoint halves of
  :math:`\lfloor n/2 \rfloor` queries (one query left out when ``n`` is odd). The share of splits
  whose two halves order every pair the same way, the mean :math:`\tau_b` between the halves'
  orders, and per pair the share of splits in which both halves agree on it.

What the numbers mean. The bootstrap resamples are centred on the observed queries, so a pair's
kept share reads like one minus a one-sided bootstrap p-value: it is above 50% whenever the
full set separates the pair at all, and near 100% only when the difference is large against
its spread. Two systems that differ by chance alone keep their order in 50% to 100% of the
resamples (uniformly spread over query sets, on average about 75%); a pair tied on the full
set is ahead and behind about equally often. The split-half check compares two disjoint
halves, neither of them the full set: over query sets, two systems that differ by chance
alone agree in about half the splits, and a clearly better one in nearly all. On one query set
the halves' differences average to the full set's, so they agree more often the larger it
is (a pair tied on the full set agrees only where both halves tie). Each half has half the
queries, so this check is stricter than the bootstrap: it shows how the conclusion would fare
on a query set of half the size.

Kendall's :math:`\tau_b` is computed from the signs of the pairs' mean differences,
:math:`\tau_b = \sum_p s_p t_p / \sqrt{(P - T_s)(P - T_t)}` over the :math:`P = m(m-1)/2`
pairs, with :math:`T` the tied pairs of each order: exactly ``scipy.stats.kendalltau`` of the
two vectors of means (the tests compare them), vectorised over the resamples. It is undefined
(and left out of the mean and quantiles, and counted) when every system ties in a resample.
Two means closer than a billionth of the largest per-query difference count as tied, so
that rounding in a sum never makes an order.

Reproducibility: the bootstrap resamples come from
:func:`rankmeter.stats._resampling.bootstrap_weights` and the splits from their own stream,
both seeded from ``numpy.random.SeedSequence(seed)``: the same seed gives the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.errors import PolicyError
from rankmeter.stats import _checks
from rankmeter.stats._checks import FloatArray
from rankmeter.stats._resampling import (
    RELATIVE_TOLERANCE,
    Columns,
    bootstrap_weights,
    chunk_sizes,
)

#: Fewest bootstrap resamples and splits: below 100 a share moves in steps of more than 1%.
MIN_STABILITY_RESAMPLES = 100
#: The quantiles of Kendall's tau that are reported.
TAU_QUANTILES: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass(frozen=True)
class PairStability:
    """How stable the order of one pair of systems is.

    Attributes
    ----------
    first, second : the two systems; ``first`` has the better mean on the full set, the higher
        (the lower where lower is better: RBP_resid) (on a tie, the one given first)
    difference : ``first``'s mean minus ``second``'s on the full set (>= 0; <= 0 where lower
        is better)
    full_tie : True when the two means are equal on the full set (no order to keep)
    ahead, tied, behind : the shares of bootstrap resamples in which ``first`` is ahead of,
        tied with and behind ``second`` (they sum to 1)
    split_agreement : the share of splits whose two halves order the pair the same way
    """

    first: str
    second: str
    difference: float
    full_tie: bool
    ahead: float
    tied: float
    behind: float
    split_agreement: float

    @property
    def kept(self) -> float:
        """The share of resamples that keep the full set's order: ``ahead``, or ``tied`` for
        a pair tied on the full set."""
        return self.tied if self.full_tie else self.ahead

    def to_dict(self) -> dict[str, Any]:
        """Every field, and ``kept``, as plain Python values."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["kept"] = self.kept
        return data


@dataclass(frozen=True)
class Stability:
    """Bootstrap and split-half stability of one metric's order of the systems: what
    :func:`query_stability` returns.

    Attributes
    ----------
    systems : the systems, as given
    means : their means on the full set, in the same order
    order : the systems best first (ties keep the given order)
    n : queries in the full set
    resamples, splits, seed : bootstrap resamples, split-half repetitions and the seed
    pairs : one :class:`PairStability` per pair, in the full order (best pairs first)
    same_order : the share of resamples whose order of all systems is the full order
    tau_mean : the mean Kendall's tau between the full order and a resample's
    tau_quantiles : ``(q, tau)`` at each of :data:`TAU_QUANTILES`
    tau_undefined : resamples left out of the tau summary (every system tied in them)
    half : queries in each half of a split (``n // 2``)
    split_same_order : the share of splits whose halves order all systems the same way
    split_tau_mean : the mean Kendall's tau between the two halves' orders
    split_tau_undefined : splits left out of that mean (every system tied in a half)
    better : ``"higher"``, or ``"lower"`` where a smaller mean is better (the order and every
        pair's ``first`` then go by the lower mean)
    """

    systems: tuple[str, ...]
    means: tuple[float, ...]
    order: tuple[str, ...]
    n: int
    resamples: int
    splits: int
    seed: int
    pairs: tuple[PairStability, ...]
    same_order: float
    tau_mean: float
    tau_quantiles: tuple[tuple[float, float], ...]
    tau_undefined: int
    half: int
    split_same_order: float
    split_tau_mean: float
    split_tau_undefined: int
    better: str = "higher"

    def pair(self, a: str, b: str) -> PairStability:
        """The pair of systems ``a`` and ``b``, in either order."""
        for record in self.pairs:
            if {record.first, record.second} == {a, b}:
                return record
        raise PolicyError(f"no pair {a!r}, {b!r}; the systems are {', '.join(self.systems)}")

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain Python values (pairs as dicts, quantiles as ``{q: tau}``)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["systems"] = list(self.systems)
        data["means"] = list(self.means)
        data["order"] = list(self.order)
        data["pairs"] = [p.to_dict() for p in self.pairs]
        data["tau_quantiles"] = {f"{q:g}": tau for q, tau in self.tau_quantiles}
        return data


def query_stability(
    scores: Any,
    systems: Sequence[str] | None = None,
    *,
    resamples: int = 1_000,
    splits: int = 1_000,
    seed: int = 0,
    better: str = "higher",
) -> Stability:
    """How often resampled queries keep the systems' order: bootstrap and split-half.

    Parameters
    ----------
    scores : array_like of shape (n_queries, n_systems)
        One metric's per-query scores, a column per system, the rows paired (the same query).
    systems : sequence of str, optional
        The systems' names (default ``s1``, ``s2``, ...).
    resamples : int, default 1,000
        Bootstrap resamples of the queries (from 100).
    splits : int, default 1,000
        Random splits of the queries into two halves (from 100).
    seed : int, default 0
        The seed: the same seed gives the same numbers.
    better : {"higher", "lower"}, default "higher"
        Which way the metric is better: the order puts the best mean first.

    Returns
    -------
    Stability

    Examples
    --------
    A system better on every query keeps its order in every resample and every split:

    >>> scores = [[0.9, 0.2], [0.8, 0.4], [0.7, 0.1], [0.6, 0.3]]
    >>> result = query_stability(scores, ["bm25", "rand"])
    >>> result.order, result.pair("bm25", "rand").kept, result.split_same_order
    (('bm25', 'rand'), 1.0, 1.0)
    """
    values = _checks.matrix("scores", scores)
    n, m = values.shape
    names = _names(systems, m)
    if m < 2:
        raise PolicyError(
            f"scores has {m} column; stability needs two systems or more (a column each)"
        )
    if n < 2:
        noun = "query" if n == 1 else "queries"
        raise PolicyError(
            f"scores has {n} {noun}; stability needs at least 2 (one for each half of a split)"
        )
    resamples = _validate.resamples(
        resamples,
        low=MIN_STABILITY_RESAMPLES,
        what="bootstrap resamples of the queries",
        default=1_000,
        p_values=False,
        kept=False,
    )
    splits = _count("splits", splits, "random splits of the queries into two halves")
    seed = _validate.seed(seed)
    better = _validate.choice("better", better, ("higher", "lower"))
    sign = -1.0 if better == "lower" else 1.0
    boot_seed, split_seed = (
        int(s) % 2**63
        for s in np.random.SeedSequence(seed).generate_state(2, dtype=np.uint64).tolist()
    )

    means = np.asarray(_checks.means(values), dtype=np.float64)
    order = sorted(range(m), key=lambda j: -sign * means[j])  # stable: ties keep the given order
    first, second = np.triu_indices(m, k=1)
    # Pairs in the full order: (order[a], order[b]) for a < b, so that ``first`` is ahead.
    ranked_first = np.array([order[a] for a in first])
    ranked_second = np.array([order[b] for b in second])
    # turned by the direction: positive where ``first`` is better
    differences = sign * (values[:, ranked_first] - values[:, ranked_second])  # (n, P)
    # Means closer than this count as tied: rounding in a sum never makes an order.
    tolerance = RELATIVE_TOLERANCE * np.maximum(np.abs(differences).max(axis=0), 1e-300)
    full = _signs(differences.mean(axis=0, keepdims=True), tolerance)[0]
    columns = Columns(differences)

    ahead = np.zeros(len(full))
    tied = np.zeros(len(full))
    taus: list[FloatArray] = []
    same = 0
    for weights in bootstrap_weights(n, resamples, boot_seed):
        signs = _signs(columns.weighted_sums(weights) / n, tolerance)
        ahead += (signs > 0).sum(axis=0)
        tied += (signs == 0).sum(axis=0)
        same += int((signs == full).all(axis=1).sum())
        taus.append(_tau_b(full[None, :], signs))
    tau = np.concatenate(taus)
    defined = tau[~np.isnan(tau)]

    half = n // 2
    agree = np.zeros(len(full))
    split_same = 0
    split_taus: list[FloatArray] = []
    rng = np.random.Generator(np.random.PCG64(split_seed))
    for rows in chunk_sizes(n, splits):
        # A random split: the queries with the half smallest keys, then the next half (the
        # largest key left out when n is odd); a partition, not a sort, finds them.
        keys = rng.random((rows, n))
        kth = [half - 1] if n == 2 * half else [half - 1, n - 2]
        by_key = np.argpartition(keys, kth, axis=1)
        one = np.zeros((rows, n))
        np.put_along_axis(one, by_key[:, :half], 1.0, axis=1)
        other = np.zeros((rows, n))
        np.put_along_axis(other, by_key[:, half : 2 * half], 1.0, axis=1)
        left = _signs(columns.weighted_sums(one) / half, tolerance)
        right = _signs(columns.weighted_sums(other) / half, tolerance)
        agree += (left == right).sum(axis=0)
        split_same += int((left == right).all(axis=1).sum())
        split_taus.append(_tau_b(left, right))
    split_tau = np.concatenate(split_taus)
    split_defined = split_tau[~np.isnan(split_tau)]

    pairs = tuple(
        PairStability(
            first=names[int(ranked_first[p])],
            second=names[int(ranked_second[p])],
            difference=float(means[ranked_first[p]] - means[ranked_second[p]]),
            full_tie=bool(full[p] == 0),
            ahead=float(ahead[p] / resamples),
            tied=float(tied[p] / resamples),
            behind=float((resamples - ahead[p] - tied[p]) / resamples),
            split_agreement=float(agree[p] / splits),
        )
        for p in range(len(full))
    )
    return Stability(
        systems=tuple(names),
        means=tuple(float(x) for x in means),
        order=tuple(names[j] for j in order),
        n=n,
        resamples=resamples,
        splits=splits,
        seed=seed,
        pairs=pairs,
        same_order=same / resamples,
        tau_mean=float(defined.mean()) if len(defined) else float("nan"),
        tau_quantiles=tuple(
            (q, float(np.quantile(defined, q)) if len(defined) else float("nan"))
            for q in TAU_QUANTILES
        ),
        tau_undefined=int(len(tau) - len(defined)),
        half=half,
        split_same_order=split_same / splits,
        split_tau_mean=float(split_defined.mean()) if len(split_defined) else float("nan"),
        split_tau_undefined=int(len(split_tau) - len(split_defined)),
        better=better,
    )


def _names(systems: Sequence[str] | None, m: int) -> list[str]:
    if systems is None:
        return [f"s{j + 1}" for j in range(m)]
    names = [str(s) for s in systems]
    if len(names) != m:
        raise PolicyError(
            f"systems has {len(names)} names for {m} columns of scores; give one name per column"
        )
    if len(set(names)) != len(names):
        repeated = next(s for s in names if names.count(s) > 1)
        raise PolicyError(f"systems names {repeated!r} twice; give each column its own name")
    return names


def _count(name: str, value: Any, what: str) -> int:
    """A count of splits: from 100 to :data:`MAX_RESAMPLES`, as resamples are."""
    return _validate.integer(
        name, value, low=MIN_STABILITY_RESAMPLES, high=_checks.MAX_RESAMPLES, what=what
    )


def _signs(mean_differences: FloatArray, tolerance: FloatArray) -> Any:
    """-1, 0 or 1 per pair: behind, tied (within the tolerance) or ahead."""
    signs = np.sign(mean_differences).astype(np.int8)
    signs[np.abs(mean_differences) <= tolerance] = 0
    return signs


def _tau_b(a: Any, b: Any) -> FloatArray:
    """Kendall's tau-b between two orders given by their pairs' signs (rows broadcast);
    NaN where either order ties every pair."""
    pairs = a.shape[-1]
    concordance = (a.astype(np.int64) * b).sum(axis=-1)
    untied_a = pairs - (a == 0).sum(axis=-1)
    untied_b = pairs - (b == 0).sum(axis=-1)
    denominator = np.sqrt(untied_a.astype(np.float64) * untied_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(
            denominator > 0, concordance / np.where(denominator > 0, denominator, 1), np.nan
        )
    return np.asarray(tau, dtype=np.float64)
