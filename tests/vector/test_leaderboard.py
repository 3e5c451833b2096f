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
            r'"metrics" has \'nDCG@10\' = "high": a metric\'s value must be a finite number',
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
    mean = float(np.mean(FAR + FAR))
    save_entry(LeaderboardEntry("minilm", "medline", {"nDCG@10": mean}, other), tmp_path)
    with pytest.raises(FormatError, match=r"minilm.*medline.*60 judged queries.*'bm25'.*30"):
        read_leaderboard(tmp_path)
    same_queries = [_entry("a", "d", BEST), _entry("b", "d", CLOSE)]
    assert leaderboard_of(same_queries).best == {"d": "a"}


# -- issue 22, item 13: a stored result is checked as if a user had typed it -------------------


def _stored(tmp_path: Path, model: str, metrics: dict[str, float], values: list[float]) -> Path:
    payload = {
        "format": "rankmeter leaderboard entry", "version": 1, "model": model, "dataset": "d",
        "metrics": metrics, "info": {},
        "per_query": {f"q{i}": {"nDCG@10": v} for i, v in enumerate(values)},
    }  # fmt: skip
    path = tmp_path / f"{model}.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_mean_its_own_queries_contradict_is_refused_naming_the_file(tmp_path: Path) -> None:
    honest = [0.9, 0.8, 0.7, 0.95]
    _stored(tmp_path, "honest", {"nDCG@10": float(np.mean(honest))}, honest)
    liar = _stored(tmp_path, "liar", {"nDCG@10": 0.99}, [0.3, 0.25, 0.2, 0.29])
    with pytest.raises(
        FormatError,
        match=re.escape(
            f'{liar}: "metrics" says nDCG@10 = 0.99, but the mean of its 4 per-query values '
            "is 0.26; the file was edited or is corrupt"
        ),
    ):
        read_leaderboard(tmp_path)


def test_rounding_is_not_a_contradiction(tmp_path: Path) -> None:
    values = list(RNG.uniform(0.0, 1.0, 97))
    _stored(tmp_path, "m", {"nDCG@10": sum(values) / len(values)}, values)  # another order
    assert read_leaderboard(tmp_path).scores["m", "d"] == sum(values) / len(values)


@pytest.mark.parametrize(
    ("metrics", "values", "match"),
    [
        ({"nDCG@10": 7.0}, [7.0, 7.0], r"nDCG@10 = 7 in \"metrics\", outside its range \[0, 1\]"),
        ({"nDCG@10": 0.5}, [1.5, -0.5], r"nDCG@10 = 1\.5 in query 'q0', outside its range"),
        ({"nDCG@10": 0.5, "DCG@10": -1.0}, [0.5], r"DCG@10 = -1 in \"metrics\", outside its "
         r"range 0 or more"),
    ],
)  # fmt: skip
def test_a_value_outside_its_metric_s_range_is_refused(
    tmp_path: Path, metrics: dict[str, float], values: list[float], match: str
) -> None:
    path = _stored(tmp_path, "m", metrics, values)
    with pytest.raises(FormatError, match=re.escape(str(path)) + ": " + match):
        read_leaderboard(tmp_path)


def test_a_metric_the_queries_lack_is_refused(tmp_path: Path) -> None:
    path = _stored(tmp_path, "m", {"nDCG@10": 0.5, "P@10": 0.5}, [0.5])
    with pytest.raises(
        FormatError, match=re.escape(f"{path}: \"per_query\" has no P@10 for query 'q0'")
    ):
        read_leaderboard(tmp_path)


def test_a_fifo_in_the_folder_is_refused_without_opening_it(tmp_path: Path) -> None:
    import os
    import threading

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    save_entry(_entry("m", "d", [0.5, 1.0]), tmp_path)
    os.mkfifo(tmp_path / "pipe.json")
    found: list[BaseException] = []

    def read() -> None:
        try:
            read_leaderboard(tmp_path)
        except BaseException as exc:  # handed to the test thread
            found.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # a guard against hanging the suite, not a timing
    if reader.is_alive():  # blocked on the FIFO: unblock it with a writer, then fail
        with open(tmp_path / "pipe.json", "w"):
            pass
        pytest.fail("read_leaderboard opened the FIFO and waited for a writer")
    assert len(found) == 1 and isinstance(found[0], FormatError)
    assert str(found[0]).startswith(f"{tmp_path / 'pipe.json'}: not a regular file (a FIFO)")


# -- issue 22 (hostile trial): hostile stored files are one error naming the file ------------------
def _hostile(values: dict[str, object] | None = None, **fields: object) -> dict[str, object]:
    payload: dict[str, object] = {
        "format": "rankmeter leaderboard entry",
        "version": 1,
        "model": "m",
        "dataset": "d",
        "metrics": {"nDCG@10": 0.5, **(values or {})},
        "info": {},
        "per_query": {"q1": {"nDCG@10": 0.5}},
    }
    payload.update(fields)
    return payload


def test_a_huge_file_is_refused_from_its_size_before_reading(tmp_path: Path) -> None:
    """Item 1: a 2 GB file took 4.2 GB and 18.8 s before "not JSON"; a 300 MB one 670 MB."""
    with (tmp_path / "huge.json").open("wb") as sparse:
        sparse.truncate(300 * 2**20)  # sparse: no disk, no time
    with pytest.raises(
        FormatError, match=r"huge\.json: too big to be a leaderboard result \(314,572,800 bytes"
    ):
        read_leaderboard(tmp_path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[" * 100_000 + "]" * 100_000, r"not a leaderboard result \(JSON nested too deeply\)"),
        (
            json.dumps(_hostile()).replace("0.5", "1" + "0" * 5000, 1),
            r"not a leaderboard result \(an integer of 5001 digits",
        ),
        (
            json.dumps(_hostile()).replace("0.5", "NaN", 1),
            r"\"metrics\" has 'nDCG@10' = NaN: a metric's value must be a finite number",
        ),
        (
            json.dumps(_hostile()).replace("0.5", "-Infinity", 1),
            r"\"metrics\" has 'nDCG@10' = -Infinity: a metric's value must be a finite number",
        ),
        (
            json.dumps(_hostile({"RR@10": None})),
            r"\"metrics\" has 'RR@10' = null: a metric's value",
        ),
        (
            json.dumps(_hostile({"RR@10": "0.9"})),
            r"\"metrics\" has 'RR@10' = \"0\.9\": a metric's value",
        ),
        (
            json.dumps(_hostile(per_query={"q1": {"nDCG@10": "high"}})),
            r"\"per_query\" has 'nDCG@10' = \"high\" for query 'q1': a metric's value",
        ),
        (
            json.dumps({k: v for k, v in _hostile().items() if k != "version"}),
            r"no \"version\" of its layout; this rankmeter reads version 1",
        ),
    ],
    ids=[
        "deep",
        "5001-digits",
        "nan",
        "infinity",
        "null",
        "string",
        "per-query-string",
        "no-version",
    ],
)
def test_hostile_stored_values_are_named(tmp_path: Path, text: str, match: str) -> None:
    """Items 2 and 6: RecursionError and Python's 4,300-digit limit were internal errors; a
    NaN, infinity, string or null value did not say which metric; a missing version said
    "layout version None"."""
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(FormatError, match=r"bad\.json: " + match):
        read_leaderboard(tmp_path)


def test_a_file_name_s_newline_is_shown_escaped(tmp_path: Path) -> None:
    """Item 6: a file named x<newline>y was shown as "x y"."""
    (tmp_path / "x\ny").write_text("{}")
    with pytest.raises(FormatError, match=r"/x\\ny: not a leaderboard result") as caught:
        read_leaderboard(tmp_path)
    assert "\n" not in str(caught.value)
