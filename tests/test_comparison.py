"""rankmeter.compare: numbers that agree with evaluate() and scipy, reproducible, honest."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import rankmeter
from rankmeter import compare, evaluate
from rankmeter.errors import PolicyError
from rankmeter.report import comparison as report
from rankmeter.report.explanation import render_html


def collection(n_queries: int = 60, seed: int = 3) -> tuple[dict, dict[str, dict]]:
    """Qrels with graded judgments and three systems of different quality."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"base": {}, "better": {}, "noisy": {}}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(30)]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=30)
        qrels[qid] = {d: int(g) for d, g in zip(docs[:20], grades[:20], strict=True)}
        truth = grades + rng.normal(0, 1.0, 30)
        runs["base"][qid] = {
            d: float(s) for d, s in zip(docs, truth + rng.normal(0, 2.0, 30), strict=False)
        }
        runs["better"][qid] = {
            d: float(s) for d, s in zip(docs, truth + rng.normal(0, 0.7, 30), strict=False)
        }
        runs["noisy"][qid] = {
            d: float(s) for d, s in zip(docs, rng.normal(0, 1.0, 30), strict=False)
        }
    return qrels, runs


METRICS = ["nDCG@10", "P@5", "AP"]


@pytest.fixture(scope="module")
def data() -> tuple[dict, dict[str, dict]]:
    return collection()


@pytest.fixture(scope="module")
def result(data: tuple[dict, dict[str, dict]]) -> rankmeter.Comparison:
    qrels, runs = data
    return compare(qrels, runs, METRICS, resamples=2000, seed=7)


def test_means_are_evaluate_means(data: tuple[dict, dict], result: rankmeter.Comparison) -> None:
    qrels, runs = data
    assert result.systems == ("base", "better", "noisy")
    assert result.metrics == tuple(METRICS)
    for name, run in runs.items():
        expected = evaluate(qrels, run, METRICS)
        for metric in METRICS:
            mean = result.mean(name, metric)
            assert mean.mean == pytest.approx(expected.metrics[metric], abs=1e-12)
            assert mean.low <= mean.mean <= mean.high
            assert mean.n == 60


def test_differences_match_the_per_query_vectors(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    base = evaluate(qrels, runs["base"], METRICS).per_query
    better = evaluate(qrels, runs["better"], METRICS).per_query
    d = result.difference("better", "nDCG@10")
    a, b = base["nDCG@10"], better["nDCG@10"]
    assert d.difference == pytest.approx(float(np.mean(b - a)), abs=1e-12)
    assert d.relative == pytest.approx(float(np.mean(b - a) / np.mean(a)))
    assert d.wins + d.ties + d.losses == 60
    assert d.wins == int(np.sum(b > a)) and d.losses == int(np.sum(b < a))
    assert d.effect_size == pytest.approx(float(np.mean(b - a) / np.std(b - a, ddof=1)))
    assert d.low <= d.difference <= d.high
    assert d.significant and d.difference > 0  # the better system is better
    assert not result.difference("noisy", "nDCG@10").difference > 0


def test_t_test_agrees_with_scipy(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, METRICS, test="t", correction="none")
    base = evaluate(qrels, runs["base"], METRICS).per_query
    for system in ("better", "noisy"):
        other = evaluate(qrels, runs[system], METRICS).per_query
        for metric in METRICS:
            expected = scipy.stats.ttest_rel(other[metric], base[metric]).pvalue
            d = result.difference(system, metric)
            assert d.p_value == pytest.approx(expected, rel=1e-9)
            assert d.p_corrected == d.p_value  # no correction


def test_holm_correction_covers_every_comparison(result: rankmeter.Comparison) -> None:
    p = np.array([d.p_value for d in result.differences])
    order = np.argsort(p)
    m = len(p)
    expected = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        expected[i] = running
    assert [d.p_corrected for d in result.differences] == pytest.approx(list(expected))
    assert all(d.significant == (d.p_corrected < 0.05) for d in result.differences)


def test_same_seed_same_numbers_and_other_seeds_differ(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    one = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=11).to_dict()
    two = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=11).to_dict()
    other = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=12).to_dict()
    assert json.dumps(one) == json.dumps(two)
    assert json.dumps(one["differences"]) != json.dumps(other["differences"])


def test_a_systems_numbers_do_not_depend_on_the_other_systems(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    pair = compare(qrels, {"base": runs["base"], "better": runs["better"]}, METRICS, seed=5)
    trio = compare(qrels, runs, METRICS, seed=5, correction="none")
    for metric in METRICS:
        a, b = pair.difference("better", metric), trio.difference("better", metric)
        assert (a.p_value, a.low, a.high) == (b.p_value, b.low, b.high)


def test_baseline_choice(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, ["P@5"], baseline="better", resamples=200)
    assert result.systems[0] == "better" and result.baseline == "better"
    assert {d.system for d in result.differences} == {"base", "noisy"}
    with pytest.raises(PolicyError, match="baseline 'nope' is not one of the runs: base, better"):
        compare(qrels, runs, ["P@5"], baseline="nope")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "z"}, "test='z' is not a paired test; use one of randomization, t, bootstrap"),
        ({"correction": "fdr"}, "correction='fdr' is not known; use one of holm, bonferroni, bh"),
        ({"alpha": 1.5}, "alpha=1.5 must be a number between 0 and 1"),
        ({"level": 95}, "level=95 must be a number between 0 and 1"),
        ({"resamples": 0}, "resamples=0 must be a whole number >= 1"),
        ({"seed": -1}, "seed=-1 must be a whole number >= 0"),
        ({"interval": "normal"}, "interval='normal' is not known; use one of bca, percentile"),
        ({"min_segment": 0}, "min_segment=0 must be a whole number >= 1"),
        ({"worst": -2}, "worst=-2 must be a whole number >= 0"),
        ({"cutoff": 0}, "cutoff=0 must be a whole number >= 1"),
    ],
)
def test_bad_settings_are_named(data: tuple[dict, dict], kwargs: dict, message: str) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compare(qrels, runs, ["P@5"], **kwargs)


def test_one_run_is_not_a_comparison(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError, match="compare needs two runs or more"):
        compare(qrels, [runs["base"]], ["P@5"])


def test_missing_queries_score_zero_and_are_listed() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}, "unseen": {"w": 1}}
    full = {"a": {"x": 1.0}, "b": {"y": 1.0}, "c": {"z": 1.0}}
    partial = {"a": {"x": 1.0}, "b": {"n": 1.0, "y": 0.5}}
    result = compare(qrels, {"full": full, "partial": partial}, ["P@1"], resamples=100)
    assert result.query_ids == ("a", "b", "c")  # 'unseen' is answered by nobody
    assert any("1 judged queries without results from any system" in n for n in result.notes)
    assert result.mean("partial", "P@1").mean == pytest.approx(1 / 3)
    failures = {f.system: f for f in result.failures}
    assert failures["partial"].no_results == ("c",)
    assert failures["partial"].nothing_relevant == ()  # b has y in the top 10
    assert [w.query for w in failures["partial"].worst] == ["b", "c"]
    assert failures["full"].worst == ()


def test_nothing_relevant_in_the_top_k() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    deep = {"a": {f"n{i}": 20.0 - i for i in range(12)} | {"x": 1.0}, "b": {"y": 1.0}}
    result = compare(
        qrels,
        {"top": {"a": {"x": 1.0}, "b": {"y": 1.0}}, "deep": deep},
        ["RR"],
        resamples=100,
        cutoff=10,
    )
    failures = {f.system: f for f in result.failures}
    assert failures["deep"].nothing_relevant == ("a",)
    assert failures["top"].nothing_relevant == ()


def test_query_texts_from_a_file(tmp_path: Path) -> None:
    qrels = {"1": {"x": 1}, "2": {"y": 1}}
    base = {"1": {"x": 1.0}, "2": {"y": 1.0}}
    worse = {"1": {"n": 2.0, "x": 1.0}, "2": {"y": 1.0}}
    (tmp_path / "queries.tsv").write_text("1\tjava developer berlin\n2\tnurse\n")
    result = compare(
        qrels,
        {"base": base, "worse": worse},
        ["RR"],
        resamples=100,
        queries=tmp_path / "queries.tsv",
    )
    (loss,) = {f.system: f for f in result.failures}["worse"].worst
    assert (loss.query, loss.text, loss.baseline, loss.system) == (
        "1",
        "java developer berlin",
        1.0,
        0.5,
    )


def test_segments_flag_the_segment_that_got_worse() -> None:
    qrels = {f"q{i}": {"r": 1} for i in range(80)}
    base = {f"q{i}": {"r": 2.0, "n": 1.0} for i in range(80)}
    # The new system breaks the tail queries (q40..q79) and keeps the head ones.
    new = {f"q{i}": ({"r": 2.0, "n": 1.0} if i < 40 else {"n": 2.0, "r": 1.0}) for i in range(80)}
    segments = {
        "freq": {f"q{i}": ("head" if i < 40 else "tail") for i in range(80)},
        "user": {f"q{i}": "new" for i in range(5)},  # too small to flag
    }
    result = compare(
        qrels, {"base": base, "new": new}, ["RR"], segments=segments, min_segment=20, resamples=2000
    )
    rows = {s.segment: s for s in result.segments}
    assert set(rows) == {"freq=head", "freq=tail", "user=new"}
    assert rows["freq=tail"].flagged and rows["freq=tail"].difference == pytest.approx(-0.5)
    assert not rows["freq=head"].flagged and rows["freq=head"].difference == 0
    assert rows["user=new"].small and not rows["user=new"].flagged
    assert rows["user=new"].n == 5
    means = {(m.segment, m.system): m for m in result.segment_means}
    assert means[("freq=tail", "new")].mean == pytest.approx(0.5)
    assert means[("freq=tail", "base")].n == 40


def test_segments_from_a_file(tmp_path: Path) -> None:
    qrels, runs = collection(30)
    lines = ["query_id,user"] + [f"q{i},{'new' if i % 3 == 0 else 'old'}" for i in range(30)]
    (tmp_path / "segments.csv").write_text("\n".join(lines) + "\n")
    result = compare(
        qrels, runs, ["P@5"], segments=tmp_path / "segments.csv", min_segment=5, resamples=200
    )
    assert {s.segment for s in result.segments} == {"user=new", "user=old"}
    assert {s.n for s in result.segments} == {10, 20}


def test_curves_equal_the_metrics_at_each_cutoff(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    for family in ("nDCG", "P", "R"):
        for k in (1, 5, 10, 30, 100):
            expected = evaluate(qrels, runs["better"], [f"{family}@{k}"]).metrics
            curve = result.curves[family]["better"]
            assert len(curve) == 100
            assert curve[k - 1] == pytest.approx(next(iter(expected.values())), abs=1e-12)


def test_results_are_frozen(result: rankmeter.Comparison) -> None:
    with pytest.raises(AttributeError):
        result.systems = ()  # type: ignore[misc]
    with pytest.raises(ValueError):
        result.scores["AP"]["base"][0] = 1.0
    with pytest.raises(TypeError):
        result.scores["AP"]["base"] = np.zeros(3)  # type: ignore[index]


def test_json_has_every_number_with_its_interval(result: rankmeter.Comparison) -> None:
    payload = json.loads(report.render_json(result))
    assert payload["settings"]["seed"] == 7 and payload["settings"]["test"] == "randomization"
    first = payload["differences"][0]
    assert {"difference", "low", "high", "p_value", "p_corrected", "effect_size", "n"} <= set(first)
    assert len(payload["curves"]["nDCG"]["base"]) == 100
    per_query = json.loads(report.render_json(result, per_query=True))["per_query"]
    assert set(per_query["AP"]["base"]) == set(result.query_ids)


def test_text_renderers(result: rankmeter.Comparison) -> None:
    markdown = report.render_markdown(result)
    assert "| better | nDCG@10 |" in markdown and "| nDCG@10 | " in markdown
    assert "Holm" in markdown and "W/T/L" in markdown
    latex = report.render_latex(result)
    assert "\\toprule" in latex and "\\bottomrule" in latex and "\\caption{" in latex
    assert "$^{*}$: significant at $\\alpha=0.05$" in latex
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(report.render_table(result))
    text = console.export_text()
    assert "baseline 'base'" in text and "better" in text and "lost most on nDCG@10" in text


def test_latex_escapes_names() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    runs = {"bm25_k1&b": {"a": {"x": 1.0}, "b": {"y": 1.0}}, "50%_new": {"a": {"x": 1.0}}}
    latex = report.render_latex(compare(qrels, runs, ["P@1"], resamples=50))
    assert "bm25\\_k1\\&b (baseline)" in latex and "50\\%\\_new" in latex


def test_not_recommended_tests_say_so(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, ["P@5"], test="wilcoxon")
    assert any("wilcoxon" in n for n in result.notes)
    assert "not recommended" in result.settings.describe()
    assert all(math.isfinite(d.p_value) for d in result.differences)


def test_worst_queries_come_with_their_explanations(result: rankmeter.Comparison) -> None:
    for f in result.failures[1:]:
        for loss in f.worst:
            mine = result.explanations[f.system][loss.query]
            theirs = result.explanations[result.baseline][loss.query]
            assert mine.metric == theirs.metric == result.metrics[0]
            assert mine.value == loss.system and theirs.value == loss.baseline
            assert mine.anchor != theirs.anchor or render_html(mine) == render_html(theirs)


@pytest.mark.parametrize(
    ("system", "counts"),
    [
        ({"a": {"n": 2.0, "x": 1.0}}, (0, 0, 1)),  # B loses its one query
        ({"a": {"x": 1.0}}, (0, 1, 0)),
    ],
)
def test_one_query_counts_wins_ties_and_losses(system: dict, counts: tuple[int, int, int]) -> None:
    # One query: no test, interval or effect size can be computed (NaN, shown as "–"), but
    # what happened on that query is known and counted.
    qrels = {"a": {"x": 1}}
    result = compare(qrels, {"A": {"a": {"x": 1.0}}, "B": system}, ["RR", "P@1"], resamples=50)
    for metric in ("RR", "P@1"):
        d = result.difference("B", metric)
        assert (d.wins, d.ties, d.losses) == counts
        assert d.n == 1
        for value in (d.p_value, d.p_corrected, d.low, d.high, d.effect_size):
            assert math.isnan(value)
        assert not d.significant
    row = report.difference_rows(result)[0]
    assert row[-1] == "{}/{}/{}".format(*counts)
    assert row[6] == "–"  # the p-value
