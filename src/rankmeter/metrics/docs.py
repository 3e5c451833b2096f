"""Metric documentation derived from the specs (CLI help, docs, report labels): the data;
:mod:`rankmeter.report.metrics` renders it."""

from __future__ import annotations

import dataclasses
from typing import Any

from rankmeter.metrics._registry import SPECS
from rankmeter.metrics._spec import WorkedExample


@dataclasses.dataclass(frozen=True)
class MetricCatalogue:
    """Every metric family documented (``rankmeter metrics``): the rows of
    :func:`metric_rows`, in registry order; :func:`rankmeter.report.render` shows it as
    ``table``, ``markdown`` (docs/metrics.md) or ``json``."""

    rows: tuple[dict[str, Any], ...]


def metric_catalogue() -> MetricCatalogue:
    """The catalogue of every metric family, from the specs."""
    return MetricCatalogue(tuple(metric_rows()))


def metric_rows() -> list[dict[str, Any]]:
    """One plain dict per metric family, in registry order."""
    rows = []
    for spec in SPECS:
        usage = spec.name
        if spec.cutoff_kind == "recall level":
            usage += "@r"
        elif spec.cutoff == "required":
            usage += "@k"
        elif spec.cutoff == "optional":
            usage += "[@k]"
        at = ".r" if spec.cutoff_kind == "recall level" else ".k"
        trec = [n + (at if takes else "") for n, takes in spec.trec_names]
        rows.append(
            {
                "name": spec.name,
                "usage": usage,
                "aliases": list(spec.aliases),
                "trec_names": trec,
                "params": [
                    {
                        "name": p.name,
                        "default": p.default,
                        "choices": list(p.choices),
                        "description": p.description,
                    }
                    for p in spec.params
                ],
                "aggregate": spec.aggregate,
                "better": spec.better,
                "description": spec.description,
                "formula": spec.formula,
                "reference": spec.reference,
                "edge_cases": list(spec.edge_cases),
                "example": None if spec.example is None else _example(spec.example),
            }
        )
    return rows


def _example(example: WorkedExample) -> dict[str, Any]:
    return {
        "judgments": dict(example.judgments),
        "ranking": list(example.ranking),
        "metric": example.metric,
        "value": example.value,
        "working": example.working,
    }
