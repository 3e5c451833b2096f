"""Render a DataCheck (:mod:`rankmeter.checking`): a terminal table (rich), Markdown, JSON, and
the one-line warnings that ``evaluate`` (and ``compare``) print on stderr.

Run names, query and doc ids and file names come from the data: the terminal shows their
control characters as visible escapes, Markdown escapes what Markdown would read, JSON escapes
as JSON does (rankmeter._escape). :func:`warning_line` gives a plain line (not escaped): the
caller escapes it for where it is written (``rankmeter.report.visible`` for a terminal).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rankmeter._escape import markdown_text
from rankmeter.checking import (
    DataCheck,
    DataWarning,
    DepthGap,
    Duplicates,
    Overlap,
    RunCheck,
    ScoreOrder,
)
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown

__all__ = [
    "failed_line",
    "fusion_depth_line",
    "render_json",
    "render_markdown",
    "render_table",
    "warning_line",
    "warning_lines",
]


@renders("rankmeter.checking.DataCheck", "json")
def render_json(result: DataCheck) -> str:
    """The check as strict JSON (its ``to_dict()``)."""
    return json_text(result.to_dict())


def _ids(examples: Iterable[str], total: int) -> str:
    listed = [repr(e) for e in examples]
    more = total - len(listed)
    return ", ".join(listed) + (f", ... ({more} more)" if more > 0 else "")


def _plural(n: int, word: str) -> str:
    many = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n:,} {word if n == 1 else many}"


def _overlap_text(o: Overlap) -> str:
    parts = [f"{o.common:,} of {o.judged:,} judged queries have results"]
    if o.judged_without_results:
        parts.append(
            f"{_plural(o.judged_without_results, 'judged query')} without results "
            f"({_ids(o.judged_without_results_examples, o.judged_without_results)})"
        )
    if o.results_without_judgments:
        parts.append(
            f"{_plural(o.results_without_judgments, 'result query')} without judgments "
            f"({_ids(o.results_without_judgments_examples, o.results_without_judgments)})"
        )
    return "; ".join(parts)


def _order_text(order: ScoreOrder) -> str:
    return (
        f"the score rises with the rank in {order.rising:,} of {order.queries:,} queries "
        f"(ranks read from the {order.by})"
    )


def _duplicates_text(d: Duplicates) -> str:
    shown_pairs = ", ".join(f"query {q!r} doc {doc!r} x{n}" for q, doc, n in d.examples)
    more = d.pairs - len(d.examples)
    extra = f", ... ({more} more)" if more > 0 else ""
    return (
        f"{_plural(d.lines, 'repeated line')} ({_plural(d.pairs, 'pair')} written more than "
        f"once: {shown_pairs}{extra})"
    )


def warning_line(warning: DataWarning) -> str:
    """One plain line (not escaped) for a finding; ``error:`` for a fatal one.

    >>> from rankmeter.checking import data_warnings
    >>> [w] = data_warnings({"q1": {"a": 1}}, {"q2": {"a": 1.0}})
    >>> print(warning_line(w))
    error: run 'run' (<dict>) has no query in common with the qrels: 0 of 1 judged queries have results; 1 judged query without results ('q1'); 1 result query without judgments ('q2'); check that the files belong together (ids from another scheme?)
    """
    what = "error" if warning.fatal else "warning"
    if warning.kind == "depth":
        return f"{what}: {_depth_text(warning.detail)}"
    if warning.kind == "no_relevant":
        rel = _grade(warning.detail.rel)
        return (
            f"{what}: the qrels ({warning.source}) judge no document relevant (no grade of "
            f"{rel} or more; a negative grade is pooled but not judged, as in trec_eval): every "
            "metric of every run is 0, so nothing can be learned from them; give qrels with "
            "relevant judgments (or a lower --rel)"
        )
    if warning.kind == "relevant_only":
        k = warning.k
        rel = _grade(warning.detail.rel)
        return (
            f"{what}: the qrels ({warning.source}) hold only relevant documents (no grade "
            f"from 0 to below {rel}: none is judged not relevant): every unjudged document is assumed not "
            f"relevant, so Judged@{k} measures precision (the share of the top {k} that "
            "is relevant), not how much of a run is judged, and the numbers hold only as far as the qrels list every relevant "
            "document"
        )
    run = f"run '{warning.run}' ({warning.source})"
    detail = warning.detail
    if warning.kind == "no_overlap":
        scored = "; it scores 0 on every judged query" if warning.missing_scored else ""
        text = (
            f"has no query in common with the qrels: {_overlap_text(detail)}{scored}; check "
            "that the files belong together (ids from another scheme?)"
        )
    elif warning.kind == "partial_overlap":
        scope = (
            "judged queries without results score 0, result queries without judgments are left out"
            if warning.missing_scored
            else "only the queries in both are evaluated (-c scores judged queries without "
            "results as 0)"
        )
        text = f"matches the qrels' queries only in part: {_overlap_text(detail)}; {scope}"
    elif warning.kind == "score_order":
        if detail.rank_fractions:
            why = "the rank and score columns look swapped (the rank column holds fractions)"
        elif detail.by == "written order":
            # Read from a pipe (or given as rows): its rank column was not read, so a run
            # only written bottom-up looks the same; negating its scores would break it.
            why = (
                "lower scores seem to mean better (distances? negate them), unless the run is "
                "only written bottom-up (rank 1 last): look at its rank column, or give it as "
                "a file, whose rank column rankmeter reads"
            )
        else:
            why = "lower scores seem to mean better (distances?): negate them"
        text = (
            f"ranks upside down: {_order_text(detail)}, and rankmeter ranks by score "
            f"descending; {why}"
        )
    elif warning.kind == "duplicates":
        text = f"repeats results: {_duplicates_text(detail)}; the readers refuse such a run"
    elif warning.kind == "ties":
        moves = "; ".join(
            f"{r.metric} {r.value:.4f} could be {r.worst:.4f} to {r.best:.4f}" for r in detail.luck
        )
        text = (
            f"has ties in {detail.share:.0%} of its top {detail.k} positions: {moves} "
            "depending on how ties are broken; break them in the run (distinct scores)"
        )
    else:  # judged
        text = (
            f"has Judged@{warning.k} = {detail:.2f}: {1 - detail:.0%} of its top {warning.k} is "
            "unjudged and counts as not relevant"
        )
    return f"{what}: {run} {text}"


def _grade(value: float) -> str:
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"


def _depth_text(gap: DepthGap) -> str:
    """Runs cut at different depths: each run's depth, the metrics asked for that read past
    the shallowest (or, with none asked for, which ones would), and what to do."""
    listed = ", ".join(f"'{run}' {depth:,}" for run, depth in gap.depths)
    shallow = f"{gap.shallow:,}"
    deeper = "run" if sum(depth > gap.shallow for _, depth in gap.depths) == 1 else "runs"
    one = len(gap.metrics) == 1
    if gap.metrics:
        metrics = f"{', '.join(gap.metrics)} {'reads' if one else 'read'}"
    else:
        metrics = (
            f"AP, R-Prec, Bpref, R, nDCG and RR without a cutoff, and P@k, R@k or nDCG@k with "
            f"k above {shallow}, read"
        )
    return (
        f"runs differ in depth (the most results a query has): {listed}; {metrics} past rank "
        f"{shallow}, where a shallower run's missing results count as not relevant, so "
        f"{'it favours' if one else 'they favour'} the deeper {deeper}; retrieve as deep for every run (e.g. -k {gap.deep:,}), "
        f"or compare cutoffs of {shallow} or less"
    )


def fusion_depth_line(gap: DepthGap) -> str:
    """The warning of ``rankmeter fuse`` about runs of different depths (not escaped).

    >>> from rankmeter.results import depth_gap
    >>> print(fusion_depth_line(depth_gap({"dense": 100, "bm25": 1000})))
    warning: fusing runs of different depths (the most results a query has, up to --depth): 'dense' 100, 'bm25' 1,000; past rank 100 only 'bm25' contributes, so a document there ranks as if 'dense' had rejected it; fuse runs of one depth (retrieve each as deep), or give --depth 100
    """
    listed = ", ".join(f"'{run}' {depth:,}" for run, depth in gap.depths)
    deeper = [f"'{run}'" for run, depth in gap.depths if depth > gap.shallow]
    shallower = [f"'{run}'" for run, depth in gap.depths if depth == gap.shallow]
    return (
        f"warning: fusing runs of different depths (the most results a query has, up to "
        f"--depth): {listed}; past rank {gap.shallow:,} only {', '.join(deeper)} "
        f"{'contributes' if len(deeper) == 1 else 'contribute'}, so a document there ranks as "
        f"if {' and '.join(shallower)} had rejected it; fuse runs of one depth (retrieve each "
        f"as deep), or give --depth {gap.shallow}"
    )


def warning_lines(warnings: Iterable[DataWarning]) -> list[str]:
    """One plain line per finding (not escaped)."""
    return [warning_line(w) for w in warnings]


def failed_line(result: DataCheck) -> str:
    """The line ``rankmeter check`` ends with when a run's numbers would be meaningless (not
    escaped): how many fatal findings, whose numbers they ruin, and the first."""
    fatal = [w for w in result.warnings if w.fatal]
    runs_hit = sorted({w.run for w in fatal})
    whose = (
        "every run"  # a finding on the qrels (no relevant judgment)
        if "" in runs_hit
        else ", ".join(repr(r) for r in runs_hit)
    )
    return (
        f"rankmeter: check failed: {len(fatal)} "
        f"{'errors make' if len(fatal) > 1 else 'error makes'} the numbers of {whose} meaningless "
        f"(the first: {fatal[0].kind.replace('_', ' ')} in {fatal[0].source})"
    )


def _headline(result: DataCheck) -> str:
    fatal = sum(w.fatal for w in result.warnings)
    warned = len(result.warnings) - fatal
    verdict = "numbers can be trusted" if result.ok else "numbers are meaningless"
    if result.qrels.no_relevant:
        verdict += ": the qrels judge no document relevant"
    elif result.ok and result.qrels.relevant_only:
        verdict += " as far as qrels of relevant documents only go (see the warning)"
    some = not result.ok and not result.qrels.no_relevant and len(result.runs) > 1
    return (
        f"{_plural(len(result.runs), 'run')} against {result.qrels.source}: "
        f"{_plural(fatal, 'error')}, {_plural(warned, 'warning')} ({verdict}"
        f"{' for some runs' if some else ''})"
    )


_RUN_HEADER = ["run", "queries", "common", "rows", "duplicates", "score order", "tied@k"]


def _run_row(run: RunCheck) -> list[str]:
    o = run.overlap
    order = (
        "n/a"
        if run.order is None
        else ("rises" if run.order.reversed else "falls")
        + f" ({run.order.rising}/{run.order.queries})"
    )
    return [
        run.name,
        f"{o.with_results:,}",
        f"{o.common:,}/{o.judged:,}",
        f"{run.rows:,}",
        f"{run.duplicates.lines:,}",
        order,
        "n/a" if run.ties is None else f"{run.ties.share:.0%}",
    ]


def _judged_header(result: DataCheck) -> str:
    return f"Judged@{result.k}"


def _metric_rows(result: DataCheck) -> Iterator[list[str]]:
    for run in result.runs:
        judged = "n/a" if run.judged is None else f"{run.judged:.4f}"
        if run.ties is None or not run.ties.ranges:
            yield [run.name, "", "", "", "", "", judged]
            continue
        for r in run.ties.ranges:
            yield [
                run.name,
                r.metric,
                f"{r.value:.4f}",
                f"{r.worst:.4f}",
                f"{r.best:.4f}",
                f"{r.spread:.4f}",
                judged,
            ]


def _metric_header(result: DataCheck) -> list[str]:
    return [
        "run",
        "metric",
        "as ranked",
        "worst ties",
        "best ties",
        "spread",
        _judged_header(result),
    ]


def _grades_header() -> list[str]:
    return ["grade", "judgments"]


def _grade_rows(result: DataCheck) -> Iterator[list[str]]:
    for grade, count in result.qrels.grades:
        yield [f"{int(grade)}" if float(grade).is_integer() else f"{grade:g}", f"{count:,}"]


def _note(result: DataCheck) -> str:
    return (
        f"ties: worst/best order each group of equal scores by grade ascending/descending; "
        f"tied@k: share of top-{result.k} positions whose score another result shares"
    )


@renders("rankmeter.checking.DataCheck", "table")
def render_table(result: DataCheck) -> Any:
    """A rich renderable: the headline, the runs, each metric across tie orders, the qrels'
    grades and every finding."""
    from rich.console import Group

    parts: list[Any] = [shown(_headline(result), "bold")]
    runs = FittedTable(title="runs", title_justify="left")
    for i, header in enumerate(_RUN_HEADER):
        runs.add_column(header, text=i == 0, justify="left" if i == 0 else "right")
    for run in result.runs:
        row = _run_row(run)
        runs.add_row(shown(row[0], "bold"), *row[1:])
    parts.append(runs)
    metrics = FittedTable(title=f"metrics across tie orders (k={result.k})", title_justify="left")
    for i, header in enumerate(_metric_header(result)):
        metrics.add_column(shown(header), text=i < 2, justify="left" if i < 2 else "right")
    for row in _metric_rows(result):
        metrics.add_row(shown(row[0]), shown(row[1]), *row[2:])
    parts.append(metrics)
    # A line of its own, not the table's title: a title wraps to the table's width (two
    # narrow columns), whatever the terminal's.
    parts.append(
        shown(f"qrels: {result.qrels.queries:,} queries, {result.qrels.judgments:,} judgments")
    )
    grades = FittedTable()
    grades.add_column("grade", justify="right")
    grades.add_column("judgments", justify="right")
    for row in _grade_rows(result):
        grades.add_row(*row)
    parts.append(grades)
    for line in warning_lines(result.warnings):
        parts.append(shown(line, "bold red" if line.startswith("error") else "yellow"))
    parts.append(shown(_note(result), "dim"))
    return Group(*parts)


@renders("rankmeter.checking.DataCheck", "markdown")
def render_markdown(result: DataCheck) -> str:
    """The same tables as Markdown (every id, name and path escaped)."""
    lines = [f"**{markdown_text(_headline(result))}**", ""]
    right: list[Align] = ["right"] * (len(_RUN_HEADER) - 1)
    lines += markdown_table(_RUN_HEADER, (_run_row(r) for r in result.runs), [None, *right])
    lines += ["", f"Metrics across tie orders (k={result.k}):", ""]
    header = _metric_header(result)
    numbers: list[Align] = ["right"] * (len(header) - 2)
    lines += markdown_table(header, _metric_rows(result), [None, None, *numbers])
    lines += [
        "",
        markdown_text(
            f"Qrels: {result.qrels.queries:,} queries, {result.qrels.judgments:,} judgments"
        )
        + ":",
        "",
    ]
    lines += markdown_table(_grades_header(), _grade_rows(result), ["right", "right"])
    found = warning_lines(result.warnings)
    if found:
        lines += ["", "Findings:", ""]
        lines += [f"- {markdown_text(line)}" for line in found]
    lines += ["", markdown_text(_note(result))]
    return "\n".join(lines) + "\n"
