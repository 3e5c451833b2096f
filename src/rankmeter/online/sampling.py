"""Draw an evaluation query set from traffic: stratified, proportional, with a tuning/test split.

The traffic is read from a search log (the schema of :func:`rankmeter.online.read_log`: a
query's count is its number of distinct requests) or from a simple table with the columns
``query_id``, ``count`` and any segment columns (CSV, JSONL or Parquet, by suffix): see
:mod:`rankmeter.online.traffic`, where the reading and the buckets live.

Strata. With ``stratify="bucket"`` the queries fall into head, torso and tail by frequency:
ordered by count (most frequent first), a query is **head** while the queries more frequent
than it make less than a third of the traffic, **torso** while they make less than two thirds,
and **tail** after that: three buckets of about a third of the traffic each (queries with the
same count always share a bucket, that of the first of them). With the name of a segment
column the strata are its values (a log query seen under several values takes its most frequent
one). Without ``stratify`` there is one stratum.

Allocation and drawing, by ``weighting``:

- ``"traffic"`` (default): the set mirrors what users send. The ``n`` queries are allocated to
  the strata in proportion to their traffic, and within a stratum queries are drawn without
  replacement with probability proportional to their count (successive sampling, by
  Efraimidis and Spirakis' keys :math:`\\log(u)/w`).
- ``"uniform"``: the set mirrors the distinct queries. The strata get shares proportional to
  their number of distinct queries, and within a stratum every query is equally likely.

Proportional shares are rounded by the largest remainder (ties to the stratum listed first),
never above a stratum's number of queries (the excess goes to the others, in proportion).

``holdout`` keeps a tuning/test split: that fraction of the drawn queries (rounded half up,
then shared among the strata by the largest remainder) is marked ``test`` and the rest
``tuning``, at random within each stratum, so that the two parts have the same mix and no query is in both.

:func:`query_mix` compares an evaluation set's mix of strata with traffic: shares side by side,
a chi-square goodness-of-fit test and each stratum's detectable difference.

Everything random comes from ``numpy.random.Generator(PCG64(seed))``: the same traffic and seed
give the same set.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.errors import FormatError, PolicyError
from rankmeter.online.traffic import (
    _PARQUET,
    _SUFFIXES,
    BUCKETS,
    QueryTraffic,
    _columns,
    _records,
    bucket_of,
    read_traffic,
)

__all__ = [
    "BUCKETS",
    "WEIGHTINGS",
    "MixStratum",
    "QueryMix",
    "QuerySample",
    "QueryTraffic",
    "Stratum",
    "bucket_of",
    "query_mix",
    "read_query_ids",
    "read_traffic",
    "sample_queries",
]

#: How queries are allocated and drawn.
WEIGHTINGS: tuple[str, ...] = ("traffic", "uniform")


@dataclass(frozen=True)
class Stratum:
    """One stratum of a sample: its queries and traffic in the population, and what was drawn.

    Attributes
    ----------
    name : the stratum (a bucket, a segment value, or ``"all"``)
    queries : distinct queries in the population
    traffic : their total count
    traffic_share, query_share : shares of the population's traffic and distinct queries
    drawn : queries drawn from it
    test : of those, marked test (0 without a holdout)
    """

    name: str
    queries: int
    traffic: int
    traffic_share: float
    query_share: float
    drawn: int
    test: int


@dataclass(frozen=True)
class QuerySample:
    """An evaluation query set drawn from traffic: what :func:`sample_queries` returns.

    Attributes
    ----------
    query_ids, counts, strata_of : the drawn queries (by stratum, most frequent first), their
        counts and their strata
    splits : ``"tuning"`` or ``"test"`` per query, or None without a holdout
    strata : one :class:`Stratum` per stratum
    n, stratify, weighting, holdout, seed : the settings
    population : distinct queries in the traffic; total : its traffic
    source : where the traffic came from
    """

    query_ids: tuple[str, ...]
    counts: tuple[int, ...]
    strata_of: tuple[str, ...]
    splits: tuple[str, ...] | None
    strata: tuple[Stratum, ...]
    n: int
    stratify: str | None
    weighting: str
    holdout: float | None
    seed: int
    population: int
    total: int
    source: str

    def rows(self) -> list[dict[str, Any]]:
        """One dict per drawn query: query_id, count, stratum (and split with a holdout)."""
        out = []
        for i, query in enumerate(self.query_ids):
            row: dict[str, Any] = {
                "query_id": query,
                "count": self.counts[i],
                "stratum": self.strata_of[i],
            }
            if self.splits is not None:
                row["split"] = self.splits[i]
            out.append(row)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The settings, the strata and the rows as plain Python values."""
        return {
            "n": self.n,
            "stratify": self.stratify,
            "weighting": self.weighting,
            "holdout": self.holdout,
            "seed": self.seed,
            "population": self.population,
            "total": self.total,
            "source": self.source,
            "strata": [asdict(s) for s in self.strata],
            "rows": self.rows(),
        }


# --- drawing ----------------------------------------------------------------------------------


def _largest_remainder(total: int, weights: Any, caps: Any) -> Any:
    """``total`` split in proportion to ``weights``, whole numbers, none above its cap: the
    largest remainders round up (ties to the first); a capped stratum's excess goes to the
    others in proportion."""
    weights = np.asarray(weights, dtype=np.float64)
    caps = np.asarray(caps, dtype=np.int64)
    out = np.zeros(len(weights), dtype=np.int64)
    open_ = caps > 0
    left = total
    while left > 0 and open_.any():
        w = np.where(open_, weights, 0.0)
        if w.sum() == 0:
            w = open_.astype(np.float64)  # no weight left: share the rest equally
        exact = left * w / w.sum()
        share = np.floor(exact).astype(np.int64)
        remainder = left - int(share.sum())
        order = np.argsort(-(exact - share), kind="stable")
        share[order[:remainder]] += 1
        room = caps - out
        take = np.minimum(share, room)
        out += take
        left -= int(take.sum())
        open_ = (caps - out) > 0
        if (take == share).all():
            break
    return out


def sample_queries(
    traffic: QueryTraffic | Any,
    n: int,
    *,
    stratify: str | None = None,
    weighting: str = "traffic",
    holdout: float | None = None,
    seed: int = 0,
) -> QuerySample:
    """Draw ``n`` queries from traffic, stratified, with an optional tuning/test split.

    Parameters
    ----------
    traffic : QueryTraffic, or anything :func:`read_traffic` reads
    n : int
        Queries to draw (at most the distinct queries in the traffic).
    stratify : str, optional
        ``"bucket"`` (head, torso, tail by frequency) or the name of a segment column.
    weighting : {"traffic", "uniform"}, default "traffic"
        ``"traffic"``: strata in proportion to their traffic, queries drawn in proportion to
        their counts; ``"uniform"``: strata in proportion to their distinct queries, queries
        equally likely.
    holdout : float, optional
        The fraction of the drawn queries marked ``test`` (strictly between 0 and 1); the rest
        are ``tuning``.
    seed : int, default 0

    Returns
    -------
    QuerySample

    Examples
    --------
    >>> counts = {f"q{i}": c for i, c in enumerate([900, 500, 300, 80, 40, 20, 10, 5, 3, 1, 1, 1])}
    >>> sample = sample_queries(counts, 6, stratify="bucket", holdout=0.5, seed=1)
    >>> [(s.name, s.queries, s.drawn, s.test) for s in sample.strata]
    [('head', 1, 1, 1), ('torso', 1, 1, 0), ('tail', 10, 4, 2)]
    """
    # Every argument is checked before the traffic is read.
    weighting = _validate.choice(
        "weighting", weighting, WEIGHTINGS, what="how strata are allocated and queries drawn"
    )
    n = _validate.integer("n", n, low=1, what="queries to draw")
    if holdout is not None:
        holdout = _validate.real(
            "holdout",
            holdout,
            low=0,
            high=1,
            open_low=True,
            open_high=True,
            what="the fraction of the drawn queries kept for test",
        )
    seed = _validate.seed(seed)
    if not isinstance(traffic, QueryTraffic):
        traffic = read_traffic(traffic)
    population = len(traffic.query_ids)
    if n > population:
        raise PolicyError(
            f"n={n} is more than the {population:,} distinct queries in {traffic.source}"
        )
    counts = np.asarray(traffic.counts, dtype=np.int64)
    labels = _stratum_labels(traffic, counts, stratify)
    names = _stratum_order(labels, counts, stratify)
    members = {name: np.flatnonzero(np.asarray(labels, dtype=object) == name) for name in names}
    traffic_of = np.array([counts[members[s]].sum() for s in names], dtype=np.float64)
    sizes = np.array([len(members[s]) for s in names], dtype=np.int64)
    total = int(counts.sum())
    if weighting == "traffic":
        drawable = np.array([int((counts[members[s]] > 0).sum()) for s in names])
        if n > drawable.sum():
            raise PolicyError(
                f"n={n} is more than the {int(drawable.sum()):,} queries with a count above 0 "
                "(weighting='traffic' never draws a query nobody sent; use weighting='uniform')"
            )
        allocation = _largest_remainder(n, traffic_of, drawable)
    else:
        allocation = _largest_remainder(n, sizes, sizes)
    tests = np.zeros(len(names), dtype=np.int64)
    if holdout is not None:
        held = math.floor(holdout * n + 0.5)  # half up: 0.25 of 10 holds 3 out
        if held in (0, n):
            part = "test" if held == 0 else "tuning"
            raise PolicyError(
                f"holdout={holdout:g} of n={n} leaves no {part} query: give a holdout between "
                f"{0.5 / n:.3g} and {1 - 0.5 / n:.3g}, or draw more queries"
            )
        tests = _largest_remainder(held, allocation, allocation)
    sequence = np.random.SeedSequence(seed)
    draw_rng, split_rng = (np.random.Generator(np.random.PCG64(s)) for s in sequence.spawn(2))
    chosen_rows: list[int] = []
    chosen_split: list[str] = []
    for index, name in enumerate(names):
        rows = members[name]
        k = int(allocation[index])
        if weighting == "traffic":
            weights = counts[rows].astype(np.float64)
            with np.errstate(divide="ignore"):
                keys = np.log(draw_rng.random(len(rows))) / weights  # -inf where weight is 0
        else:
            keys = draw_rng.random(len(rows))
        picked = rows[np.argsort(-keys, kind="stable")[:k]]
        # Most frequent first within a stratum (then by id): a stable, readable order.
        picked = picked[
            np.lexsort((np.asarray(traffic.query_ids, dtype=object)[picked], -counts[picked]))
        ]
        test = np.zeros(k, dtype=bool)
        test[split_rng.permutation(k)[: int(tests[index])]] = True
        chosen_rows += picked.tolist()
        chosen_split += ["test" if t else "tuning" for t in test]
    strata = tuple(
        Stratum(
            name=name,
            queries=int(sizes[i]),
            traffic=int(traffic_of[i]),
            traffic_share=float(traffic_of[i] / total) if total else 0.0,
            query_share=float(sizes[i] / population),
            drawn=int(allocation[i]),
            test=int(tests[i]),
        )
        for i, name in enumerate(names)
    )
    return QuerySample(
        query_ids=tuple(traffic.query_ids[r] for r in chosen_rows),
        counts=tuple(int(counts[r]) for r in chosen_rows),
        strata_of=tuple(labels[r] for r in chosen_rows),
        splits=tuple(chosen_split) if holdout is not None else None,
        strata=strata,
        n=n,
        stratify=stratify,
        weighting=weighting,
        holdout=holdout,
        seed=seed,
        population=population,
        total=total,
        source=traffic.source,
    )


def _stratum_labels(traffic: QueryTraffic, counts: Any, stratify: str | None) -> tuple[str, ...]:
    """Each traffic query's stratum: one stratum ``all`` (None), its bucket by frequency
    (``"bucket"``), or its value of a segment column; another name is a PolicyError listing
    the segment columns. Shared by :func:`sample_queries` and :func:`query_mix`."""
    if stratify is None:
        return ("all",) * len(counts)
    if stratify == "bucket":
        return bucket_of(counts)
    if stratify in traffic.segments:
        return traffic.segments[stratify]
    have = ", ".join(traffic.segments) or "none"
    raise PolicyError(
        f"stratify={stratify!r} is neither 'bucket' nor a segment column of "
        f"{traffic.source} (its segment columns: {have})"
    )


def _stratum_order(labels: Sequence[str], counts: Any, stratify: str | None) -> list[str]:
    """Buckets head, torso, tail; segment values by traffic (largest first), then by name."""
    present = set(labels)
    if stratify == "bucket":
        return [b for b in BUCKETS if b in present]
    traffic: Counter[str] = Counter()
    for label, count in zip(labels, counts.tolist(), strict=True):
        traffic[label] += count
    return sorted(present, key=lambda s: (-traffic[s], s))


# --- the evaluation set's mix against traffic ---------------------------------------------------


@dataclass(frozen=True)
class MixStratum:
    """One stratum of :class:`QueryMix`.

    Attributes
    ----------
    name : the stratum
    traffic_share : its share of the traffic (``weighting="traffic"``) or of the distinct
        queries (``"uniform"``): what the evaluation set is compared with
    eval_n : evaluation queries in it
    eval_share : their share of the evaluation queries found in the traffic
    expected_n : ``traffic_share`` times the evaluation queries found in the traffic (those in
        strata with a share above 0)
    detectable_difference : the smallest true mean difference a paired t-test finds with
        ``power`` on ``eval_n`` queries alone (in units of ``sd``; NaN below 2 queries)
    """

    name: str
    traffic_share: float
    eval_n: int
    eval_share: float
    expected_n: float
    detectable_difference: float


@dataclass(frozen=True)
class QueryMix:
    """The evaluation set's mix against traffic: what :func:`query_mix` returns.

    Attributes
    ----------
    strata : one :class:`MixStratum` per stratum (head, torso, tail or segment values)
    stratify, weighting : how the strata are made and what the shares are of
    n_eval : evaluation queries; n_matched : those found in the traffic; missing : the rest
    no_traffic : evaluation queries found in strata without traffic (a share of 0): left out of
        the test, whose expected counts are the shares of the other ``n_matched - no_traffic``
    chi_square, dof, p_value : scipy.stats.chisquare of the evaluation counts against the
        expected ones (NaN with fewer than two strata)
    alpha, power, sd : the level, the power and the spread of the detectable differences
    queries_source, traffic_source : where the two came from
    """

    strata: tuple[MixStratum, ...]
    stratify: str
    weighting: str
    n_eval: int
    n_matched: int
    missing: int
    chi_square: float
    dof: int
    p_value: float
    alpha: float
    power: float
    sd: float
    queries_source: str
    traffic_source: str
    no_traffic: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain Python values (strata as dicts)."""
        data = {f: getattr(self, f) for f in self.__dataclass_fields__}
        data["strata"] = [asdict(s) for s in self.strata]
        return data


def read_query_ids(source: Any) -> tuple[tuple[str, ...], str]:
    """The evaluation set's query ids and where they came from: a table with a ``query_id``
    column (CSV, TSV, JSONL or Parquet, such as ``sample-queries``' output), BEIR queries
    (JSONL with ``_id``), or qrels in any format :func:`rankmeter.io.read_qrels` reads; or an
    iterable of ids."""
    if not isinstance(source, str | Path):
        return tuple(dict.fromkeys(str(q) for q in source)), "queries"
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix in (*_SUFFIXES, *_PARQUET) and path.is_file():
        columns = _columns(path)
        key = "query_id" if "query_id" in columns else "_id" if "_id" in columns else None
        if key is not None:
            ids = []
            for line, record, raw in _records(path):
                value = record.get(key)
                if value is None or str(value).strip() == "":
                    raise FormatError(str(path), f"empty {key}", line=line, text=raw)
                ids.append(str(value))
            return tuple(dict.fromkeys(ids)), str(path)
    from rankmeter.io import read_qrels

    return tuple(str(q) for q in read_qrels(path).query_ids), str(path)


def query_mix(
    queries: Any,
    traffic: QueryTraffic | Any,
    *,
    stratify: str = "bucket",
    weighting: str = "traffic",
    alpha: float = 0.05,
    power: float = 0.8,
    sd: float = 1.0,
) -> QueryMix:
    """Does the evaluation set mix head, torso and tail (or segments) as traffic does?

    Parameters
    ----------
    queries : the evaluation set: a path (see :func:`read_query_ids`) or an iterable of ids
    traffic : QueryTraffic, or anything :func:`read_traffic` reads
    stratify : ``"bucket"`` (head, torso, tail; see :func:`bucket_of`) or a segment column
    weighting : ``"traffic"`` (default): compare with each stratum's share of the traffic (what
        a traffic-weighted set mirrors); ``"uniform"``: with its share of distinct queries
    alpha, power : the level and power of each stratum's detectable difference
    sd : the standard deviation of per-query differences the detectable differences are in
        (default 1: in units of the spread, Cohen's d_z)

    Returns
    -------
    QueryMix

    The chi-square goodness-of-fit test is ``scipy.stats.chisquare`` of the evaluation set's
    counts per stratum against the counts its size would have in the traffic's proportions
    (evaluation queries absent from the traffic are counted in ``missing`` and left out).

    Examples
    --------
    >>> traffic = {**{f"h{i}": 100 for i in range(10)}, **{f"t{i}": 1 for i in range(1000)}}
    >>> mix = query_mix(["h0", "h1", *(f"t{i}" for i in range(18))], traffic)
    >>> [(s.name, s.eval_n, s.expected_n) for s in mix.strata]
    [('head', 2, 10.0), ('torso', 18, 10.0)]
    >>> round(mix.chi_square, 2), round(mix.p_value, 4)
    (12.8, 0.0003)
    """
    import scipy.stats

    from rankmeter.stats import power as power_analysis

    weighting = _validate.choice(
        "weighting",
        weighting,
        WEIGHTINGS,
        what="what the evaluation set's shares are compared with",
    )
    alpha = _validate.alpha(alpha)
    power = _validate.real(
        "power", power, low=0, high=1, open_low=True, open_high=True, what="the target power"
    )
    sd = _validate.real("sd", sd, low=0, open_low=True, what="the spread of per-query differences")
    ids, queries_source = read_query_ids(queries)
    if not isinstance(traffic, QueryTraffic):
        traffic = read_traffic(traffic)
    counts = np.asarray(traffic.counts, dtype=np.int64)
    labels = _stratum_labels(traffic, counts, stratify)
    names = _stratum_order(labels, counts, stratify)
    stratum_of = dict(zip(traffic.query_ids, labels, strict=True))
    matched = [stratum_of[q] for q in ids if q in stratum_of]
    if not matched:
        raise PolicyError(
            f"none of the {len(ids):,} evaluation queries of {queries_source} is in "
            f"{traffic.source}: check that the ids are the same kind"
        )
    observed = Counter(matched)
    label_array = np.asarray(labels, dtype=object)
    if weighting == "traffic":
        weight = np.array([counts[label_array == s].sum() for s in names], dtype=np.float64)
    else:
        weight = np.array([(label_array == s).sum() for s in names], dtype=np.float64)
    if weight.sum() == 0:
        raise PolicyError(
            f"every query of {traffic.source} has a count of 0: there are no traffic shares to "
            "compare with; use weighting='uniform'"
        )
    shares = weight / weight.sum()
    f_obs = np.array([observed[s] for s in names], dtype=np.float64)
    testable = shares > 0
    # Evaluation queries in a stratum that traffic never reaches have no expected count to be
    # tested against: they are counted apart, and the test compares the others with the shares.
    no_traffic = int(f_obs[~testable].sum())
    f_exp = shares * (len(matched) - no_traffic)
    if testable.sum() >= 2 and no_traffic < len(matched):
        test = scipy.stats.chisquare(f_obs[testable], f_exp[testable])
        chi, p, dof = float(test.statistic), float(test.pvalue), int(testable.sum()) - 1
    else:
        chi, p, dof = math.nan, math.nan, 0
    strata = tuple(
        MixStratum(
            name=name,
            traffic_share=float(shares[i]),
            eval_n=int(f_obs[i]),
            eval_share=float(f_obs[i] / len(matched)),
            expected_n=float(f_exp[i]),
            detectable_difference=(
                power_analysis(
                    effect=0.0, sd=sd, n=int(f_obs[i]), alpha=alpha, power=power
                ).detectable_difference
                if f_obs[i] >= 2
                else math.nan
            ),
        )
        for i, name in enumerate(names)
    )
    return QueryMix(
        strata=strata,
        stratify=stratify,
        weighting=weighting,
        n_eval=len(ids),
        n_matched=len(matched),
        missing=len(ids) - len(matched),
        no_traffic=no_traffic,
        chi_square=chi,
        dof=dof,
        p_value=p,
        alpha=alpha,
        power=power,
        sd=sd,
        queries_source=queries_source,
        traffic_source=traffic.source,
    )
