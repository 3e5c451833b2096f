"""Render a LogCheck (rankmeter.online): a terminal table (rich), Markdown and JSON.

Variant names, ids and file names come from the log: the tables show their control characters
as visible escapes, Markdown escapes what Markdown would read, JSON escapes as JSON does
(rankmeter._escape).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.online.logs import LogCheck, LogProblem
from rankmeter.online.simulated import LogCounts
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown

__all__ = ["problems_line", "render_json", "render_markdown", "render_table", "written_line"]

_COUNTS = ("users", "sessions", "requests", "impressions", "clicks")


@renders("rankmeter.online.LogCheck", "json")
def render_json(check: LogCheck) -> str:
    return json_text(check.to_dict())


def _headline(check: LogCheck) -> str:
    found = (
        "no problems"
        if check.ok
        else f"{len(check.problems)} problem{'s' if len(check.problems) > 1 else ''}"
    )
    variants = f"{len(check.variants)} variant{'' if len(check.variants) == 1 else 's'}"
    return f"{check.source}: {check.rows:,} rows, {variants}, {found} ({check.engine})"


def _count_rows(check: LogCheck) -> Iterator[list[str]]:
    for counts in check.variants:
        yield [counts.variant, *(f"{getattr(counts, name):,}" for name in _COUNTS)]


def _where(problem: LogProblem) -> str:
    return problem.file if problem.row is None else f"{problem.file}:{problem.row}"


def _problem_note() -> str:
    return (
        "each problem at its first offending row (CSV and JSONL: the file line; else the data row)"
    )


@renders("rankmeter.online.LogCheck", "table")
def render_table(check: LogCheck) -> Any:
    """A rich renderable: the headline, the counts per variant and the problems."""
    from rich.console import Group

    parts: list[Any] = [shown(_headline(check), "bold")]
    if check.variants:
        counts = FittedTable(title="per variant", title_justify="left")
        counts.add_column("variant", text=True, style="bold")
        for name in _COUNTS:
            counts.add_column(name, justify="right")
        for row in _count_rows(check):
            counts.add_row(shown(row[0]), *row[1:])
        parts.append(counts)
    if check.note:
        parts.append(shown(f"note: {check.note}", "yellow"))
    if check.problems:
        problems = FittedTable(title="problems", title_justify="left")
        problems.add_column("where", text=True)
        problems.add_column("what is wrong", text=True)
        for problem in check.problems:
            problems.add_row(shown(_where(problem)), shown(problem.message))
        parts.append(problems)
        parts.append(shown(_problem_note(), "dim"))
    return Group(*parts)


@renders("rankmeter.online.LogCheck", "markdown")
def render_markdown(check: LogCheck) -> str:
    """The same tables as Markdown (every name from the log escaped)."""
    lines = [f"**{markdown_text(_headline(check))}**", ""]
    if check.variants:
        right: list[Align] = ["right"] * len(_COUNTS)
        align: list[Align] = [None, *right]
        lines += markdown_table(["variant", *_COUNTS], _count_rows(check), align)
    if check.note:
        lines += ["", "Note: " + markdown_text(check.note)]
    if check.problems:
        lines += ["", "Problems, " + markdown_text(_problem_note()) + ":", ""]
        lines += markdown_table(
            ["where", "what is wrong"],
            ([_where(p), p.message] for p in check.problems),
            [None, None],
        )
    return "\n".join(lines) + "\n"


def problems_line(log: str, result: LogCheck) -> str:
    """The line ``rankmeter logs check`` ends with when the log has problems (not escaped):
    how many, and the first."""
    count = len(result.problems)
    return (
        f"rankmeter: {log}: {count} problem{'s' if count > 1 else ''} in the log "
        f"(the first: {result.problems[0]})"
    )


def written_line(path: str, counts: LogCounts) -> str:
    """One line for a log written to ``path`` (``rankmeter logs simulate``): its counts."""
    return (
        f"{path}: {counts.impressions:,} impressions, {counts.requests:,} requests, "
        f"{counts.users:,} users, {counts.clicks:,} clicks"
    )
