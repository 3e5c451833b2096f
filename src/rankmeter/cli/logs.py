"""`rankmeter logs check|simulate`: search logs.

``check`` reads a log and reports its per-variant counts and every problem of the log schema
(the first offending row of each, with file and row); it exits 1 when it found any.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    Engine,
    EngineOption,
    OutputOption,
    TsUnit,
    TsUnitOption,
    UnorderedOption,
    check_output,
    keep_inputs,
)

logs_app = typer.Typer(
    name="logs",
    help="Search logs: check one against the log schema; simulate one from a collection.",
    no_args_is_help=True,
)


class InterleaveMethod(str, Enum):
    team_draft = "team-draft"
    balanced = "balanced"


class LogsFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


LogArgument = Annotated[
    str,
    typer.Argument(
        help="The log: a .parquet, .csv or .jsonl file (one row per impression), or a folder "
        "of .parquet files."
    ),
]


@logs_app.command("check", no_args_is_help=True)
def check(
    log: LogArgument,
    output_format: Annotated[
        LogsFormat, typer.Option("--format", "-f", help="Output format.")
    ] = LogsFormat.table,
    engine: EngineOption = Engine.duckdb,
    ts_unit: TsUnitOption = TsUnit.s,
    unordered: UnorderedOption = False,
    output: OutputOption = None,
) -> None:
    """Check a search log against the log schema: per-variant counts (users, sessions,
    requests, impressions, clicks) and every problem, at its first offending row. Exit 1
    when a problem was found."""
    keep_inputs(output, {"LOG": log})
    from rankmeter.online import check_log
    from rankmeter.report import render, visible
    from rankmeter.report.logs import problems_line

    result = check_log(log, engine=engine.value, ts_unit=ts_unit.value, ordered=not unordered)
    render(result, output_format.value, output)
    if not result.ok:
        print(visible(problems_line(log, result)), file=sys.stderr)
        raise typer.Exit(1)


class ClickModel(str, Enum):
    pbm = "pbm"
    cascade = "cascade"


@logs_app.command("simulate", no_args_is_help=True)
def simulate(
    qrels: Annotated[str, typer.Argument(help="The judgments: their queries are what users ask.")],
    run_control: Annotated[str, typer.Argument(help="What the control variant shows (a run).")],
    run_treatment: Annotated[str, typer.Argument(help="What the treatment variant shows (a run).")],
    output: OutputOption = None,
    users: Annotated[int, typer.Option(help="Users (the randomisation unit).")] = 1000,
    sessions_per_user: Annotated[
        float, typer.Option(help="Mean sessions per user (at least one each).")
    ] = 3.0,
    seed: Annotated[int, typer.Option(help="The same seed gives the same log.")] = 0,
    click_model: Annotated[
        ClickModel, typer.Option(help="pbm (position-based) or cascade.")
    ] = ClickModel.pbm,
    eta: Annotated[
        float, typer.Option(help="Position bias: rank r is examined with probability 1/r^eta.")
    ] = 1.0,
    cutoff: Annotated[int, typer.Option(help="Results shown per request.")] = 10,
    split: Annotated[
        str | None,
        typer.Option(help="Share of users per variant, control first, e.g. 50,50 (default)."),
    ] = None,
    segment_effect: Annotated[
        str | None,
        typer.Option(
            help="The treatment's factor on the click probability by segment, e.g. "
            "new=0.6,returning=1.1 (segments: new, returning, mobile, desktop)."
        ),
    ] = None,
    pre_period: Annotated[
        str | None,
        typer.Option(
            "--pre-period",
            help="Also write the pre-period log (same users, before the experiment, control "
            "ranking; for CUPED) to this file (.parquet, .csv or .jsonl, as for -o).",
            callback=check_output,
        ),
    ] = None,
    interleave: Annotated[
        InterleaveMethod | None,
        typer.Option(
            help="An interleaving log instead of an A/B log: every request shows one list "
            "made from both runs (A: the first, B: the second), with interleave_team; for "
            "rankmeter interleave."
        ),
    ] = None,
) -> None:
    """Simulate a search log (one row per impression; -o names the file, and its suffix the
    format: .parquet, .csv or .jsonl) from qrels and two runs:
    users split between control and treatment, sessions, position-biased clicks, dwell,
    reformulations, latency, segments (device, is_new_user, query_freq). With --interleave,
    every request interleaves the two runs instead (team-draft or balanced)."""
    keep_inputs(
        output,
        {"QRELS": qrels, "RUN_CONTROL": run_control, "RUN_TREATMENT": run_treatment},
        more={"--pre-period": pre_period},
    )
    from rankmeter.errors import PolicyError
    from rankmeter.online import simulate_log_files
    from rankmeter.report import visible
    from rankmeter.report.logs import written_line

    if output is None or output == "-":
        raise PolicyError(
            "-o/--output names the log file to write: its suffix gives the format (.parquet, "
            ".csv or .jsonl)"
        )
    written = simulate_log_files(
        qrels, run_control, run_treatment, output, pre_period=pre_period, users=users,
        sessions_per_user=sessions_per_user, seed=seed, click_model=click_model.value, eta=eta,
        cutoff=cutoff, split=split, segment_effects=segment_effect,
        interleave=None if interleave is None else interleave.value,
    )  # fmt: skip
    for path, counts in written:
        print(visible(written_line(path, counts)))


def register(app: typer.Typer) -> None:
    app.add_typer(logs_app)
