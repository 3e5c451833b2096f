"""rankmeter: is your search any good, and did the change make it better?

Inputs (paths, DataFrames, Arrow tables, dicts) become :class:`Qrels` and :class:`Run` through
:func:`as_qrels` and :func:`as_run` (from :mod:`rankmeter.io`); every function here takes
them as they are.

>>> import rankmeter
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
>>> rankmeter.evaluate(qrels, run, ["P@2", "nDCG@3"]).metrics["P@2"]
0.5
"""

from __future__ import annotations

from rankmeter.errors import FormatError, MetricError, PolicyError, RankmeterError

# Not `from typing import TYPE_CHECKING`: importing typing is most of this module's start-up
# time, and the `rankmeter` command takes over Ctrl-C only once this module has run.
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = [
    "Comparison",
    "EvalResult",
    "EvalResults",
    "Explanation",
    "Explanations",
    "FormatError",
    "Metric",
    "MetricError",
    "PolicyError",
    "Qrels",
    "RankmeterError",
    "Run",
    "as_qrels",
    "as_run",
    "compare",
    "evaluate",
    "explain",
    "explain_grades",
    "parse_metric",
    "parse_metrics",
]

if TYPE_CHECKING:
    from typing import Any

    from rankmeter.comparison import Comparison, compare
    from rankmeter.data import Qrels, Run
    from rankmeter.evaluation import evaluate
    from rankmeter.explanation import Explanation, Explanations, explain, explain_grades
    from rankmeter.io import as_qrels, as_run
    from rankmeter.metrics import Metric, parse_metric, parse_metrics
    from rankmeter.results import EvalResult, EvalResults

# The front door stays light: NumPy and Arrow load on first use, not on `import rankmeter`.
_LAZY = {
    "Qrels": "rankmeter.data",
    "Run": "rankmeter.data",
    "as_qrels": "rankmeter.io",
    "as_run": "rankmeter.io",
    "evaluate": "rankmeter.evaluation",
    "explain": "rankmeter.explanation",
    "explain_grades": "rankmeter.explanation",
    "Explanation": "rankmeter.explanation",
    "Explanations": "rankmeter.explanation",
    "compare": "rankmeter.comparison",
    "Comparison": "rankmeter.comparison",
    "Metric": "rankmeter.metrics",
    "parse_metric": "rankmeter.metrics",
    "parse_metrics": "rankmeter.metrics",
    "EvalResult": "rankmeter.results",
    "EvalResults": "rankmeter.results",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
