"""The records: frozen, and JSON with every number."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import rankmeter
from rankmeter.report import comparison as report


def test_results_are_frozen(result: rankmeter.Comparison) -> None:
    with pytest.raises(AttributeError):
        result.systems = ()  # type: ignore[misc]
    with pytest.raises(ValueError):
        result.scores["AP"]["base"][0] = 1.0
    with pytest.raises(TypeError):
        result.scores["AP"]["base"] = np.zeros(3)  # type: ignore[index]


def test_json_has_every_number_with_its_interval(result: rankmeter.Comparison) -> None:
    payload = json.loads(report.render_json(result))
    assert payload["settings"]["seed"] == 7 and payload["settings"]["test"] == "randomization"
    first = payload["differences"][0]
    assert {"difference", "low", "high", "p_value", "p_corrected", "effect_size", "n"} <= set(first)
    assert len(payload["curves"]["nDCG"]["base"]) == 100
    per_query = json.loads(report.render_json(result, per_query=True))["per_query"]
    assert set(per_query["AP"]["base"]) == set(result.query_ids)


def test_the_records_import_without_the_statistics() -> None:
    # The renderers import the records; scipy (through rankmeter.stats) is loaded only when a
    # comparison is made.
    script = (
        "import sys\nfrom rankmeter.comparison import Comparison, Difference, Settings\n"
        "print(sorted(m for m in ('scipy', 'rankmeter.stats', 'pandas') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=120, check=True
    )
    assert done.stdout.decode().strip() == "[]"
