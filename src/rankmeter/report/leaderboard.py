"""Renderings of a leaderboard (:class:`rankmeter.vector.leaderboard.Leaderboard`): models x
datasets on the main score with each model's mean rank, as a terminal table, Markdown (through
the one table writer), strict JSON and a self-contained HTML page (``leaderboard.html.j2`` in
the shell every page shares). A score significantly worse than its dataset's best carries a
mark (``▼``); the best score on each dataset is marked too (``*``). Each model's rank interval
(``rank 95% CI``, e.g. ``1-3``) and group follow its mean rank; a model without one shows
``-`` and a line under the table says why."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from rankmeter.report._registry import renders

if TYPE_CHECKING:
    from pathlib import Path

    from rankmeter.vector.benchmark import EmbedBenchmark
    from rankmeter.vector.leaderboard import Leaderboard, LeaderboardEntry

__all__ = [
    "BEST_MARK",
    "WORSE_MARK",
    "leaderboard_table",
    "render_entry",
    "render_html",
    "render_json",
    "render_markdown",
    "render_table",
    "save_entry",
    "store_benchmark",
]

TEMPLATE = "leaderboard.html.j2"
#: The best score on a dataset.
BEST_MARK = "*"
#: A score significantly worse than the dataset's best.
WORSE_MARK = "▼"


def leaderboard_table(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """The table as text: one row per model (best mean rank first): the model, its mean rank,
    its rank interval and group (``-``: none), its score on each dataset (``-``: not run
    there) with the marks."""
    ranks = board.ranks
    header = ["model", "mean rank"]
    if ranks is not None:
        header += [ranks.header, "group"]
    header += board.datasets
    body = []
    for model in board.models:
        row = [model, f"{board.mean_rank[model]:.2f}"]
        if ranks is not None:
            group = ranks.group.get(model)
            row += [ranks.shown(model), "-" if group is None else str(group)]
        for dataset in board.datasets:
            score = board.scores.get((model, dataset))
            if score is None:
                row.append("-")
                continue
            mark = ""
            if score == board.scores[board.best[dataset], dataset]:  # the best, or tied with it
                mark = f" {BEST_MARK}"
            else:
                tested = board.significance.get((model, dataset))
                if tested is not None and tested.worse:
                    mark = f" {WORSE_MARK}"
            row.append(f"{score:.4f}{mark}")
        body.append(row)
    return header, body


def legend(board: Leaderboard) -> str:
    """What the marks mean and how the table was made (the rank intervals' rule included)."""
    text = (
        f"Marks: {BEST_MARK} best on the dataset (ties: each); {WORSE_MARK} significantly worse than the "
        f"dataset's best. {board.rule()}"
    )
    if board.ranks is not None:
        text += f" {board.ranks.rule()}"
    return text


def notes(board: Leaderboard) -> tuple[str, ...]:
    """One line per model shown without a rank interval, saying why."""
    return () if board.ranks is None else board.ranks.notes()


def render_entry(entry: LeaderboardEntry) -> str:
    """A stored result as strict JSON (``LeaderboardEntry.to_dict``)."""
    from rankmeter.report._json import json_text

    return json_text(entry.to_dict())


def save_entry(entry: LeaderboardEntry, results_dir: str | os.PathLike[str]) -> Path:
    """Write ``entry`` into ``results_dir`` atomically, at
    :func:`rankmeter.vector.leaderboard.entry_path`; return the path."""
    from rankmeter.io import atomic_write
    from rankmeter.vector.leaderboard import entry_path

    path = entry_path(entry, results_dir)
    with atomic_write(path) as handle:
        handle.write(render_entry(entry))
    return path


def store_benchmark(
    bench: EmbedBenchmark, results_dir: str | os.PathLike[str], *, quiet: bool = False
) -> list[Path]:
    """Each result of a benchmark into ``results_dir`` (:func:`save_entry`, atomically), and
    unless ``quiet`` a line on stderr saying how many went where; return the paths."""
    import sys

    paths = [save_entry(entry, results_dir) for entry in bench.entries()]
    if not quiet:
        noun = "result" if len(paths) == 1 else "results"
        print(f"stored {len(paths)} {noun} in {os.fspath(results_dir)}", file=sys.stderr)
    return paths


@renders("rankmeter.vector.Leaderboard", "json")
def render_json(board: Leaderboard) -> str:
    """The leaderboard as strict JSON (``Leaderboard.to_dict``)."""
    from rankmeter.report._json import json_text

    return json_text(board.to_dict())


@renders("rankmeter.vector.Leaderboard", "markdown")
def render_markdown(board: Leaderboard) -> str:
    """A Markdown section: a title, the table, the legend."""
    from rankmeter._escape import markdown_text
    from rankmeter.report._markdown import markdown_table

    header, body = leaderboard_table(board)
    lines = [f"## Leaderboard: {board.metric}", ""]
    lines += markdown_table(header, body, [None] + ["right"] * (len(header) - 1))
    lines += ["", markdown_text(legend(board)), ""]
    for line in notes(board):
        lines += [markdown_text(line), ""]
    return "\n".join(lines)


@renders("rankmeter.vector.Leaderboard", "table")
def render_table(board: Leaderboard) -> Any:
    """The table for a terminal (fitted to its width) with the legend under it."""
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report._rich import FittedTable, shown

    header, body = leaderboard_table(board)
    table = FittedTable()
    for i, head in enumerate(header):
        table.add_column(shown(head), text=i == 0, justify="left" if i == 0 else "right")
    for cells in body:
        table.add_row(shown(cells[0]), *cells[1:])
    title = shown(f"Leaderboard: {board.metric}", style="table.title")
    below = [shown(line) for line in notes(board)]
    return Group(title, table, Text(legend(board), style="dim"), *below)


@renders("rankmeter.vector.Leaderboard", "html")
def render_html(board: Leaderboard) -> str:
    """One self-contained page: the table and the legend; every value escaped."""
    from rankmeter.report._html import render

    header, body = leaderboard_table(board)
    return render(
        TEMPLATE,
        title=f"rankmeter: leaderboard on {board.metric}",
        metric=board.metric,
        header=header,
        rows=body,
        legend=legend(board),
        notes=notes(board),
    )
