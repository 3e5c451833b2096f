r"""All systems at once: a two-way ANOVA and every pair compared, family-wise, on paired scores.

The input is the query x system matrix of one metric (``n`` queries, rows; ``k`` systems,
columns), every system scored on the same queries. Two things are computed:

- The **two-way ANOVA** without interaction, ``score ~ system + query`` (statsmodels' ``ols``
  with ``C(system) + C(query)`` and ``anova_lm`` give the same table): with row means
  :math:`\bar x_{i\cdot}`, column means :math:`\bar x_{\cdot j}` and the grand mean
  :math:`\bar x`, :math:`SS_{sys} = n\sum_j(\bar x_{\cdot j}-\bar x)^2`,
  :math:`SS_{query} = k\sum_i(\bar x_{i\cdot}-\bar x)^2` and
  :math:`SS_{res} = \sum_{ij}(x_{ij}-\bar x_{i\cdot}-\bar x_{\cdot j}+\bar x)^2` on
  :math:`k-1`, :math:`n-1` and :math:`(n-1)(k-1)` degrees of freedom. The query term takes out
  what makes a query easy or hard for every system: that is the pairing.
- **All pairs**, with the family-wise error of the :math:`k(k-1)/2` comparisons held at
  ``alpha``:

  - ``"tukey"``: Tukey's HSD on the two-way model. A pair's statistic is
    :math:`q = |\bar x_{\cdot a}-\bar x_{\cdot b}| / \sqrt{MS_{res}/n}`, its p-value the tail of
    the studentized range distribution with ``k`` groups and the residual degrees of freedom
    (``scipy.stats.studentized_range``), its simultaneous interval
    :math:`\Delta \pm q_{1-\alpha}\sqrt{MS_{res}/n}`. (A one-way Tukey HSD, such as
    statsmodels' ``pairwise_tukeyhsd`` or ranx's, ignores the pairing: its residual holds the
    queries' spread too, so it finds far fewer differences.)
  - ``"randomised-tukey"``: the randomised Tukey HSD of Carterette (2012, "Multiple testing in
    statistical analysis of systems-based information retrieval experiments", TOIS 30(1)).
    Under the null hypothesis that the systems are interchangeable, the scores of each query
    may be permuted among the systems. Each of ``resamples`` random permutations (one per
    query, drawn from ``Generator(PCG64(seed))`` in chunks fixed by ``(seed, n, k, resamples)``)
    gives system means; the largest minus the smallest of them is the statistic. A pair's
    p-value is :math:`(c + 1)/(B + 1)`, ``c`` the permutations whose range reaches the pair's
    absolute difference (the observed assignment counted once, as rankmeter's randomization
    test counts it). Comparing every pair with the distribution of the *largest* difference is
    what holds the family-wise error.

Both report the smallest significant difference (the HSD) and a **compact letter display**:
systems that share a letter are not significantly different (:func:`compact_letters`, the
insert-and-absorb algorithm of Piepho, 2004).

The letter display is written by hand: neither scipy nor statsmodels has one. The ANOVA and
the randomised Tukey HSD are a few array operations; statsmodels' ``ols`` would build a design
matrix of ``n + k`` columns for the same sums (the tests compare it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.errors import PolicyError
from rankmeter.stats import _checks
from rankmeter.stats._resampling import CHUNK_ELEMENTS, RELATIVE_TOLERANCE

#: The all-pairs methods, the default first.
ALL_PAIRS_METHODS: tuple[str, ...] = ("tukey", "randomised-tukey")

_METHOD_LABELS = {
    "tukey": "Tukey HSD (two-way: system + query)",
    "randomised-tukey": "randomised Tukey HSD (Carterette 2012)",
}


def all_pairs_label(method: str, *, resamples: int | None = None, seed: int | None = None) -> str:
    """How a reader sees an all-pairs method, e.g. ``randomised Tukey HSD (Carterette 2012;
    10,000 permutations, seed 0)``.

    >>> all_pairs_label("tukey")
    'Tukey HSD (two-way: system + query)'
    >>> all_pairs_label("randomised-tukey", resamples=1_000, seed=3)
    'randomised Tukey HSD (Carterette 2012; 1,000 permutations, seed 3)'
    """
    method = _validate.choice("method", method, ALL_PAIRS_METHODS, what="the all-pairs method")
    label = _METHOD_LABELS[method]
    if method == "randomised-tukey" and resamples is not None:
        drawn = f"{resamples:,} permutations" + (f", seed {seed}" if seed is not None else "")
        label = label.removesuffix(")") + f"; {drawn})"
    return label


@dataclass(frozen=True)
class TwoWayAnova:
    """The two-way ANOVA ``score ~ system + query`` (no interaction) of a query x system matrix.

    Attributes
    ----------
    n_queries, n_systems : the matrix's shape
    ss_systems, ss_queries, ss_residual : sums of squares
    df_systems, df_queries, df_residual : their degrees of freedom (``k - 1``, ``n - 1``,
        ``(n - 1)(k - 1)``)
    ms_systems, ms_queries, ms_residual : mean squares (sum of squares over its df)
    f_systems, p_systems : the F statistic and p-value of "the systems' means differ"
    f_queries, p_queries : the same for the queries (large on any IR collection: queries differ
        in difficulty, which is why the pairing matters)

    An F with no residual variance is ``inf`` (p 0) where the term varies, NaN (p 1) where
    it does not.
    """

    n_queries: int
    n_systems: int
    ss_systems: float
    ss_queries: float
    ss_residual: float
    df_systems: int
    df_queries: int
    df_residual: int
    ms_systems: float
    ms_queries: float
    ms_residual: float
    f_systems: float
    p_systems: float
    f_queries: float
    p_queries: float

    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain Python value."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class PairDifference:
    """One pair of systems compared within the family of all pairs.

    Attributes
    ----------
    first, second : the two systems (``first`` comes first in the systems' order)
    difference : mean of ``first`` minus mean of ``second``
    statistic : Tukey's studentized range ``q``; for the randomised method the absolute
        difference (compared with the permutations' ranges)
    p_value : family-wise adjusted (single-step) p-value
    significant : ``p_value < alpha``
    low, high : Tukey's simultaneous interval of the difference at ``1 - alpha``; NaN for the
        randomised method (its permutations test, they do not estimate)
    """

    first: str
    second: str
    difference: float
    statistic: float
    p_value: float
    significant: bool
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain Python value."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class AllPairs:
    """Every pair of systems compared on one metric, family-wise: what :func:`all_pairs` returns.

    Attributes
    ----------
    systems : the systems, in the order given
    means : each system's mean, in the same order
    method : ``"tukey"`` or ``"randomised-tukey"``
    alpha : the family-wise significance level
    anova : the two-way ANOVA of the matrix
    pairs : every pair ``(systems[a], systems[b])`` with ``a < b``, in that order
    hsd : the smallest absolute difference that is significant (the honestly significant
        difference; ``inf`` when none can be)
    letters : per system (same order), its letters in the compact letter display: systems
        sharing a letter are not significantly different; letters go from the best mean
    resamples, seed : the randomised method's permutations and seed (None for Tukey)
    better : ``"higher"``, or ``"lower"`` where a smaller mean is better (RBP_resid): the
        letters then start from the lowest mean
    """

    systems: tuple[str, ...]
    means: tuple[float, ...]
    method: str
    alpha: float
    anova: TwoWayAnova
    pairs: tuple[PairDifference, ...]
    hsd: float
    letters: tuple[str, ...]
    resamples: int | None = None
    seed: int | None = None
    better: str = "higher"

    @property
    def n_queries(self) -> int:
        """How many queries every system was scored on."""
        return self.anova.n_queries

    @property
    def label(self) -> str:
        """The method as a reader sees it (:func:`all_pairs_label`)."""
        return all_pairs_label(self.method, resamples=self.resamples, seed=self.seed)

    def pair(self, a: str, b: str) -> PairDifference:
        """The comparison of systems ``a`` and ``b``, in either order (the difference is then
        ``a`` minus ``b``)."""
        for p in self.pairs:
            if (p.first, p.second) == (a, b):
                return p
            if (p.first, p.second) == (b, a):
                return PairDifference(
                    first=a,
                    second=b,
                    difference=-p.difference,
                    statistic=p.statistic,
                    p_value=p.p_value,
                    significant=p.significant,
                    low=-p.high,
                    high=-p.low,
                )
        raise PolicyError(
            f"no pair {a!r}, {b!r}: the systems are {', '.join(repr(s) for s in self.systems)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain Python values (the ANOVA and the pairs as dicts)."""
        return {
            "systems": list(self.systems),
            "means": list(self.means),
            "method": self.method,
            "label": self.label,
            "alpha": self.alpha,
            "n_queries": self.n_queries,
            "anova": self.anova.to_dict(),
            "pairs": [p.to_dict() for p in self.pairs],
            "hsd": self.hsd,
            "letters": dict(zip(self.systems, self.letters, strict=True)),
            "resamples": self.resamples,
            "seed": self.seed,
        }


def two_way_anova(scores: Any) -> TwoWayAnova:
    """The two-way ANOVA ``score ~ system + query`` of a query x system matrix.

    Parameters
    ----------
    scores : array_like of shape (n_queries, n_systems)
        One metric's per-query values, a column per system, at least 2 x 2, all finite.

    Returns
    -------
    TwoWayAnova

    Examples
    --------
    Three queries, three systems:

    >>> table = two_way_anova([[0.1, 0.2, 0.3], [0.5, 0.4, 0.7], [0.3, 0.3, 0.5]])
    >>> table.df_systems, table.df_queries, table.df_residual
    (2, 2, 4)
    >>> round(table.ss_systems, 4), round(table.ss_residual, 4), round(table.f_systems, 3)
    (0.08, 0.0133, 12.0)
    >>> round(table.p_systems, 4)
    0.0204
    """
    return _anova(_matrix(scores))


def _matrix(scores: Any) -> _checks.FloatArray:
    values = _checks.matrix("scores", scores)
    n, k = values.shape
    if n < 2 or k < 2:
        raise PolicyError(
            f"scores has shape {values.shape}; an analysis of all pairs needs at least 2 queries "
            "(rows) and 2 systems (columns)"
        )
    return values


def _f_test(ms: float, ms_residual: float, df: int, df_residual: int) -> tuple[float, float]:
    from scipy import stats as scipy_stats

    if ms_residual == 0.0:
        return (math.inf, 0.0) if ms > 0.0 else (math.nan, 1.0)
    f = ms / ms_residual
    return f, float(scipy_stats.f.sf(f, df, df_residual))


def _anova(values: _checks.FloatArray) -> TwoWayAnova:
    n, k = values.shape
    grand = float(values.mean())
    row_means = values.mean(axis=1)
    column_means = values.mean(axis=0)
    residuals = values - row_means[:, None] - column_means[None, :] + grand
    ss_systems = float(n * ((column_means - grand) ** 2).sum())
    ss_queries = float(k * ((row_means - grand) ** 2).sum())
    ss_residual = float((residuals**2).sum())
    df_systems, df_queries, df_residual = k - 1, n - 1, (n - 1) * (k - 1)
    ms_systems = ss_systems / df_systems
    ms_queries = ss_queries / df_queries
    ms_residual = ss_residual / df_residual
    f_systems, p_systems = _f_test(ms_systems, ms_residual, df_systems, df_residual)
    f_queries, p_queries = _f_test(ms_queries, ms_residual, df_queries, df_residual)
    return TwoWayAnova(
        n_queries=n,
        n_systems=k,
        ss_systems=ss_systems,
        ss_queries=ss_queries,
        ss_residual=ss_residual,
        df_systems=df_systems,
        df_queries=df_queries,
        df_residual=df_residual,
        ms_systems=ms_systems,
        ms_queries=ms_queries,
        ms_residual=ms_residual,
        f_systems=f_systems,
        p_systems=p_systems,
        f_queries=f_queries,
        p_queries=p_queries,
    )


def all_pairs(
    scores: Any,
    systems: Sequence[str] | None = None,
    *,
    method: str = "tukey",
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    better: str = "higher",
) -> AllPairs:
    r"""Compare every pair of systems on paired scores, holding the family-wise error at alpha.

    Parameters
    ----------
    scores : array_like of shape (n_queries, n_systems)
        One metric's per-query values, a column per system (at least 2 x 2, all finite).
    systems : sequence of str, optional
        The columns' names; default ``"0"``, ``"1"``, ...
    method : {"tukey", "randomised-tukey"}, default "tukey"
        Tukey's HSD on the two-way (system + query) model, or Carterette's randomised Tukey HSD
        (permutations of each query's scores among the systems).
    alpha : float, default 0.05
        The family-wise significance level.
    resamples : int, default 10,000
        Random permutations (randomised method only; at least
        :data:`rankmeter.stats.MIN_RESAMPLES`).
    seed : int, default 0
        Seed of the permutations: the same seed gives the same p-values.
    better : {"higher", "lower"}, default "higher"
        Which way the metric is better: the letters start from the best mean.

    Returns
    -------
    AllPairs

    Examples
    --------
    >>> scores = [[0.1, 0.2, 0.3], [0.5, 0.4, 0.7], [0.3, 0.3, 0.5], [0.2, 0.4, 0.5]]
    >>> result = all_pairs(scores, ["a", "b", "c"])
    >>> round(result.anova.p_systems, 4), result.letters
    (0.0083, ('b', 'b', 'a'))
    >>> pair = result.pair("c", "a")
    >>> round(pair.difference, 3), round(pair.p_value, 4), pair.significant
    (0.225, 0.0085, True)

    The randomised Tukey HSD, on the same scores:

    >>> randomised = all_pairs(scores, ["a", "b", "c"], method="randomised-tukey", seed=0)
    >>> round(randomised.pair("c", "a").p_value, 4), randomised.letters
    (0.0497, ('b', 'ab', 'a'))
    """
    values = _matrix(scores)
    k = values.shape[1]
    names = _names(systems, k)
    method = _validate.choice("method", method, ALL_PAIRS_METHODS, what="the all-pairs method")
    alpha = _validate.alpha(alpha)
    drawn: int | None = None
    used_seed: int | None = None
    if method == "randomised-tukey":
        from rankmeter.stats._adequacy import MIN_RESAMPLES

        drawn = _validate.resamples(
            resamples,
            low=MIN_RESAMPLES,
            what="random permutations; fewer cannot give a p-value below 0.05",
        )
        used_seed = _validate.seed(seed)
    anova = _anova(values)
    column_means = values.mean(axis=0)
    pairs_at = list(itertools.combinations(range(k), 2))
    differences = np.array([column_means[a] - column_means[b] for a, b in pairs_at])
    if drawn is None:
        statistic, pvalues, hsd, half_width = _tukey(differences, anova, alpha)
        lows, highs = differences - half_width, differences + half_width
    else:
        assert used_seed is not None
        statistic, pvalues, hsd = _randomised(values, differences, alpha, drawn, used_seed)
        lows = highs = np.full(len(pairs_at), math.nan)
    significant = pvalues < alpha
    pairs = tuple(
        PairDifference(
            first=names[a],
            second=names[b],
            difference=float(differences[i]),
            statistic=float(statistic[i]),
            p_value=float(pvalues[i]),
            significant=bool(significant[i]),
            low=float(lows[i]),
            high=float(highs[i]),
        )
        for i, (a, b) in enumerate(pairs_at)
    )
    better = _validate.choice("better", better, ("higher", "lower"))
    sign = -1.0 if better == "lower" else 1.0
    letters = compact_letters(
        names,
        [sign * float(m) for m in column_means],
        [(p.first, p.second) for p in pairs if p.significant],
    )
    return AllPairs(
        systems=names,
        means=tuple(float(m) for m in column_means),
        method=method,
        alpha=alpha,
        anova=anova,
        pairs=pairs,
        hsd=hsd,
        letters=tuple(letters[s] for s in names),
        resamples=drawn,
        seed=used_seed,
        better=better,
    )


def _names(systems: Sequence[str] | None, k: int) -> tuple[str, ...]:
    if systems is None:
        return tuple(str(j) for j in range(k))
    names = tuple(str(s) for s in systems)
    if len(names) != k:
        raise PolicyError(f"systems names {len(names)} systems; scores has {k} columns")
    if len(set(names)) != k:
        twice = next(s for s in names if names.count(s) > 1)
        raise PolicyError(f"systems names {twice!r} twice; every system needs its own name")
    return names


def _tukey(
    differences: _checks.FloatArray, anova: TwoWayAnova, alpha: float
) -> tuple[_checks.FloatArray, _checks.FloatArray, float, float]:
    """Studentized ranges, p-values, the HSD and the intervals' half-width."""
    from scipy import stats as scipy_stats

    k, df = anova.n_systems, anova.df_residual
    spread = math.sqrt(anova.ms_residual / anova.n_queries)
    critical = float(scipy_stats.studentized_range.ppf(1.0 - alpha, k, df))
    if spread == 0.0:
        # No residual variance: a difference is certain, no difference is no evidence.
        q = np.where(differences != 0.0, math.inf, 0.0)
        pvalues = np.where(differences != 0.0, 0.0, 1.0)
        return q, pvalues, 0.0, 0.0
    q = np.abs(differences) / spread
    pvalues = np.asarray(scipy_stats.studentized_range.sf(q, k, df), dtype=np.float64)
    return q, np.clip(pvalues, 0.0, 1.0), critical * spread, critical * spread


def permutation_ranges(values: _checks.FloatArray, resamples: int, seed: int) -> Iterator[Any]:
    """The range (largest minus smallest system mean) of each random permutation of every
    query's scores among the systems, in chunks fixed by ``(seed, n, k, resamples)``."""
    n, k = values.shape
    rng = np.random.Generator(np.random.PCG64(seed))
    rows = max(1, CHUNK_ELEMENTS // (n * k))
    done = 0
    while done < resamples:
        size = min(rows, resamples - done)
        order = np.argsort(rng.random((size, n, k)), axis=2)
        permuted = np.take_along_axis(values[None, :, :], order, axis=2)
        system_means = permuted.sum(axis=1) / n
        yield system_means.max(axis=1) - system_means.min(axis=1)
        done += size


def _randomised(
    values: _checks.FloatArray,
    differences: _checks.FloatArray,
    alpha: float,
    resamples: int,
    seed: int,
) -> tuple[_checks.FloatArray, _checks.FloatArray, float]:
    """Absolute differences, their p-values against the permutations' ranges, and the HSD."""
    observed = np.abs(differences)
    # Means that are equal in exact arithmetic may differ in their last bits (a permutation
    # adds the same values in another order): they count as reaching the observed difference.
    tolerance = RELATIVE_TOLERANCE * float(np.abs(values).mean(axis=0).max())
    ranges = np.sort(np.concatenate(list(permutation_ranges(values, resamples, seed))))
    # How many ranges reach each difference: one sorted search, not a pairs x resamples table.
    reached = resamples - np.searchsorted(ranges, observed - tolerance, side="left")
    pvalues = np.asarray((reached + 1.0) / (resamples + 1.0), dtype=np.float64)
    # The HSD: the smallest difference whose p-value is below alpha. With c permutations at or
    # above it p = (c + 1) / (B + 1), so at most `allowed` permutations may reach it.
    allowed = math.ceil(alpha * (resamples + 1)) - 2
    if allowed < 0:
        return observed, pvalues, math.inf
    return observed, pvalues, float(ranges[resamples - 1 - allowed])


def _letter(index: int) -> str:
    """a, b, ..., z, aa, ab, ...: the name of the index-th letter group."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def compact_letters(
    systems: Sequence[str],
    means: Sequence[float],
    significant: Sequence[tuple[str, str]],
) -> dict[str, str]:
    """The compact letter display: letters such that two systems share one exactly when they
    are not significantly different.

    Insert and absorb (Piepho, 2004): start with one group of every system; for each
    significant pair, split every group holding both into one without the first and one
    without the second, then drop the groups contained in another. What remains are the
    largest sets of systems no two of which differ significantly. Letters go by the groups'
    best mean: ``a`` marks the group of the best system.

    Parameters
    ----------
    systems : the systems' names
    means : their means (higher is better), to order the letters
    significant : the pairs that differ significantly

    Returns
    -------
    dict
        ``{system: letters}``, e.g. ``{"c": "a", "b": "ab", "a": "b"}``.

    Examples
    --------
    >>> compact_letters(["a", "b", "c"], [0.2, 0.3, 0.5], [("a", "c")])
    {'a': 'b', 'b': 'ab', 'c': 'a'}
    >>> compact_letters(["x", "y"], [0.1, 0.2], [])
    {'x': 'a', 'y': 'a'}
    """
    names = [str(s) for s in systems]
    if len(means) != len(names):
        raise PolicyError(f"means has {len(means)} values for {len(names)} systems")
    known = set(names)
    for a, b in significant:
        if a not in known or b not in known:
            unknown = a if a not in known else b
            raise PolicyError(f"significant pair names {unknown!r}, which is not a system")
        if a == b:
            raise PolicyError(f"significant pair ({a!r}, {b!r}) names one system twice")
    # Best mean first; ties keep the order given.
    rank = {s: r for r, s in enumerate(sorted(names, key=lambda s: -means[names.index(s)]))}
    groups: list[frozenset[str]] = [frozenset(names)] if names else []
    for a, b in significant:
        split: list[frozenset[str]] = []
        for group in groups:
            if a in group and b in group:
                split += [group - {a}, group - {b}]
            else:
                split.append(group)
        groups = [g for g in set(split) if g and not any(g < other for other in split)]
    ordered = sorted(groups, key=lambda g: sorted(rank[s] for s in g))
    return {s: "".join(_letter(i) for i, group in enumerate(ordered) if s in group) for s in names}
