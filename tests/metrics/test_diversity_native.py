"""The diversity kernels' compiled loops (rankmeter.data._native's key_repeats and
greedy_ideal, through rankmeter.data.key_loops) against their NumPy twins in
rankmeter/metrics/_subtopic_pairs.py, bit for bit.

Each test runs the same join both ways (``_compiled.NATIVE`` set, then None) on random subtopic
qrels and runs: ties in the greedy ideal's gains (many documents judged for the same
subtopics), doc ids whose byte order is not their numeric order, grades 0..3 and negative ones,
queries in one side only, compact and full joins, several rel levels, alphas (0.5 and ones whose
gains are not exact in binary) and cutoffs, and the grades given by hand (no qrels). What is
compared: each result's gain and new subtopics, the (result, subtopic, seen) pairs that
explanations read, each query's subtopic count, the ideal's gains and the judgments it
placed, and the four metrics' values.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from rankmeter.data import Qrels, Run, _compiled
from rankmeter.metrics import Ranked, join, parse_metric
from rankmeter.metrics import _subtopic_pairs as sides
from rankmeter.metrics import diversity as dv

NATIVE = _compiled.NATIVE
pytestmark = pytest.mark.skipif(
    NATIVE is None,
    reason="the C extension rankmeter.data._native was not built here (no C compiler when "
    "installing, or RANKMETER_PURE=1): only the NumPy loops run",
)

ALPHAS = (0.5, 0.3, 0.7, 0.0, 1.0)
DEPTHS = (1, 3, 5, 20, dv.WHOLE)


def both(monkeypatch: pytest.MonkeyPatch, work: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """``work(*args)`` with the compiled loops, then with NumPy's."""
    monkeypatch.setattr(_compiled, "NATIVE", NATIVE)
    native = work(*args)
    monkeypatch.setattr(_compiled, "NATIVE", None)
    pure = work(*args)
    monkeypatch.setattr(_compiled, "NATIVE", NATIVE)
    return native, pure


def _collection(rng: np.random.Generator, subtopics: int = 8) -> tuple[Qrels, Run]:
    n_queries = int(rng.integers(1, 30))
    docs = [f"d{i}" for i in range(int(rng.integers(1, 25)))]
    lines: list[tuple[str, str, str, int]] = []
    for q in range(n_queries):
        if rng.random() < 0.1:
            continue  # a query only the run has
        fewest = 1 if subtopics <= 64 else subtopics - 10
        topics = rng.choice(subtopics, size=int(rng.integers(fewest, subtopics)), replace=False)
        for d in rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False):
            for s in rng.choice(topics, size=int(rng.integers(1, len(topics) + 1)), replace=False):
                lines.append((str(q), str(s), str(d), int(rng.choice([-1, 0, 1, 1, 2, 3]))))
    if not lines:
        lines.append(("0", "0", "d0", 1))
    q, s, d, g = zip(*lines, strict=True)
    qrels = Qrels.from_subtopic_columns(
        np.array(q, dtype=object), np.array(s, dtype=object), np.array(d, dtype=object), np.array(g)
    )
    run_q, run_d, run_s = [], [], []
    for query in range(n_queries + 2):  # (and queries the qrels lack)
        if rng.random() < 0.15:
            continue
        pool = [*docs, "u1", "u2", "u10"]
        for doc in rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False):
            run_q.append(str(query))
            run_d.append(str(doc))
            run_s.append(float(rng.integers(0, 4)))  # ties in scores
    if not run_q:
        run_q, run_d, run_s = ["0"], ["d0"], [1.0]
    run = Run.from_columns(
        np.array(run_q, dtype=object), np.array(run_d, dtype=object), np.array(run_s), name="r"
    )
    return qrels, run


def _sides(ranked_of: Callable[[], Ranked], rel: float, alpha: float, depth: int) -> Any:
    ranked = ranked_of()
    covered = sides.covered(ranked, rel, alpha, depth)
    ideal = sides.ideal(ranked, rel, alpha, depth)
    return covered, ideal


def _compute(metric: Any, qrels: Qrels, run: Run) -> Any:
    return metric.compute(join(qrels, run, compact=True))


def _assert_same(native: Any, pure: Any) -> None:
    (c_native, i_native), (c_pure, i_pure) = native, pure
    for name in ("score", "new", "pair_entry", "pair_code", "pair_seen"):
        a, b = getattr(c_native, name), getattr(c_pure, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for name in ("subtopics", "gains", "picked"):
        a, b = getattr(i_native, name), getattr(i_pure, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
    assert i_native.depth == i_pure.depth


@pytest.mark.parametrize("seed", range(12))
def test_compiled_loops_equal_numpy_on_joins(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = _collection(rng)
    for compact in (True, False):
        for rel in (1.0, 2.0):
            for alpha in ALPHAS:
                for depth in DEPTHS:
                    ranked_of = partial(join, qrels, run, compact=compact)
                    native, pure = both(monkeypatch, _sides, ranked_of, rel, alpha, depth)
                    _assert_same(native, pure)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_loops_equal_numpy_with_over_64_subtopics_a_query(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # (the compiled greedy keeps a query's subtopics as bits of a word up to 64, in lists above)
    rng = np.random.default_rng(50 + seed)
    qrels, run = _collection(rng, subtopics=90)
    assert int(sides.ideal(join(qrels, run, compact=True), 1.0, 0.5, 0).subtopics.max()) > 64
    for alpha in (0.5, 0.3):
        for depth in (3, 20, dv.WHOLE):
            ranked_of = partial(join, qrels, run, compact=True)
            _assert_same(*both(monkeypatch, _sides, ranked_of, 1.0, alpha, depth))


@pytest.mark.parametrize("seed", range(6))
def test_metric_values_equal_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    qrels, run = _collection(rng)
    names = [f"alpha_nDCG(alpha={a})@{k}" for a in (0.5, 0.3) for k in (1, 5, 20)]
    names += [f"{m}@{k}" for m in ("ERR_IA", "nERR_IA", "StRecall") for k in (1, 5, 20)]
    for name in names:
        metric = parse_metric(name)
        native, pure = both(monkeypatch, _compute, metric, qrels, run)
        assert np.array_equal(native, pure), name


@pytest.mark.parametrize("seed", range(6))
def test_grades_given_by_hand_equal_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n_queries = int(rng.integers(1, 6))
    lengths = rng.integers(0, 12, size=n_queries)
    grades = rng.choice([-1.0, 0.0, 1.0, 2.0], size=int(lengths.sum()))
    judged = grades >= 0
    values = np.where(judged, grades, 0.0)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    pools = [np.sort(values[a:b][judged[a:b]])[::-1] for a, b in pairwise(offsets)]
    j_offsets = np.concatenate(([0], np.cumsum([len(p) for p in pools]))).astype(np.int64)

    def ranked() -> Ranked:
        return Ranked(
            np.array([f"q{i}" for i in range(n_queries)], dtype=object),
            offsets,
            values,
            judged,
            j_offsets,
            np.concatenate(pools) if pools else np.zeros(0),
            1.0,
        )

    for alpha in ALPHAS:
        for depth in DEPTHS:
            _assert_same(*both(monkeypatch, _sides, ranked, 1.0, alpha, depth))


def _call(name: str, *args: Any) -> Any:
    assert NATIVE is not None
    return getattr(NATIVE, name)(*args)


def _ints(*values: int) -> Any:
    return np.array(values, dtype=np.int64)


def test_compiled_loops_refuse_rows_and_keys_outside_their_tables() -> None:
    one = np.zeros(1)
    table = (_ints(0, 1), _ints(0), np.ones(1))  # one row, one pair (key 0, grade 1)
    out = [np.zeros(1, dtype=np.int64) for _ in range(3)]
    with pytest.raises(ValueError, match="rows: a row or its pairs outside"):
        _call(
            "key_repeats",
            _ints(0, 1),
            _ints(1),
            _ints(0),
            9,
            *table,
            1.0,
            1,
            one,
            one,
            one.copy(),
            *out,
        )
    with pytest.raises(ValueError, match="pair_keys: a key outside"):
        _call(
            "key_repeats",
            _ints(0, 1),
            _ints(0),
            _ints(0),
            9,
            *table,
            1.0,
            0,
            one,
            one,
            one.copy(),
            *out,
        )
    with pytest.raises(ValueError, match="powers: fewer"):
        two = (_ints(0, 1, 2), _ints(0, 0), np.ones(2))
        _call(
            "key_repeats",
            _ints(0, 2),
            _ints(0, 1),
            _ints(0, 1),
            9,
            *two,
            1.0,
            1,
            one,
            np.zeros(2),
            np.zeros(2),
            *out,
        )
    with pytest.raises(ValueError, match="offsets: not rising"):
        _call(
            "key_repeats",
            _ints(0, 2),
            _ints(0),
            _ints(0),
            9,
            *table,
            1.0,
            1,
            one,
            one,
            one.copy(),
            *out,
        )
    g, p, n = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="rows: a row or its pairs outside"):
        _call("greedy_ideal", _ints(0, 1), _ints(3), _ints(0), *table, 1.0, 1, 0.5, 1, g, p, n)
    with pytest.raises(ValueError, match="pair_keys: a key outside"):
        _call("greedy_ideal", _ints(0, 1), _ints(0), _ints(0), *table, 1.0, 0, 0.5, 1, g, p, n)
    with pytest.raises(ValueError, match="gains"):
        _call("greedy_ideal", _ints(0, 1), _ints(0), _ints(0), *table, 1.0, 1, 0.5, 2, g, p, n)
    # the right sizes: the one item placed, gaining 1
    assert (
        _call("greedy_ideal", _ints(0, 1), _ints(0), _ints(0), *table, 1.0, 1, 0.5, 1, g, p, n) == 1
    )
    assert (g.tolist(), p.tolist(), n.tolist()) == ([1.0], [0], [1])
