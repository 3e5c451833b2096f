"""The one parameter validator: what it accepts, returns and how it words a refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter import _validate as v
from rankmeter.errors import MetricError, PolicyError


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        (3, {}, 3),
        (np.int64(7), {"low": 1}, 7),
        (1, {"low": 1, "high": 1}, 1),
        (-5, {"high": 0}, -5),
    ],
)
def test_integer_accepts_and_returns_a_plain_int(value: Any, kwargs: Any, expected: int) -> None:
    got = v.integer("k", value, **kwargs)
    assert got == expected and type(got) is int


@pytest.mark.parametrize(
    ("value", "kwargs", "message"),
    [
        (True, {}, "k=True must be an integer"),
        (2.0, {"low": 1}, "k=2.0 must be an integer >= 1"),
        ("3", {"low": 1}, "k='3' must be an integer >= 1"),
        (0, {"low": 1}, "k=0 must be an integer >= 1"),
        (11, {"high": 10}, "k=11 must be an integer <= 10"),
        (
            20_000_001,
            {"low": 1, "high": 20_000_000},
            "k=20000001 must be an integer from 1 to 20,000,000",
        ),
        # Issue 22: past int64, NumPy overflowed ("Python int too large to convert to C long").
        pytest.param(2**63, {"low": 1}, "k=9223372036854775808 must be an integer from 1 to 9,223,372,036,854,775,807", id="int64-max-plus-1"),
        pytest.param(10**5000, {"low": 0}, "k=<an integer of about 5000 digits> must be an integer from 0 to 9,223,372,036,854,775,807", id="5001-digits"),
    ],
)  # fmt: skip
def test_integer_refusals_name_the_value_and_the_range(
    value: Any, kwargs: Any, message: str
) -> None:
    with pytest.raises(PolicyError, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        v.integer("k", value, **kwargs)


@pytest.mark.parametrize(
    ("value", "kwargs", "message"),
    [
        (float("nan"), {}, "x=nan must be a finite number"),
        (float("inf"), {"low": 0}, "x=inf must be a finite number >= 0"),
        (float("-inf"), {"low": 0, "high": 1}, "x=-inf must be a finite number from 0 to 1"),
        (False, {}, "x=False must be a finite number"),
        (0, {"low": 0, "open_low": True}, "x=0 must be a number > 0"),
        (1, {"low": 0, "high": 1, "open_high": True}, "x=1 must be a number >= 0 and < 1"),
        (2.5, {"low": 0, "high": 1}, "x=2.5 must be a number from 0 to 1"),
        (-0.5, {"high": -1.5}, "x=-0.5 must be a number <= -1.5"),
    ],
)
def test_real_refusals(value: Any, kwargs: Any, message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        v.real("x", value, **kwargs)
    assert str(caught.value) == message


def test_real_returns_a_plain_float_and_what_explains() -> None:
    assert type(v.real("x", np.float32(0.5), low=0, high=1)) is float
    assert v.real("x", 1, low=0, high=1) == 1.0
    with pytest.raises(
        PolicyError, match=r"^alpha=0 must be a number strictly between 0 and 1 \(the level\)$"
    ):
        v.real("alpha", 0, low=0, high=1, open_low=True, open_high=True, what="the level")


def test_boolean_and_choice() -> None:
    assert v.boolean("b", True) is True
    with pytest.raises(PolicyError, match=r"^b=0 must be True or False$"):
        v.boolean("b", 0)
    assert v.choice("c", "x", ["x", "y"]) == "x"
    with pytest.raises(PolicyError, match=r"^c=None must be one of 'x', 'y'$"):
        v.choice("c", None, ["x", "y"])


def test_the_error_class_can_be_chosen() -> None:
    with pytest.raises(MetricError, match=r"^p=1.5 must be a number from 0 to 1$"):
        v.real("p", 1.5, low=0, high=1, error=MetricError)


def test_identifier_takes_strings_and_integers() -> None:
    assert v.identifier("query", "q1") == "q1"
    assert v.identifier("query", np.int64(7)) == "7"
    for bad in (None, True, 1.5, b"q1"):
        with pytest.raises(PolicyError, match=r"^query=.* must be a string or an integer$"):
            v.identifier("query", bad)


# -- the shared parameters: one check, one wording, wherever they enter the library ------------

_QRELS = {"q1": {"a": 1}, "q2": {"a": 1}}
_RUNS = {"x": {"q1": {"a": 1.0}}, "y": {"q2": {"a": 1.0}}, "z": {"q2": {"a": 1.0}}}


def _alpha_entries() -> list[Any]:
    from rankmeter import compare, stats
    from rankmeter.judgments import audit_labels
    from rankmeter.online import ab, interleaving_test
    from rankmeter.vector.leaderboard import leaderboard_of

    return [
        lambda a: stats.correct([0.1], alpha=a),
        lambda a: stats.all_pairs([[0.1, 0.2, 0.3]] * 3, alpha=a),
        lambda a: stats.power(effect=0.1, sd=0.1, n=20, alpha=a),
        lambda a: compare(_QRELS, _RUNS, ["P@1"], alpha=a),
        lambda a: audit_labels(_QRELS, _QRELS, alpha=a),
        lambda a: ab([], alpha=a),
        lambda a: interleaving_test([], alpha=a),
        lambda a: leaderboard_of([], alpha=a),
    ]


def _seed_entries() -> list[Any]:
    from rankmeter import compare, stats
    from rankmeter.clicks import simulate
    from rankmeter.judgments import agreement, pool
    from rankmeter.online import simulate_log

    return [
        lambda s: stats.paired_pvalues([0.1, 0.2], seed=s),
        lambda s: stats.bootstrap_intervals([0.1, 0.2], seed=s),
        lambda s: compare(_QRELS, _RUNS, ["P@1"], seed=s),
        lambda s: pool(_RUNS, depth=1, seed=s),
        lambda s: agreement([], seed=s),
        lambda s: simulate_log(_QRELS, {"a": _RUNS["x"], "b": _RUNS["y"]}, seed=s),
        lambda s: simulate(_QRELS, _RUNS["x"], seed=s),
    ]


def test_alpha_has_one_check_and_one_wording_everywhere() -> None:
    """Issue 23: alpha was checked in eight places with three wordings (some without what it
    is); every entry point now gives v.alpha's message, before any work."""
    for value, shown in ((1.5, "1.5"), (0, "0"), (True, "True")):
        expected = (
            f"alpha={shown} must be a number strictly between 0 and 1 (the significance level)"
        )
        with pytest.raises(PolicyError) as caught:
            v.alpha(value)
        assert str(caught.value) == expected
        for call in _alpha_entries():
            with pytest.raises(PolicyError) as caught:
                call(value)
            assert str(caught.value) == expected
    assert v.alpha(0.05) == 0.05
    with pytest.raises(PolicyError, match=r"^srm_alpha=1 must be a number strictly between"):
        v.alpha(1, name="srm_alpha")


def test_seed_has_one_check_and_one_wording_everywhere(tmp_path: Path) -> None:
    expected = "seed=-1 must be an integer >= 0 (the seed of the random number generator)"
    for call in [*_seed_entries(), v.seed]:
        with pytest.raises(PolicyError) as caught:
            call(-1)
        assert str(caught.value) == expected
    from rankmeter.judgments.app.store import Item, Store

    with pytest.raises(PolicyError) as caught:  # the rating app's database, made with a seed
        Store.create(tmp_path / "j.sqlite", [Item("q", "d", "q", "", "d")], ["ann"], seed=-1)
    assert str(caught.value) == expected
    assert list(tmp_path.iterdir()) == []
    assert v.seed(np.int64(7)) == 7 and type(v.seed(np.int64(7))) is int
    with pytest.raises(PolicyError, match=r"^seed=9223372036854775808 must be an integer from 0"):
        v.seed(2**63)


def test_level_and_resamples() -> None:
    from rankmeter import compare, stats

    expected = "level=95 must be a number strictly between 0 and 1 (e.g. 0.95 for 95%)"
    for call in (
        v.level,
        lambda x: stats.bootstrap_intervals([0.1, 0.2], level=x),
        lambda x: stats.paired_test([[0.1, 0.2]], level=x),
        lambda x: compare(_QRELS, _RUNS, ["P@1"], level=x),
    ):
        with pytest.raises(PolicyError) as caught:
            call(95)
        assert str(caught.value) == expected
    with pytest.raises(PolicyError, match=r"^confidence=1 must be a number strictly between"):
        v.level(1, name="confidence")
    assert v.resamples(20, low=20, what="x") == 20
    with pytest.raises(PolicyError) as caught:
        v.resamples(19, low=20, what="permutations")
    assert (
        str(caught.value) == "resamples=19 must be an integer from 20 to 10,000,000 (permutations)"
    )
    with pytest.raises(PolicyError) as caught:
        v.resamples(1_000_001, high=1_000_000, what="draws")  # a lower cap: no cost told
    assert str(caught.value) == "resamples=1000001 must be an integer from 1 to 1,000,000 (draws)"
    with pytest.raises(PolicyError) as caught:
        v.resamples(v.MAX_RESAMPLES + 1, what="draws")  # past the most anything draws: the cost
    assert str(caught.value).startswith(
        "resamples=10000001 must be an integer from 1 to 10,000,000 (draws): bootstrap intervals "
        "keep every resample (76 MiB per system and metric at this count)"
    )
    with pytest.raises(PolicyError) as caught:  # the caller's default, no p-value, none kept
        v.resamples(v.MAX_RESAMPLES + 1, what="draws", default=1_000, p_values=False, kept=False)
    assert str(caught.value) == (
        "resamples=10000001 must be an integer from 1 to 10,000,000 (draws): the time grows with "
        "resamples times queries (about 1 s per million resamples and 100 queries); the default "
        "is 1,000"
    )
    with pytest.raises(PolicyError) as caught:  # p-values resolved to the caller's default
        v.resamples(v.MAX_RESAMPLES + 1, what="draws", default=1_000)
    assert str(caught.value).endswith("; 1,000 (the default) already resolves p-values to 0.001")
    with pytest.raises(PolicyError, match=r"^resamples=<an integer of about \d+ digits> must be"):
        v.resamples(10**400, what="draws")
    assert stats.check_resamples is v.resamples and stats.MAX_RESAMPLES == v.MAX_RESAMPLES


def test_number_text_writes_a_number_as_a_person_writes_it() -> None:
    """One helper (issue 23) for what goals, compare's failures, metric names, _validate's
    messages and the TREC qrels writer each wrote themselves."""
    from rankmeter.data import Qrels
    from rankmeter.io import trec_qrels_lines

    cases = [(2.0, "2"), (0.5, "0.5"), (3, "3"), (np.float64(1.25), "1.25"), (-0.0, "0")]
    cases += [(1e-07, "1e-07"), (float("inf"), "inf"), (np.int64(4), "4")]
    for value, text in cases:
        assert v.number_text(value) == text
    lines = list(trec_qrels_lines(Qrels.from_dict({"q": {"a": 2.0, "b": 0.5}})))
    assert lines == ["q 0 a 2\n", "q 0 b 0.5\n"]


def test_too_many_resamples_are_told_what_each_caller_does() -> None:
    # issue 23's trial: the cost sentence told every caller compare's default and p-values
    from rankmeter import stats

    cost = "the time grows with resamples times queries (about 1 s per million resamples"
    with pytest.raises(PolicyError) as caught:  # an interval: no p-value
        stats.bootstrap_intervals([0.1, 0.2], resamples=v.MAX_RESAMPLES + 1)
    assert str(caught.value).endswith("100 queries); the default is 10,000")
    assert "bootstrap intervals keep every resample (76 MiB" in str(caught.value)
    with pytest.raises(PolicyError) as caught:  # compare's tests: its wording as it was
        stats.paired_pvalues([0.1, 0.2], resamples=v.MAX_RESAMPLES + 1)
    assert str(caught.value).endswith("; 10,000 (the default) already resolves p-values to 0.0001")
    with pytest.raises(PolicyError) as caught:  # stability: its default, no p-value, none kept
        stats.query_stability([[0.1, 0.2], [0.2, 0.1]], resamples=v.MAX_RESAMPLES + 1)
    assert str(caught.value).endswith(f"{cost} and 100 queries); the default is 1,000")
    assert "bootstrap intervals" not in str(caught.value)
