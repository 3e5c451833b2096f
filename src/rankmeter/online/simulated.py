"""An experiment's logs simulated as ``rankmeter logs simulate`` makes them: an A/B log (or an
interleaving log) of a control and a treatment, and its pre-period, with the split and the
segment effects given as typed by hand (``50,50``, ``new=0.6,returning=1.1``), written to
their files (:func:`simulate_log_files`); and the counts a written log is summed up by."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankmeter.errors import PolicyError

__all__ = [
    "LogCounts",
    "RecruitingExperiment",
    "SimulatedLogs",
    "log_counts",
    "read_factors",
    "recruiting_experiment",
    "simulate_log_files",
    "simulate_logs",
]


def read_factors(text: str, option: str, names: list[str]) -> dict[str, float]:
    """``70,30`` (one value per name of ``names``, in order) or ``new=0.6,returning=1.1``
    (NAME=FACTOR items) as a dict; ``option`` names the list in errors.

    >>> read_factors("70,30", "--split", ["control", "treatment"])
    {'control': 70.0, 'treatment': 30.0}
    >>> read_factors("new=0.6", "--segment-effect", [])
    {'new': 0.6}
    """
    values: dict[str, float] = {}
    items = [item.strip() for item in text.split(",")]
    for position, item in enumerate(items):
        name, _, number = item.rpartition("=") if "=" in item else ("", "", item)
        if not name:
            if not names:
                raise PolicyError(
                    f"{option} {text!r}: give NAME=FACTOR items, e.g. new=0.6,returning=1.1"
                )
            if len(items) != len(names):
                raise PolicyError(
                    f"{option} {text!r} gives {len(items)} values for {len(names)}: "
                    f"give one per {', '.join(names)}, in order"
                )
            name = names[position]
        try:
            values[name] = float(number)
        except ValueError:
            raise PolicyError(f"{option} {text!r}: {number!r} is not a number") from None
    return values


@dataclass(frozen=True)
class SimulatedLogs:
    """The experiment's log (an Arrow table, one row per impression) and, if asked for, its
    pre-period log (the same users before the experiment, shown the control; for CUPED)."""

    log: Any
    pre: Any = None


def simulate_logs(
    qrels: Any,
    control: Any,
    treatment: Any,
    *,
    users: int = 1000,
    sessions_per_user: float = 3.0,
    seed: int = 0,
    click_model: str = "pbm",
    eta: float = 1.0,
    cutoff: int = 10,
    split: str | Mapping[str, float] | None = None,
    segment_effects: str | Mapping[str, float] | None = None,
    interleave: str | None = None,
    pre_period: bool = False,
) -> SimulatedLogs:
    """Simulate an experiment of ``treatment`` against ``control`` (runs, or anything
    :func:`rankmeter.io.as_run` reads; ``qrels`` anything :func:`rankmeter.io.as_qrels`
    reads, each read once) with :func:`rankmeter.online.simulate_log`.

    ``split`` (``"50,50"``: control first) and ``segment_effects`` (``"new=0.6"``) may be
    given as typed; an A/B split that gives one variant no users is refused. ``interleave``
    (``"team-draft"``, ``"balanced"``): an interleaving log of A (the control) and B instead.
    ``pre_period``: also the pre-period log, with the same settings.
    """
    from rankmeter.io import as_qrels, as_run
    from rankmeter.online.simulate import simulate_log

    variants = ["control", "treatment"]
    given_split = read_factors(split, "--split", variants) if isinstance(split, str) else split
    if given_split is not None and interleave is None:
        empty = [v for v in variants if given_split.get(v, 1.0) == 0]
        if empty and len(empty) < len(variants):
            raise PolicyError(
                f"--split {split!r} gives {' and '.join(empty)} no users: an A/B log needs "
                "users in both variants (rankmeter ab refuses a one-variant log)"
            )
    effects = (
        read_factors(segment_effects, "--segment-effect", [])
        if isinstance(segment_effects, str)
        else segment_effects
    )
    judged = as_qrels(qrels)
    names = ("A", "B") if interleave is not None else ("control", "treatment")
    runs = {names[0]: as_run(control), names[1]: as_run(treatment)}
    settings: dict[str, Any] = dict(
        users=users,
        sessions_per_user=sessions_per_user,
        seed=seed,
        click_model=click_model,
        eta=eta,
        cutoff=cutoff,
        split=given_split,
        segment_effects=effects,
    )
    if interleave is not None:
        settings["interleave"] = interleave
    log = simulate_log(judged, runs, **settings)
    pre = simulate_log(judged, runs, pre_period=True, **settings) if pre_period else None
    return SimulatedLogs(log, pre)


def simulate_log_files(
    qrels: Any,
    control: Any,
    treatment: Any,
    output: str | os.PathLike[str],
    *,
    pre_period: str | os.PathLike[str] | None = None,
    **settings: Any,
) -> list[tuple[str, LogCounts]]:
    """:func:`simulate_logs` written as ``rankmeter logs simulate`` writes them: the log to
    ``output`` and, with ``pre_period``, the pre-period log there, each in the format its name
    says (:func:`rankmeter.online.write_log`; both names checked before any work, so that no
    log is written in another format than its name says, the two never one file, and neither
    one of the input files).
    ``settings``: those of
    :func:`simulate_logs`. Returns each path written with its log's counts, in order.
    """
    from rankmeter.io import check_outputs
    from rankmeter.online.logs import log_format, write_log

    log_format(output)
    outputs: list[tuple[str, str | os.PathLike[str]]] = [("output", output)]
    if pre_period is not None:
        log_format(pre_period)
        outputs.append(("pre_period", pre_period))
    check_outputs(outputs, {"qrels": qrels, "control": control, "treatment": treatment})
    simulated = simulate_logs(
        qrels, control, treatment, pre_period=pre_period is not None, **settings
    )
    write_log(simulated.log, output)
    written = [(os.fspath(output), log_counts(simulated.log))]
    if simulated.pre is not None and pre_period is not None:
        write_log(simulated.pre, pre_period)
        written.append((os.fspath(pre_period), log_counts(simulated.pre)))
    return written


@dataclass(frozen=True)
class LogCounts:
    """How big a log is: impressions (rows), requests, users and clicks."""

    impressions: int
    requests: int
    users: int
    clicks: int


def log_counts(log: Any) -> LogCounts:
    """The counts of a log held as an Arrow table (:func:`simulate_logs`' logs)."""
    import pyarrow.compute as pc

    users = len(pc.unique(log["user_id"]))
    requests = len(pc.unique(log["request_id"]))
    clicks = pc.sum(log["clicked"].cast("int64")).as_py() or 0
    return LogCounts(log.num_rows, requests, users, clicks)


@dataclass(frozen=True)
class RecruitingExperiment:
    """A simulated A/B test of the shipped recruiting collection's two systems (``rankmeter
    demo online``): the collection, the simulated log's check, the A/B analysis (segmented by
    new users, CUPED on the pre-period) and offline against online."""

    collection: Any
    check: Any
    result: Any
    side_by_side: Any
    new_users_factor: float


def recruiting_experiment(
    *,
    users: int = 4000,
    seed: int = 1,
    new_users_factor: float = 0.6,
    metrics: Sequence[str] = ("ctr", "abandonment", "success"),
) -> RecruitingExperiment:
    """Simulate an A/B test of the recruiting collection's two systems (the first, the older
    keyword ranker, is the control) in which the treatment makes new users click
    ``new_users_factor`` times as often, and analyse it: the log checked, ``metrics`` by
    variant and by ``is_new_user`` with the pre-period as covariate, and nDCG@10 and RR
    offline beside them."""
    from dataclasses import replace

    from rankmeter.datasets import recruiting
    from rankmeter.online.abtest import ab
    from rankmeter.online.logs import check_log
    from rankmeter.online.offline import online_vs_offline
    from rankmeter.online.simulate import simulate_log

    collection = recruiting()
    qrels = collection.load_qrels()
    runs = collection.load_runs()  # the first is the control: the older, keyword ranker
    (control, control_run), (_, treatment_run) = runs.items()
    effects = {"new": new_users_factor}
    log = simulate_log(qrels, runs, users=users, seed=seed, segment_effects=effects)
    pre = simulate_log(
        qrels, runs, users=users, seed=seed, segment_effects=effects, pre_period=True
    )
    check = replace(check_log(log), source="simulated log")
    result = ab(log, control=control, metrics=metrics, segments=["is_new_user"], pre=pre)
    side_by_side = online_vs_offline(
        qrels, control_run, treatment_run, log, metrics=["nDCG@10", "RR"],
        online_metrics=metrics, control=control, pre=pre,
    )  # fmt: skip
    return RecruitingExperiment(collection, check, result, side_by_side, new_users_factor)
