"""A search-log simulator: impressions built from a real collection (qrels and rankers' runs),
so that the online analyses can be tested against effects planted on purpose.

Users are split at random between the variants (one Run each); each user has sessions, each
session a chain of requests for queries of the qrels (drawn with a Zipf popularity, so that some
queries are frequent and most are rare). A request shows the variant's top ``cutoff`` results
for its query; clicks follow a position-based model (examination ``1 / rank ** eta`` times an
attractiveness set by the qrels grade; or a cascade: drawn by
:func:`rankmeter.clicks.browsing.draw_clicks`, as the click simulator's are), dwell is longer on
relevant documents, an abandoned request (no click) is more often followed by a reformulation
(another query within seconds), latency is lognormal per variant, and the treatment's effect may
differ by segment (new or returning users, mobile or desktop). The pre-period (for CUPED) is the
same users, before the experiment, all shown the control's ranking.

Everything is vectorised NumPy over chunks of users, so that tens of millions of rows are
generated in seconds and memory stays bounded by a chunk (plus the result). The same seed
gives the same log: each chunk draws from its own stream, seeded by (seed, stream, chunk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankmeter.errors import PolicyError

__all__ = ["CLICK_MODELS", "simulate_log"]

#: Click models the simulator knows: "pbm" (position-based: each shown result is examined
#: with probability 1 / rank ** eta, clicked if examined and attractive) and "cascade" (results
#: read from the top, the first attractive one clicked, then the user stops).
CLICK_MODELS = ("pbm", "cascade")

#: Probability that an examined result is attractive, by qrels grade (0, 1, 2, 3, 4 and more;
#: an unjudged or negative grade counts as 0).
DEFAULT_ATTRACTIVENESS = (0.05, 0.35, 0.6, 0.8, 0.9)
#: Segments a treatment's effect can be set for (``segment_effects``).
SEGMENTS = ("new", "returning", "mobile", "desktop")

_CHUNK_USERS = 20_000
_MAX_REQUESTS_PER_SESSION = 8
_DAY_US = 86_400 * 1_000_000
_STREAM_USERS, _STREAM_EXPERIMENT, _STREAM_PRE, _STREAM_QUERIES = 1, 2, 3, 4


def simulate_log(
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    users: int = 1000,
    sessions_per_user: float = 3.0,
    seed: int = 0,
    click_model: str = "pbm",
    eta: float = 1.0,
    attractiveness: Sequence[float] = DEFAULT_ATTRACTIVENESS,
    cutoff: int = 10,
    split: Mapping[str, float] | None = None,
    segment_effects: Mapping[str, float] | None = None,
    latency_ms: Mapping[str, tuple[float, float]] | None = None,
    reformulation: tuple[float, float] = (0.1, 0.5),
    reformulation_window_s: float = 60.0,
    new_user_share: float = 0.3,
    mobile_share: float = 0.4,
    zipf: float = 1.0,
    start: str = "2024-05-01T00:00:00+00:00",
    days: float = 7.0,
    experiment_id: str = "exp-1",
    pre_period: bool = False,
    interleave: str | None = None,
) -> Any:
    """A simulated search log (one row per impression) from qrels and one run per variant.

    Parameters
    ----------
    qrels : Qrels or anything :func:`rankmeter.io.as_qrels` reads
        The judgments: their queries are the queries users issue, their grades set how
        attractive a shown document is.
    runs : mapping of variant name to Run (or anything :func:`rankmeter.io.as_run` reads)
        What each variant shows; the first is the control (the pre-period shows it to all).
    users : int
        Users (the randomisation unit).
    sessions_per_user : float
        Mean sessions per user (at least 1 each; more for more active users).
    seed : int
        The same seed gives the same log.
    click_model : {"pbm", "cascade"}
        How clicks are drawn (see :data:`CLICK_MODELS`).
    eta : float
        Position bias: a result at rank r is examined with probability ``1 / r ** eta``.
    attractiveness : sequence of float
        Probability that an examined result is clicked, by grade (0, 1, 2, ...; a grade above
        the last uses the last).
    cutoff : int
        Results shown per request (the run's top ``cutoff``).
    split : mapping of variant to weight, optional
        Share of users per variant (default: equal). Unequal shares plant a sample-ratio
        mismatch when the analysis expects equal ones.
    segment_effects : mapping of segment to factor, optional
        For users not in the control: their click probability times this factor, by segment
        (``"new"``, ``"returning"``, ``"mobile"``, ``"desktop"``); e.g. ``{"new": 0.6}``
        plants a regression for new users only.
    latency_ms : mapping of variant to (median, sigma), optional
        Lognormal server latency per variant (default: median 80 ms, sigma 0.4 for all).
    reformulation : (float, float)
        Probability of reformulating (another query in the same session within
        ``reformulation_window_s``) after a request with a click, and after an abandoned one.
    reformulation_window_s : float
        A reformulation follows within this many seconds of its request; a new, unrelated
        query in the same session comes 2 to 15 minutes after the clicked documents were read.
    new_user_share, mobile_share : float
        Share of users who are new (no pre-period history) and who are on mobile.
    zipf : float
        Query popularity: the i-th most popular query is drawn with weight ``1 / i ** zipf``;
        the ``query_freq`` column buckets queries into head (the most popular, half of the
        traffic), torso (the next 30 %) and tail.
    start : str
        ISO 8601 start of the experiment; it lasts ``days`` days (the pre-period the
        ``days`` before it).
    experiment_id : str
        The ``experiment_id`` column (``"<id>-pre"`` in the pre-period).
    pre_period : bool
        Give the pre-period log instead: the same users (returning users only: new users have
        no history) with the same propensities, before the experiment, all shown the
        control's ranking, still labelled with the variant they are assigned to.
    interleave : {"team-draft", "balanced"}, optional
        An interleaving experiment instead of an A/B test: ``runs`` holds two runs (A, the
        current ranker, then B, the candidate), and every request shows one list made from
        both by :func:`rankmeter.online.interleave` (its own coins per request), with the
        column ``interleave_team`` naming the run that contributed each shown document; the
        clicks come from the same click model. Every user sees both runs, so ``variant`` is
        ``"interleaved"`` for all, and ``split``, ``segment_effects``, ``latency_ms`` and
        ``pre_period`` (the settings of an A/B split) are refused. Credit the clicks with
        :func:`rankmeter.online.interleaving_test` (docs/interleaving.md).

    Returns
    -------
    pyarrow.Table
        The log schema's columns (docs/online.md; ``interleave_team`` after ``variant`` when
        interleaved) and the segments ``device``, ``is_new_user`` and ``query_freq``; ``event_ts`` a UTC timestamp; rows in time order
        within each chunk of users.

    Examples
    --------
    >>> from rankmeter.online import read_log, simulate_log
    >>> qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    >>> runs = {"control": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.0}},
    ...         "treatment": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}}
    >>> log = simulate_log(qrels, runs, users=200, seed=7)
    >>> sorted(set(log["variant"].to_pylist()))
    ['control', 'treatment']
    >>> read_log(log).count().execute() == log.num_rows
    True
    """
    from rankmeter import _validate
    from rankmeter._validate import boolean, choice, integer, real
    from rankmeter.io import as_qrels, as_run

    users = integer("users", users, low=1, high=100_000_000, what="users to simulate")
    sessions_per_user = real("sessions_per_user", sessions_per_user, low=1.0, high=1000.0)
    seed = _validate.seed(seed)
    choice("click_model", click_model, CLICK_MODELS)
    eta = real("eta", eta, low=0.0, high=10.0, what="position bias")
    cutoff = integer("cutoff", cutoff, low=1, high=1000, what="results shown per request")
    new_user_share = real("new_user_share", new_user_share, low=0.0, high=1.0)
    mobile_share = real("mobile_share", mobile_share, low=0.0, high=1.0)
    zipf = real("zipf", zipf, low=0.0, high=10.0)
    days = real("days", days, low=0.001, high=3650.0)
    reformulation_window_s = real("reformulation_window_s", reformulation_window_s, low=1.0)
    boolean("pre_period", pre_period)
    if not isinstance(experiment_id, str):
        raise PolicyError(f"experiment_id={experiment_id!r} must be text")
    attract = _attractiveness(attractiveness)
    reform = _reformulation(reformulation)
    if not isinstance(runs, Mapping) or not runs:
        raise PolicyError(
            f"runs={type(runs).__name__} must map each variant's name to its run, e.g. "
            "{'control': bm25_run, 'treatment': hybrid_run}"
        )
    variants = [str(v) for v in runs]
    if interleave is not None:
        interleave = _interleaving(
            interleave,
            variants,
            split=split,
            segment_effects=segment_effects,
            latency_ms=latency_ms,
            pre_period=pre_period,
        )
    # An interleaved log has one variant: every user sees the list made from both runs.
    labels = variants if interleave is None else ["interleaved"]
    weights = _split(split, labels)
    effects = _segment_effects(segment_effects)
    latency = _latency(latency_ms, labels)
    start_us = _start(start)

    qrels = as_qrels(qrels)
    if qrels.n_queries == 0:
        raise PolicyError("qrels has no queries: the simulated users need queries to issue")
    shown = _Shown.build(qrels, [as_run(runs[v], name=v) for v in variants], cutoff)
    import numpy as np

    queries_rng = np.random.default_rng([seed, _STREAM_QUERIES])
    popularity, query_freq = _popularity(shown.n_queries, zipf, queries_rng)

    config = _Config(
        variants=labels,
        interleave=interleave,
        weights=weights,
        sessions_per_user=sessions_per_user,
        click_model=click_model,
        examination=1.0 / np.arange(1, cutoff + 1, dtype=np.float64) ** eta,
        attractiveness=attract,
        effects=effects,
        latency=latency,
        reformulation=reform,
        window_s=reformulation_window_s,
        new_user_share=new_user_share,
        mobile_share=mobile_share,
        popularity=popularity,
        query_freq=query_freq,
        start_us=start_us - int(days * _DAY_US) if pre_period else start_us,
        span_us=int(days * _DAY_US),
        experiment_id=f"{experiment_id}-pre" if pre_period else experiment_id,
        pre_period=pre_period,
    )
    import pyarrow as pa

    chunks = [
        _chunk(shown, config, seed, first, min(users, first + _CHUNK_USERS))
        for first in range(0, users, _CHUNK_USERS)
    ]
    return pa.concat_tables(chunks)


# --- parameters -------------------------------------------------------------------------------


def _interleaving(method: Any, variants: list[str], **ab_settings: Any) -> str:
    """The interleaving method, checked with the settings it cannot go with."""
    from rankmeter._validate import choice
    from rankmeter.online.interleaving import METHODS

    method = choice("interleave", method, METHODS)
    if len(variants) != 2:
        raise PolicyError(
            f"interleave={method!r} interleaves two runs (A, then B): runs has "
            f"{len(variants)} ({', '.join(variants)})"
        )
    for name, value in ab_settings.items():
        if value not in (None, False):
            raise PolicyError(
                f"{name} is for an A/B log: with interleave={method!r} every user sees both "
                "runs in one list (leave it out)"
            )
    return str(method)


def _attractiveness(values: Sequence[float]) -> Any:
    import numpy as np

    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise PolicyError(
            f"attractiveness={values!r} must be a list of probabilities by grade, e.g. "
            "(0.05, 0.35, 0.6, 0.8, 0.9)"
        )
    from rankmeter._validate import real

    return np.array(
        [real(f"attractiveness[{i}]", v, low=0.0, high=1.0) for i, v in enumerate(values)]
    )


def _reformulation(values: tuple[float, float]) -> tuple[float, float]:
    from rankmeter._validate import real

    if not isinstance(values, Sequence) or isinstance(values, str) or len(values) != 2:
        raise PolicyError(
            f"reformulation={values!r} must be two probabilities: after a request with a "
            "click, and after an abandoned one"
        )
    return (
        real("reformulation[0]", values[0], low=0.0, high=1.0),
        real("reformulation[1]", values[1], low=0.0, high=1.0),
    )


def _split(split: Mapping[str, float] | None, variants: list[str]) -> Any:
    import numpy as np

    from rankmeter._validate import real

    if split is None:
        return np.full(len(variants), 1.0 / len(variants))
    if not isinstance(split, Mapping) or set(map(str, split)) != set(variants):
        raise PolicyError(
            f"split={split!r} must give a weight to each variant: {', '.join(variants)}"
        )
    weights = np.array([real(f"split[{v!r}]", split[v], low=0.0) for v in variants])
    if weights.sum() <= 0:
        raise PolicyError(f"split={dict(split)!r} gives no variant any users")
    return weights / weights.sum()


def _segment_effects(effects: Mapping[str, float] | None) -> dict[str, float]:
    from rankmeter._validate import real

    if effects is None:
        return {}
    if not isinstance(effects, Mapping):
        raise PolicyError(
            f"segment_effects={effects!r} must map segments ({', '.join(SEGMENTS)}) to "
            "factors on the click probability"
        )
    for name in effects:
        if name not in SEGMENTS:
            raise PolicyError(
                f"segment_effects names {name!r}: the segments are {', '.join(SEGMENTS)}"
            )
    return {name: real(f"segment_effects[{name!r}]", f, low=0.0) for name, f in effects.items()}


def _latency(
    latency: Mapping[str, tuple[float, float]] | None, variants: list[str]
) -> list[tuple[float, float]]:
    from rankmeter._validate import real

    if latency is None:
        return [(80.0, 0.4)] * len(variants)
    unknown = [v for v in latency if v not in variants]
    if not isinstance(latency, Mapping) or unknown:
        raise PolicyError(
            f"latency_ms={latency!r} must map variants ({', '.join(variants)}) to "
            "(median ms, sigma)"
        )
    result = []
    for variant in variants:
        median, sigma = latency.get(variant, (80.0, 0.4))
        result.append(
            (
                real(f"latency_ms[{variant!r}] median", median, low=0.0, open_low=True),
                real(f"latency_ms[{variant!r}] sigma", sigma, low=0.0),
            )
        )
    return result


def _start(start: str) -> int:
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(start)
    except (TypeError, ValueError):
        raise PolicyError(
            f"start={start!r} must be an ISO 8601 time, e.g. 2024-05-01T00:00:00+00:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1_000_000)


def _popularity(n_queries: int, zipf: float, rng: Any) -> tuple[Any, Any]:
    """Each query's probability of being issued (Zipf over a random order) and its bucket:
    0 head (the most popular queries, half the traffic), 1 torso (the next 30 %), 2 tail."""
    import numpy as np

    order = rng.permutation(n_queries)  # order[i]: the query of popularity rank i
    weights = 1.0 / np.arange(1, n_queries + 1, dtype=np.float64) ** zipf
    weights /= weights.sum()
    before = np.cumsum(weights) - weights  # traffic share of the more popular queries
    bucket_by_rank = np.where(before < 0.5, 0, np.where(before < 0.8, 1, 2))
    popularity = np.empty(n_queries)
    popularity[order] = weights
    buckets = np.empty(n_queries, dtype=np.int8)
    buckets[order] = bucket_by_rank
    return popularity, buckets


# --- what each variant shows ------------------------------------------------------------------


class _Shown:
    """For each variant and query: the shown documents (codes) and their grades, top first."""

    def __init__(
        self,
        query_ids: Any,
        doc_vocabulary: Any,
        docs: Any,
        grades: Any,
        counts: Any,
        totals: Any,
    ) -> None:
        self.query_ids = query_ids  # pyarrow string array
        self.doc_vocabulary = doc_vocabulary  # pyarrow string array
        self.docs = docs  # int64 [variant, query, rank], -1 past the end
        self.grades = grades  # float64 [variant, query, rank]
        self.counts = counts  # int64 [variant, query]: results shown
        self.totals = totals  # int64 [variant, query]: results found (the result_count)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def grade_of(self, query: Any, docs: Any) -> Any:
        """The grades of documents (codes, -1 for none: grade 0) shown for ``query`` (one
        per request), looked up among what any variant shows for that query."""
        import numpy as np

        width = len(self.doc_vocabulary) + 1
        listed = self.docs >= 0
        keys = (np.arange(self.n_queries)[None, :, None] * width + self.docs)[listed]
        order = np.argsort(keys, kind="stable")
        keys, grades = keys[order], self.grades[listed][order]
        wanted = query[:, None] * width + docs
        if not len(keys):
            return np.zeros(docs.shape)
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        found = (docs >= 0) & (keys[at] == wanted)
        return np.where(found, grades[at], 0.0)

    @classmethod
    def build(cls, qrels: Any, runs: list[Any], cutoff: int) -> _Shown:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        judged = qrels.to_arrow()
        query_ids = pa.array(list(qrels.query_ids), pa.string())
        tables = [run.head(cutoff).to_arrow() for run in runs]
        vocabulary = pc.unique(pa.chunked_array([t["doc_id"] for t in tables] or [[]], pa.string()))
        vocabulary = (
            vocabulary.combine_chunks() if hasattr(vocabulary, "combine_chunks") else vocabulary
        )
        n_queries = len(query_ids)
        docs = np.full((len(runs), n_queries, cutoff), -1, dtype=np.int64)
        grades = np.zeros((len(runs), n_queries, cutoff), dtype=np.float64)
        counts = np.zeros((len(runs), n_queries), dtype=np.int64)
        totals = np.zeros((len(runs), n_queries), dtype=np.int64)
        for v, run in enumerate(runs):
            found = dict(zip(run.query_ids, np.diff(run.offsets).tolist(), strict=True))
            totals[v] = [found.get(q, 0) for q in qrels.query_ids]
        # Grades of (query, doc) pairs, looked up by joining on the pair's text key.
        judged_keys = pc.binary_join_element_wise(judged["query_id"], judged["doc_id"], "\x00")
        for v, table in enumerate(tables):
            query_index = pc.index_in(table["query_id"], value_set=query_ids).to_numpy(
                zero_copy_only=False
            )
            keep = ~np.isnan(query_index.astype(np.float64))
            table = table.filter(pa.array(keep))
            query_index = query_index[keep].astype(np.int64)
            rank = table["rank"].to_numpy() - 1
            docs[v, query_index, rank] = pc.index_in(
                table["doc_id"], value_set=vocabulary
            ).to_numpy(zero_copy_only=False)
            keys = pc.binary_join_element_wise(table["query_id"], table["doc_id"], "\x00")
            row = pc.index_in(keys, value_set=judged_keys).to_numpy(zero_copy_only=False)
            found = ~np.isnan(row.astype(np.float64))
            grade = np.zeros(len(row))
            if found.any():
                relevance = judged["relevance"].to_numpy(zero_copy_only=False)
                grade[found] = relevance[row[found].astype(np.int64)]
            grades[v, query_index, rank] = grade
            counts[v] = np.bincount(query_index, minlength=n_queries)
        return cls(query_ids, vocabulary, docs, grades, counts, totals)


# --- one chunk of users -----------------------------------------------------------------------


class _Config:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    variants: list[str]
    interleave: str | None
    weights: Any
    sessions_per_user: float
    click_model: str
    examination: Any
    attractiveness: Any
    effects: dict[str, float]
    latency: list[tuple[float, float]]
    reformulation: tuple[float, float]
    window_s: float
    new_user_share: float
    mobile_share: float
    popularity: Any
    query_freq: Any
    start_us: int
    span_us: int
    experiment_id: str
    pre_period: bool


def _chunk(shown: _Shown, config: _Config, seed: int, first: int, end: int) -> Any:
    """Users ``first`` to ``end - 1``: their traits (the same in both periods), sessions,
    requests and impressions."""
    import numpy as np

    n_users = end - first
    traits = np.random.default_rng([seed, _STREAM_USERS, first])
    variant = traits.choice(len(config.variants), size=n_users, p=config.weights)
    is_new = traits.random(n_users) < config.new_user_share
    is_mobile = traits.random(n_users) < config.mobile_share
    propensity = traits.lognormal(-0.125, 0.5, n_users)  # mean 1: how readily a user clicks
    activity = traits.lognormal(-0.125, 0.5, n_users)  # mean 1: how often a user searches

    stream = _STREAM_PRE if config.pre_period else _STREAM_EXPERIMENT
    rng = np.random.default_rng([seed, stream, first])
    # Click-probability factor of each user: their propensity, and the treatment's planted
    # effect in their segments (users not in the control; not in the pre-period).
    factor = propensity.copy()
    if not config.pre_period:
        treated = variant > 0
        for segment, mask in (
            ("new", is_new),
            ("returning", ~is_new),
            ("mobile", is_mobile),
            ("desktop", ~is_mobile),
        ):
            if segment in config.effects:
                factor[treated & mask] *= config.effects[segment]

    # Sessions: at least one per user, more for active users.
    sessions = 1 + rng.poisson((config.sessions_per_user - 1.0) * activity)
    if config.pre_period:
        sessions[is_new] = 0  # new users have no history
    session_user = np.repeat(np.arange(n_users), sessions)
    session_number = np.arange(len(session_user)) - np.repeat(
        np.cumsum(sessions) - sessions, sessions
    )
    session_start = config.start_us + (rng.random(len(session_user)) * config.span_us).astype(
        np.int64
    )

    requests = _requests(shown, config, rng, session_user, session_start, variant, factor)
    return _impressions(
        shown,
        config,
        rng,
        first,
        requests,
        session_user,
        session_number,
        variant,
        is_new,
        is_mobile,
    )


def _requests(
    shown: _Shown,
    config: _Config,
    rng: Any,
    session_user: Any,
    session_start: Any,
    variant: Any,
    factor: Any,
) -> dict[str, Any]:
    """Every request of the sessions, step by step: a query, what is shown, the clicks, and
    whether the session goes on (a reformulation is likelier after an abandoned request)."""
    import numpy as np

    from rankmeter.clicks.browsing import by_grade, draw_clicks
    from rankmeter.online.interleaved_lists import _interleave_codes

    cutoff = len(config.examination)
    ranks = np.arange(cutoff)
    active = np.arange(len(session_user))
    now = session_start.copy()
    parts: list[dict[str, Any]] = []
    for step in range(_MAX_REQUESTS_PER_SESSION):
        if not len(active):
            break
        n = len(active)
        user = session_user[active]
        shown_variant = np.zeros(n, dtype=np.int64) if config.pre_period else variant[user]
        query = rng.choice(shown.n_queries, size=n, p=config.popularity)
        if config.interleave is None:
            count = shown.counts[shown_variant, query]
            total = shown.totals[shown_variant, query]
            grades = shown.grades[shown_variant, query]  # [n, cutoff]
        else:
            docs, teams = _interleave_codes(
                shown.docs[0], shown.docs[1], query, config.interleave, cutoff, rng
            )
            count = (docs >= 0).sum(axis=1)
            # Both runs' results were found; a request whose list is empty (a run without
            # results for the query) is a no-result request.
            total = np.where(count > 0, shown.totals[:, query].max(axis=0), 0)
            grades = shown.grade_of(query, docs)
        on_page = ranks[None, :] < count[:, None]
        attractive = by_grade(config.attractiveness, grades)
        probability = np.minimum(attractive * factor[user][:, None], 1.0)
        # One uniform per shown result (PBM: clicked below attractiveness x examination).
        clicked = draw_clicks(
            config.click_model,
            rng,
            on_page,
            probability,
            examination=config.examination,
            pbm_draws=1,
        )
        relevant = grades >= 1
        dwell = np.where(
            relevant,
            rng.lognormal(np.log(60_000.0), 0.6, (n, cutoff)),
            rng.lognormal(np.log(10_000.0), 0.7, (n, cutoff)),
        )
        median = np.array([m for m, _ in config.latency])[shown_variant]
        sigma = np.array([s for _, s in config.latency])[shown_variant]
        latency = median * np.exp(sigma * rng.standard_normal(n))
        parts.append(
            {
                "session": active,
                "step": np.full(n, step, dtype=np.int64),
                "ts": now[active].copy(),
                "query": query,
                "shown_variant": shown_variant,
                "count": count,
                "total": total,
                "clicked": clicked,
                "dwell": np.where(clicked, dwell, np.nan),
                "latency": latency,
                **({} if config.interleave is None else {"docs": docs, "teams": teams}),
            }
        )
        abandoned = ~clicked.any(axis=1)
        draw = rng.random(n)
        p_reformulate = np.where(abandoned, config.reformulation[1], config.reformulation[0])
        reformulates = draw < p_reformulate
        # Otherwise, sometimes a new need later in the same session; else the session ends.
        goes_on = reformulates | (rng.random(n) < 0.2)
        gap_s = np.where(
            reformulates,
            rng.uniform(3.0, config.window_s * 0.75, n),
            rng.uniform(120.0, 900.0, n),
        )
        # A reformulation comes within the window of the request (so that an analysis
        # counting "another query within T seconds" finds the planted rate); a new need comes
        # after the clicked documents were read.
        read_ms = np.where(reformulates, 0.0, np.nansum(np.where(clicked, dwell, 0.0), axis=1))
        next_ts = now[active] + ((gap_s * 1000.0 + read_ms) * 1000.0).astype(np.int64)
        active = active[goes_on]
        now[active] = next_ts[goes_on]
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]} if parts else {}


def _ids(prefix: str, numbers: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")


def _impressions(
    shown: _Shown,
    config: _Config,
    rng: Any,
    first_user: int,
    requests: dict[str, Any],
    session_user: Any,
    session_number: Any,
    variant: Any,
    is_new: Any,
    is_mobile: Any,
) -> Any:
    """One row per shown result (one row for a no-result request), in time order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema_order = _schema(interleaved=config.interleave is not None)
    if not requests:
        return schema_order.empty_table()
    cutoff = len(config.examination)
    order = np.lexsort((requests["step"], requests["session"], requests["ts"]))
    requests = {key: value[order] for key, value in requests.items()}
    count = requests["count"]
    rows = np.maximum(count, 1)
    request = np.repeat(np.arange(len(count)), rows)
    rank = np.arange(len(request)) - np.repeat(np.cumsum(rows) - rows, rows)
    has_doc = count[request] > 0
    safe_rank = np.minimum(rank, cutoff - 1)
    if "docs" in requests:  # interleaved: each request's own list
        docs = requests["docs"][request, safe_rank]
    else:
        docs = shown.docs[requests["shown_variant"][request], requests["query"][request], safe_rank]
    clicked = requests["clicked"][request, safe_rank] & has_doc
    dwell = requests["dwell"][request, safe_rank]
    dwell = np.where(clicked, dwell, np.nan)

    session = requests["session"][request]
    user = session_user[session]
    user_ids = _ids("u", first_user + user)
    period = "p" if config.pre_period else "s"
    session_ids = pc.binary_join_element_wise(user_ids, _ids(period, session_number[session]), "-")
    request_ids = pc.binary_join_element_wise(
        session_ids, _ids("r", requests["step"][request]), "-"
    )
    doc_index = pa.array(np.where(has_doc, docs, 0))
    doc_ids = pc.if_else(
        pa.array(has_doc),
        pc.take(shown.doc_vocabulary, doc_index),
        pa.nulls(len(docs), pa.string()),
    )
    query_index = requests["query"][request]
    freq_names = pa.array(["head", "torso", "tail"])
    device_names = pa.array(["desktop", "mobile"])
    variant_names = pa.array(config.variants)
    columns = {
        "event_ts": pa.array(requests["ts"][request], pa.timestamp("us", tz="UTC")),
        "user_id": user_ids,
        "session_id": session_ids,
        "request_id": request_ids,
        "query_id": pc.take(shown.query_ids, pa.array(query_index)),
        "result_count": pa.array(requests["total"][request], pa.int64()),
        "latency_ms": pa.array(np.round(requests["latency"][request], 3)),
        "experiment_id": pa.array(np.full(len(request), config.experiment_id)),
        "variant": pc.take(variant_names, pa.array(variant[user])),
        **_teams(requests, request, safe_rank, has_doc),
        "doc_id": doc_ids,
        "position": pa.array(rank + 1, pa.int64(), mask=~has_doc),
        "clicked": pa.array(clicked),
        "dwell_ms": pa.array(np.round(dwell, 1), pa.float64(), mask=~clicked),
        "device": pc.take(device_names, pa.array(is_mobile[user].astype(np.int64))),
        "is_new_user": pa.array(is_new[user]),
        "query_freq": pc.take(
            freq_names, pa.array(config.query_freq[query_index].astype(np.int64))
        ),
    }
    del rng  # the chunk's draws are all made in _requests
    return pa.table(columns).cast(schema_order)


def _teams(requests: dict[str, Any], request: Any, rank: Any, has_doc: Any) -> dict[str, Any]:
    """The interleave_team column of an interleaved log (none for an A/B log)."""
    if "teams" not in requests:
        return {}
    import numpy as np
    import pyarrow as pa

    from rankmeter.online.interleaved_lists import TEAMS

    team = np.maximum(requests["teams"][request, rank], 0)
    return {"interleave_team": pa.array(np.array(TEAMS)[team], pa.string(), mask=~has_doc)}


def _schema(*, interleaved: bool = False) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("event_ts", pa.timestamp("us", tz="UTC")),
            ("user_id", pa.string()),
            ("session_id", pa.string()),
            ("request_id", pa.string()),
            ("query_id", pa.string()),
            ("result_count", pa.int64()),
            ("latency_ms", pa.float64()),
            ("experiment_id", pa.string()),
            ("variant", pa.string()),
            *([("interleave_team", pa.string())] if interleaved else []),
            ("doc_id", pa.string()),
            ("position", pa.int64()),
            ("clicked", pa.bool_()),
            ("dwell_ms", pa.float64()),
            ("device", pa.string()),
            ("is_new_user", pa.bool_()),
            ("query_freq", pa.string()),
        ]
    )
