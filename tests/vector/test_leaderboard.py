"""Issue 14: the leaderboard read from stored results: mean ranks, the best per dataset, and
significance against it from the stored per-query values (randomization test, Holm)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rankmeter.errors import FormatError, PolicyError
from rankmeter.report.leaderboard import save_entry
from rankmeter.stats import correct, paired_pvalues
from rankmeter.vector.leaderboard import (
    LeaderboardEntry,
    leaderboard_of,
    read_leaderboard,
)


def _entry(model: str, dataset: str, values: list[float]) -> LeaderboardEntry:
    per_query = {f"q{i}": {"nDCG@10": v} for i, v in enumerate(values)}
    return LeaderboardEntry(model, dataset, {"nDCG@10": float(np.mean(values))}, per_query)


RNG = np.random.default_rng(3)
BEST = list(RNG.uniform(0.5, 1.0, 30))
CLOSE = [v - 0.01 if i % 2 else v + 0.008 for i, v in enumerate(BEST)]  # below, above, below...
FAR = [v - 0.4 for v in BEST]  # far below on every query


def test_significance_is_the_stats_engine_on_the_stored_values() -> None:
    entries = [
        _entry("best", "d1", BEST),
        _entry("close", "d1", CLOSE),
        _entry("far", "d1", FAR),
        _entry("far", "d2", BEST),  # d2: far is the best, best is worse
        _entry("best", "d2", FAR),
    ]
    board = leaderboard_of(entries)
    assert board.best == {"d1": "best", "d2": "far"}
    # d1: best 1, close 2, far 3; d2: far 1, best 2. Equal mean ranks: by name.
    assert dict(board.mean_rank) == {"best": 1.5, "close": 2.0, "far": 2.0}
    assert board.models == ("best", "close", "far")
    diffs = np.column_stack([np.subtract(CLOSE, BEST), np.subtract(FAR, BEST)])
    pvalues = paired_pvalues(diffs, "randomization", seed=0)
    adjusted = correct(pvalues, "holm").adjusted
    close, far = board.significance["close", "d1"], board.significance["far", "d1"]
    assert (close.pvalue, far.pvalue) == tuple(pvalues)
    assert (close.adjusted, far.adjusted) == tuple(adjusted)
    assert far.worse and far.n == 30 and far.difference == pytest.approx(-0.4)
    assert not close.worse and close.adjusted > 0.3  # 0.001 below on average: not significant
    assert board.significance["best", "d2"].worse
    assert ("far", "d2") not in board.significance  # the best is not tested against itself


def test_mean_rank_over_the_datasets_a_model_ran_on() -> None:
    board = leaderboard_of(
        [
            _entry("a", "d1", [1.0, 1.0]),
            _entry("b", "d1", [0.5, 0.5]),
            _entry("c", "d1", [0.5, 0.5]),
            _entry("a", "d2", [0.0, 0.0]),
            _entry("b", "d2", [1.0, 0.0]),
        ]
    )
    # d1: a 1, b and c share 2.5; d2: b 1, a 2. c ran on d1 only.
    assert dict(board.mean_rank) == {"a": 1.5, "b": 1.75, "c": 2.5}
    assert board.models == ("a", "b", "c")
    assert ("c", "d2") not in board.scores


def test_a_result_without_the_main_score_is_named() -> None:
    other = LeaderboardEntry("m", "d", {"P@10": 0.5}, {"q": {"P@10": 0.5}})
    with pytest.raises(PolicyError, match=r"'m' on 'd' has no nDCG@10 \(it has P@10\)"):
        leaderboard_of([other])
    assert leaderboard_of([other], metric="p.10").metric == "P@10"  # any spelling


def test_saved_entries_round_trip_and_replace(tmp_path: Path) -> None:
    first = save_entry(_entry("m/1", "d", [0.5, 1.0]), tmp_path)
    save_entry(_entry("m/2", "d", [0.25, 1.0]), tmp_path)
    again = save_entry(_entry("m/1", "d", [1.0, 1.0]), tmp_path)  # the same (model, dataset)
    assert again == first and "/" not in first.name
    assert len(list(tmp_path.iterdir())) == 2
    board = read_leaderboard(tmp_path)
    assert dict(board.scores) == {("m/1", "d"): 1.0, ("m/2", "d"): 0.625}
    assert {e.path for e in board.entries} == set(tmp_path.iterdir())


def test_a_copied_result_is_named(tmp_path: Path) -> None:
    path = save_entry(_entry("m", "d", [1.0]), tmp_path)
    (tmp_path / "copy.json").write_text(path.read_text())
    with pytest.raises(FormatError, match=re.escape("a second result for model 'm' on 'd'")):
        read_leaderboard(tmp_path)


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ({"format": "rankmeter leaderboard entry", "version": 9}, r"layout version 9"),
        (
            {"format": "rankmeter leaderboard entry", "version": 1, "model": "m", "dataset": "d",
             "metrics": {"nDCG@10": "high"}, "per_query": {}},
            r'"metrics" must map metric names to numbers',
        ),
        ([1, 2], r'not a leaderboard result \(no "format"'),
    ],
)  # fmt: skip
def test_malformed_results_are_named(tmp_path: Path, payload: object, match: str) -> None:
    (tmp_path / "bad.json").write_text(json.dumps(payload))
    with pytest.raises(FormatError, match=r"bad\.json: " + match):
        read_leaderboard(tmp_path)


def test_results_on_other_queries_under_one_dataset_name_are_refused(tmp_path: Path) -> None:
    # Two collections with one folder name (data/v1/medline, data/v2/medline), run on
    # different days into one folder: every judged query is stored, so other query ids
    # mean other judgments, and ranking or pairing them would compare different data.
    save_entry(_entry("bm25", "medline", BEST), tmp_path)
    other = {f"q{i}": {"nDCG@10": v} for i, v in enumerate(FAR + FAR)}  # 60 queries, not 30
    save_entry(LeaderboardEntry("minilm", "medline", {"nDCG@10": 0.2}, other), tmp_path)
    with pytest.raises(FormatError, match=r"minilm.*medline.*60 judged queries.*'bm25'.*30"):
        read_leaderboard(tmp_path)
    same_queries = [_entry("a", "d", BEST), _entry("b", "d", CLOSE)]
    assert leaderboard_of(same_queries).best == {"d": "a"}
