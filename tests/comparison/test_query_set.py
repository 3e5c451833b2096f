"""Which queries are compared does not depend on which other systems are compared (issue 13,
defect 1): by default every judged query, a system's missing query scoring 0 (trec_eval -c);
``include_missing=False`` keeps the old restriction to the queries some system answered."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankmeter import compare
from rankmeter.io import read_qrels


def _pair(result: object, system: str) -> str:
    """Every number of one pair, uncorrected (a correction depends on its family by design),
    as bytes: NaN compares equal to NaN."""
    from rankmeter.comparison import Comparison

    assert isinstance(result, Comparison)
    out = []
    for metric in result.metrics:
        d = result.difference(system, metric).to_dict()
        # the corrected p, and the detectable difference (tested at alpha / family), grow with
        # the family; everything else must not move
        del d["p_corrected"], d["significant"], d["detectable"]
        out.append(d)
        out += [result.mean(s, metric).to_dict() for s in (result.baseline, system)]
    return json.dumps(out, sort_keys=True, allow_nan=True)


def _runs(qrels: dict[str, dict[str, int]], answered: dict[str, list[str]], seed: int) -> dict:
    rng = random.Random(seed)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name, queries in answered.items():
        runs[name] = {}
        for q in queries:
            docs = [*qrels[q], *(f"u{q}_{i}" for i in range(5))]
            runs[name][q] = {d: rng.random() for d in docs}
    return runs


def test_the_default_compares_every_judged_query() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}, "unseen": {"w": 1}}
    runs = {"full": {"a": {"x": 1.0}, "b": {"y": 1.0}, "c": {"z": 1.0}}, "part": {"a": {"x": 1}}}
    result = compare(qrels, runs, ["P@1"], resamples=100)
    assert result.query_ids == ("a", "b", "c", "unseen")
    assert result.settings.policies.include_missing is True
    assert dict(result.filled) == {"full": 1, "part": 3}
    restricted = compare(qrels, runs, ["P@1"], resamples=100, include_missing=False)
    assert restricted.query_ids == ("a", "b", "c")
    assert restricted.settings.policies.include_missing is False
    assert dict(restricted.filled) == {"full": 0, "part": 2}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    n=st.integers(min_value=2, max_value=12),
    masks=st.lists(st.lists(st.booleans(), min_size=12, max_size=12), min_size=3, max_size=3),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_adding_a_system_leaves_a_pair_byte_identical(
    n: int, masks: list[list[bool]], seed: int
) -> None:
    qrels = {f"q{i}": {f"d{i}_{j}": (i + j) % 3 for j in range(4)} for i in range(n)}
    answered = {
        name: [f"q{i}" for i in range(n) if mask[i]]
        for name, mask in zip(("base", "new", "third"), masks, strict=True)
    }
    for queries in answered.values():
        queries[:] = queries or ["q0"]  # a run holds at least one line
    runs = _runs(qrels, answered, seed)
    two = compare(qrels, {k: runs[k] for k in ("base", "new")}, ["nDCG@10", "P@2"], resamples=200)
    three = compare(qrels, runs, ["nDCG@10", "P@2"], resamples=200)
    assert two.query_ids == three.query_ids and sorted(two.query_ids) == sorted(qrels)
    assert _pair(two, "new") == _pair(three, "new")


def test_a_third_run_that_answers_more_queries_moves_nothing(cranfield: Path) -> None:
    """The CISI case on Cranfield: two runs answer the first 150 queries, a third all 225."""
    loaded = read_qrels(cranfield / "qrels.trec")
    qrels = {str(q): {} for q in loaded.query_ids}
    for line in (cranfield / "qrels.trec").read_text().splitlines():
        q, _, doc, grade = line.split()
        qrels[q][doc] = int(grade)
    ids = list(qrels)
    answered = {"bm25": ids[:150], "dense": ids[:150], "hybrid": ids}
    runs = _runs(qrels, answered, seed=5)
    two = compare(qrels, {k: runs[k] for k in ("bm25", "dense")}, ["nDCG@10"], resamples=500)
    three = compare(qrels, runs, ["nDCG@10"], resamples=500)
    assert two.n_queries == three.n_queries == len(ids) == 225
    assert _pair(two, "dense") == _pair(three, "dense")
    assert two.filled["bm25"] == 75 and three.filled["hybrid"] == 0
    # The restriction is still there, and it is the one that moves with the systems.
    old_two = compare(
        qrels,
        {k: runs[k] for k in ("bm25", "dense")},
        ["nDCG@10"],
        resamples=500,
        include_missing=False,
    )
    old_three = compare(qrels, runs, ["nDCG@10"], resamples=500, include_missing=False)
    assert (old_two.n_queries, old_three.n_queries) == (150, 225)


def test_no_judged_query_answered_is_still_an_error_under_the_restriction() -> None:
    from rankmeter.errors import PolicyError

    with pytest.raises(PolicyError, match=r"^no run has results for any judged query"):
        compare(
            {"a": {"x": 1}},
            {"r": {"b": {"x": 1.0}}, "s": {"c": {"x": 1.0}}},
            ["P@1"],
            include_missing=False,
        )


def test_each_difference_says_what_its_queries_can_detect() -> None:
    from rankmeter.stats import detectable_difference

    n = 30
    qrels = {f"q{i}": {f"d{i}_{j}": (i + j) % 3 for j in range(4)} for i in range(n)}
    runs = _runs(qrels, {k: list(qrels) for k in ("base", "new", "third")}, seed=4)
    result = compare(qrels, runs, ["nDCG@10", "P@2"], resamples=200)
    for row in result.differences:
        diffs = result.scores[row.metric][row.system] - result.scores[row.metric]["base"]
        assert row.detectable == detectable_difference(diffs, comparisons=4, correction="holm")
        assert row.to_dict()["detectable"] == row.detectable
    first = [d for d in result.differences if d.metric == "nDCG@10"]
    assert [note for note in result.notes if "detectable" in note] == [
        f"{d.system} vs base: with {n} queries a difference of {d.detectable:.3f} nDCG@10 is "
        "detectable at 80% power (paired t-test, alpha 0.05 / 4 comparisons)"
        for d in first
    ]
