"""A leaderboard on a metric where lower is better (RBP_resid, issue 24): the lowest mean ranks
first, is the dataset's best, the others are marked worse against it, and the rank intervals
resample in the same direction."""

from __future__ import annotations

import numpy as np

from rankmeter.report.leaderboard import render_markdown
from rankmeter.vector.leaderboard import LeaderboardEntry, leaderboard_of


def _entry(model: str, dataset: str, values: np.ndarray) -> LeaderboardEntry:
    per_query = {f"q{i}": {"RBP_resid": float(v)} for i, v in enumerate(values)}
    return LeaderboardEntry(model, dataset, {"RBP_resid": float(np.mean(values))}, per_query)


def test_the_lowest_residual_ranks_first() -> None:
    rng = np.random.default_rng(5)
    residual = {"low": 0.1, "mid": 0.3, "high": 0.6}
    entries = []
    for d in range(2):
        for model, mean in residual.items():
            entries.append(_entry(model, f"d{d}", np.clip(mean + rng.normal(0, 0.02, 30), 0, 1)))
    board = leaderboard_of(entries, metric="RBP_resid", resamples=200)
    assert board.models == ("low", "mid", "high")
    assert dict(board.mean_rank) == {"low": 1.0, "mid": 2.0, "high": 3.0}
    assert dict(board.best) == {"d0": "low", "d1": "low"}
    assert board.significance["high", "d0"].worse and board.significance["mid", "d1"].worse
    assert board.significance["high", "d0"].difference > 0  # still the model minus the best
    assert board.ranks is not None
    assert dict(board.ranks.rank) == {"low": 1, "mid": 2, "high": 3}
    assert dict(board.ranks.interval) == {"low": (1, 1), "mid": (2, 2), "high": (3, 3)}
    assert "Main score RBP_resid (lower is better)" in board.rule()
    shown = render_markdown(board)
    assert shown.index("low") < shown.index("mid") < shown.index("high")


def test_higher_is_better_is_unchanged() -> None:
    rng = np.random.default_rng(5)
    entries = []
    for model, mean in {"low": 0.1, "high": 0.6}.items():
        values = np.clip(mean + rng.normal(0, 0.02, 30), 0, 1)
        per_query = {f"q{i}": {"RBP": float(v)} for i, v in enumerate(values)}
        entries.append(LeaderboardEntry(model, "d", {"RBP": float(values.mean())}, per_query))
    board = leaderboard_of(entries, metric="RBP", resamples=200)
    assert board.models == ("high", "low") and board.best["d"] == "high"
    assert "lower is better" not in board.rule()
