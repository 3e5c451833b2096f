"""statAP, stat_nDCG and stat_P: full judgment gives their twins exactly, the pool's
probabilities reach the kernels (Python and the command line), and bad input is one clear error.

The unbiasedness of the estimates is in test_statap_sampling.py (every sample enumerated), the
comparison with an independent implementation in test_differential_statap.py.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import FormatError, PolicyError
from rankmeter.io import sampled_qrels
from rankmeter.metrics import join, parse_metric

from ._helpers import ranking

TWINS = [
    ("statAP", "AP"),
    ("statAP@5", "AP@5"),
    ("statAP(rel=2)", "AP(rel=2)"),
    ("stat_nDCG", "nDCG"),
    ("stat_nDCG@10", "nDCG@10"),
    ("stat_nDCG(gain=exp)@3", "nDCG(gain=exp)@3"),
    ("stat_P@10", "P@10"),
    ("stat_P@1", "P@1"),
    ("stat_P", "P"),
    ("stat_P(rel=2)@5", "P(rel=2)@5"),
]


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels (grades -1..4) and a run with tied scores, unjudged documents, a query the
    qrels lack and a judged query the run lacks."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(rng.randint(1, 25))]
        if q != 11:
            qrels[f"q{q}"] = {d: rng.randint(-1, 4) for d in docs if rng.random() < 0.6} or {
                "d0": 1
            }
        if q != 10:
            run[f"q{q}"] = {d: float(rng.randint(0, 6)) for d in [*docs, "x1", "x2"]}
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "policy", [{}, {"rel": 2}, {"judged_only": True}, {"include_missing": True}], ids=str
)
def test_full_judgment_is_exactly_the_twin(seed: int, policy: dict[str, Any]) -> None:
    """No pool, or a pool whose every probability is 1: statAP = AP, stat_nDCG = nDCG,
    stat_P = P, bit for bit, per query and in the mean."""
    qrels, run = _collection(seed)
    names = [name for pair in TWINS for name in pair]
    plain = rankmeter.evaluate(qrels, run, names, **policy)
    ones = {(q, d): 1.0 for q, docs in qrels.items() for d in docs}
    pooled = rankmeter.evaluate(qrels, run, names, inclusion=ones, **policy)
    for result in (plain, pooled):
        for stat, twin in TWINS:
            assert np.array_equal(result.per_query[stat], plain.per_query[twin]), (stat, twin)
            assert result.metrics[stat] == plain.metrics[twin]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", [{}, {"rel": 2}, {"judged_only": True}], ids=str)
def test_compact_and_full_joins_agree_with_a_sample(seed: int, policy: dict[str, Any]) -> None:
    qrels, run = _collection(seed)
    rng = random.Random(seed)
    inclusion = {
        (q, d): rng.choice([1.0, 0.5, 0.25, 0.1]) for q, docs in qrels.items() for d in docs
    }
    sampled = sampled_qrels(rankmeter.as_qrels(qrels), inclusion)
    loaded = rankmeter.as_run(run)
    full = join(sampled, loaded, **policy)
    compact = join(sampled, loaded, compact=True, **policy)
    for name in ["statAP", "statAP@5", "stat_nDCG", "stat_nDCG@5", "stat_P@5", "stat_P"]:
        metric = parse_metric(name)
        np.testing.assert_allclose(
            metric.compute(compact), metric.compute(full), rtol=0, atol=1e-12
        )
        many = metric.compute_at(full, [1, 3, 10]) if metric.spec.cutoff != "none" else None
        if many is not None and metric.spec.at_cutoffs is not None:
            for j, k in enumerate([1, 3, 10]):
                one = parse_metric(f"{metric.spec.name}@{k}").compute(full)
                np.testing.assert_array_equal(many[:, j], one)


# -- the worked examples with a sample, as the docs work them ------------------------------


@pytest.mark.parametrize(
    ("judgments", "order", "metric", "sampled", "probability", "expected"),
    [
        (
            {"d1": 1, "d2": 0, "d3": 1, "d4": 1},
            ("d1", "d2", "d3", "d9"),
            "statAP",
            "d3",
            0.5,
            0.5833,
        ),
        ({"d1": 2, "d2": 0, "d3": 1}, ("d2", "d1", "d3"), "stat_nDCG@3", "d3", 0.5, 0.7224),
        ({"d1": 1, "d2": 0, "d3": 1}, ("d1", "d2", "d3", "d4"), "stat_P@4", "d3", 0.25, 1.25),
    ],
)
def test_the_docs_sampled_examples(
    judgments: dict[str, int],
    order: tuple[str, ...],
    metric: str,
    sampled: str,
    probability: float,
    expected: float,
) -> None:
    result = rankmeter.evaluate(
        {"q": judgments}, {"q": ranking(*order)}, metric, inclusion={("q", sampled): probability}
    )
    assert round(result.metrics[metric], 4) == expected
    spec = parse_metric(metric).spec
    assert spec.example is not None and f"{expected}" in spec.example.working


def test_statap_by_hand_with_two_sampled_documents() -> None:
    # ranks: a (rel, pi 1), b (non-rel, pi 0.5), c (rel, pi 0.5), d (rel, pi 0.25); e rel, not
    # retrieved, pi 1. R^ = 1 + 2 + 4 + 1 = 8. PC^: a 1/1; c (1 + 1)/3; d (1 + 1 + 2)/4.
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 1}}
    inclusion = {("q", "b"): 0.5, ("q", "c"): 0.5, ("q", "d"): 0.25}
    got = rankmeter.evaluate(qrels, {"q": ranking("a", "b", "c", "d")}, ["statAP", "stat_P@4"],
                             inclusion=inclusion)  # fmt: skip
    assert got.metrics["statAP"] == pytest.approx((1 + 2 * 2 / 3 + 4 * 1) / 8, abs=1e-15)
    assert got.metrics["stat_P@4"] == pytest.approx((1 + 2 + 4) / 4, abs=1e-15)


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("statAP", "statAP"),
        ("statMAP", "statAP"),
        ("stat_map", "statAP"),
        ("statAP@100", "statAP@100"),
        ("statAP.100", "statAP@100"),
        ("statAP(rel=2)", "statAP(rel=2)"),
        ("stat_nDCG@10", "stat_nDCG@10"),
        ("statNDCG@10", "stat_nDCG@10"),
        ("stat_nDCG(gain=exp)@10", "stat_nDCG(gain=exp)@10"),
        ("stat_P@10", "stat_P@10"),
        ("statP@5", "stat_P@5"),
    ],
)
def test_names_parse_and_keep_the_label_as_written(written: str, canonical: str) -> None:
    metric = parse_metric(written)
    assert str(metric) == canonical and metric.label == written
    assert str(parse_metric(str(metric))) == canonical


# -- the pool file, from Python and from the command line -------------------------------------


def _pool_file(path: Path, items: list[tuple[str, str, float]]) -> Path:
    lines = [
        json.dumps(
            {
                "query_id": q,
                "doc_id": d,
                "runs": {"r": 1},
                "best_rank": 1,
                "inclusion_probability": p,
            }
        )
        for q, d, p in items
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


QRELS = {"q1": {"a": 1, "b": 0, "c": 1, "d": 2}, "q2": {"e": 1, "f": 0}}
RUN = {"q1": ranking("a", "b", "c", "x"), "q2": ranking("f", "e")}
ITEMS = [("q1", "b", 0.5), ("q1", "c", 0.5), ("q2", "e", 0.25), ("q2", "zz", 0.25)]


def test_a_pool_file_a_pool_and_a_mapping_give_the_same(tmp_path: Path) -> None:
    from rankmeter.io import read_pool

    path = _pool_file(tmp_path / "pool.jsonl", ITEMS)
    mapping = {(q, d): p for q, d, p in ITEMS}
    metrics = ["statAP", "stat_nDCG@3", "stat_P@2"]
    by_path = rankmeter.evaluate(QRELS, RUN, metrics, inclusion=path)
    by_str = rankmeter.evaluate(QRELS, RUN, metrics, inclusion=os.fspath(path))
    by_items = rankmeter.evaluate(QRELS, RUN, metrics, inclusion=read_pool(path))
    by_mapping = rankmeter.evaluate(QRELS, RUN, metrics, inclusion=mapping)
    for other in (by_str, by_items, by_mapping):
        assert other.per_query.to_dict() == by_path.per_query.to_dict()
    # q2: e (rank 2, weight 4) of R^ = 4: statAP = 4 * (1/2) / 4; stat_P@2 = 4 / 2;
    # stat_nDCG@3: DCG^ = 4 / log2(3) over an ideal of round(4) = 4 documents of grade 1
    assert by_path.per_query.to_dict()["q2"] == {"statAP": 0.5, "stat_nDCG@3": pytest.approx(
        (4 / np.log2(3)) / (1 + 1 / np.log2(3) + 1 / 2)), "stat_P@2": 2.0}  # fmt: skip
    # the judgments of q1 that are not in the pool (a, d) have probability 1
    assert sampled_qrels(rankmeter.as_qrels(QRELS), path).inclusion.tolist() == [
        1,
        0.5,
        0.5,
        1,
        0.25,
        1,
    ]


def test_the_pool_of_rankmeter_pool_is_read_back(tmp_path: Path) -> None:
    from rankmeter.judgments import pool
    from rankmeter.report.pool import write_pool

    run = {"q1": {f"d{i:02d}": 100.0 - i for i in range(30)}}
    sample = pool({"bm25": run}, depth=30, max_per_query=12, seed=2)
    write_pool(sample, tmp_path / "pool.jsonl")
    judged = {"q1": {item.doc_id: int(item.best_rank % 3 == 0) for item in sample}}
    from_file = rankmeter.evaluate(judged, run, "stat_P@30", inclusion=tmp_path / "pool.jsonl")
    from_pool = rankmeter.evaluate(judged, run, "stat_P@30", inclusion=sample)
    assert from_file.metrics == from_pool.metrics
    hand = sum(1 / item.inclusion_probability for item in sample if item.best_rank % 3 == 0)
    assert from_file.metrics["stat_P@30"] == pytest.approx(hand / 30, abs=1e-12)


def test_a_pool_of_other_queries_is_refused(tmp_path: Path) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", [("201", "a", 0.5), ("202", "b", 0.5)])
    with pytest.raises(rankmeter.RankmeterError, match=r"^the pool .*pool\.jsonl shares no query with the "
                       r"qrels \(<dict>\): its queries start 201, 202; check that the pool and "
                       r"the qrels belong together$"):  # fmt: skip
        rankmeter.evaluate(QRELS, RUN, "statAP", inclusion=path)


def test_a_sample_not_judged_yet_is_refused(tmp_path: Path) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", [("q1", "new1", 0.5), ("q1", "new2", 0.5)])
    with pytest.raises(rankmeter.RankmeterError, match=r"^none of the 2 items of the pool .* is judged in the "
                       r"qrels \(<dict>\): judge the sample first"):  # fmt: skip
        rankmeter.evaluate(QRELS, RUN, "statAP", inclusion=path)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"query_id": "q1", "doc_id": "b", "runs": {"r": 1}, "best_rank": 1, '
         '"inclusion_probability": 1.5}', "inclusion_probability must be a number in \\(0, 1\\], not 1.5"),
        ('{"query_id": "q1", "doc_id": "b", "runs": {"r": 1}, "best_rank": 1, '
         '"inclusion_probability": 0}', "inclusion_probability must be a number in \\(0, 1\\], not 0"),
        ("not json", "not valid JSON"),
        ('{"query_id": "q1", "doc_id": "b"}', "missing field 'runs'"),
    ],
)  # fmt: skip
def test_a_bad_pool_line_names_the_file_and_the_line(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", [("q1", "c", 0.5)])
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(FormatError, match=reason) as raised:
        rankmeter.evaluate(QRELS, RUN, "statAP", inclusion=path)
    assert raised.value.line == 2 and "pool.jsonl" in str(raised.value)


@pytest.mark.parametrize(
    ("given", "pattern"),
    [
        ({("q1", "b"): 2.0}, r"^inclusion\[\('q1', 'b'\)\] must be a probability in \(0, 1\], not 2\.0$"),
        ({("q1", "b"): float("nan")}, r"must be a probability in \(0, 1\], not nan$"),
        ({("q1", "b"): True}, r"not True$"),
        ({"q1": 0.5}, r"^inclusion= maps \(query_id, doc_id\) pairs of strings to probabilities, "
         r"got the key 'q1'$"),
        (0.5, r"^inclusion= takes a pool file's path, a Pool \(or its PoolItems\) or a mapping "
         r"\{\(query_id, doc_id\): probability\}, not float$"),
        ([("q1", "b", 0.5)], r"not an iterable of tuple$"),
        ({}, r"^the inclusion probabilities given holds no item$"),
    ],
)  # fmt: skip
def test_bad_inclusion_arguments(given: Any, pattern: str) -> None:
    with pytest.raises(PolicyError, match=pattern):
        rankmeter.evaluate(QRELS, RUN, "statAP", inclusion=given)


def test_qrels_refuse_probabilities_outside_0_1() -> None:
    qrels = rankmeter.as_qrels(QRELS)
    with pytest.raises(
        rankmeter.RankmeterError, match=r"must be in \(0, 1\], got 0\.0 for judgment row 1"
    ):
        qrels.with_inclusion([1, 0, 1, 1, 1, 1])
    with pytest.raises(rankmeter.RankmeterError, match="2 given for 6 judgments"):
        qrels.with_inclusion([1, 1])
    assert qrels.with_inclusion(None).inclusion is None


# -- the command line -----------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    from rankmeter.cli import main

    capsys.readouterr()
    try:
        main([os.fspath(a) for a in args])
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def on_disk(tmp_path: Path) -> dict[str, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    run = tmp_path / "a.run"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s} a\n"
            for q, docs in RUN.items()
            for i, (d, s) in enumerate(docs.items())
        )
    )
    return {"qrels": qrels, "run": run, "pool": _pool_file(tmp_path / "pool.jsonl", ITEMS)}


@pytest.mark.parametrize("fast", [True, False], ids=["fast-start", "typer"])
def test_evaluate_pool_on_the_command_line(
    capsys: pytest.CaptureFixture[str], on_disk: dict[str, Path], fast: bool
) -> None:
    extra = [] if fast else ["--goal", "sampled-pool"]  # --goal is read by Typer
    code, out, _ = _cli(capsys, "evaluate", on_disk["qrels"], on_disk["run"], "-m", "statAP",
                        "-m", "stat_P@2", "--pool", on_disk["pool"], "-f", "json", "-q", *extra)  # fmt: skip
    assert code == 0
    expected = rankmeter.evaluate(QRELS, RUN, ["statAP", "stat_P@2"], inclusion=on_disk["pool"])
    got = json.loads(out)
    assert expected.metrics["statAP"] != rankmeter.evaluate(QRELS, RUN, "AP").metrics["AP"]
    text = json.dumps(got)
    for name in ("statAP", "stat_P@2"):
        assert json.dumps(expected.metrics[name]) in text, name
    assert json.dumps(expected.per_query.to_dict()["q2"]["statAP"]) in text


def test_evaluate_pool_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], on_disk: dict[str, Path], tmp_path: Path
) -> None:
    other = _pool_file(tmp_path / "other.jsonl", [("201", "a", 0.5)])
    code, out, err = _cli(capsys, "evaluate", on_disk["qrels"], on_disk["run"], "-m", "statAP",
                          "--pool", other)  # fmt: skip
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "shares no query with the qrels" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1"\n')
    code, out, err = _cli(capsys, "evaluate", on_disk["qrels"], on_disk["run"], "-m", "statAP",
                          "--pool", bad)  # fmt: skip
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "bad.jsonl:1: not valid JSON" in err


def test_the_pool_is_not_sent_to_spark(on_disk: dict[str, Path]) -> None:
    from rankmeter.engines import evaluate_files

    with pytest.raises(PolicyError, match=r"^--pool is a setting of --engine process: Spark"):
        evaluate_files(on_disk["qrels"], [on_disk["run"]], "statAP", engine="spark",
                       inclusion=on_disk["pool"], command_line=True)  # fmt: skip
    with pytest.raises(PolicyError, match=r"^inclusion is a setting of engine='process'"):
        evaluate_files(on_disk["qrels"], [on_disk["run"]], "statAP", engine="spark",
                       inclusion=on_disk["pool"])  # fmt: skip


def test_explain_compare_and_per_query_run_the_stat_metrics(
    capsys: pytest.CaptureFixture[str], on_disk: dict[str, Path]
) -> None:
    code, out, _ = _cli(capsys, "explain", "--grades", "1,0,1", "-m", "statAP")
    assert code == 0 and "statAP = " in out and "= 0.83" in out
    code, out, _ = _cli(capsys, "explain", on_disk["qrels"], on_disk["run"], "--query", "q1",
                        "-m", "stat_nDCG@3", "-m", "stat_P@2")  # fmt: skip
    assert code == 0 and "stat_nDCG@3 = " in out and "stat_P@2 = " in out
    code, out, _ = _cli(capsys, "compare", on_disk["qrels"], on_disk["run"], on_disk["run"],
                        "-m", "statAP", "-f", "json")  # fmt: skip
    assert code == 0 and "statAP" in out
    code, out, _ = _cli(capsys, "evaluate", on_disk["qrels"], on_disk["run"], "-m", "statAP",
                        "--per-query", "-f", "tsv", "--pool", on_disk["pool"])  # fmt: skip
    assert code == 0
    assert (
        "a\tq1\t0.58333333333333" in out and "a\tq2\t0.5\n" in out
    )  # (1 + 2 * 2/3) / 4; 4 * 1/2 / 4


def test_compare_reads_the_pool_as_evaluate_does(
    capsys: pytest.CaptureFixture[str], on_disk: dict[str, Path]
) -> None:
    evaluated = rankmeter.evaluate(QRELS, RUN, ["statAP", "stat_P@2"], inclusion=on_disk["pool"])
    run_b = on_disk["run"].with_name("b.run")
    run_b.write_text(on_disk["run"].read_text().replace(" a\n", " b\n"))
    compared = rankmeter.compare(
        QRELS, {"a": RUN, "b": RUN}, ["statAP", "stat_P@2"], resamples=200,
        inclusion=on_disk["pool"], include_missing=False,
    )  # fmt: skip
    for name in ("statAP", "stat_P@2"):
        assert compared.mean("a", name).mean == pytest.approx(evaluated.metrics[name], abs=1e-15)
    code, out, _ = _cli(capsys, "compare", on_disk["qrels"], on_disk["run"], run_b, "-m",
                        "statAP", "--pool", on_disk["pool"], "-f", "json", "--resamples", "200",
                        "--answered-only")  # fmt: skip
    assert code == 0
    means = {(m["system"], m["metric"]): m["mean"] for m in json.loads(out)["means"]}
    assert means[("a", "statAP")] == evaluated.metrics["statAP"]
    with pytest.raises(PolicyError, match=r"^inclusion is a setting of engine='process'"):
        rankmeter.compare(QRELS, {"a": RUN, "b": RUN}, "statAP", engine="spark",
                          inclusion=on_disk["pool"])  # fmt: skip
    from rankmeter.comparison import compare_files

    with pytest.raises(PolicyError, match=r"^--pool is a setting of --engine process"):
        compare_files(on_disk["qrels"], [on_disk["run"], run_b], ["statAP"], engine="spark",
                      inclusion=on_disk["pool"], command_line=True)  # fmt: skip


def test_explain_shows_each_results_probability_and_weight() -> None:
    qrels = sampled_qrels(rankmeter.as_qrels(QRELS), {("q1", "c"): 0.5})
    run = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "x": 1.0}}
    explained = rankmeter.explain(qrels, run, "q1", "statAP")
    assert explained.value == rankmeter.evaluate(qrels, run, "statAP").metrics["statAP"]
    assert (
        explained.steps[1]
        == "R^ = the sum of 1/pi over the 3 relevant judgments of the query = 1 + 1 + 2 = 4"
    )
    assert explained.steps[-2].endswith("= (1*1 + 2*0.667) / 4 = 2.333 / 4 = 0.58")
    rows = {row["doc"]: row for row in explained.to_dict()["rows"]}
    assert rows["c"]["inclusion"] == 0.5 and rows["c"]["ht_weight"] == 2.0
    assert rows["a"]["ht_weight"] == 1.0 and rows["x"]["ht_weight"] is None  # x is not judged


@pytest.mark.parametrize("probability", [1e-9, 1e-200, 1e-320])
@pytest.mark.parametrize("name", ["stat_nDCG", "stat_nDCG@10", "statAP", "stat_P@10"])
def test_an_absurdly_small_probability_is_one_clear_error(name: str, probability: float) -> None:
    """A pool whose probability makes a judgment stand for billions of documents (or an
    infinite number: 1 / 1e-320 overflows) is refused naming the query and the probability,
    instead of an ideal ranking of a billion ranks (memory), an integer overflow (an internal
    error) or a misleading message about grades."""
    inclusion = {("q1", "c"): probability}
    with pytest.raises(rankmeter.RankmeterError) as caught:
        rankmeter.evaluate(QRELS, RUN, name, inclusion=inclusion)
    # bad data, not a bad metric name or option (exit 1, not 2)
    assert not isinstance(caught.value, (rankmeter.MetricError, PolicyError))
    message = str(caught.value)
    assert "query 'q1'" in message and f"{probability:g}" in message
    assert "inclusion probabilit" in message and "internal" not in message


def test_a_small_but_sane_probability_is_estimated() -> None:
    found = rankmeter.evaluate(QRELS, RUN, ["statAP", "stat_nDCG"], inclusion={("q1", "c"): 1e-4})
    assert np.isfinite(found["statAP"]) and np.isfinite(found["stat_nDCG"])
