"""Which queries are compared under include_missing=False (the default, every judged query, is
in test_query_set.py): judged queries some system answered; missing ones score 0."""

from __future__ import annotations

import pytest

from rankmeter import compare


def test_missing_queries_score_zero_and_are_listed() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}, "unseen": {"w": 1}}
    full = {"a": {"x": 1.0}, "b": {"y": 1.0}, "c": {"z": 1.0}}
    partial = {"a": {"x": 1.0}, "b": {"n": 1.0, "y": 0.5}}
    result = compare(
        qrels, {"full": full, "partial": partial}, ["P@1"], resamples=100, include_missing=False
    )
    assert result.query_ids == ("a", "b", "c")  # 'unseen' is answered by nobody
    assert any("1 judged queries without results from any system" in n for n in result.notes)
    assert result.mean("partial", "P@1").mean == pytest.approx(1 / 3)
    failures = {f.system: f for f in result.failures}
    assert failures["partial"].no_results == ("c",)
    assert failures["partial"].nothing_relevant == ()  # b has y in the top 10
    assert [w.query for w in failures["partial"].worst] == ["b", "c"]
    assert failures["full"].worst == ()
