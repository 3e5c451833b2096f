"""The one parameter validator: what it accepts, returns and how it words a refusal."""

from __future__ import annotations

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
