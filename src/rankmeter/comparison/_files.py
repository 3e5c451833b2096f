"""Run files compared with a baseline, as ``rankmeter compare`` compares them:
:func:`compare_files`.

The runs are named as a command line names them (``PATH`` or ``NAME=PATH``,
:mod:`rankmeter.io.run_args`), read here with progress per run or evaluated on Spark
(:func:`rankmeter.engines.spark_for`, :func:`~rankmeter.comparison.spark_runs`), the
baseline given by name or by file, a goal's metrics compared and its notes given; then
:func:`~rankmeter.compare`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankmeter.comparison._compare import compare
from rankmeter.comparison._diff import RunDiff, diffs_against
from rankmeter.comparison._records import Comparison
from rankmeter.comparison._spark import spark_runs
from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    from rankmeter.engines import Stages
    from rankmeter.io.run_args import RunArgument
    from rankmeter.metrics import Goal


@dataclass(frozen=True)
class ComparedFiles:
    """What :func:`compare_files` made: the comparison and the goal's notes on the data.

    Attributes
    ----------
    comparison : the :class:`~rankmeter.comparison.Comparison`
    goal : the goal whose metrics were compared (None: none was given)
    goal_notes : the goal's notes on these qrels and runs
        (:func:`rankmeter.metrics.goals.goal_notes`), one line each; with or without a goal,
        the note that diversity metrics on qrels of one subtopic a query measure no diversity
        (:func:`rankmeter.metrics.subtopic_notes`); and the note that a corpus is ignored
        with an ``output_format`` that shows no diff pages
    diffs : with a corpus, each system beside the baseline
        (:class:`~rankmeter.comparison.RunDiff`, the baseline as A) on the first metric, in
        the order of the comparison's systems; the HTML report writes them beside itself and
        links its worst queries to them
    """

    comparison: Comparison
    goal: Goal | None = None
    goal_notes: tuple[str, ...] = ()
    diffs: tuple[RunDiff, ...] = ()


def compare_files(
    qrels: str | os.PathLike[str],
    runs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    metrics: Iterable[str] | None = None,
    *,
    goal: str | Goal | None = None,
    baseline: str | None = None,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
    cutoff: int = 10,
    qrels_format: str | None = None,
    run_format: str | None = None,
    engine: str = "process",
    spark: Any = None,
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | Iterable[str] | None = None,
    stages: Stages | None = None,
    command_line: bool = False,
    corpus: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    output_format: str | None = None,
    **options: Any,
) -> ComparedFiles:
    """Compare run files with a baseline, here or on Spark, as ``rankmeter compare`` does.

    Parameters
    ----------
    qrels : path of the qrels (``"-"``: stdin, with ``engine="process"``)
    runs : two or more runs as a command line names them: ``PATH`` or ``NAME=PATH``
        (:func:`rankmeter.io.run_arguments`); at most one input (qrels or run) is ``"-"``
    metrics : metric names (default nDCG@10, P@10, R@100, RR, AP; with ``goal``, its metrics
        are added)
    goal : a goal (or its name, :func:`rankmeter.metrics.goals.get_goal`): its metrics are
        compared, and its notes on these qrels and runs given
    baseline : the run every other is compared with, by its name or by its file (as given,
        or its path); default the first
    rel, judged_only, ties, cutoff : as :func:`~rankmeter.compare` takes them
    qrels_format, run_format : the files' formats (None: from the names)
    engine, spark, spark_master, spark_conf : where the per-query values are computed:
        ``"process"`` (the runs read here) or ``"spark"`` (no run read here), as
        :func:`rankmeter.engines.spark_for` takes them
    stages : progress (see :data:`rankmeter.engines.Stages`): a step for the qrels, one per
        run (one for all on Spark) and one for the comparison; None: none
    command_line : messages name the command line's options (``--baseline``, ``--engine
        spark``) instead of the parameters (``baseline=``, ``engine='spark'``)
    corpus : a BEIR corpus (``corpus.jsonl`` or its folder, or ``{doc_id: text}``): each
        system is also diffed against the baseline (:func:`~rankmeter.comparison.diff_runs`,
        ``diffs``), the shown documents read once for all; needs ``engine="process"``
    output_format : the format the result is to be rendered in (``rankmeter compare -f``),
        where known: the diffs are the side-by-side pages of the HTML report only
        (:data:`DIFF_PAGE_FORMATS`), so with another format the corpus is not read and a note
        (in ``goal_notes``) says it is ignored; None: the diffs are made
    options : every other setting of :func:`~rankmeter.compare` (``test``, ``correction``,
        ``alpha``, ``resamples``, ``seed``, ``segments``, ``worst``, ``inclusion`` (a pool
        file's path: ``--pool``), ...), passed to it

    Returns
    -------
    ComparedFiles
        The comparison, under the names the runs were given, and the goal's notes.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> qrels = os.path.join(folder, "qrels")
    >>> _ = open(qrels, "w").write("".join(f"q{i} 0 d1 1\\n" for i in range(20)))
    >>> for name, top in (("a.run", "d2"), ("b.run", "d1")):
    ...     _ = open(os.path.join(folder, name), "w").write(
    ...         "".join(f"q{i} Q0 {top} 1 2.0 x\\nq{i} Q0 d9 2 1.0 x\\n" for i in range(20)))
    >>> runs = [f"old={folder}/a.run", f"new={folder}/b.run"]
    >>> done = compare_files(qrels, runs, ["P@1"], baseline="new", resamples=1000)
    >>> done.comparison.systems, done.comparison.difference("old", "P@1").difference
    (('new', 'old'), -1.0)
    """
    from rankmeter.engines import no_stages, spark_for, spark_refusal
    from rankmeter.io import read_qrels, read_run, sampled_qrels
    from rankmeter.io.run_args import input_path, run_arguments, run_list, run_names
    from rankmeter.metrics import (
        DEFAULT_METRICS,
        parse_metrics,
        reads_subtopics,
        subtopic_notes,
    )
    from rankmeter.metrics.goals import get_goal, goal_notes

    qrels = input_path(qrels, "qrels")
    runs = run_list(runs)
    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if len(runs) < 2:
        raise PolicyError(
            f"compare needs two runs or more (a baseline and a system); got {len(runs)}"
        )
    chosen = get_goal(goal) if isinstance(goal, str) else goal
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    if metrics is not None and not isinstance(metrics, (str, Iterable)):
        raise PolicyError(
            f"metrics= must be a metric name or a list of them, got {type(metrics).__name__}"
        )
    asked = [metrics] if isinstance(metrics, str) else list(metrics or [])
    names = list(dict.fromkeys([*asked, *goal_metrics])) or list(DEFAULT_METRICS)
    arguments = run_arguments(runs)
    ignored = _corpus_ignored(corpus, output_format, command_line)
    if ignored:  # not read: a format without the diff pages would drop them
        corpus = None
    if engine == "spark":
        refused = spark_refusal(
            parse_metrics(names), options.get("inclusion"), command_line=command_line
        )
        if refused:
            raise PolicyError(refused)
    backend = spark_for(
        engine,
        inputs=[qrels, *(a.path for a in arguments)],
        qrels_format=qrels_format,
        run_format=run_format,
        spark=spark,
        spark_master=spark_master,
        spark_conf=spark_conf,
        command_line=command_line,
    )
    if corpus is not None and backend is not None:
        needs = (
            "--corpus needs --engine process" if command_line else "corpus= needs engine='process'"
        )
        raise PolicyError(
            f"{needs}: the diff pages show the runs' rankings, which are not read here on Spark"
        )
    policies: dict[str, Any] = {"rel": rel, "judged_only": judged_only, "ties": ties}
    with (stages or no_stages)(len(runs) + 2 + (corpus is not None)) as steps:
        steps.start(f"reading {qrels}")
        subtopics = reads_subtopics(names)
        # The pool is read once, here: compare and the diffs get the sampled qrels.
        inclusion = options.pop("inclusion", None)
        loaded_qrels = sampled_qrels(
            read_qrels(qrels, format=qrels_format, subtopics=subtopics), inclusion
        )
        named: dict[str, Any]
        if backend is None:
            loaded = []
            for argument in arguments:
                steps.start(f"reading {argument.path}")
                loaded.append(read_run(argument.path, format=run_format, ties=ties))
            given = run_names(arguments, [r.name for r in loaded])
            named = {
                n: r if r.name == n else r.renamed(n) for n, r in zip(given, loaded, strict=True)
            }
        else:
            steps.start(f"evaluating {len(arguments)} run(s) on Spark")
            named = spark_runs(
                backend,
                qrels,
                [a.path for a in arguments],
                names,
                cutoff=cutoff,
                names=lambda own: run_names(arguments, own),
                **policies,
            )
        base = None if baseline is None else _baseline(baseline, named, arguments, command_line)
        steps.start("comparing")
        result = compare(
            loaded_qrels, named, names, baseline=base, cutoff=cutoff, **policies, **options
        )
        diffs: tuple[RunDiff, ...] = ()
        if corpus is not None:
            steps.start("diffing the runs")
            diffs = diffs_against(
                loaded_qrels,
                named,
                result.baseline,
                [s for s in result.systems if s != result.baseline],
                metric=result.metrics[0],
                corpus=corpus,
                queries=options.get("queries"),
                rel=rel,
                ties=ties,
            )
    # (the pool's notes are the comparison's own)
    own = (*subtopic_notes(loaded_qrels, names), *ignored)
    if chosen is None:
        return ComparedFiles(result, None, own, diffs)
    depths = {n: result.depths[n] for n in named}
    measures = parse_metrics(names)
    notes = goal_notes(
        chosen, grades=loaded_qrels.grades, rel=rel, depths=depths, measures=measures
    )
    return ComparedFiles(result, chosen, (*notes, *own), diffs)


#: The formats whose report shows the diffs of ``compare_files(..., corpus=...)``: the HTML
#: report writes them as side-by-side pages beside itself.
DIFF_PAGE_FORMATS = ("html",)


def _corpus_ignored(corpus: Any, output_format: str | None, command_line: bool) -> tuple[str, ...]:
    """The note that ``corpus`` is ignored with ``output_format`` (none where it is used)."""
    if corpus is None or output_format is None or output_format in DIFF_PAGE_FORMATS:
        return ()
    if command_line:
        return (
            f"--corpus makes the side-by-side pages of -f html; ignored with -f {output_format}",
        )
    return (
        "corpus= makes the side-by-side pages of the HTML report; ignored with "
        f"output_format={output_format!r}",
    )


def _baseline(
    baseline: str, named: Mapping[str, Any], arguments: list[RunArgument], command_line: bool
) -> str:
    """The name of the run ``baseline`` names: a run's name, its argument or its path."""
    if baseline in named:
        return baseline
    for name, argument in zip(named, arguments, strict=True):
        if baseline in (argument.path, argument.text):
            return name
    given = f"--baseline {baseline!r}" if command_line else f"baseline={baseline!r}"
    raise PolicyError(f"{given} is neither a run name nor a run file; runs: {', '.join(named)}")
