"""Rank intervals for the leaderboard: how far each model's place could move on other queries.

MTEB's users found that most adjacent ranks on its leaderboard cannot be told apart (120 of
121 adjacent rank intervals overlap on MTEB(eng, v2), mteb issue 5208). A leaderboard that
prints 1..N without saying so invites readers to trust differences the data cannot carry.

**The interval.** A paired bootstrap over the queries of each dataset: every resample draws, on
each dataset, as many queries as it has, with replacement, *the same draw for every model* (so
the models stay paired, as their per-query values are). Each model's mean on each dataset is
recomputed on the drawn queries, the models are ranked on each dataset (ties share the mean of
their ranks), each model's mean rank over the datasets it ran on is taken, and the models are
ranked on it exactly as the leaderboard ranks them; a model's rank is 1 + the number of models
with a strictly better mean rank (tied models share a rank). Over ``resamples`` resamples the
interval of a model's rank runs from the smallest rank at or below which at least
``(1 - level) / 2`` of the resamples fall to the smallest at or below which at least
``1 - (1 - level) / 2`` fall (the 2.5th and 97.5th percentiles at level 0.95, as ranks: whole
numbers). Where the percentiles leave out the observed rank (a model narrowly first among many
close ones can be first in under 2.5% of the resamples) the interval is widened to it, so that
it always holds the rank the table shows.

**The groups.** Groups are made from the top of the table down, in its order: the first model
opens group 1 and *leads* it; each next model joins the open group while its interval overlaps
the leader's (its lower end is at most the leader's upper end), and otherwise opens the next
group and leads it. The leader never changes while its group is open: a model is in a group
because it cannot be told apart from the group's leader, which keeps small overlaps from
chaining the whole table into one group (the rule ComparIA's leaderboard uses for its classes
on score intervals, here on rank intervals). Models tied on the table share an interval's
observed rank, so they always share a group. Groups are contiguous in the table's order.

Why these and not others: Chatbot Arena ranks a model 1 + the models whose score interval lies
wholly above its own, which needs one score per model; this leaderboard orders models by a
mean of per-dataset ranks, so the bootstrap is taken of the rank itself (as the rank-stability
proposal for MTEB's leaderboard, mteb pull request 5117, does over tasks; here over each
dataset's queries, which the stored results hold). Chaining every overlap instead of anchoring
on the leader would put a table of small steps into one group however far its ends are apart.

**Models without per-query values.** A stored result always holds every query's value; an
entry made in Python may hold only its mean (a model from a published table). Such a model's
score on that dataset is held at its mean in every resample, so the others are ranked against
it, and it gets no interval and no group: one line says so (:attr:`RankIntervals.notes`).

Everything is vectorised: per dataset and per chunk of resamples, the draws as counts
(resamples x queries), the means as one matrix product with the distinct per-query columns
(identical models share one column, so they tie in every resample exactly), the ranks with
``scipy.stats.rankdata`` along the rows; each model's ranks are kept as a histogram (models x
ranks), so memory does not grow with ``resamples``. Each dataset's draws come from their own
generator, seeded from ``seed`` and the dataset's name: the same seed gives the same
intervals, and adding a dataset leaves the other datasets' draws as they were.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["DEFAULT_RESAMPLES", "RankIntervals", "rank_intervals"]

#: The bootstrap resamples drawn by default.
DEFAULT_RESAMPLES = 1_000
#: The fewest resamples a percentile of the ranks can be read from.
MIN_RESAMPLES = 100
#: At most this many resamples are drawn at once per dataset (memory: resamples x queries).
_CHUNK_ELEMENTS = 1 << 21
_MAX_CHUNK_ROWS = 1_000


@dataclass(frozen=True)
class RankIntervals:
    """Each model's rank, its interval over bootstrap resamples of the queries, and its group.

    Attributes
    ----------
    level : the confidence level (0.95: the 2.5th to 97.5th percentiles)
    resamples, seed : the bootstrap's settings (the same seed gives the same intervals)
    rank : ``{model: rank}`` on the table: 1 + the models with a strictly better mean rank
    interval : ``{model: (low, high)}``, for the models with per-query values everywhere
    group : ``{model: group}`` (1 = the top group), for the models with an interval
    missing : ``{model: datasets}`` where the model has no per-query values of the metric
    metric : the main score's label
    """

    level: float
    resamples: int
    seed: int
    rank: Mapping[str, int]
    interval: Mapping[str, tuple[int, int]]
    group: Mapping[str, int]
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    metric: str = ""

    def __post_init__(self) -> None:
        for name in ("rank", "interval", "group", "missing"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def header(self) -> str:
        """The column's name: ``rank 95% CI``."""
        return f"rank {self.level * 100:g}% CI"

    def shown(self, model: str) -> str:
        """A model's interval as a table shows it (``1-3``; ``-`` without one)."""
        bounds = self.interval.get(model)
        return "-" if bounds is None else f"{bounds[0]}-{bounds[1]}"

    def rule(self) -> str:
        """The sentences that say how the intervals and groups were made."""
        return (
            f"{self.header}: the {_percent((1 - self.level) / 2)} to "
            f"{_percent(1 - (1 - self.level) / 2)} percentiles of the model's rank over "
            f"{self.resamples:,} paired bootstrap resamples of each dataset's queries (the same "
            f"queries for every model; seed {self.seed}), widened to hold the observed rank. "
            "Group: from the top, a model joins the open group while its interval overlaps "
            "that of the group's first model, else it opens the next group."
        )

    def notes(self) -> tuple[str, ...]:
        """One line per model without an interval, saying why."""
        lines = []
        for model, datasets in self.missing.items():
            where = ", ".join(repr(d) for d in datasets)
            noun = "result" if len(datasets) == 1 else "results"
            verb = "lacks" if len(datasets) == 1 else "lack"
            lines.append(
                f"No rank interval for {model!r}: its {noun} on {where} {verb} per-query "
                f"{self.metric} values, so only its mean is ranked (the other models are ranked "
                "against that mean in every resample)."
            )
        return tuple(lines)

    def to_dict(self) -> dict[str, Any]:
        """``{"level", "resamples", "seed", "rule", "notes"}``; the per-model values are in
        the leaderboard's rows."""
        return {
            "level": self.level,
            "resamples": self.resamples,
            "seed": self.seed,
            "rule": self.rule(),
            "notes": list(self.notes()),
        }


def _percent(share: float) -> str:
    return f"{share * 100:.10g}%"


def rank_intervals(
    values: Mapping[tuple[str, str], Sequence[float] | None],
    scores: Mapping[tuple[str, str], float],
    order: Sequence[str],
    mean_rank: Mapping[str, float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    metric: str = "",
    better: str = "higher",
) -> RankIntervals:
    """The :class:`RankIntervals` of a leaderboard (see the module's docstring).

    ``values``: ``{(model, dataset): per-query values}``, each dataset's queries in one order
    for every model (None: the model has only a mean there); ``scores``: the means the table
    ranks on; ``order``: the table's order; ``mean_rank``: the table's mean ranks. The
    settings are checked by the caller (:func:`rankmeter.vector.leaderboard.leaderboard_of`).
    ``better``: ``"lower"`` ranks the smallest mean of a resample first (RBP_resid).
    """
    import numpy as np
    from scipy.stats import rankdata

    lower = better == "lower"
    models = list(order)
    index = {m: i for i, m in enumerate(models)}
    m = len(models)
    datasets = sorted({d for _, d in scores})
    rank = {
        model: 1 + sum(mean_rank[other] < mean_rank[model] for other in models) for model in models
    }
    missing: dict[str, list[str]] = {}
    plans = []
    for dataset in datasets:
        here = sorted(model for model, d in scores if d == dataset)
        resampled = [x for x in here if values.get((x, dataset)) is not None]
        for x in here:
            if values.get((x, dataset)) is None:
                missing.setdefault(x, []).append(dataset)
        columns = np.zeros((0, 0))
        if resampled:
            columns = np.array(
                [np.asarray(values[x, dataset], dtype=np.float64) for x in resampled]
            )
        if columns.shape[1] == 0:  # no queries at all: nothing to resample
            for x in resampled:
                missing.setdefault(x, []).append(dataset)
            resampled, columns = [], np.zeros((0, 0))
        distinct, inverse = _distinct_rows(columns)
        fixed = np.array([scores[x, dataset] for x in here], dtype=np.float64)
        moving = np.array([here.index(x) for x in resampled], dtype=np.int64)
        plans.append(
            (
                _generator(seed, dataset),
                np.ascontiguousarray(distinct.T),  # queries x distinct columns
                np.asarray(inverse, dtype=np.int64).reshape(-1),
                fixed,
                moving,
                np.array([index[x] for x in here], dtype=np.int64),
            )
        )
    ran_on = np.zeros(m)
    for model, _ in scores:
        ran_on[index[model]] += 1
    histogram = np.zeros(m * m, dtype=np.int64)
    chunk = min(_MAX_CHUNK_ROWS, max(1, _CHUNK_ELEMENTS // max(1, _largest(plans))))
    done = 0
    while done < resamples:
        rows = min(chunk, resamples - done)
        done += rows
        total = np.zeros((rows, m))
        for rng, distinct_t, inverse, fixed, moving, where in plans:
            board = np.broadcast_to(fixed, (rows, len(fixed))).copy()
            n = distinct_t.shape[0]
            if len(moving) and n:
                drawn = rng.integers(0, n, size=(rows, n), dtype=np.int64)
                drawn += np.arange(0, rows * n, n, dtype=np.int64)[:, None]
                counts = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n)
                means = (counts.astype(np.float64) @ distinct_t) / n
                board[:, moving] = means[:, inverse]
            total[:, where] += rankdata(board if lower else -board, method="average", axis=1)
        ranks = rankdata(total / ran_on, method="min", axis=1).astype(np.int64)
        cells = np.arange(m, dtype=np.int64) * m + (ranks - 1)
        histogram += np.bincount(cells.ravel(), minlength=m * m)
    cumulative = np.cumsum(histogram.reshape(m, m), axis=1)
    # Counts of resamples, rounded off the float error of (1 - level) / 2 * resamples (0.975 *
    # 1000 is 975.0000000000001); a rank's count is whole, so "at least x" is "at least ceil(x)".
    tail = round((1 - level) / 2 * resamples, 6)
    low_count, high_count = max(1, math.ceil(tail)), math.ceil(round(resamples - tail, 6))
    interval: dict[str, tuple[int, int]] = {}
    for model in models:
        if model in missing:
            continue
        row = cumulative[index[model]]
        low = int(np.argmax(row >= low_count)) + 1
        high = int(np.argmax(row >= high_count)) + 1
        interval[model] = (min(low, rank[model]), max(high, rank[model]))
    return RankIntervals(
        level=level,
        resamples=resamples,
        seed=seed,
        rank=rank,
        interval=interval,
        group=_groups(models, interval),
        missing={x: tuple(d) for x, d in missing.items()},
        metric=metric,
    )


def _distinct_rows(rows: Any) -> tuple[Any, Any]:
    """The distinct rows (bit for bit, first seen first) and each row's index among them."""
    import numpy as np

    seen: dict[bytes, int] = {}
    firsts: list[int] = []
    inverse = []
    for i, row in enumerate(rows):
        key = row.tobytes()
        if key not in seen:
            seen[key] = len(firsts)
            firsts.append(i)
        inverse.append(seen[key])
    distinct = rows[firsts].reshape(len(firsts), rows.shape[1])
    return distinct, np.array(inverse, dtype=np.int64)


def _largest(plans: list[Any]) -> int:
    return max((plan[1].shape[0] for plan in plans), default=1)


def _generator(seed: int, dataset: str) -> Any:
    """The dataset's own stream: from the seed and the dataset's name."""
    import numpy as np

    key = int.from_bytes(hashlib.sha256(dataset.encode("utf-8", "surrogatepass")).digest()[:8])
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, key])))


def _groups(order: Sequence[str], interval: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """From the top: a model joins the open group while its interval overlaps the group
    leader's, else it opens (and leads) the next group. Models without an interval are
    left out.

    >>> _groups(["a", "b", "c", "d"], {"a": (1, 1), "b": (2, 4), "c": (2, 4), "d": (3, 4)})
    {'a': 1, 'b': 2, 'c': 2, 'd': 2}
    >>> _groups(["a", "b", "c"], {"a": (1, 2), "b": (1, 3), "c": (3, 3)})
    {'a': 1, 'b': 1, 'c': 2}
    """
    groups: dict[str, int] = {}
    leader: tuple[int, int] | None = None
    current = 0
    for model in order:
        bounds = interval.get(model)
        if bounds is None:
            continue
        if leader is None or bounds[0] > leader[1]:
            current += 1
            leader = bounds
        groups[model] = current
    return groups
