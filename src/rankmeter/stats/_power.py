r"""Power and sample size of a paired comparison: is the query set big enough?

Three numbers answer it, for one metric's per-query differences (system minus baseline):

- the **power at n**: the chance that the test calls a true difference of the given size
  significant with the ``n`` queries at hand;
- the **queries needed**: the smallest ``n`` with at least the target power for that difference;
- the **detectable difference** (minimum detectable effect): the smallest true difference that
  the test finds with the target power at the current ``n``.

The paired t-test's numbers are analytic, as statsmodels' ``TTestPower`` (two-sided): with
:math:`d = \delta / s` (the difference over the standard deviation of the per-query
differences), :math:`\nu = n - 1` and :math:`t^* = t_{1-\alpha/2,\nu}`, the power is
:math:`P(T' > t^*) + P(T' < -t^*)` for :math:`T'` noncentral t with :math:`\nu` degrees of
freedom and noncentrality :math:`d\sqrt n`. The sample size and the detectable difference
solve that equation for ``n`` and ``d`` (Brent's method).

The randomization test's numbers are simulated: ``simulations`` query sets of ``n`` queries are
drawn with replacement from the observed differences, centred, scaled to the standard deviation
``sd`` and shifted to the true difference (from a normal distribution with that mean and ``sd``
when only a stated effect and spread are given), and each is tested with the very paired
randomization test of :func:`rankmeter.stats.paired_pvalues` (``resamples`` sign flips; each
block of 16 query sets has its own flips). The power is the share of significant sets, with
the binomial Monte-Carlo standard error :math:`\sqrt{p(1-p)/S}`. The same draws serve every
``n`` and every difference (common random numbers), so that the searches for the queries needed
and the detectable difference see a power that grows steadily with them.

A multiple-comparison correction over ``comparisons`` tests is accounted for by testing each at
:math:`\alpha / m`: exactly Bonferroni's level, and the level the smallest p-value must reach
under Holm and Benjamini-Hochberg (their first step). For Holm and BH the power is therefore a
lower bound, and the queries needed and the detectable difference upper bounds (conservative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.errors import PolicyError
from rankmeter.stats import _checks
from rankmeter.stats._names import CORRECTIONS
from rankmeter.stats._paired import pvalues_of
from rankmeter.stats._resampling import BLOCK_COLUMNS

#: The tests whose power is computed: the t-test analytically, the randomization test by
#: simulation (the others test medians or signs, or a bootstrap whose size is not exact).
POWER_TESTS: tuple[str, ...] = ("t", "randomization")
#: Bounds of the number of simulated query sets: below 100 the Monte-Carlo error (up to 0.05)
#: hides the answer; above a million the simulation takes hours.
MIN_SIMULATIONS = 100
MAX_SIMULATIONS = 1_000_000
#: The simulation searches no further than this many queries by default.
MAX_QUERIES = 10_000


@dataclass(frozen=True)
class PowerAnalysis:
    """The power, the queries needed and the detectable difference of one paired comparison:
    what :func:`power` returns.

    Attributes
    ----------
    test : ``"t"`` (analytic) or ``"randomization"`` (simulated)
    n : queries at hand
    effect : the true difference assumed (metric units): the observed mean difference, or the
        stated effect
    sd : the standard deviation of the per-query differences (observed, ddof 1, or stated)
    effect_size : ``effect / sd`` (Cohen's :math:`d_z`)
    source : where effect and sd come from: ``"observed"``, ``"stated"`` or
        ``"observed differences, stated effect"`` and the like
    alpha : the family-wise significance level asked for
    correction, comparisons : the multiple-comparison correction and how many tests it covers
    alpha_per_test : the level each test is run at (``alpha``, or ``alpha / comparisons``)
    target_power : the power asked for
    power_at_n : the power to detect ``effect`` with ``n`` queries
    n_required : the (real) sample size at which the power reaches ``target_power``: the
        analytic solution for the t-test (as statsmodels' ``solve_power``), an integer for the
        simulation; ``inf`` when it cannot be reached (a zero effect, or beyond ``max_queries``)
    queries_needed : the smallest whole number of queries with at least the target power, or
        None when it cannot be reached
    detectable_effect_size : the smallest :math:`d_z` detected with the target power at ``n``
    detectable_difference : the same in metric units (``detectable_effect_size * sd``)
    simulations, resamples, seed : the simulation's query sets, sign flips per test and seed
        (None for the t-test)
    power_error : the Monte-Carlo standard error of ``power_at_n`` (None for the t-test)
    max_queries : how far the simulation searched for the queries needed (None for the t-test)
    """

    test: str
    n: int
    effect: float
    sd: float
    effect_size: float
    source: str
    alpha: float
    correction: str
    comparisons: int
    alpha_per_test: float
    target_power: float
    power_at_n: float
    n_required: float
    queries_needed: int | None
    detectable_effect_size: float
    detectable_difference: float
    simulations: int | None = None
    resamples: int | None = None
    seed: int | None = None
    power_error: float | None = None
    max_queries: int | None = None

    @property
    def monte_carlo_error(self) -> float | None:
        """The Monte-Carlo standard error of a simulated power near the target (what the queries
        needed and the detectable difference are read at); None for the t-test."""
        if self.simulations is None:
            return None
        return math.sqrt(self.target_power * (1 - self.target_power) / self.simulations)

    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain Python value (``n_required`` may be ``inf``: JSON writers of
        rankmeter turn it into null)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["monte_carlo_error"] = self.monte_carlo_error
        return data


def power(
    differences: Any = None,
    *,
    effect: float | None = None,
    sd: float | None = None,
    n: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = "t",
    correction: str = "none",
    comparisons: int = 1,
    simulations: int = 1_000,
    resamples: int = 1_000,
    seed: int = 0,
    max_queries: int = MAX_QUERIES,
) -> PowerAnalysis:
    r"""Power at the current number of queries, queries needed, and the detectable difference.

    Parameters
    ----------
    differences : array_like of shape (n,), optional
        The observed per-query differences of one metric (system minus baseline). They give
        ``n``, the effect (their mean) and the spread (their standard deviation, ddof 1), and,
        for the randomization test, the shape the simulation resamples.
    effect : float, optional
        The true difference to plan for, in metric units (replaces the observed mean).
    sd : float, optional
        The standard deviation of the per-query differences (replaces the observed one; > 0).
    n : int, optional
        The number of queries at hand (>= 2); required without ``differences``.
    alpha : float, default 0.05
        The significance level (family-wise, with a correction).
    power : float, default 0.8
        The target power, strictly between 0 and 1.
    test : {"t", "randomization"}, default "t"
        The paired t-test (analytic) or the paired randomization test (simulated).
    correction : {"holm", "bonferroni", "bh", "none"}, default "none"
        With any correction but ``"none"``, each test runs at ``alpha / comparisons``.
    comparisons : int, default 1
        How many tests the correction covers (metrics times systems compared).
    simulations : int, default 1,000
        Simulated query sets (randomization test; from 100 to 1,000,000).
    resamples : int, default 1,000
        Random sign flips per simulated test (randomization test).
    seed : int, default 0
        Seed of the simulation: the same seed gives the same numbers.
    max_queries : int, default 10,000
        The simulation searches no further for the queries needed (beyond it: None).

    Returns
    -------
    PowerAnalysis

    Examples
    --------
    76 queries with a mean nDCG@10 difference of 0.03 and a standard deviation of 0.12:

    >>> result = power(effect=0.03, sd=0.12, n=76)
    >>> round(result.power_at_n, 3), result.queries_needed, round(result.detectable_difference, 4)
    (0.576, 128, 0.0391)

    Planning for five metrics with Holm's correction tests each at alpha / 5:

    >>> power(effect=0.03, sd=0.12, n=76, correction="holm", comparisons=5).queries_needed
    191
    """
    test = _validate.choice("test", test, POWER_TESTS)
    alpha = _validate.alpha(alpha)
    target = _validate.real(
        "power", power, low=0, high=1, open_low=True, open_high=True, what="the target power"
    )
    correction = _validate.choice("correction", correction, CORRECTIONS)
    comparisons = _validate.integer(
        "comparisons", comparisons, low=1, what="tests the correction covers"
    )
    seed = _validate.seed(seed)
    per_test = alpha if correction == "none" else alpha / comparisons
    if target <= per_test:
        raise PolicyError(
            f"power={target:g} is not above the alpha each test runs at ({per_test:g}): a test "
            "that rejects at random has that power already; ask for more (0.8 is usual)"
        )
    shape, n, effect, sd, source = _inputs(differences, effect, sd, n)
    d = effect / sd
    if test == "t":
        n_real = _t_sample_size(abs(d), per_test, target)
        d_min = _t_detectable(n, per_test, target)
        return PowerAnalysis(
            test=test,
            n=n,
            effect=effect,
            sd=sd,
            effect_size=d,
            source=source,
            alpha=alpha,
            correction=correction,
            comparisons=comparisons,
            alpha_per_test=per_test,
            target_power=target,
            power_at_n=_t_power(d, n, per_test),
            n_required=n_real,
            queries_needed=_t_whole_queries(abs(d), per_test, target, n_real),
            detectable_effect_size=d_min,
            detectable_difference=d_min * sd,
        )
    simulations = _validate.integer(
        "simulations",
        simulations,
        low=MIN_SIMULATIONS,
        high=MAX_SIMULATIONS,
        what="simulated query sets",
    )
    resamples = _validate.resamples(
        resamples, what="sign flips per simulated test", default=1_000, kept=False
    )
    _check_flips_reach(resamples, per_test, alpha, comparisons)
    max_queries = _validate.integer(
        "max_queries", max_queries, low=2, what="how far to search for the queries needed"
    )
    sim = _Simulation(shape, sd, per_test, simulations, resamples, seed)
    at_n = sim.power(n, effect)
    needed = _simulated_queries(sim, abs(effect), abs(d), per_test, target, max_queries)
    smallest = _simulated_detectable(sim, n, target)
    return PowerAnalysis(
        test=test,
        n=n,
        effect=effect,
        sd=sd,
        effect_size=d,
        source=source,
        alpha=alpha,
        correction=correction,
        comparisons=comparisons,
        alpha_per_test=per_test,
        target_power=target,
        power_at_n=at_n,
        n_required=math.inf if needed is None else needed,
        queries_needed=needed,
        detectable_effect_size=smallest / sd,
        detectable_difference=smallest,
        simulations=simulations,
        resamples=resamples,
        seed=seed,
        power_error=math.sqrt(at_n * (1 - at_n) / simulations),
        max_queries=max_queries,
    )


# power() under another name, for functions whose parameter ``power`` hides it.
_analysis = power


def detectable_difference(
    differences: Any,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    comparisons: int = 1,
    correction: str = "holm",
) -> float:
    """The smallest true mean difference a paired t-test detects with ``power`` on these
    queries: the one number of a compare report's power sentence (see :func:`power_sentence`).

    Analytic (the t-test's), so it costs microseconds; the randomization test's is within a few
    percent of it for any realistic ``n`` (see :func:`power` with ``test="randomization"``).
    ``comparisons`` tests under ``correction`` are each run at ``alpha / comparisons``.

    >>> round(detectable_difference([0.1, -0.05, 0.2, 0.0, 0.15, 0.05, -0.1, 0.3]), 4)
    0.1543
    """
    return _analysis(
        differences, alpha=alpha, power=power, comparisons=comparisons, correction=correction
    ).detectable_difference


def power_sentence(n: int, difference: float, metric: str, power: float) -> str:
    """One sentence for a report: ``with 76 queries a difference of 0.031 nDCG@10 is
    detectable at 80% power``. The metric label is given as written: escape it for the format.

    >>> power_sentence(225, 0.0125, "AP", 0.9)
    'with 225 queries a difference of 0.013 AP is detectable at 90% power'
    >>> power_sentence(3, float("inf"), "AP", 0.8)
    'with 3 queries no difference of AP is detectable at 80% power'
    """
    queries = "query" if n == 1 else "queries"
    if not math.isfinite(difference):  # the test cannot reach its level with so few queries
        return f"with {n} {queries} no difference of {metric} is detectable at {power:.0%} power"
    return (
        f"with {n} {queries} a difference of {difference:.3f} {metric} is detectable at "
        f"{power:.0%} power"
    )


# --- inputs ---------------------------------------------------------------------------------


def _std(values: Any, ddof: int = 0) -> float:
    """The standard deviation, computed on the values scaled to at most 1 in size: finite
    (and quiet) for differences near the largest float, where squaring them overflows."""
    scale = float(np.max(np.abs(values))) if len(values) else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return float(np.std(values, ddof=ddof))
    return scale * float(np.std(values / scale, ddof=ddof))


def _inputs(differences: Any, effect: Any, sd: Any, n: Any) -> tuple[Any, int, float, float, str]:
    """(the centred shape to resample or None, n, effect, sd, where they come from)."""
    if effect is not None:
        effect = _validate.real("effect", effect, what="the true difference, in metric units")
    if sd is not None:
        sd = _validate.real(
            "sd",
            sd,
            low=0,
            open_low=True,
            what="the standard deviation of the per-query differences",
        )
    if differences is None:
        if effect is None and sd is None and n is None:
            raise PolicyError("give the per-query differences, or effect=, sd= and n=")
        if sd is None:
            raise PolicyError("give sd= with effect= and n= (or the observed differences)")
        if n is None:
            raise PolicyError("give n= with effect= and sd= (or the observed differences)")
        if effect is None:
            raise PolicyError("give effect= with sd= and n= (or the observed differences)")
        count = _validate.integer("n", n, low=2, what="queries; a paired test needs two")
        return None, count, effect, sd, "stated"
    values = _checks.matrix("differences", differences)
    if values.shape[1] != 1:
        raise PolicyError(
            f"differences has shape {values.shape}; expected (n_queries,): one metric's "
            "per-query differences"
        )
    column = values[:, 0]
    if len(column) < 2:
        noun = "value" if len(column) == 1 else "values"
        raise PolicyError(f"differences has {len(column)} {noun}; power needs at least 2 queries")
    if n is not None:
        count = _validate.integer("n", n, low=2, what="queries; a paired test needs two")
    else:
        count = len(column)
    observed_sd = _std(column, ddof=1)
    centred = column - float(_checks.means(column)[0])
    if observed_sd == 0.0 and sd is None:
        raise PolicyError(
            f"the {len(column)} differences have no spread (every one is {float(column[0])!r}): power "
            "is undefined; give sd= to state a spread"
        )
    parts = []
    if effect is not None:
        parts.append("stated effect")
    if sd is not None:
        parts.append("stated sd")
    if n is not None:
        parts.append("stated n")
    source = "observed" if not parts else "observed differences, " + ", ".join(parts)
    # Scaled by the population sd (ddof 0), so that the values resampled from have exactly
    # the standard deviation sd planned for (a bootstrap population's own variance).
    shape = centred / _std(column) if observed_sd > 0 else None
    mean = float(_checks.means(column)[0])
    return (
        shape,
        count,
        mean if effect is None else effect,
        observed_sd if sd is None else sd,
        source,
    )


def _check_flips_reach(resamples: int, per_test: float, alpha: float, comparisons: int) -> None:
    """A randomization test with B sign flips has p >= 1/(B+1): refuse B that can never be
    significant at the level each test runs at (its power would be 0 whatever the data)."""
    if 1.0 / (resamples + 1) < per_test:
        return
    level = f"alpha {alpha:g}" if per_test == alpha else f"alpha {alpha:g} over {comparisons} "
    level += "" if per_test == alpha else "comparisons"
    # Ten times the least count that can be significant at all: p-values then resolve the
    # level finely enough for a power close to that of the exact test.
    enough = math.ceil(10.0 / per_test)
    raise PolicyError(
        f"resamples={resamples} sign flips cannot give a p-value below {per_test:g} ({level}): "
        f"the smallest is 1/{resamples + 1}; use resamples >= {enough:,} (10 / {per_test:g})"
    )


# --- the paired t-test, analytic ------------------------------------------------------------


def _t_power(d: float, n: float, alpha: float) -> float:
    """Two-sided power of the one-sample t-test, as statsmodels' ``ttest_power``."""
    import scipy.stats  # heavy: imported when used

    df = n - 1
    critical = scipy.stats.t.isf(alpha / 2, df)
    # Power is symmetric in d. The far tail, P(T' < -t*) = P(T'(-nc) > t*), is written as an
    # upper tail: scipy's nct.cdf returns NaN deep in the tail (nc 15, df 224), its sf 0.
    noncentrality = abs(d) * math.sqrt(n)
    upper = scipy.stats.nct.sf(critical, df, noncentrality)
    lower = scipy.stats.nct.sf(critical, df, -noncentrality)
    if math.isnan(lower):
        lower = 0.0  # it is below 1e-30 wherever scipy cannot compute it
    return float(upper + lower)


def _solve(function: Any, low: float, high: float) -> float:
    import scipy.optimize

    return float(scipy.optimize.brentq(function, low, high, xtol=1e-12, rtol=1e-14))


def _t_sample_size(d: float, alpha: float, target: float) -> float:
    """The real n (>= 2) with power ``target`` at effect size ``d``; inf if never reached."""
    if _t_power(d, 2, alpha) >= target:
        return 2.0  # two queries already suffice: the least a paired test can work with
    if d == 0.0:
        return math.inf  # the power stays alpha whatever n is
    high = 4.0
    while _t_power(d, high, alpha) < target:
        high *= 2
        if high > 1e15:
            return math.inf
    return _solve(lambda x: _t_power(d, x, alpha) - target, high / 2, high)


def _t_whole_queries(d: float, alpha: float, target: float, n_real: float) -> int | None:
    """The smallest whole n >= 2 with power >= target (checked, not just the rounded root)."""
    if not math.isfinite(n_real):
        return None
    count = max(2, math.ceil(n_real) - 1)
    while _t_power(d, count, alpha) < target:
        count += 1
    return count


def _t_detectable(n: int, alpha: float, target: float) -> float:
    """The effect size d > 0 with power ``target`` at n queries."""
    if target <= alpha:  # any difference, however small, has at least this power
        return 0.0
    high = 1.0
    while _t_power(high, n, alpha) < target:
        high *= 2
    return _solve(lambda x: _t_power(x, n, alpha) - target, 0.0, high)


# --- the randomization test, simulated --------------------------------------------------------


class _Simulation:
    """Simulated query sets with common random numbers: the same draws for every n and every
    true difference (the first k queries of a set are the same whatever n is)."""

    def __init__(
        self, shape: Any, sd: float, alpha: float, simulations: int, resamples: int, seed: int
    ) -> None:
        self.shape = None if shape is None else np.asarray(shape, dtype=np.float64) * sd
        self.sd = sd
        self.alpha = alpha
        self.simulations = simulations
        self.resamples = resamples
        # One stream draws the query sets, another the seeds of each block's sign flips.
        sequence = np.random.SeedSequence(seed)
        self.draw_seed, flips_seed = sequence.spawn(2)
        blocks = -(-simulations // BLOCK_COLUMNS)
        self.flip_seeds = [
            int(s) for s in flips_seed.generate_state(blocks, dtype=np.uint64) % (2**63)
        ]
        self._noise: dict[int, Any] = {}

    def noise(self, n: int) -> Any:
        """(n, simulations) centred deviations with standard deviation ``sd``: rows drawn in
        order, so that the first k rows are the same for any n."""
        if n not in self._noise:
            rng = np.random.Generator(np.random.PCG64(self.draw_seed))
            if self.shape is None:
                drawn = rng.standard_normal((n, self.simulations)) * self.sd
            else:
                rows = rng.integers(0, len(self.shape), size=(n, self.simulations))
                drawn = self.shape[rows]
            self._noise = {n: drawn}  # keep one: the searches move n step by step
        return self._noise[n]

    def power(self, n: int, effect: float) -> float:
        """The share of simulated query sets whose randomization test is significant."""
        values = self.noise(n) + effect
        significant = 0
        for block, start in enumerate(range(0, self.simulations, BLOCK_COLUMNS)):
            chunk = values[:, start : start + BLOCK_COLUMNS]
            pvalues = pvalues_of(chunk, "randomization", self.resamples, self.flip_seeds[block])
            significant += int((pvalues < self.alpha).sum())
        return significant / self.simulations


def _simulated_queries(
    sim: _Simulation, effect: float, d: float, alpha: float, target: float, max_queries: int
) -> int | None:
    """The smallest n (2 to max_queries) whose simulated power reaches the target, searched
    from the t-test's answer; None when the effect is 0 or more than max_queries are needed."""
    if effect == 0.0:
        return None
    guess = _t_sample_size(d, alpha, target)
    if not math.isfinite(guess) or guess > 2 * max_queries:
        return None  # the t-test needs far more: no simulation will find it within reach
    high = min(max(2, math.ceil(guess)), max_queries)
    if sim.power(high, effect) >= target:
        low = 1  # below 2 nothing can be tested
    else:
        low = high
        while True:
            if high == max_queries:
                return None
            high = min(max_queries, high * 2)
            if sim.power(high, effect) >= target:
                break
            low = high
    while high - low > 1:  # power(low) < target <= power(high)
        middle = (low + high) // 2
        if sim.power(middle, effect) >= target:
            high = middle
        else:
            low = middle
    return high


def _simulated_detectable(sim: _Simulation, n: int, target: float) -> float:
    """The smallest true difference whose simulated power at n reaches the target, to a
    thousandth of the standard deviation; inf when no difference reaches it (too few queries
    for the test to reach its level: 3 queries never give a p-value below 2/8)."""
    if sim.power(n, 0.0) >= target:
        return 0.0
    # Beyond the largest deviation every simulated query improves, and a sign-flip test then
    # gives its smallest p-value whatever the sizes: the power can grow no further.
    ceiling = 2.0 * float(np.max(np.abs(sim.noise(n)))) + sim.sd
    if sim.power(n, ceiling) < target:
        return math.inf
    high = min(ceiling, sim.sd * max(_t_detectable(n, sim.alpha, target), 1e-3))
    while sim.power(n, high) < target:
        high = min(ceiling, high * 1.5)
    low = 0.0
    while high - low > 1e-3 * sim.sd:
        middle = (low + high) / 2
        if sim.power(n, middle) >= target:
            high = middle
        else:
            low = middle
    return high
