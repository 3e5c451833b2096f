"""Issue 24, "ranks you can trust on the leaderboard": each model's rank with its interval from
a paired bootstrap over each dataset's queries, and the groups of models that cannot be told
apart (rankmeter.vector._rank_intervals)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from rankmeter.errors import PolicyError
from rankmeter.report.leaderboard import render_html, render_json, render_markdown
from rankmeter.vector.leaderboard import Leaderboard, LeaderboardEntry, leaderboard_of


def _entry(model: str, dataset: str, values: np.ndarray | list[float]) -> LeaderboardEntry:
    per_query = {f"q{i}": {"nDCG@10": float(v)} for i, v in enumerate(values)}
    return LeaderboardEntry(model, dataset, {"nDCG@10": float(np.mean(values))}, per_query)


def _board(
    means: dict[str, float],
    *,
    datasets: int = 3,
    queries: int = 40,
    noise: float = 0.15,
    data: int = 0,
    **options: object,
) -> Leaderboard:
    """Models whose per-query values are their mean plus noise around a shared query effect
    (``data`` seeds the values; ``options`` go to leaderboard_of, its ``seed`` included)."""
    rng = np.random.default_rng(data)
    entries = []
    for d in range(datasets):
        hardness = rng.uniform(-0.2, 0.2, queries)
        for model, mean in means.items():
            values = np.clip(mean + hardness + rng.normal(0, noise, queries), 0, 1)
            entries.append(_entry(model, f"d{d}", values))
    return leaderboard_of(entries, **options)  # type: ignore[arg-type]


def _reference(board: Leaderboard, resamples: int, seed: int, level: float) -> dict[str, tuple]:
    """The same bootstrap, one resample at a time in plain loops, on the same draws (each
    dataset's generator, one draw of resamples x queries): what the vectorised code must give."""
    from scipy.stats import rankdata

    from rankmeter.vector._rank_intervals import _generator

    entries = {(e.model, e.dataset): e for e in board.entries}
    ranks = {m: [] for m in board.models}
    draws = {}
    for dataset in board.datasets:
        here = sorted(m for m, d in entries if d == dataset)
        queries = sorted(entries[here[0], dataset].per_query)
        draws[dataset] = (
            here,
            {m: [entries[m, dataset].per_query[q]["nDCG@10"] for q in queries] for m in here},
            _generator(seed, dataset).integers(0, len(queries), size=(resamples, len(queries))),
        )
    for b in range(resamples):
        sums: dict[str, list[float]] = {m: [] for m in board.models}
        for here, values, drawn in draws.values():
            means = [sum(values[m][i] for i in drawn[b]) / len(drawn[b]) for m in here]
            for m, r in zip(here, rankdata([-x for x in means], method="average"), strict=True):
                sums[m].append(float(r))
        mean_rank = {m: sum(r) / len(r) for m, r in sums.items()}
        for m in board.models:
            ranks[m].append(1 + sum(mean_rank[o] < mean_rank[m] for o in board.models))
    tail = (1 - Fraction(str(level))) / 2
    low_count = math.ceil(tail * resamples)
    high_count = math.ceil((1 - tail) * resamples)
    assert board.ranks is not None
    out = {}
    for m in board.models:
        ordered = sorted(ranks[m])
        observed = board.ranks.rank[m]
        low, high = ordered[max(low_count, 1) - 1], ordered[high_count - 1]
        out[m] = (min(low, observed), max(high, observed))
    return out


def test_the_vectorised_bootstrap_is_the_plain_one() -> None:
    means = {"a": 0.6, "b": 0.58, "c": 0.55, "d": 0.5, "e": 0.3}
    board = _board(means, queries=25, data=2, resamples=200, seed=7, level=0.9)
    assert board.ranks is not None
    assert dict(board.ranks.interval) == _reference(board, 200, 7, 0.9)


def test_every_interval_holds_the_observed_rank() -> None:
    for seed in range(6):
        rng = np.random.default_rng(seed)
        means = {f"m{i}": float(x) for i, x in enumerate(rng.uniform(0.4, 0.6, 8))}
        board = _board(means, data=seed, queries=20, resamples=200, seed=seed)
        assert board.ranks is not None
        for model in board.models:
            low, high = board.ranks.interval[model]
            assert low <= board.ranks.rank[model] <= high
        # The observed rank: 1 + the models with a strictly better mean rank.
        first = board.models[0]
        assert board.ranks.rank[first] == 1


def test_identical_models_share_an_interval_and_a_group() -> None:
    rng = np.random.default_rng(1)
    entries = []
    for dataset in ("d1", "d2"):
        base = rng.uniform(0.3, 0.7, 30)
        twin = np.clip(base + rng.normal(0, 0.1, 30), 0, 1)
        entries += [
            _entry("twin-a", dataset, twin),
            _entry("twin-b", dataset, twin.copy()),
            _entry("other", dataset, np.clip(base + rng.normal(0, 0.1, 30), 0, 1)),
            _entry("third", dataset, np.clip(base + rng.normal(0, 0.1, 30), 0, 1)),
        ]
    board = leaderboard_of(entries)
    ranks = board.ranks
    assert ranks is not None
    assert ranks.rank["twin-a"] == ranks.rank["twin-b"]
    assert ranks.interval["twin-a"] == ranks.interval["twin-b"]
    assert ranks.group["twin-a"] == ranks.group["twin-b"]


def test_a_model_far_ahead_is_alone_in_group_1_with_interval_1_1() -> None:
    board = _board({"far": 0.9, "x": 0.45, "y": 0.44, "z": 0.43}, noise=0.1)
    ranks = board.ranks
    assert ranks is not None
    assert board.models[0] == "far"
    assert ranks.interval["far"] == (1, 1) and ranks.group["far"] == 1
    assert all(ranks.group[m] > 1 for m in ("x", "y", "z"))
    assert ranks.shown("far") == "1-1"


def test_the_same_seed_gives_the_same_intervals() -> None:
    means = {f"m{i}": 0.5 + 0.005 * i for i in range(6)}
    one = _board(means, data=3, resamples=300, seed=5)
    two = _board(means, data=3, resamples=300, seed=5)
    assert one.to_dict() == two.to_dict()
    # The seed is the bootstrap's: another seed draws other queries (on near-equal models the
    # intervals move).
    intervals = {
        json.dumps(_board(means, data=3, resamples=300, seed=s).to_dict()["models"])
        for s in range(4)
    }
    assert len(intervals) > 1


def test_a_dataset_s_draws_do_not_depend_on_the_other_datasets() -> None:
    """Each dataset's generator is seeded from the seed and its name: a dataset added leaves
    the draws of the others as they were (the reference draws each dataset on its own)."""
    means = {"a": 0.6, "b": 0.58, "c": 0.5}
    board = _board(means, datasets=2, queries=15, resamples=150)
    assert board.ranks is not None
    assert dict(board.ranks.interval) == _reference(board, 150, 0, 0.95)


def test_equal_models_get_wide_intervals_and_merge_separated_ones_do_not() -> None:
    """A simulation: eight models with the same true mean, and eight a clear step apart."""
    equal = _board({f"m{i}": 0.5 for i in range(8)}, datasets=4, queries=50, data=11)
    assert equal.ranks is not None
    widths = [high - low for low, high in equal.ranks.interval.values()]
    assert np.median(widths) >= 4  # of 8 ranks: most could be almost anywhere
    assert len(set(equal.ranks.group.values())) <= 2
    apart = _board(
        {f"m{i}": 0.9 - 0.1 * i for i in range(8)}, datasets=4, queries=50, noise=0.05, data=11
    )
    assert apart.ranks is not None
    assert all(low == high for low, high in apart.ranks.interval.values())
    assert [apart.ranks.group[m] for m in apart.models] == list(range(1, 9))


def test_groups_are_led_by_their_first_model() -> None:
    from rankmeter.vector._rank_intervals import _groups

    # c overlaps b but not a, the leader of group 1: c opens group 2 although the chain
    # a-b-c overlaps.
    assert _groups(["a", "b", "c"], {"a": (1, 2), "b": (1, 3), "c": (3, 3)}) == {
        "a": 1,
        "b": 1,
        "c": 2,
    }
    assert _groups(["a", "x", "b"], {"a": (1, 1), "b": (2, 2)}) == {"a": 1, "b": 2}


def test_the_json_gains_fields_and_keeps_the_old_ones() -> None:
    board = _board({"a": 0.7, "b": 0.5}, datasets=2, resamples=200, seed=4)
    payload = json.loads(render_json(board))
    assert set(payload) == {"metric", "rule", "datasets", "models", "rank_intervals"}
    assert payload["rank_intervals"]["level"] == 0.95
    assert payload["rank_intervals"]["resamples"] == 200
    assert payload["rank_intervals"]["seed"] == 4
    assert "2.5% to 97.5% percentiles" in payload["rank_intervals"]["rule"]
    assert payload["rank_intervals"]["notes"] == []
    for row in payload["models"]:
        assert set(row) == {"model", "mean_rank", "scores", "rank", "rank_interval", "group"}
        low, high = row["rank_interval"]
        assert isinstance(low, int) and low <= row["rank"] <= high
        assert isinstance(row["group"], int)
        for cell in row["scores"].values():
            assert {"score", "best"} <= set(cell)


def test_every_format_shows_the_interval_and_the_group() -> None:
    board = _board({"far": 0.9, "x": 0.45, "y": 0.44}, noise=0.1)
    markdown = render_markdown(board)
    assert "| model | mean rank | rank 95% CI | group |" in markdown
    assert "| far | 1.00 | 1-1 | 1 |" in markdown
    html = render_html(board)
    assert '<th scope="col" class="num">rank 95% CI</th>' in html and ">1-1<" in html
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(render_table(board))
    text = console.export_text()
    assert "rank 95% CI" in text and "group" in text and "1-1" in text
    assert "paired bootstrap resamples" in text
    level = _board({"far": 0.9, "x": 0.45}, level=0.9, resamples=200)
    assert "rank 90% CI" in render_markdown(level)


def render_table(board: Leaderboard) -> object:
    from rankmeter.report.leaderboard import render_table as table

    return table(board)


def test_a_model_with_only_a_mean_gets_no_interval_and_one_line_saying_so() -> None:
    rng = np.random.default_rng(5)
    entries = []
    for dataset in ("d1", "d2"):
        base = rng.uniform(0.2, 0.8, 30)
        entries += [
            _entry("a", dataset, np.clip(base + 0.2, 0, 1)),
            _entry("b", dataset, base),
        ]
    entries.append(LeaderboardEntry("published", "d1", {"nDCG@10": 0.55}, {}))
    board = leaderboard_of(entries)
    ranks = board.ranks
    assert ranks is not None
    assert "published" not in ranks.interval and "published" not in ranks.group
    assert ranks.rank["published"] >= 1 and set(ranks.interval) == {"a", "b"}
    assert ranks.notes() == (
        "No rank interval for 'published': its result on 'd1' lacks per-query nDCG@10 "
        "values, so only its mean is ranked (the other models are ranked against that mean in "
        "every resample).",
    )
    assert ("published", "d1") not in board.significance  # nothing to pair
    payload = json.loads(render_json(board))
    row = next(r for r in payload["models"] if r["model"] == "published")
    assert row["rank_interval"] is None and row["group"] is None
    assert payload["rank_intervals"]["notes"] == list(ranks.notes())
    markdown = render_markdown(board)
    assert "No rank interval for 'published'" in markdown
    assert "| published | " in markdown and " | - | - |" in markdown
    assert "No rank interval for &#x27;published&#x27;" in render_html(board)


def test_untrusted_names_in_the_notes_are_escaped() -> None:
    entries = [
        _entry("a", "d", [0.5, 0.7]),
        LeaderboardEntry("<b>x\x1b[31m", "d", {"nDCG@10": 0.5}, {}),
    ]
    board = leaderboard_of(entries, resamples=100)
    html = render_html(board)
    assert "<b>x" not in html and "&lt;b&gt;" in html
    assert "\x1b" not in render_markdown(board)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seed": -1}, "seed=-1 must be an integer >= 0 (the seed of the random number generator)"),
        ({"level": 95}, "level=95 must be a number strictly between 0 and 1 (e.g. 0.95 for 95%)"),
        (
            {"resamples": 10},
            "resamples=10 must be an integer from 100 to 10,000,000 (bootstrap resamples of "
            "the queries)",
        ),
        (
            {"resamples": 10**9},
            "resamples=1000000000 must be an integer from 100 to 10,000,000 (bootstrap "
            "resamples of the queries): the time grows with resamples times queries (about 1 s "
            "per million resamples and 100 queries); the default is 1,000",
        ),
    ],
)
def test_settings_are_checked_with_the_library_s_wording(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    from rankmeter.vector.leaderboard import read_leaderboard

    with pytest.raises(PolicyError) as caught:
        leaderboard_of([_entry("a", "d", [0.5])], **options)  # type: ignore[arg-type]
    assert str(caught.value) == message
    with pytest.raises(PolicyError) as caught:  # before the folder is read (it is absent)
        read_leaderboard(tmp_path / "absent", **options)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_model_lacking_some_query_s_value_gets_no_interval() -> None:
    full = [_entry("a", "d", [0.5, 0.7, 0.9]), _entry("c", "d", [0.1, 0.2, 0.3])]
    partial = LeaderboardEntry(
        "b", "d", {"nDCG@10": 0.4}, {"q0": {"nDCG@10": 0.4}, "q1": {}, "q2": {"nDCG@10": 0.4}}
    )
    board = leaderboard_of([*full, partial], resamples=100)
    assert board.ranks is not None
    assert set(board.ranks.interval) == {"a", "c"}
    assert board.ranks.notes()[0].startswith("No rank interval for 'b': its result on 'd' lacks")


def test_a_stored_file_without_per_query_values_is_still_refused(tmp_path: Path) -> None:
    """Only an entry made in Python may hold means alone: a stored file always holds its
    queries' values, so one without them beside others is refused, naming it, as before."""
    from rankmeter.errors import FormatError
    from rankmeter.report.leaderboard import save_entry
    from rankmeter.vector.leaderboard import read_leaderboard

    save_entry(_entry("a", "d", [0.5, 0.7]), tmp_path)
    empty = save_entry(LeaderboardEntry("z", "d", {"nDCG@10": 0.0}, {}), tmp_path)
    with pytest.raises(FormatError, match=r"'z' on 'd' has 0 judged queries") as caught:
        read_leaderboard(tmp_path)
    assert str(empty) in str(caught.value)
