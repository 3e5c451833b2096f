"""Fixtures for the comparison tests: the generated collection and one comparison of it."""

from __future__ import annotations

import pytest

import rankmeter
from rankmeter import compare

from ._helpers import METRICS, collection


@pytest.fixture(scope="package")
def data() -> tuple[dict, dict[str, dict]]:
    return collection()


@pytest.fixture(scope="package")
def result(data: tuple[dict, dict[str, dict]]) -> rankmeter.Comparison:
    qrels, runs = data
    return compare(qrels, runs, METRICS, resamples=2000, seed=7)
