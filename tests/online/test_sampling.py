"""Drawing an evaluation query set from traffic (issue 13, item 4): the head/torso/tail rule,
proportional allocation by traffic or by distinct queries, weighted and uniform drawing, a
tuning/test split without overlap, seeds, reading a log and a query_id,count table; bad input
is one line naming the file and the line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.stats
from _ab_logs import impressions

from rankmeter.errors import FormatError, PolicyError
from rankmeter.online import QueryTraffic, bucket_of, read_traffic, sample_queries

# A Zipf-like traffic: 1,000 queries, counts falling as 1 / rank.
ZIPF = {f"q{i:04d}": max(1, 10_000 // (i + 1)) for i in range(1000)}


def test_buckets_are_thirds_of_the_traffic() -> None:
    counts = np.array(list(ZIPF.values()))
    buckets = np.array(bucket_of(counts))
    total = counts.sum()
    for name in ("head", "torso", "tail"):
        assert name in buckets
    # Head queries are all more frequent than torso ones, torso than tail.
    assert counts[buckets == "head"].min() > counts[buckets == "torso"].max()
    assert counts[buckets == "torso"].min() > counts[buckets == "tail"].max()
    # Before each bucket's least frequent query, less than its third of the traffic.
    head_share = counts[buckets == "head"].sum() / total
    assert 1 / 3 <= head_share < 1 / 3 + counts.max() / total
    assert counts[buckets != "tail"].sum() / total >= 2 / 3


def test_equal_counts_share_a_bucket() -> None:
    assert bucket_of([10, 10, 10, 10]) == ("head",) * 4
    assert bucket_of([6, 3, 3, 1, 1, 1]) == ("head", "torso", "torso", "tail", "tail", "tail")
    assert bucket_of([0, 0]) == ("tail", "tail")


# Three buckets of exactly a third of the traffic: 100 queries x 100, 1,000 x 10, 10,000 x 1.
THIRDS = {
    **{f"h{i}": 100 for i in range(100)},
    **{f"m{i}": 10 for i in range(1000)},
    **{f"t{i}": 1 for i in range(10_000)},
}


def test_traffic_weighting_allocates_by_traffic_share() -> None:
    assert Counter(bucket_of(list(THIRDS.values()))) == {"head": 100, "torso": 1000, "tail": 10_000}
    sample = sample_queries(THIRDS, 299, stratify="bucket", seed=2)
    # 99.67 each: the two largest remainders (a tie: the first strata) round up.
    assert [(s.name, s.drawn) for s in sample.strata] == [
        ("head", 100),
        ("torso", 100),
        ("tail", 99),
    ]
    assert len(set(sample.query_ids)) == 299
    assert Counter(sample.strata_of) == {"head": 100, "torso": 100, "tail": 99}
    prefix = {"head": "h", "torso": "m", "tail": "t"}
    assert all(q[0] == prefix[s] for q, s in zip(sample.query_ids, sample.strata_of, strict=True))


def test_a_full_stratum_gives_its_excess_to_the_others_in_proportion() -> None:
    # ZIPF's head third of the traffic is 7 queries and its torso 73: for a set of 300 both
    # are drawn whole, and the tail takes the rest.
    sample = sample_queries(ZIPF, 300, stratify="bucket", seed=2)
    assert [(s.name, s.queries, s.drawn) for s in sample.strata] == [
        ("head", 7, 7),
        ("torso", 73, 73),
        ("tail", 920, 220),
    ]
    # For 30, the head (a third would be 10.5) is full at 7; the torso and the tail share the
    # other 23 in proportion to their traffic (11.0 and 11.5: 11 and 12).
    small = sample_queries(ZIPF, 30, stratify="bucket", seed=2)
    assert [s.drawn for s in small.strata] == [7, 11, 12]


def test_uniform_weighting_allocates_by_distinct_queries() -> None:
    sample = sample_queries(THIRDS, 222, stratify="bucket", weighting="uniform", seed=2)
    assert [s.drawn for s in sample.strata] == [2, 20, 200]
    for stratum in sample.strata:
        assert abs(stratum.drawn - 222 * stratum.query_share) < 1
    assert sample.weighting == "uniform"


def test_traffic_weighting_draws_frequent_queries_more_often() -> None:
    # One stratum of two queries, 9:1 traffic: the frequent one is drawn ~90% of the time.
    drawn = Counter(
        sample_queries({"often": 900, "rare": 100}, 1, seed=s).query_ids[0] for s in range(2000)
    )
    assert drawn["often"] / 2000 == pytest.approx(0.9, abs=0.02)
    uniform = Counter(
        sample_queries({"often": 900, "rare": 100}, 1, weighting="uniform", seed=s).query_ids[0]
        for s in range(2000)
    )
    assert uniform["often"] / 2000 == pytest.approx(0.5, abs=0.03)


def test_a_stratum_smaller_than_its_share_gives_the_rest_to_the_others() -> None:
    # One head query with 90% of the traffic: it cannot take 90% of a set of 10.
    counts = {"top": 9000, **{f"t{i}": 10 for i in range(100)}}
    sample = sample_queries(counts, 10, stratify="bucket", seed=0)
    drawn = {s.name: s.drawn for s in sample.strata}
    assert drawn["head"] == 1 and sum(drawn.values()) == 10


def test_holdout_splits_every_stratum_without_overlap() -> None:
    sample = sample_queries(ZIPF, 200, stratify="bucket", holdout=0.25, seed=5)
    assert sample.splits is not None
    test = {q for q, s in zip(sample.query_ids, sample.splits, strict=True) if s == "test"}
    tuning = {q for q, s in zip(sample.query_ids, sample.splits, strict=True) if s == "tuning"}
    assert not test & tuning and len(test) + len(tuning) == 200
    assert len(test) == 50
    for stratum in sample.strata:
        assert abs(stratum.test - 0.25 * stratum.drawn) < 1
    rows = sample.rows()
    assert {r["split"] for r in rows} == {"test", "tuning"}


def test_the_holdout_is_rounded_half_up() -> None:
    sample = sample_queries(ZIPF, 10, holdout=0.25, seed=0)
    assert sample.splits is not None and sample.splits.count("test") == 3


def test_the_same_seed_gives_the_same_set() -> None:
    one = sample_queries(ZIPF, 100, stratify="bucket", holdout=0.3, seed=9)
    again = sample_queries(ZIPF, 100, stratify="bucket", holdout=0.3, seed=9)
    other = sample_queries(ZIPF, 100, stratify="bucket", holdout=0.3, seed=10)
    assert one == again
    assert one.query_ids != other.query_ids


def test_a_segment_column_of_a_table_stratifies(tmp_path: Path) -> None:
    path = tmp_path / "traffic.csv"
    lines = ["query_id,count,segment"]
    lines += [f"m{i},{10 + i},mobile" for i in range(30)]
    lines += [f"d{i},{10 + i},desktop" for i in range(10)]
    path.write_text("\n".join(lines) + "\n")
    traffic = read_traffic(path)
    assert traffic.kind == "table" and len(traffic.query_ids) == 40
    sample = sample_queries(traffic, 8, stratify="segment", weighting="uniform", seed=1)
    assert {s.name: s.drawn for s in sample.strata} == {"mobile": 6, "desktop": 2}
    assert all(
        q.startswith("m") == (s == "mobile")
        for q, s in zip(sample.query_ids, sample.strata_of, strict=True)
    )


def test_jsonl_and_parquet_tables_are_read(tmp_path: Path) -> None:
    records = [{"query_id": "a", "count": 3}, {"query_id": "b", "count": 1}]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    for path in (jsonl, parquet):
        traffic = read_traffic(path)
        assert traffic.query_ids == ("a", "b") and traffic.counts.tolist() == [3, 1]


def test_a_log_counts_distinct_requests_per_query(tmp_path: Path) -> None:
    rows = [
        *impressions("u1", "control", "r1", clicks=(True, False), query="qa", device="mobile"),
        *impressions(
            "u2", "control", "r2", clicks=(False,), query="qa", device="mobile", seconds=5
        ),
        *impressions(
            "u3", "control", "r3", clicks=(False,), query="qa", device="desktop", seconds=9
        ),
        *impressions(
            "u1", "control", "r4", clicks=(True,), query="qb", device="desktop", seconds=20
        ),
    ]
    path = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    traffic = read_traffic(path)
    assert traffic.kind == "log"
    assert dict(zip(traffic.query_ids, traffic.counts.tolist(), strict=True)) == {"qa": 3, "qb": 1}
    # A query seen under several values takes its most frequent one.
    assert dict(zip(traffic.query_ids, traffic.segments["device"], strict=True)) == {
        "qa": "mobile",
        "qb": "desktop",
    }
    sample = sample_queries(traffic, 2, stratify="device", seed=0)
    assert sorted(sample.query_ids) == ["qa", "qb"]


def test_a_csv_with_quoted_column_names_is_read(tmp_path: Path) -> None:
    # issue 23's trial: a log written as CSV by pyarrow (every name quoted) was refused with
    # 'no query_id or count column (it has "query_id", ...)' while its JSONL twin was read
    import pyarrow.csv as pv

    rows = [
        *impressions("u1", "control", "r1", clicks=(True, False), query="qa", device="mobile"),
        *impressions("u2", "control", "r2", clicks=(False,), query="qa", seconds=5),
        *impressions("u1", "control", "r4", clicks=(True,), query="qb", seconds=20),
    ]
    log = tmp_path / "log.csv"
    pv.write_csv(pa.Table.from_pylist(rows), log)
    assert log.read_text().startswith('"')
    traffic = read_traffic(log)
    assert traffic.kind == "log"
    assert dict(zip(traffic.query_ids, traffic.counts.tolist(), strict=True)) == {"qa": 2, "qb": 1}
    table = tmp_path / "t.csv"
    table.write_text('"query_id","count"\na,3\nb,1\n')
    traffic = read_traffic(table)
    assert traffic.kind == "table"
    assert traffic.query_ids == ("a", "b") and traffic.counts.tolist() == [3, 1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "query_id,count\na,3\nb,x\n",
            r"t\.csv:3: count must be a whole number >= 0, not 'x': 'b,x'",
        ),
        ("query_id,count\na,3\na,1\n", r"t\.csv:3: query_id 'a' again \(first at 2\)"),
        ("query_id,count\na,-1\n", r"t\.csv:2: count must be a whole number >= 0, not '-1'"),
        ("query_id,count\n,4\n", r"t\.csv:2: empty query_id"),
        ("query_id,count\na,1,9\n", r"t\.csv:2: 3 fields where the header has 2"),
        ("query,hits\na,1\n", r"t\.csv: no query_id or count column \(it has query, hits\)"),
        ("query_id,count\n", r"t\.csv: no queries"),
        ("", r"t\.csv: the file is empty"),
    ],
)
def test_bad_tables_are_one_line_with_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(FormatError, match=message) as caught:
        read_traffic(path)
    assert "\n" not in str(caught.value)


def test_unknown_suffix_and_missing_file_are_named(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"cannot tell the format from the suffix '\.txt'"):
        read_traffic(tmp_path / "t.txt")
    with pytest.raises(FormatError, match=r"none\.csv: no such file"):
        read_traffic(tmp_path / "none.csv")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, r"n=0 must be an integer >= 1"),
        ({"n": 5}, r"n=5 is more than the 3 distinct queries in dict"),
        ({"n": 1, "holdout": 1.0}, r"holdout=1\.0 must be"),
        ({"n": 1, "weighting": "zipf"}, r"weighting='zipf'"),
        ({"n": 1, "stratify": "device"}, r"stratify='device' is neither 'bucket' nor a segment"),
        ({"n": 1, "seed": -2}, r"seed=-2 must be an integer >= 0"),
        ({"n": 3}, r"n=3 is more than the 2 queries with a count above 0"),
        ({"n": 2, "holdout": 0.2}, r"holdout=0.2 of n=2 leaves no test query: give a holdout"),
        ({"n": 2, "holdout": 0.8}, r"holdout=0.8 of n=2 leaves no tuning query"),
    ],
)
def test_bad_arguments_are_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        sample_queries({"a": 5, "b": 1, "c": 0}, **kwargs)


def test_a_traffic_object_is_taken_as_it_is() -> None:
    traffic = QueryTraffic(("x", "y"), np.array([2, 2]))
    assert sample_queries(traffic, 2, seed=0).query_ids in {("x", "y"), ("y", "x")}


# --- query_mix: the evaluation set against traffic ------------------------------------------------


def test_the_mix_test_is_scipys_chisquare() -> None:
    from rankmeter.online import query_mix

    queries = ["h0", "h1", "h2", *(f"m{i}" for i in range(5)), *(f"t{i}" for i in range(40))]
    mix = query_mix(queries, THIRDS)
    assert [(s.name, s.eval_n) for s in mix.strata] == [("head", 3), ("torso", 5), ("tail", 40)]
    expected = scipy.stats.chisquare([3, 5, 40], [16, 16, 16])
    assert mix.chi_square == pytest.approx(expected.statistic, rel=1e-12)
    assert mix.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert mix.dof == 2 and mix.n_matched == 48 and mix.missing == 0
    assert [s.expected_n for s in mix.strata] == pytest.approx([16, 16, 16])
    assert [s.eval_share for s in mix.strata] == pytest.approx([3 / 48, 5 / 48, 40 / 48])


def test_uniform_weighting_compares_with_distinct_query_shares() -> None:
    from rankmeter.online import query_mix

    queries = ["h0", *(f"m{i}" for i in range(10)), *(f"t{i}" for i in range(100))]
    mix = query_mix(queries, THIRDS, weighting="uniform")
    shares = [100 / 11_100, 1000 / 11_100, 10_000 / 11_100]
    assert [s.traffic_share for s in mix.strata] == pytest.approx(shares)
    expected = scipy.stats.chisquare([1, 10, 100], [111 * x for x in shares])
    assert mix.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert mix.p_value > 0.9  # drawn in proportion to the distinct queries


def test_each_stratum_has_the_detectable_difference_of_its_queries() -> None:
    from rankmeter.online import query_mix
    from rankmeter.stats import power

    queries = ["h0", *(f"m{i}" for i in range(10)), *(f"t{i}" for i in range(60))]
    mix = query_mix(queries, THIRDS, sd=0.2, power=0.9, alpha=0.01)
    head, torso, tail = mix.strata
    assert np.isnan(head.detectable_difference)  # one query: no paired test
    for stratum, n in ((torso, 10), (tail, 60)):
        analysis = power(effect=0.1, sd=0.2, n=n, alpha=0.01, power=0.9)
        assert stratum.detectable_difference == pytest.approx(analysis.detectable_difference)


def test_evaluation_queries_in_a_stratum_without_traffic_are_left_out_of_the_test() -> None:
    # Segment 'z' has queries but no traffic (every count 0): its expected count is 0. The test
    # once dropped that stratum's expected count but kept its queries in the total, and scipy
    # refused the unequal sums (an internal error of the CLI, exit 70).
    from rankmeter.online import query_mix

    traffic = QueryTraffic(
        ("a", "b", "c", "d"), np.array([5, 3, 0, 0]), {"seg": ("x", "y", "z", "z")}
    )
    mix = query_mix(["a", "c", "d"], traffic, stratify="seg")
    assert mix.no_traffic == 2 and mix.n_matched == 3
    x, y, z = mix.strata
    assert (x.eval_n, y.eval_n, z.eval_n) == (1, 0, 2)
    # The test compares the 1 evaluation query in strata with traffic with their shares.
    assert (x.expected_n, y.expected_n, z.expected_n) == pytest.approx((5 / 8, 3 / 8, 0.0))
    expected = scipy.stats.chisquare([1, 0], [5 / 8, 3 / 8])
    assert mix.chi_square == pytest.approx(expected.statistic, rel=1e-12)
    assert mix.dof == 1
    uniform = query_mix(["a", "c", "d"], traffic, stratify="seg", weighting="uniform")
    assert uniform.no_traffic == 0 and uniform.dof == 2


def test_traffic_without_any_request_is_refused_under_traffic_weighting() -> None:
    from rankmeter.online import query_mix

    with pytest.raises(
        PolicyError,
        match=r"every query of dict has a count of 0: there are no traffic shares to compare "
        r"with; use weighting='uniform'",
    ):
        query_mix(["a"], {"a": 0, "b": 0})
    assert query_mix(["a"], {"a": 0, "b": 0}, weighting="uniform").n_matched == 1


def test_queries_missing_from_the_log_are_counted_and_left_out() -> None:
    from rankmeter.online import query_mix

    mix = query_mix(["h0", "m0", "t0", "nowhere", "else"], THIRDS)
    assert (mix.n_eval, mix.n_matched, mix.missing) == (5, 3, 2)
    with pytest.raises(
        PolicyError, match=r"none of the 2 evaluation queries of queries is in dict"
    ):
        query_mix(["nowhere", "else"], THIRDS)


def test_evaluation_sets_are_read_from_qrels_beir_queries_and_tables(tmp_path: Path) -> None:
    from rankmeter.online import read_query_ids

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 0\nq1 0 d2 1\n")
    beir = tmp_path / "queries.jsonl"
    beir.write_text('{"_id": "q1", "text": "a"}\n{"_id": "q3", "text": "b"}\n')
    table = tmp_path / "set.csv"
    table.write_text("query_id,count,stratum,split\nq2,5,head,test\nq4,1,tail,tuning\n")
    assert read_query_ids(qrels)[0] == ("q1", "q2")
    assert read_query_ids(beir)[0] == ("q1", "q3")
    assert read_query_ids(table) == (("q2", "q4"), str(table))
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,x\n,1\n")
    with pytest.raises(FormatError, match=r"bad\.csv:2: empty query_id"):
        read_query_ids(bad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weighting": "zipf"}, r"weighting='zipf'"),
        ({"alpha": 0}, r"alpha=0 must be"),
        ({"power": 1}, r"power=1 must be"),
        ({"sd": 0}, r"sd=0 must be"),
        ({"stratify": "device"}, r"stratify='device' is neither 'bucket' nor a segment column"),
    ],
)
def test_bad_mix_arguments_are_one_line(kwargs: dict, message: str) -> None:
    from rankmeter.online import query_mix

    with pytest.raises(PolicyError, match=message):
        query_mix(["h0"], THIRDS, **kwargs)


def test_a_table_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    # Spreadsheet programs save "CSV UTF-8" with a BOM before the first column's name.
    path = tmp_path / "excel.csv"
    path.write_bytes("query_id,count\r\na,3\r\nb,1\r\n".encode("utf-8-sig"))
    traffic = read_traffic(path)
    assert traffic.query_ids == ("a", "b") and traffic.counts.tolist() == [3, 1]
