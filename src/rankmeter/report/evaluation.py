"""Render evaluation results: JSON, TSV, trec_eval ``-q`` lines and rich tables.

TSV and trec_eval lines are data: run names and query ids stay byte-exact (the CLI escapes them
only at a terminal). The tables show control characters as visible escapes; JSON escapes them as
JSON does (rankmeter._escape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rankmeter.metrics import Metric
from rankmeter.report._json import json_text
from rankmeter.report._registry import Rendered, renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import decimal
from rankmeter.report.judged import warning_lines
from rankmeter.results import JUDGED_BELOW, EvalResult, JudgedWarning

if TYPE_CHECKING:
    from rankmeter.engines import EvaluatedFiles
    from rankmeter.metrics.goals import Goal
    from rankmeter.results import EvalResults

__all__ = ["judged_warnings", "render_json", "render_table", "render_trec", "render_tsv"]


def _value(metric: Metric, value: float) -> float | int:
    return round(value) if metric.spec.integer else float(value)


def judged_warnings(
    results: list[EvalResult], judged_below: float = JUDGED_BELOW
) -> list[JudgedWarning]:
    """The runs whose Judged@k is below ``judged_below`` (checked; 0: none), in run order."""
    from rankmeter.results import check_judged_below

    threshold = check_judged_below(judged_below)
    found = (r.judged_warning(threshold) for r in results)
    return [w for w in found if w is not None]


def render_json(
    results: list[EvalResult],
    *,
    per_query: bool = False,
    single: bool,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
) -> str:
    """``{"metrics": {...}[, "per_query": {...}], "queries": "..."}``; a list with ``"run"``
    keys for several runs. ``"queries"`` says which queries the means average over.
    A run whose Judged@k is below ``judged_below`` gets ``"warnings": [{"run", "k", "judged",
    "threshold"}]`` in its object (only then: the output is otherwise unchanged). With
    ``worst``, each run's ``"worst": {metric: [{"query", "value"}, ...]}``, lowest first."""
    warned = {w.run: w for w in judged_warnings(results, judged_below)}

    def record(r: EvalResult, named: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"run": r.run} if named else {}
        out.update(r.to_dict(per_query=per_query))
        if worst is not None:
            out["worst"] = {
                m.label: [{"query": q, "value": _value(m, v)} for q, v in pairs]
                for m, pairs in _worst_of(r, worst)
            }
        out["queries"] = queries_phrase(r.policies.include_missing)
        if r.run in warned:
            out["warnings"] = [warned[r.run].to_dict()]
        return out

    payload: Any = record(results[0], False) if single else [record(r, True) for r in results]
    return json_text(payload)


def _worst_of(result: EvalResult, n: int) -> list[tuple[Metric, tuple[tuple[str, float], ...]]]:
    """Each metric of ``result`` with its ``n`` worst queries (PerQuery.worst)."""
    return [(m, result.per_query.worst(m, n)) for m in result.measures]


def _worst_rows(result: EvalResult, n: int) -> list[int]:
    """The rows of the queries among some metric's ``n`` worst, metric by metric, each once."""
    row = {q: i for i, q in enumerate(result.per_query.query_ids)}
    listed = (row[q] for _, pairs in _worst_of(result, n) for q, _ in pairs)
    return list(dict.fromkeys(listed))


def queries_phrase(include_missing: bool) -> str:
    """Which queries an evaluation's means average over, as the JSON says it.

    >>> queries_phrase(True)
    'queries: every judged query (trec_eval -c: a run without results for one scores 0)'
    """
    if include_missing:
        return "queries: every judged query (trec_eval -c: a run without results for one scores 0)"
    return (
        "queries: the judged queries the run answered (as trec_eval; -c adds the judged queries "
        "without results, at 0)"
    )


def render_tsv(
    results: list[EvalResult], *, per_query: bool = False, worst: int | None = None
) -> str:
    """One row per run (per query and run, then the run's ``all`` row, with per_query). With
    ``worst`` (and not per_query), the rows of the queries among any metric's ``worst`` worst
    come before each ``all`` row, first metric's worst first."""
    measures = results[0].measures
    names = [m.label for m in measures]
    by_query = per_query or worst is not None
    lines = ["\t".join(["run", *(["query_id"] if by_query else []), *names])]
    for r in results:
        if by_query:
            columns = [r.per_query.values[n] for n in names]
            rows = range(len(r.per_query)) if per_query else _worst_rows(r, worst or 1)
            for i in rows:
                q = r.per_query.query_ids[i]
                cells = [_cell(m, c[i]) for m, c in zip(measures, columns, strict=True)]
                lines.append("\t".join([r.run, q, *cells]))
        aggregate = [_cell(m, r.metrics[m.label]) for m in measures]
        lines.append("\t".join([r.run, *(["all"] if by_query else []), *aggregate]))
    return "\n".join(lines) + "\n"


def _cell(metric: Metric, value: float) -> str:
    return str(_value(metric, float(value)))


def render_trec(
    results: list[EvalResult], *, per_query: bool = False, worst: int | None = None
) -> str:
    """trec_eval's ``-q`` layout: ``measure<TAB>query<TAB>value``, the ``all`` lines last. With
    ``worst`` (and not per_query), each metric's lines for its ``worst`` worst queries, lowest
    first, before the ``all`` lines."""
    out: list[str] = []
    for r in results:
        measures = r.measures
        names = [m.trec_name or m.label for m in measures]
        if per_query:
            columns = [r.per_query.values[m.label] for m in measures]
            for i, q in enumerate(r.per_query.query_ids):
                for m, name, col in zip(measures, names, columns, strict=True):
                    out.append(_trec_line(name, q, m, float(col[i])))
        elif worst is not None:
            for (m, pairs), name in zip(_worst_of(r, worst), names, strict=True):
                out += [_trec_line(name, q, m, value) for q, value in pairs]
        out.append(f"{'runid':<22}\tall\t{r.run}")
        out.append(f"{'num_q':<22}\tall\t{r.n_queries}")
        for m, name in zip(measures, names, strict=True):
            out.append(_trec_line(name, "all", m, r.metrics[m.label]))
    return "\n".join(out) + "\n"


def _worst_table(result: EvalResult, n: int) -> Any:
    """One run's worst queries: a section per metric, lowest value first."""
    from rich.console import Group

    # The title as a line of its own: a table's title wraps to the (narrow) table's width.
    title = shown(f"{result.run}: the {n} worst queries per metric", style="table.title")
    table = FittedTable()
    table.add_column("metric", text=True, style="bold")
    table.add_column("query", text=True)
    table.add_column("value", justify="right")
    for m, pairs in _worst_of(result, n):
        for i, (query, value) in enumerate(pairs):
            table.add_row(m.label if i == 0 else "", shown(query), _fmt(m, value))
        table.add_section()
    return Group(title, table)


def _trec_line(name: str, query: str, metric: Metric, value: float) -> str:
    shown = str(round(value)) if metric.spec.integer else f"{value:.4f}"
    return f"{name:<22}\t{query}\t{shown}"


def _fmt(metric: Metric, value: float) -> str:
    return f"{round(value)}" if metric.spec.integer else decimal(value)


def render_table(
    results: list[EvalResult],
    *,
    per_query: bool = False,
    goal: Goal | None = None,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
    goal_notes: Sequence[str] = (),
) -> Any:
    """A rich renderable: one row per run (per-query tables first when asked); a warning under
    the tables for each run whose Judged@k is below ``judged_below``; with ``worst``, a table
    per run of each metric's ``worst`` worst queries; with ``goal``, the goal and why each of
    its metrics fits, under the tables, then ``goal_notes``: what to know about these qrels and
    runs before reading them (:func:`rankmeter.metrics.goals.goal_notes`)."""
    from rich.console import Group
    from rich.text import Text

    measures = results[0].measures
    caption = results[0].policies.describe()
    parts: list[Any] = []
    # Fitted tables: headers and numbers whole at any width (ids fold, or the rows stack).
    if per_query:
        for r in results:
            title = shown(f"{r.run}: per query", style="table.title")
            table = FittedTable(title=title, title_justify="left")
            table.add_column("query", text=True, style="bold")
            for m in measures:
                table.add_column(m.label, justify="right")
            columns = [r.per_query.values[m.label] for m in measures]
            for i, q in enumerate(r.per_query.query_ids):
                table.add_row(
                    shown(q),
                    *(_fmt(m, float(c[i])) for m, c in zip(measures, columns, strict=True)),
                )
            table.add_section()
            table.add_row("all", *(_fmt(m, r.metrics[m.label]) for m in measures), style="bold")
            parts.append(table)
    summary = FittedTable(title_justify="left")
    summary.add_column("run", text=True, style="bold")
    summary.add_column("queries", justify="right")
    for m in measures:
        summary.add_column(m.label, justify="right")
    for r in results:
        summary.add_row(
            shown(r.run), str(r.n_queries), *(_fmt(m, r.metrics[m.label]) for m in measures)
        )
    parts.append(summary)
    # The policies go under the tables as one line: a caption would wrap to the table's width.
    parts.append(Text(caption, style="dim"))
    parts += [
        shown(line, style="yellow")
        for line in warning_lines(judged_warnings(results, judged_below))
    ]
    if worst is not None:
        parts += [_worst_table(r, worst) for r in results]
    if goal is not None:
        from rankmeter.metrics import parse_metric
        from rankmeter.report.metrics import goal_reasons

        # A goal metric asked for under another name is shown, in the reasons too, under it.
        labels = {
            g.metric: next((m.label for m in measures if m == parse_metric(g.metric)), g.metric)
            for g in goal.metrics
        }
        parts.append(goal_reasons(goal, labels))
    parts += [shown(f"note: {note}", style="yellow") for note in goal_notes]
    return Group(*parts)


def _notes(goal_notes: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"note: {note}" for note in goal_notes)


@renders("rankmeter.results.EvalResults", "json")
def _json(
    results: EvalResults,
    *,
    per_query: bool = False,
    single: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
    goal_notes: Sequence[str] = (),
) -> Rendered:
    """:func:`render_json`; a goal's notes on the data go to stderr (data stays data)."""
    listed = list(results.results)
    text = render_json(
        listed, per_query=per_query, single=single, judged_below=judged_below, worst=worst
    )
    return Rendered(text, before=_notes(goal_notes))


@renders("rankmeter.results.EvalResults", "tsv")
def _tsv(
    results: EvalResults,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
    goal_notes: Sequence[str] = (),
) -> Rendered:
    """:func:`render_tsv`; the goal's notes and the Judged@k warnings go to stderr."""
    listed = list(results.results)
    text = render_tsv(listed, per_query=per_query, worst=worst)
    after = tuple(warning_lines(judged_warnings(listed, judged_below)))
    return Rendered(text, before=_notes(goal_notes), after=after)


@renders("rankmeter.results.EvalResults", "trec")
def _trec(
    results: EvalResults,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
    goal_notes: Sequence[str] = (),
) -> Rendered:
    """:func:`render_trec`; the goal's notes and the Judged@k warnings go to stderr."""
    listed = list(results.results)
    text = render_trec(listed, per_query=per_query, worst=worst)
    after = tuple(warning_lines(judged_warnings(listed, judged_below)))
    return Rendered(text, before=_notes(goal_notes), after=after)


@renders("rankmeter.results.EvalResults", "table")
def _table(
    results: EvalResults,
    *,
    per_query: bool = False,
    goal: Goal | None = None,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
    goal_notes: Sequence[str] = (),
) -> Any:
    """:func:`render_table`: the goal's notes and the warnings are in the table."""
    return render_table(
        list(results.results),
        per_query=per_query,
        goal=goal,
        goal_notes=goal_notes,
        judged_below=judged_below,
        worst=worst,
    )


# The runs a file evaluation read (rankmeter.engines.evaluate_files), rendered as `rankmeter
# evaluate` renders them: their results with the goal and its notes.


def _files_options(done: EvaluatedFiles) -> dict[str, Any]:
    return {"goal_notes": done.goal_notes}


@renders("rankmeter.engines.EvaluatedFiles", "json")
def _files_json(
    done: EvaluatedFiles,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
) -> Rendered:
    """The results as :func:`_json` renders them (one run: its object alone)."""
    single = len(done.results.results) == 1
    return _json(
        done.results, per_query=per_query, single=single, judged_below=judged_below,
        worst=worst, **_files_options(done),
    )  # fmt: skip


@renders("rankmeter.engines.EvaluatedFiles", "tsv")
def _files_tsv(
    done: EvaluatedFiles,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
) -> Rendered:
    """The results as :func:`_tsv` renders them."""
    return _tsv(
        done.results, per_query=per_query, judged_below=judged_below, worst=worst,
        **_files_options(done),
    )  # fmt: skip


@renders("rankmeter.engines.EvaluatedFiles", "trec")
def _files_trec(
    done: EvaluatedFiles,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
) -> Rendered:
    """The results as :func:`_trec` renders them."""
    return _trec(
        done.results, per_query=per_query, judged_below=judged_below, worst=worst,
        **_files_options(done),
    )  # fmt: skip


@renders("rankmeter.engines.EvaluatedFiles", "table")
def _files_table(
    done: EvaluatedFiles,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    worst: int | None = None,
) -> Any:
    """The results as :func:`_table` renders them, the goal and its notes in the table."""
    return _table(
        done.results, per_query=per_query, goal=done.goal, judged_below=judged_below,
        worst=worst, **_files_options(done),
    )  # fmt: skip
