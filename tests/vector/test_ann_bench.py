"""Several indexes in one run (rankmeter.vector.ann.ann_benchmark): the Pareto frontier,
single-query latency percentiles on a fake index and a fake clock, builds reused per index,
the quality lost against exact search, and results that accumulate in a folder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import FormatError, RankmeterError
from rankmeter.report.ann import write_results
from rankmeter.vector.ann import (
    AnnBenchmark,
    IndexSpecError,
    ann_benchmark,
    benchmark_settings,
    latency_percentiles,
    load_results,
    pareto_frontier,
    query_latencies,
)
from rankmeter.vector.ann import bench as bench_module

pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")


# -- the Pareto frontier on hand-made points ----------------------------------------------------
def test_frontier_of_a_plain_trade_off() -> None:
    points = [(0.5, 1000.0), (0.8, 500.0), (0.95, 100.0), (0.7, 400.0), (0.99, 10.0)]
    # (0.7, 400) is beaten by (0.8, 500) on both; every other point trades one for the other.
    assert pareto_frontier(points) == [True, True, True, False, True]


def test_frontier_ties_on_one_axis() -> None:
    # Equal recall: the faster one dominates (one strictly higher, the other equal).
    assert pareto_frontier([(0.9, 100.0), (0.9, 200.0)]) == [False, True]
    # Equal speed: the more accurate one dominates.
    assert pareto_frontier([(0.8, 100.0), (0.9, 100.0)]) == [False, True]


def test_frontier_duplicates_stay_together() -> None:
    # Equal points do not dominate each other: both are on it, or both are off.
    assert pareto_frontier([(0.9, 100.0), (0.9, 100.0), (0.5, 50.0)]) == [True, True, False]
    assert pareto_frontier([(0.5, 50.0), (0.5, 50.0), (0.9, 100.0)]) == [False, False, True]


def test_frontier_of_one_point_and_of_none() -> None:
    assert pareto_frontier([(0.1, 1.0)]) == [True]
    assert pareto_frontier([]) == []


# -- latency percentiles on a fake index with known delays --------------------------------------
class FakeClock:
    """A clock that moves only when the fake index searches."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowIndex:
    """Each search takes a known time: the i-th query ``delays[i]`` seconds of the fake clock."""

    def __init__(self, clock: FakeClock, delays: list[float]) -> None:
        self.clock, self.delays, self.calls = clock, delays, 0
        self.shapes: list[tuple[int, ...]] = []

    def search(self, queries: Any, k: int) -> tuple[Any, Any]:
        self.shapes.append(tuple(queries.shape))
        self.clock.now += self.delays[self.calls]
        self.calls += 1
        return np.zeros((1, k)), np.zeros((1, k), dtype=np.int64)


def test_latencies_are_timed_per_query_with_the_clock_given() -> None:
    clock = FakeClock()
    delays = [0.001 * (i + 1) for i in range(100)]  # 1 ms, 2 ms, ..., 100 ms
    order = np.random.default_rng(3).permutation(100)
    index = SlowIndex(clock, [delays[i] for i in order])
    queries = np.zeros((100, 4), dtype=np.float32)
    times = query_latencies(index, queries, 10, clock=clock)  # type: ignore[arg-type]
    assert index.shapes == [(1, 4)] * 100  # one query per search
    np.testing.assert_allclose(np.sort(times), delays, rtol=0, atol=1e-12)
    p50, p95, p99 = latency_percentiles(times)
    # Linear interpolation between order statistics: rank (n - 1) * q of 1..100 ms.
    assert p50 == pytest.approx(0.0505, abs=1e-12)
    assert p95 == pytest.approx(0.09505, abs=1e-12)
    assert p99 == pytest.approx(0.09901, abs=1e-12)


def test_one_slow_query_moves_only_the_tail() -> None:
    clock = FakeClock()
    index = SlowIndex(clock, [0.002] * 99 + [0.5])
    queries = np.zeros((100, 2), dtype=np.float32)
    times = query_latencies(index, queries, 1, clock=clock)  # type: ignore[arg-type]
    p50, p95, p99 = latency_percentiles(times)
    assert (p50, p95) == (0.002, 0.002)
    assert p99 == pytest.approx(0.002 + 0.01 * 0.498, abs=1e-12)  # rank 98.01 of 0..99


def test_latency_percentiles_need_a_query() -> None:
    with pytest.raises(RankmeterError, match=r"no latencies to summarise: give at least one"):
        latency_percentiles([])


@pytest.fixture(scope="module")
def clustered() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    centres = rng.normal(scale=4.0, size=(16, 16))
    points = centres[rng.integers(16, size=1040)] + rng.normal(size=(1040, 16))
    points = points.astype(np.float32)
    return points[:1000], points[1000:]


def test_the_benchmark_reads_latencies_from_its_clock(
    clustered: tuple[np.ndarray, np.ndarray],
) -> None:
    ticks = iter(range(10**6))
    result = ann_benchmark(
        *clustered, ["flat"], k=[1, 10], metric="l2", clock=lambda: float(next(ticks))
    )
    (point,) = result.points
    # Each query reads the clock twice in a row: exactly one tick per query.
    assert (point.p50_s, point.p95_s, point.p99_s, point.latency_k) == (1.0, 1.0, 1.0, 10)
    assert point.recall == {1: 1.0, 10: 1.0}


# -- several indexes, each built once -----------------------------------------------------------
def test_the_sweep_goes_to_the_indexes_that_have_it() -> None:
    plans = benchmark_settings(
        ["hnsw(M=16)", "hnsw(M=32)", "ivf(nlist=16)", "flat"],
        {"efSearch": [16, 64], "nprobe": [1, 4]},
    )
    assert [[str(s) for s in settings] for _, settings in plans] == [
        ["hnsw(M=16,efConstruction=200,efSearch=16)", "hnsw(M=16,efConstruction=200,efSearch=64)"],
        ["hnsw(M=32,efConstruction=200,efSearch=16)", "hnsw(M=32,efConstruction=200,efSearch=64)"],
        ["ivf(nlist=16,nprobe=1)", "ivf(nlist=16,nprobe=4)"],
        ["flat"],
    ]


@pytest.mark.parametrize(
    ("indexes", "sweep", "message"),
    [
        (["hnsw", "ivf"], {"nbits": [4]}, r"no index given has the swept parameter 'nbits'"),
        (["hnsw(M=16)", "HNSW(m=16)"], None, r"hnsw\(M=16,efConstruction=200,efSearch=64\) is "),
        (["ivf"], None, r"^ivf indexes need the faiss backend, not hnswlib"),
        ([], None, r"give at least one index"),
    ],
)
def test_bad_plans(indexes: list[str], sweep: Any, message: str) -> None:
    backend = "hnswlib" if indexes == ["ivf"] else "faiss"
    with pytest.raises(IndexSpecError, match=message):
        benchmark_settings(indexes, sweep, backend)


def test_each_index_is_built_once_per_build_setting(
    clustered: tuple[np.ndarray, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    real = bench_module.make_index

    def counting(spec: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(str(spec))
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(bench_module, "make_index", counting)
    result = ann_benchmark(
        *clustered,
        ["hnsw(M=8,efConstruction=40)", "ivf(nlist=16)"],
        k=[10],
        metric="l2",
        sweep={"efsearch": [4, 16, 64], "NPROBE": [1, 16]},
    )
    assert dict(result.sweep) == {"efSearch": (4, 16, 64), "nprobe": (1, 16)}
    assert built == ["hnsw(M=8,efConstruction=40,efSearch=4)", "ivf(nlist=16,nprobe=1)"]
    assert [p.setting for p in result.points] == [
        "hnsw(M=8,efConstruction=40,efSearch=4)",
        "hnsw(M=8,efConstruction=40,efSearch=16)",
        "hnsw(M=8,efConstruction=40,efSearch=64)",
        "ivf(nlist=16,nprobe=1)",
        "ivf(nlist=16,nprobe=16)",
    ]
    assert result.indexes == ("hnsw(M=8,efConstruction=40,efSearch=64)", "ivf(nlist=16,nprobe=8)")
    assert result.points[4].recall[10] == 1.0  # every list probed
    hnsw = [p.recall[10] for p in result.points[:3]]
    assert hnsw == sorted(hnsw) and hnsw[0] < 1.0
    assert [p.build_threads for p in result.points] == [1, 1, 1, 1, 1]
    assert len({p.build_s for p in result.points[:3]}) == 1
    assert all(p.nbytes > 0 and p.p50_s <= p.p95_s <= p.p99_s for p in result.points)
    assert result.frontier() == bench_module.pareto_frontier(
        [(p.recall[10], p.qps[10]) for p in result.points]
    )


def test_ivf_training_states_its_threads(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    result = ann_benchmark(*clustered, ["ivf(nlist=8)", "hnsw(M=8)"], k=[1], threads=2)
    assert [p.build_threads for p in result.points] == [2, 1]


# -- quality lost against exact search ----------------------------------------------------------
def _judged(corpus: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    """Judgments that exact search satisfies: each query's 5 nearest documents are relevant."""
    from rankmeter.vector.exact import exact_search

    _, ids = exact_search(corpus.astype(np.float64), queries.astype(np.float64), 5, "l2")
    qrels = {f"q{i}": {f"d{int(d)}": 1 for d in row} for i, row in enumerate(ids)}
    return {
        "qrels": qrels,
        "query_ids": [f"q{i}" for i in range(len(queries))],
        "doc_ids": [f"d{i}" for i in range(len(corpus))],
    }


def test_quality_lost_per_setting(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = clustered
    result = ann_benchmark(
        corpus,
        queries,
        ["flat", "ivfpq(nlist=64,m=2,nbits=4)"],
        k=[10],
        metric="l2",
        sweep={"nprobe": [1, 64]},
        resamples=2000,
        **_judged(corpus, queries),
    )
    exact, coarse, wide = result.points
    assert [q.metric for q in exact.quality] == ["nDCG@10", "R@100"]
    for loss in exact.quality:  # flat is exact search: nothing lost
        assert (loss.exact, loss.ann, loss.difference) == (1.0, 1.0, 0.0)
        assert not loss.significant
    ndcg = coarse.quality[0]
    assert ndcg.exact == 1.0 and ndcg.ann < 0.9
    assert ndcg.difference == pytest.approx(ndcg.ann - 1.0)
    assert ndcg.low <= ndcg.difference <= ndcg.high < 0
    assert ndcg.significant and ndcg.p_corrected >= ndcg.p_value
    assert wide.quality[0].ann > coarse.quality[0].ann
    assert "Holm-corrected over the 6 comparisons" in result.quality_note


def test_quality_needs_the_row_ids(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = clustered
    with pytest.raises(RankmeterError, match=r"qrels need the ids of the query rows"):
        ann_benchmark(corpus, queries, ["flat"], k=[1], qrels={"q0": {"d0": 1}})
    with pytest.raises(RankmeterError, match=r"doc_ids has 3 ids but the vectors have 1000 rows"):
        ann_benchmark(
            corpus,
            queries,
            ["flat"],
            k=[1],
            qrels={"q0": {"d0": 1}},
            query_ids=[f"q{i}" for i in range(40)],
            doc_ids=["a", "b", "c"],
        )


# -- results that accumulate --------------------------------------------------------------------
def _points(bench: AnnBenchmark) -> dict[str, dict[str, Any]]:
    return {p.setting: p.to_dict() for p in bench.points}


def test_results_accumulate_and_read_back(
    clustered: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    corpus, queries = clustered
    folder = tmp_path / "results"
    first = ann_benchmark(corpus, queries, ["hnsw(M=8)"], k=[1, 10], sweep={"efSearch": [4, 32]})
    second = ann_benchmark(
        corpus, queries, ["ivf(nlist=16)", "hnsw(M=8)"], k=[10], sweep={"nprobe": [2, 8]}
    )
    assert len(write_results(first, folder)) == 2
    written = write_results(second, folder)  # hnsw(M=8,...,efSearch=64) is new, too
    assert len(written) == 3 and len(list(folder.glob("*.json"))) == 5
    record = json.loads(written[0].read_text())
    assert record["schema"] == "rankmeter.ann-benchmark/1"
    assert record["rankmeter_version"] == rankmeter.__version__ and record["threads"] == 1
    assert record["dataset"]["corpus"] == "<corpus array>"
    assert record["measured"]["setting"] == "ivf(nlist=16,nprobe=2)"
    back = load_results(folder)
    assert back.k == (10,)  # the k every file has
    assert set(_points(back)) == set(_points(first)) | set(_points(second))
    assert _points(back)["ivf(nlist=16,nprobe=8)"] == _points(second)["ivf(nlist=16,nprobe=8)"]
    assert [p.setting for p in back.points][:3] == [
        "hnsw(M=8,efConstruction=200,efSearch=4)",
        "hnsw(M=8,efConstruction=200,efSearch=32)",
        "hnsw(M=8,efConstruction=200,efSearch=64)",
    ]
    again = ann_benchmark(corpus, queries, ["ivf(nlist=16)"], k=[10], sweep={"nprobe": [8]})
    write_results(again, folder)  # the same setting again replaces its file
    assert len(list(folder.glob("*.json"))) == 5
    assert (
        _points(load_results(folder))["ivf(nlist=16,nprobe=8)"]
        == _points(again)["ivf(nlist=16,nprobe=8)"]
    )


def test_results_of_several_datasets(
    clustered: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    corpus, queries = clustered
    for name in ("cranfield", "medline"):
        np.save(tmp_path / f"{name}.npy", corpus)
        np.save(tmp_path / f"{name}-q.npy", queries)
        bench = ann_benchmark(tmp_path / f"{name}.npy", tmp_path / f"{name}-q.npy", ["flat"], k=[1])
        write_results(bench, tmp_path / "results")
    with pytest.raises(RankmeterError, match=r"holds results of 2 datasets; pick one with"):
        load_results(tmp_path / "results")
    picked = load_results(tmp_path / "results", dataset="medline")
    assert picked.corpus.endswith("medline.npy") and picked.metric == "ip"
    # The same vectors under another metric are another measurement, not more points.
    other = ann_benchmark(tmp_path / "medline.npy", tmp_path / "medline-q.npy", ["flat"], k=[1],
                          metric="l2")  # fmt: skip
    write_results(other, tmp_path / "results")
    with pytest.raises(RankmeterError, match=r"dataset 'medline' names 2 of the datasets"):
        load_results(tmp_path / "results", dataset="medline")
    assert load_results(tmp_path / "results", dataset="medline.npy [l2]").metric == "l2"
    assert len(load_results(tmp_path / "results", dataset="medline.npy [ip]").points) == 1
    with pytest.raises(RankmeterError, match=r"dataset 'pubmed' names 0 of the datasets"):
        load_results(tmp_path / "results", dataset="pubmed")


def test_bad_results_folders(tmp_path: Path) -> None:
    with pytest.raises(RankmeterError, match=r"nowhere: not a folder of ann-recall results"):
        load_results(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RankmeterError, match=r"empty: no ann-recall results files"):
        load_results(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.json").write_text("{not json")
    with pytest.raises(FormatError, match=re.escape(f"{bad / 'a.json'}: not a JSON results")):
        load_results(bad)
    (bad / "a.json").write_text('{"schema": "something else"}')
    with pytest.raises(FormatError, match=r"a\.json: not an ann-recall results file"):
        load_results(bad)
    (bad / "a.json").write_text(
        '{"schema": "rankmeter.ann-benchmark/1", "dataset": {"corpus": "x"}, "k": [1]}'
    )
    with pytest.raises(FormatError, match=r"a\.json: no dataset\.corpus or metric"):
        load_results(bad)
    (bad / "a.json").write_text(
        '{"schema": "rankmeter.ann-benchmark/1", "dataset": {"corpus": "x"}, "metric": "ip", '
        '"k": [1]}'
    )
    with pytest.raises(FormatError, match=r"a\.json: a field is missing or malformed"):
        load_results(bad)


def test_every_setting_is_checked_before_the_first_build(
    clustered: tuple[np.ndarray, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    monkeypatch.setattr(bench_module, "make_index", lambda spec, *a, **k: built.append(spec))
    with pytest.raises(IndexSpecError, match=r"ivf\(nlist=5000,nprobe=8\) trains 5000 centroids"):
        ann_benchmark(*clustered, ["hnsw(M=8)", "ivf(nlist=5000)"], k=[1])
    with pytest.raises(IndexSpecError, match=r"m=5 in ivfpq\(.*\) must divide the dimension 16"):
        ann_benchmark(*clustered, ["flat", "ivfpq(nlist=8,m=5)"], k=[1])
    assert built == []


def test_accumulated_quality_is_corrected_over_every_setting_read_back(
    clustered: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    # A rerun of one setting was corrected over its own 2 comparisons; read back beside the
    # first run's other settings, every p must be corrected over the whole folder's family,
    # as one run of all of them would be (the raw p-values do not depend on the family).
    corpus, queries = clustered
    judged = _judged(corpus, queries)
    specs = ["flat", "ivfpq(nlist=64,m=2,nbits=4)"]
    whole = ann_benchmark(
        corpus, queries, specs, k=[10], metric="l2", sweep={"nprobe": [1, 64]},
        resamples=2000, **judged,
    )  # fmt: skip
    rerun = ann_benchmark(
        corpus, queries, specs[1:], k=[10], metric="l2", sweep={"nprobe": [1]},
        resamples=2000, **judged,
    )  # fmt: skip
    assert "over the 2 comparisons" in rerun.quality_note
    write_results(whole, tmp_path)
    write_results(rerun, tmp_path)
    back = load_results(tmp_path)
    assert "Holm-corrected over the 6 comparisons" in back.quality_note
    assert [p.quality for p in back.points] == [p.quality for p in whole.points]


def test_one_built_index_is_one_family_across_runs(
    clustered: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    # efSearch is chosen at search time: the same graph measured at efSearch 4 and 16 in one
    # run and at 32 in another is one index, one line on the chart, not two.
    corpus, queries = clustered
    swept = ann_benchmark(corpus, queries, ["hnsw(M=8)"], k=[10], sweep={"efSearch": [4, 16]})
    alone = ann_benchmark(corpus, queries, ["hnsw(M=8,efSearch=32)"], k=[10])
    write_results(swept, tmp_path)
    write_results(alone, tmp_path)
    back = load_results(tmp_path)
    assert len(back.points) == 3 and len(back.indexes) == 1
    from rankmeter.report.ann import family_label

    assert family_label(back, back.indexes[0]) == "hnsw(M=8,efConstruction=200,efSearch=*)"


def test_load_results_is_still_importable_from_bench() -> None:
    # issue 23 moved load_results to vector/ann/results.py (which imports bench); the import
    # users wrote before it works again, in a fresh interpreter that imports bench first
    import subprocess
    import sys

    from rankmeter.vector.ann.results import load_results

    assert bench_module.load_results is load_results
    code = (
        "from rankmeter.vector.ann.bench import load_results; "
        "import rankmeter.vector.ann.results as r; assert load_results is r.load_results"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        bench_module.no_such_name  # noqa: B018
