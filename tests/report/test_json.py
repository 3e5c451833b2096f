"""Strict JSON everywhere: no NaN or Infinity, through one helper (rankmeter.report._json)."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.report import comparison as comparison_report
from rankmeter.report import evaluation as evaluation_report
from rankmeter.report._json import finite_or_null, json_text

SRC = Path(rankmeter.__file__).resolve().parent


def strict(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity, as RFC 8259 and jq do."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


#: Modules that call json.dumps for something other than output, and why.
NOT_OUTPUT = {
    # A JSONL log's value whose JSON type differs from its column's (a number among texts) is
    # spelled back as JSON text, to be named in the error message that reports it.
    "io/logs.py": "spells an input value back as text",
    # A Spark task hands a reader's error to the driver as one tab-separated string; the text
    # of the bad line travels in it as JSON, to be shown in the driver's error message.
    "engines/spark.py": "passes an error's text from a task to the driver",
    # A stored leaderboard value that is not a finite number (NaN, a string, null) is spelled
    # as JSON in the one error line that refuses its file.
    "vector/leaderboard.py": "spells a stored value back as text",
    # A line read is encoded (never written) to find a lone surrogate in it: the reader's error.
    "io/_json.py": "encodes a value read to find a lone surrogate, writing nothing",
}


def test_every_json_writer_goes_through_the_helper() -> None:
    # json.dumps / json.dump anywhere else could write a bare NaN again.
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "report" / "_json.py" or str(path.relative_to(SRC)) in NOT_OUTPUT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = (
                isinstance(node, ast.Attribute)
                and node.attr in ("dump", "dumps")
                and isinstance(node.value, ast.Name)
                and node.value.id == "json"
            )
            imported = (
                isinstance(node, ast.ImportFrom)
                and node.module == "json"
                and any(alias.name in ("dump", "dumps") for alias in node.names)
            )
            if called or imported:
                offenders.append(f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}")
    assert offenders == []


def test_non_finite_numbers_are_null_at_any_depth() -> None:
    payload = {
        "a": float("nan"),
        "b": [1.0, float("inf"), (float("-inf"), 2)],
        "c": {"d": np.float64("nan"), "e": np.float32(0.5), "f": np.int64(3), "g": np.nan},
        "h": "NaN",
    }
    text = json_text(payload)
    assert strict(text) == {
        "a": None,
        "b": [1.0, None, [None, 2]],
        "c": {"d": None, "e": 0.5, "f": 3, "g": None},
        "h": "NaN",
    }
    assert text.endswith("}\n")
    assert finite_or_null(1.5) == 1.5 and finite_or_null(True) is True


def test_evaluate_json_never_holds_a_bare_nan() -> None:
    result = rankmeter.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["AP", "P@1"])
    broken = dataclasses.replace(result, metrics={"AP": math.nan, "P@1": math.inf})
    payload = strict(evaluation_report.render_json([broken], per_query=False, single=True))
    queries = evaluation_report.queries_phrase(False)
    assert payload == {"metrics": {"AP": None, "P@1": None}, "queries": queries}
    several = strict(evaluation_report.render_json([broken, result], per_query=True, single=False))
    assert several[0]["metrics"]["AP"] is None and several[1]["metrics"]["AP"] == 1.0


def test_compare_json_writes_what_cannot_be_computed_as_null() -> None:
    result = rankmeter.compare(
        {"a": {"x": 1}}, {"A": {"a": {"x": 1.0}}, "B": {"a": {"n": 2.0, "x": 1.0}}}, ["RR"]
    )
    payload = strict(comparison_report.render_json(result, per_query=True))
    (difference,) = payload["differences"]
    assert difference["p_value"] is None and difference["effect_size"] is None
    assert difference["losses"] == 1


def test_a_value_json_cannot_write_is_an_error_not_a_bare_token() -> None:
    with pytest.raises(TypeError):
        json_text({"x": object()})
