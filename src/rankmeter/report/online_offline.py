"""Render an OnlineOffline (rankmeter.online.offline): a terminal table (rich), Markdown and
strict JSON. Variant and metric names come from the user and the log: tables show control
characters as visible escapes, Markdown escapes what Markdown would read, JSON as JSON does.
"""

from __future__ import annotations

import math
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.online import AB_METRICS
from rankmeter.online.offline import AGREEMENTS, OnlineOffline, Side
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._text import num, signed

__all__ = ["render_json", "render_markdown", "render_table"]

SIDE_HEADER = ["side", "metric", "n", "control", "treatment", "Δ", "CI", "p (corr.)", "verdict"]
AGREEMENT_HEADER = ["offline metric", "online metric", "offline", "online", "agreement"]


@renders("rankmeter.online.OnlineOffline", "json")
def render_json(result: OnlineOffline) -> str:
    """The comparison as strict JSON (``OnlineOffline.to_dict``; ``warnings`` first)."""
    return json_text(result.to_dict())


def _digits(side: Side) -> int:
    """The decimals of an online metric's declaration (4 for an offline metric)."""
    declared = AB_METRICS.get(side.metric)
    return 4 if declared is None else declared.digits


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _units(side: Side) -> str:
    return f"{side.n:,} {'queries' if side.source == 'offline' else 'users'}"


def side_rows(result: OnlineOffline) -> list[list[str]]:
    rows = []
    for side in (*result.offline, *result.online):
        d = _digits(side)
        rows.append(
            [
                side.source,
                side.metric,
                _units(side),
                num(side.control, d),
                num(side.treatment, d),
                signed(side.difference, d),
                f"[{signed(side.low, d)}, {signed(side.high, d)}]",
                _p(side.p_corrected),
                side.direction,
            ]
        )
    return rows


def agreement_rows(result: OnlineOffline) -> list[list[str]]:
    return [
        [a.offline_metric, a.online_metric, a.offline_direction, a.online_direction, a.verdict]
        for a in result.agreements
    ]


def headline(result: OnlineOffline) -> str:
    return f"{result.treatment} against {result.control}: {result.summary}"


def settings_line(result: OnlineOffline) -> str:
    cuped = (
        "; CUPED with the pre-period: the online means, differences, intervals and p-values "
        "are CUPED-adjusted, as rankmeter ab shows them beside the raw means"
        if result.cuped
        else ""
    )
    return (
        f"alpha {result.alpha:g}; offline: {result.offline_test} test over "
        f"{result.queries:,} queries, {result.offline_correction} across the offline metrics; "
        f"online: delta method over {result.users:,} users (tea-tasting{cuped}), "
        f"{result.online_correction} across the online metrics; better/worse in each "
        "metric's own direction (lower is better for "
        f"{', '.join(m.name for m in AB_METRICS.values() if not m.higher_is_better)})"
    )


def _legend() -> str:
    return "; ".join(f"{name}: {meaning}" for name, meaning in AGREEMENTS.items())


_SIDE_ALIGN: list[Align] = [None, None, "right", "right", "right", "right", "right", "right", None]


@renders("rankmeter.online.OnlineOffline", "markdown")
def render_markdown(result: OnlineOffline) -> str:
    """Warnings first, then the two tables (names escaped) and the settings."""
    lines: list[str] = [f"> **Warning:** {markdown_text(w)}" for w in result.warnings]
    if lines:
        lines.append("")
    lines += [f"**Offline vs online: {markdown_text(headline(result))}**", ""]
    lines += markdown_table(SIDE_HEADER, side_rows(result), _SIDE_ALIGN)
    lines += ["", "Agreement with the primary offline metric:", ""]
    lines += markdown_table(AGREEMENT_HEADER, agreement_rows(result), [None] * 5)
    lines += ["", f"- {markdown_text(settings_line(result))}", f"- {markdown_text(_legend())}"]
    return "\n".join(lines) + "\n"


@renders("rankmeter.online.OnlineOffline", "table")
def render_table(result: OnlineOffline) -> Any:
    """A rich renderable: the warning (if any), the headline, both tables, the settings."""
    from rich.console import Group

    from rankmeter.report._rich import FittedTable, shown

    parts: list[Any] = [shown(f"WARNING: {w}", "bold red") for w in result.warnings]
    parts.append(shown(f"Offline vs online: {headline(result)}", "bold"))

    def table(title: str, header: list[str], rows: list[list[str]], text: set[int]) -> Any:
        out = FittedTable(title=title, title_justify="left")
        for i, h in enumerate(header):
            out.add_column(h, text=i in text, justify="left" if i in text else "right")
        for row in rows:
            style = "bold red" if row[-1] in {"worse", "disagree"} else None
            out.add_row(*(shown(cell) for cell in row), style=style)
        return out

    parts.append(table("differences (treatment − control)", SIDE_HEADER, side_rows(result),
                       {0, 1, 8}))  # fmt: skip
    parts.append(table("agreement with the primary offline metric", AGREEMENT_HEADER,
                       agreement_rows(result), {0, 1, 2, 3, 4}))  # fmt: skip
    parts.append(shown(settings_line(result), "dim"))
    parts.append(shown(_legend(), "dim"))
    return Group(*parts)
