"""Helpers shared by commands: the options they share (declared once each, so that names,
short forms and help never drift apart); writing output and consoles are
:mod:`rankmeter.report`'s (:func:`emit`, :func:`render_rich`), re-exported here."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from rankmeter.errors import MetricError
from rankmeter.metrics.goals import GOAL_NAMES
from rankmeter.report import emit, render_rich

__all__ = ["emit", "render_rich"]


class Ties(str, Enum):
    trec_eval = "trec_eval"
    input = "input"


class Engine(str, Enum):
    """Where a search log is read and aggregated (rankmeter.engines)."""

    duckdb = "duckdb"
    spark = "spark"


EngineOption = Annotated[
    Engine,
    typer.Option(
        help="Where the log is read and aggregated: duckdb (embedded) or spark (local[2])."
    ),
]


class EvalEngine(str, Enum):
    """Where evaluate and compare compute the per-query values (the fast start of evaluate
    reads them as EVAL_ENGINES: a test keeps the two equal)."""

    process = "process"
    spark = "spark"


EvalEngineOption = Annotated[
    EvalEngine,
    typer.Option(
        "--engine",
        help="Where the per-query values are computed: process (here, default) or spark "
        "(the same kernels on Spark, per bucket of queries; needs the [spark] extra and Java "
        "17; Spark reads TREC text or Parquet). The numbers are the same.",
    ),
]
SparkMasterOption = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        metavar="URL",
        help="With --engine spark: the master, e.g. local[4], spark://host:7077, yarn "
        "(default local[2]).",
    ),
]
SparkConfOption = Annotated[
    list[str] | None,
    typer.Option(
        "--spark-conf",
        metavar="KEY=VALUE",
        help="With --engine spark, repeatable: a Spark setting, e.g. "
        "spark.sql.shuffle.partitions=64.",
    ),
]


ExperimentOption = Annotated[
    str | None,
    typer.Option(
        help="The experiment_id to analyse (required when the log holds several; the "
        "pre-period's rows are chosen by it too where it has experiment ids)."
    ),
]


class TsUnit(str, Enum):
    """The unit of epoch numbers in a log's event_ts (rankmeter.online.read_log's ts_unit)."""

    s = "s"
    ms = "ms"
    us = "us"
    ns = "ns"


# How a search log is read: every command that reads its timestamps (logs check, ab,
# online-vs-offline, clicks fit|labels; interleave reads only the credit's columns) takes these
# two, passed to read_log as ts_unit= and ordered=.
TsUnitOption = Annotated[
    TsUnit,
    typer.Option(
        "--ts-unit",
        help="The unit of event_ts given as epoch numbers (a numeric column, or numbers in "
        "CSV/JSONL): s, ms, us or ns since 1970. Timestamps and ISO 8601 text carry their own. "
        "A timestamp outside 1990-2100 is a problem of the log.",
    ),
]
UnorderedOption = Annotated[
    bool,
    typer.Option(
        "--unordered",
        help="The rows are not in time order within a session (an export from a warehouse or "
        "Spark): skip the check that event_ts never goes backwards within a session.",
    ),
]


class InputFormat(str, Enum):
    trec = "trec"
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    parquet = "parquet"


def _whole(value: float | None) -> float | None:
    """``--rel 2`` as the integer 2 (as the API's ``rel=2``), a fraction as it is."""
    return int(value) if value is not None and float(value).is_integer() else value


# Options and arguments shared by the commands: one declaration each. A command names its
# default metrics in its own help (they differ: evaluate's five, embed-eval's three).
QRELS_HELP = "Qrels file (TREC, CSV/TSV, JSONL, Parquet; .gz; - for stdin)."
QrelsArgument = Annotated[str, typer.Argument(help=QRELS_HELP)]
MetricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        "-m",
        help="Metric, repeatable: nDCG@10, P@10, R@100, RR, AP, nDCG(gain=exp)@10, P(rel=2)@5, "
        "trec_eval names (ndcg_cut.10, map). See `rankmeter metrics`.",
    ),
]
GOAL_HELP = (
    f"The metrics that answer a goal, and why: {', '.join(GOAL_NAMES)} (finding everything "
    "relevant; a good first page; one right answer; the pool a reranker reads; estimates from "
    "a judged sample of the pool; no query failed badly; every meaning of an ambiguous query, "
    "on subtopic qrels). evaluate and "
    "compare add them after any -m metrics; metrics lists them."
)
GoalOption = Annotated[str | None, typer.Option("--goal", metavar="GOAL", help=GOAL_HELP)]
PoolOption = Annotated[
    str | None,
    typer.Option(
        "--pool",
        metavar="POOL.jsonl",
        help="The pool file `rankmeter pool` wrote, where the judgments are a sample of it: "
        "statAP, stat_nDCG and stat_P weigh each judged item by 1 / its "
        "inclusion_probability (a judgment not in the file has probability 1).",
    ),
]
PerQueryOption = Annotated[
    bool,
    typer.Option(
        "--per-query",
        "-q",
        help="Also give every query's values (as trec_eval -q).",
    ),
]
RelOption = Annotated[
    float,
    typer.Option(
        "--rel", "-l", callback=_whole, help="Minimum grade counted relevant (trec_eval -l)."
    ),
]
JudgedOnlyOption = Annotated[
    bool,
    typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J)."),
]
# Which queries the means average over: one flag, one name, on every command that takes it
# (evaluate, compare); each keeps its own default (evaluate: answered, as trec_eval; compare:
# every judged query), and every output says which set it used.
IncludeMissingOption = Annotated[
    bool,
    typer.Option(
        "--include-missing/--answered-only",
        "-c",
        help="Which queries the means average over: every judged query, a run's missing one "
        "scoring 0 (trec_eval -c); or only the judged queries answered (evaluate: by the run, "
        "as trec_eval; compare: by some compared run). Every output says which.",
    ),
]
TiesOption = Annotated[
    Ties,
    typer.Option(help="Order of equal scores: trec_eval (doc id descending) or input order."),
]


def check_output(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    """The callback of every option that names a file to write (``-o``, ``--run-out``,
    ``--report``): the command's outputs so far are checked as the final writes will check them
    (:func:`rankmeter.io.check_outputs`), while the options are parsed, so before any input is
    read. ``-`` is standard output."""
    if value is None or value == "-":
        return value
    from rankmeter.io import check_outputs

    outputs: list[tuple[str, str]] = ctx.meta.setdefault("rankmeter.outputs", [])
    outputs.append((max(param.opts, key=len), value))
    check_outputs(outputs)
    return value


def given_once(ctx: typer.Context, param: typer.CallbackParam, values: Any) -> Any:
    """The callback of a list option that takes one value (``diff -m``, where other commands
    take several ``-m``): a second value is refused, not silently dropped for the last."""
    if values is not None and len(values) > 1:
        raise typer.BadParameter(
            f"takes one value, given {len(values)}: {', '.join(map(repr, values))}; give it once"
        )
    return values


def keep_inputs(
    output: str | None,
    inputs: dict[str, str | list[str] | None],
    *,
    more: dict[str, str | None] | None = None,
) -> None:
    """Refuse, before any work, an output naming one of the command's inputs (``{what: path,
    run arguments or None}``; a run's ``NAME=PATH`` is its path, a folder its BEIR files): the
    output would replace what was read, so a run file would be lost. ``output`` is the
    command's ``-o``, ``more`` its other files written by option (``{"--run-out": path}``).
    A :class:`PolicyError` naming both, from :func:`rankmeter.io.check_outputs`; every command
    that writes a file calls it first (``tests/cli/test_cli_outputs.py`` walks the app)."""
    from rankmeter.io import check_outputs

    named = [("-o", output), *(more or {}).items()]
    check_outputs([(n, p) for n, p in named if p is not None and p not in ("", "-")], inputs)


def check_optional_output(
    ctx: typer.Context, param: typer.CallbackParam, value: str | None
) -> str | None:
    """:func:`check_output` for an option where ``''`` means no file at all."""
    return value if value == "" else check_output(ctx, param, value)


OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this file (atomically) instead of stdout.",
        callback=check_output,
    ),
]
QrelsFormatOption = Annotated[
    InputFormat | None, typer.Option(help="Qrels format, when the file name does not tell.")
]
JudgedBelowOption = Annotated[
    float,
    typer.Option(
        "--judged-below",
        help="Warn about a run whose Judged@k (k: the largest cutoff of the metrics, else 10) "
        "is below this: its unjudged documents count as not relevant. 0: never warn.",
    ),
]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet",
        help="No progress bar (it appears on a terminal's stderr after 2 s of work) and no "
        "warning on stderr.",
    ),
]
RunFormatOption = Annotated[
    InputFormat | None, typer.Option(help="Run format, when the file name does not tell.")
]


class GoalCommand(TyperCommand):
    """A command with a ``--goal`` option: ``--goal`` without a value lists the valid goals."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _one_goal(args)
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            # Typer vendors click, so its "Option '--goal' requires an argument" is matched by
            # the option it names; the main entry point turns MetricError into exit 2.
            if getattr(exc, "option_name", None) == "--goal":
                raise MetricError(
                    f"--goal needs a value; choose one of {', '.join(GOAL_NAMES)}"
                ) from None
            raise


def _one_goal(args: list[str]) -> None:
    """Refuse ``--goal`` given more than once: Click would keep the last one and drop the
    others without a word."""
    goals: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--goal":
            goals.append(args[i + 1] if i + 1 < len(args) else "")
        elif arg.startswith("--goal="):
            goals.append(arg.partition("=")[2])
    if len(goals) > 1:
        raise MetricError(
            f"--goal given {len(goals)} times ({', '.join(goals)}): give one goal, and add "
            "any other metrics with -m"
        )
