"""Render explanations (:class:`rankmeter.Explanation`): plain text, Markdown, HTML sections.

Each function takes one explanation or several (several are written one after another, as
``rankmeter explain`` does for several metrics) and returns text:

- :func:`render_json`: several metrics explained for one query
  (:class:`rankmeter.explanation.Explanations`) as one JSON document;
- :func:`render_text`: the title, the per-rank table, notes, the ideal ordering and the steps;
- :func:`render_markdown`: the same as a Markdown section (every id and name escaped);
- :func:`render_html`: one ``<section class="rankmeter-explain">`` each (template
  ``explanation.html.j2``), with an id the renderer gives out: the explanation's
  :attr:`~rankmeter.Explanation.anchor`, or ``<anchor>-2``, ... where the output already has
  that id.

Examples
--------
>>> import rankmeter
>>> e = rankmeter.explain_grades("3,0,2", "nDCG(gain=exp)@3")
>>> print(render_text(e).splitlines()[0])
nDCG(gain=exp)@3 for the grades given = 0.9558
>>> render_html(e).startswith('<section class="rankmeter-explain" id="explain-grades-nDCG-gain-exp-3">')
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rankmeter._escape import markdown_code, markdown_text, visible
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._text import text_table

if TYPE_CHECKING:
    from rankmeter.explanation import Explanation, Explanations
    from rankmeter.report._html import PageIds

__all__ = ["LABELS", "render_html", "render_json", "render_markdown", "render_text"]

#: Column headings, by the column names used in rows.
LABELS = {
    "rank": "rank",
    "doc": "doc",
    "score": "score",
    "grade": "grade",
    "judged": "judged",
    "relevant": "relevant",
    "gain": "gain",
    "discount": "discount",
    "contribution": "contribution",
    "relevant_so_far": "relevant so far",
    "precision": "P@rank",
    "nonrel_above": "non-relevant above",
    "inclusion": "inclusion probability",
    "weight": "weight 1/pi",
}

#: Columns of numbers: right-aligned.
NUMERIC = frozenset(
    {
        "rank",
        "score",
        "grade",
        "gain",
        "discount",
        "contribution",
        "relevant_so_far",
        "precision",
        "nonrel_above",
        "inclusion",
        "weight",
    }
)


@renders("rankmeter.explanation.Explanations", "json")
def render_json(explanations: Explanations) -> str:
    """The explanations as one JSON document: the query, the run (or the grades given), the
    policies, and each metric's explanation (:meth:`Explanations.to_dict`)."""
    from rankmeter.report._json import json_text

    return json_text(explanations.to_dict())


def _listed(explanations: Explanation | Sequence[Explanation]) -> list[Explanation]:
    if isinstance(explanations, Sequence):
        return list(explanations)
    return [explanations]


# -- cells ---------------------------------------------------------------------------------------


def _cell(column: str, value: Any) -> str:
    from rankmeter.metrics import num

    if column == "grade":
        if value is None:
            return "unjudged"
        return f"{num(value)} (unjudged)" if value < 0 else num(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column == "score":
        short = format(value, "g")
        return short if float(short) == value else repr(float(value))
    if isinstance(value, (int, float)):
        return num(value)
    return visible(str(value))  # a document id: shown with its control characters visible


def _rows(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[list[str] | None]:
    """Cells of every row, with None where ranks were skipped (shown as ``...``)."""
    body: list[list[str] | None] = []
    previous = 0
    for row in rows:
        rank = row.get("rank")
        if isinstance(rank, int) and previous and rank > previous + 1:
            body.append(None)
        body.append([_cell(c, row.get(c)) for c in columns])
        previous = rank if isinstance(rank, int) else previous
    return body


def _with_gaps(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    gap = ["...", *[""] * (len(columns) - 1)]
    return [gap if cells is None else cells for cells in _rows(columns, rows)]


# -- text ----------------------------------------------------------------------------------------


def _text_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return ["(no results to show)"]
    right = {i for i, c in enumerate(columns) if c in NUMERIC}
    return text_table([LABELS.get(c, c) for c in columns], _with_gaps(columns, rows), right)


def _one_text(e: Explanation) -> str:
    lines = [visible(e.title)]
    if e.query_text is not None:
        lines.append(f"query text: {visible(e.query_text)}")
    lines.append("")
    lines += _text_table(e.columns, e.rows)
    lines += [f"  ({visible(note)})" for note in e.notes]
    if e.ideal_rows:
        lines += ["", "ideal ordering:"]
        lines += _text_table(e.ideal_columns, e.ideal_rows)
    lines += ["", "how the value follows:"]
    lines += [f"  {visible(step)}" for step in e.steps]
    return "\n".join(lines) + "\n"


@renders("rankmeter.explanation.Explanations", "text")
def render_text(explanations: Explanation | Sequence[Explanation]) -> str:
    """Plain text: the title, the table, notes, the ideal ordering and the steps; several
    explanations separated by a blank line."""
    return "\n".join(_one_text(e) for e in _listed(explanations))


# -- Markdown ------------------------------------------------------------------------------------


def _markdown_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    align: list[Align] = ["right" if c in NUMERIC else "left" for c in columns]
    return markdown_table([LABELS.get(c, c) for c in columns], _with_gaps(columns, rows), align)


def _one_markdown(e: Explanation) -> str:
    where = "the grades given" if e.query is None else f"query {markdown_code(e.query)}"
    run = f" in run {markdown_code(e.run)}" if e.run is not None else ""
    lines = [f"### {markdown_code(e.metric)} for {where}{run} = {e.shown_value}", ""]
    if e.query_text is not None:
        lines += [f"Query text: {markdown_text(e.query_text)}", ""]
    lines += _markdown_table(e.columns, e.rows)
    if e.notes:
        lines.append("")
        lines += [f"*{markdown_text(note)}*  " for note in e.notes]
        lines[-1] = lines[-1].rstrip()
    if e.ideal_rows:
        lines += ["", "Ideal ordering:", ""]
        lines += _markdown_table(e.ideal_columns, e.ideal_rows)
    lines += ["", "How the value follows:", ""]
    lines += [f"1. {markdown_text(step)}" for step in e.steps]
    return "\n".join(lines) + "\n"


@renders("rankmeter.explanation.Explanations", "markdown")
def render_markdown(explanations: Explanation | Sequence[Explanation]) -> str:
    """A Markdown section each (heading, tables, notes, steps); several separated by a blank
    line."""
    return "\n".join(_one_markdown(e) for e in _listed(explanations))


# -- HTML ----------------------------------------------------------------------------------------


def _html_table(
    columns: Sequence[str], rows: Sequence[Mapping[str, Any]], kind: str
) -> dict[str, Any]:
    return {
        "kind": kind,
        "heads": [LABELS.get(c, c) for c in columns],
        "rows": [
            None
            if cells is None
            else [
                {"text": cell, "numeric": c in NUMERIC}
                for c, cell in zip(columns, cells, strict=True)
            ]
            for cells in _rows(columns, rows)
        ],
    }


def html_view(e: Explanation, ids: PageIds) -> dict[str, Any]:
    """What ``explanation.html.j2`` shows of one explanation, with its id claimed from
    ``ids`` (the page's)."""
    return {
        "id": ids.claim(e.anchor),
        "title": e.title,
        "query_text": e.query_text,
        "ranks": _html_table(e.columns, e.rows, "explain-ranks"),
        "notes": list(e.notes),
        "ideal": _html_table(e.ideal_columns, e.ideal_rows, "explain-ideal")
        if e.ideal_rows
        else None,
        "steps": list(e.steps),
    }


@renders("rankmeter.explanation.Explanations", "html")
def render_html(
    explanations: Explanation | Sequence[Explanation], *, ids: PageIds | None = None
) -> str:
    """A ``<section class="rankmeter-explain">`` each, one after another; every id unique in
    the output (and in ``ids``, the page's, when the sections go into a larger page)."""
    from rankmeter.report._html import PageIds, render

    ids = PageIds() if ids is None else ids
    views = [html_view(e, ids) for e in _listed(explanations)]
    return render("explanations.html.j2", explanations=views)
