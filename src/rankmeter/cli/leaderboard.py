"""`rankmeter leaderboard RESULTS_DIR`: the models x datasets table of stored results."""

from __future__ import annotations

import os
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, keep_inputs
from rankmeter.report import visible


class LeaderboardFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    html = "html"
    json = "json"


def leaderboard(
    results_dir: Annotated[
        str,
        typer.Argument(
            help="The folder that rankmeter embed-eval --results-dir filled.", show_default=False
        ),
    ],
    metric: Annotated[
        str, typer.Option("--main-score", help="The metric the models are ranked on.")
    ] = "nDCG@10",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    resamples: Annotated[
        int,
        typer.Option(
            help="Bootstrap resamples of each dataset's queries for the rank intervals (100 "
            "or more)."
        ),
    ] = 1_000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap: the same seed gives the same intervals.")
    ] = 0,
    level: Annotated[
        float, typer.Option(help="Confidence level of the rank intervals (0.95: 2.5-97.5%).")
    ] = 0.95,
    output_format: Annotated[
        LeaderboardFormat, typer.Option("--format", "-f", help="Output format.")
    ] = LeaderboardFormat.table,
    output: OutputOption = None,
) -> None:
    """Rank the models stored in a results folder: models x datasets on the main score
    (nDCG@10), mean rank, and on each dataset which models are significantly worse than its
    best (paired randomization test on the stored per-query values, Holm correction).

    Each model's rank gets a 95% interval (rank 95% CI, e.g. 1-3) from a paired bootstrap of
    each dataset's queries, and models whose intervals overlap that of their group's first
    model share its group: ranks in one group cannot be told apart."""
    keep_inputs(output, {"RESULTS_DIR": results_dir})
    from rankmeter.report import render
    from rankmeter.vector.leaderboard import read_leaderboard

    _refuse_output_inside(output, results_dir)
    board = read_leaderboard(
        results_dir, metric=metric, alpha=alpha, resamples=resamples, seed=seed, level=level
    )
    render(board, output_format.value, output)


def _refuse_output_inside(output: str | None, results_dir: str) -> None:
    """An -o in the results folder is refused: the board written there is not a stored result,
    so the next `leaderboard` of the folder would refuse it. It is not skipped instead: every
    file in a results folder is checked, so that a damaged or foreign result is named, never
    silently left out of the ranking."""
    if output is None or output == "-":
        return
    folder = os.path.realpath(results_dir)
    if os.path.dirname(os.path.realpath(output)) == folder:
        raise typer.BadParameter(
            f"{visible(output)} is inside the results folder {visible(results_dir)}, which "
            "holds only stored results (the next leaderboard would refuse the folder); write "
            "the board elsewhere",
            param_hint="'--output' / '-o'",
        )


def register(app: typer.Typer) -> None:
    app.command("leaderboard", no_args_is_help=True)(leaderboard)
