"""Metric documentation derived from the specs (CLI help, docs, report labels)."""

from __future__ import annotations

from typing import Any

from rankmeter.metrics._registry import SPECS


def metric_rows() -> list[dict[str, Any]]:
    """One plain dict per metric family, in registry order."""
    rows = []
    for spec in SPECS:
        usage = spec.name
        if spec.cutoff == "required":
            usage += "@k"
        elif spec.cutoff == "optional":
            usage += "[@k]"
        trec = [n + (".k" if takes else "") for n, takes in spec.trec_names]
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
                "description": spec.description,
                "formula": spec.formula,
                "reference": spec.reference,
            }
        )
    return rows


def render_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["# Metric reference", "", "Generated from the metric specs (`rankmeter metrics`).", ""]
    for row in rows:
        lines.append(f"## {row['usage']}")
        lines.append("")
        lines.append(row["description"])
        lines.append("")
        lines.append(f"- Formula: `{row['formula']}`")
        if row["aliases"]:
            lines.append(f"- Aliases: {', '.join(row['aliases'])}")
        if row["trec_names"]:
            lines.append(f"- trec_eval names: {', '.join(row['trec_names'])}")
        for p in row["params"]:
            lines.append(f"- Parameter `{p['name']}`: {p['description']}")
        lines.append(f"- Aggregated over queries as: {row['aggregate']}")
        if row["reference"]:
            lines.append(f"- Reference: {row['reference']}")
        lines.append("")
    return "\n".join(lines)
