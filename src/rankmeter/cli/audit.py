"""`rankmeter audit-labels --human Q --model Q [RUN ...]`: can the model's labels stand in for
the humans'? Agreement, leniency and, given runs, whether the systems' order and significant
differences survive the swap."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import MetricOption, OutputOption, RelOption, keep_inputs


class AuditFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def audit_labels(
    human: Annotated[
        str, typer.Option("--human", help="The human labels: qrels (TREC, CSV/TSV, JSONL).")
    ],
    model: Annotated[
        str, typer.Option("--model", help="The model's labels: qrels, e.g. from rankmeter label.")
    ],
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Two runs or more: their order and significant differences under each label "
            "set (optional)."
        ),
    ] = None,
    metric: MetricOption = None,
    rel: RelOption = 1,
    scale: Annotated[
        str | None,
        typer.Option(help="The grades both label sets may use, e.g. 0-3: off it is an error."),
    ] = None,
    test: Annotated[
        str, typer.Option(help="Paired test: randomization, t, bootstrap, wilcoxon, sign.")
    ] = "randomization",
    correction: Annotated[
        str, typer.Option(help="Over every pair and metric: holm, bonferroni, bh, none.")
    ] = "holm",
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    resamples: Annotated[int, typer.Option(help="Randomizations / bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same numbers.")] = 0,
    output_format: Annotated[
        AuditFormat, typer.Option("--format", "-f", help="Output format.")
    ] = AuditFormat.table,
    output: OutputOption = None,
) -> None:
    """Check model labels against human ones: agreement and leniency on the items both label,
    and with runs each metric's system order under both label sets (Kendall's tau, the pairs
    that flip) and the significant differences that appear or vanish."""
    keep_inputs(output, {"--human": human, "--model": model, "RUNS": runs})
    from rankmeter.cli._runs import read_runs
    from rankmeter.errors import PolicyError
    from rankmeter.judgments import audit_labels as audit
    from rankmeter.report import render

    if [human, model, *(runs or [])].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    result = audit(
        human,
        model,
        read_runs(runs) if runs else None,
        metrics=metric or None,
        rel=rel,
        alpha=alpha,
        seed=seed,
        test=test,
        correction=correction,
        resamples=resamples,
        scale=scale,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command("audit-labels", no_args_is_help=True)(audit_labels)
