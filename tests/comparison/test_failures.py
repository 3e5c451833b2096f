"""Failure lists: the queries lost most, answered with nothing, or with nothing relevant."""

from __future__ import annotations

from pathlib import Path

import rankmeter
from rankmeter import compare
from rankmeter.report.explanation import render_html


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


def test_worst_queries_come_with_their_explanations(result: rankmeter.Comparison) -> None:
    for f in result.failures[1:]:
        for loss in f.worst:
            mine = result.explanations[f.system][loss.query]
            theirs = result.explanations[result.baseline][loss.query]
            assert mine.metric == theirs.metric == result.metrics[0]
            assert mine.value == loss.system and theirs.value == loss.baseline
            assert mine.anchor != theirs.anchor or render_html(mine) == render_html(theirs)
