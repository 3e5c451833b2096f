"""`rankmeter power QRELS BASE NEW`: is the query set big enough to tell the two apart?"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    QrelsArgument,
    RelOption,
    RunFormatOption,
    Ties,
    TiesOption,
    keep_inputs,
)


class PowerFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


class PowerTest(str, Enum):
    t = "t"
    randomization = "randomization"


class Correction(str, Enum):
    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"


def power(
    qrels: QrelsArgument,
    base: Annotated[str, typer.Argument(help="The baseline's run file.")],
    new: Annotated[str, typer.Argument(help="The new system's run file.")],
    metric: MetricOption = None,
    alpha: Annotated[float, typer.Option(help="Significance level (family-wise).")] = 0.05,
    target: Annotated[float, typer.Option("--power", help="Target power, e.g. 0.8 for 80%.")] = 0.8,
    correction: Annotated[
        Correction,
        typer.Option(
            help="Correction over the metrics, as compare's: each test then runs at alpha / "
            "the number of metrics (exact for bonferroni, conservative for holm and bh)."
        ),
    ] = Correction.holm,
    test: Annotated[
        PowerTest,
        typer.Option(
            help="t: the paired t-test, analytic. randomization: compare's default test, "
            "simulated (slower; see --simulations)."
        ),
    ] = PowerTest.t,
    effect: Annotated[
        float | None,
        typer.Option(
            help="Plan for this true difference (metric units) instead of the observed mean."
        ),
    ] = None,
    sd: Annotated[
        float | None,
        typer.Option(help="Spread of the per-query differences, instead of the observed one."),
    ] = None,
    simulations: Annotated[
        int, typer.Option(help="Simulated query sets (randomization test).")
    ] = 1_000,
    resamples: Annotated[
        int, typer.Option(help="Sign flips per simulated randomization test.")
    ] = 1_000,
    seed: Annotated[int, typer.Option(help="Seed of the simulation: same seed, same numbers.")] = 0,
    rel: RelOption = 1,
    judged_only: JudgedOnlyOption = False,
    ties: TiesOption = Ties.trec_eval,
    run_format: RunFormatOption = None,
    output_format: Annotated[
        PowerFormat, typer.Option("--format", "-f", help="Output format.")
    ] = PowerFormat.table,
    output: OutputOption = None,
) -> None:
    """Power and sample size: the power at the current number of queries, the queries needed
    for the target power, and the smallest difference detectable now.

    Default metrics: nDCG@10 P@10 R@100 RR AP (compare's). The queries are every judged query;
    a run without results for one scores 0 on it (trec_eval -c).
    """
    keep_inputs(output, {"QRELS": qrels, "BASE": base, "NEW": new})
    from rankmeter.cli._runs import read_runs
    from rankmeter.comparison import compare_power
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_qrels
    from rankmeter.report import power as report
    from rankmeter.report import render

    if [qrels, base, new].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    loaded_qrels = read_qrels(qrels)
    named = read_runs([base, new], format=run_format.value if run_format else None, ties=ties.value)
    result = compare_power(
        loaded_qrels, named, metric, alpha=alpha, power=target, correction=correction.value,
        test=test.value, effect=effect, sd=sd, simulations=simulations, resamples=resamples,
        seed=seed, rel=rel, judged_only=judged_only, ties=ties.value,
    )  # fmt: skip
    who = {"baseline": result.baseline, "system": result.system}
    report_ = report.PowerReport(result.analyses, **who, notes=list(result.notes))
    render(report_, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(power)
