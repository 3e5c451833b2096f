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
from rankmeter.report._markdown import Align, Verbatim, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._text import text_table

if TYPE_CHECKING:
    from rankmeter.explanation import Explanation, Explanations
    from rankmeter.explanation_text import ExplanationsWithText, MissedDocument
    from rankmeter.io.beir import Document
    from rankmeter.report._html import PageIds

__all__ = [
    "LABELS",
    "SNIPPET",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "snippet",
]

#: Characters of a document's text shown beside its rank (whitespace collapsed, cut at a word).
SNIPPET = 160
#: Characters of a document's title shown beside its rank.
TITLE = 80
#: What stands for a document the corpus lacks.
NOT_IN_CORPUS = "(not in the corpus)"

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
    "stop": "stop (R)",
    "reach": "reach",
    "weight": "weight",
    "residual": "residual",
    "ideal_rank": "ideal rank",
    "overlap": "overlap",
    "inclusion": "inclusion probability",
    "ht_weight": "weight 1/pi",
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
        "stop",
        "reach",
        "weight",
        "residual",
        "ideal_rank",
        "overlap",
        "inclusion",
        "ht_weight",
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


# -- documents' texts (rankmeter explain --corpus) -----------------------------------------------


def snippet(text: str, limit: int = SNIPPET) -> str:
    """The start of ``text``: whitespace collapsed, at most ``limit`` characters, cut at a word
    boundary with an ellipsis (a first word longer than that is cut where it reaches it).

    >>> snippet("flutter  of\\n wings")
    'flutter of wings'
    >>> snippet("the quick brown fox", 12)
    'the quick…'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip() + "…"


def _body(document: Document) -> str:
    """A document's text with its whitespace collapsed, less the title where the text starts
    with it (as in Cranfield, whose abstracts repeat their titles): the title is shown
    beside it already."""
    text = " ".join(document.text.split())
    title = " ".join(document.title.split())
    if title and text == title:
        return ""
    if title and text.startswith(title + " "):
        return text[len(title) + 1 :]
    return text


class _Texts:
    """The documents' texts of explanations with a corpus, by explanation: how a renderer
    finds a ranked document's title and text and the relevant documents a metric missed."""

    def __init__(self, explanations: ExplanationsWithText) -> None:
        self.of = explanations
        self.missed = {id(e): m for e, m in zip(explanations, explanations.missed, strict=True)}

    def document(self, doc: Any) -> Document | None:
        return self.of.document(None if doc is None else str(doc))

    def missed_of(self, e: Explanation) -> tuple[MissedDocument, ...]:
        return self.missed.get(id(e), ())


def _texts(explanations: Any) -> _Texts | None:
    from rankmeter.explanation_text import ExplanationsWithText

    return _Texts(explanations) if isinstance(explanations, ExplanationsWithText) else None


def _missed_heading(e: Explanation) -> str:
    sees = "every rank" if e.cutoff is None else f"the top {e.cutoff}"
    return f"relevant documents the run missed ({e.metric} reads {sees})"


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


def _rows_with(
    columns: Sequence[str], rows: Sequence[Mapping[str, Any]]
) -> list[tuple[list[str] | None, Mapping[str, Any]]]:
    """:func:`_rows`, each with its row (a gap with the row after it)."""
    out: list[tuple[list[str] | None, Mapping[str, Any]]] = []
    rows_left = iter(rows)
    for cells in _rows(columns, rows):
        out.append((cells, {}) if cells is None else (cells, next(rows_left)))
    return out


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
def render_text(explanations: Explanation | Sequence[Explanation]) -> Any:
    """Plain text: the title, the table, notes, the ideal ordering and the steps; several
    explanations separated by a blank line. With the documents' texts
    (:class:`~rankmeter.explanation_text.ExplanationsWithText`) a rich renderable: the table
    with each document's title and the start of its text (fitted to the terminal's width),
    and the relevant documents each metric missed."""
    texts = _texts(explanations)
    if texts is not None:
        return _rich_texts(_listed(explanations), texts)
    return "\n".join(_one_text(e) for e in _listed(explanations))


def _rich_texts(explanations: list[Explanation], texts: _Texts) -> Any:
    from rich.console import Group
    from rich.text import Text

    from rankmeter.report._rich import FittedTable, shown

    parts: list[Any] = []
    for e in explanations:
        if parts:
            parts.append(Text(""))
        parts.append(shown(e.title, "bold"))
        if e.query_text is not None:
            parts.append(Text("query text: ") + shown(e.query_text))
        parts.append(Text(""))
        if e.rows:
            table = FittedTable()
            for c in e.columns:
                table.add_column(
                    LABELS.get(c, c), text=c == "doc", justify="right" if c in NUMERIC else "left"
                )
            table.add_column("document", text=True)
            for cells, row in _rows_with(e.columns, e.rows):
                if cells is None:
                    table.add_row("…", *[""] * len(e.columns))
                    continue
                document = texts.document(row.get("doc"))
                table.add_row(*[shown(cell) for cell in cells], _rich_document(document))
            parts.append(table)
        else:
            parts.append(Text("(no results to show)"))
        parts += [shown(f"  ({note})", "dim") for note in e.notes]
        if e.ideal_rows:
            parts += [Text(""), Text("ideal ordering:")]
            parts += [shown(line) for line in _text_table(e.ideal_columns, e.ideal_rows)]
        parts += [Text(""), Text("how the value follows:")]
        parts += [shown(f"  {step}") for step in e.steps]
        missed = texts.missed_of(e)
        parts += [Text(""), shown(_missed_heading(e) + (":" if missed else ": none"))]
        if missed:
            table = FittedTable()
            for head, numeric, text in (
                ("grade", True, False),
                ("doc", False, True),
                ("where", False, True),
                ("document", False, True),
            ):
                table.add_column(head, text=text, justify="right" if numeric else "left")
            for m in missed:
                table.add_row(
                    _cell("grade", m.grade), shown(m.doc), m.where, _rich_document(m.document)
                )
            parts.append(table)
    return Group(*parts)


def _rich_document(document: Document | None) -> Any:
    from rich.text import Text

    from rankmeter.report._rich import shown

    if document is None:
        return Text(NOT_IN_CORPUS, style="italic")
    title = snippet(document.title, TITLE)
    text = snippet(_body(document))
    if not (title or text):
        return Text("(empty)", style="italic")
    cell = shown(title, "bold") if title else Text("")
    if title and text:
        cell.append("\n")
    return cell + shown(text) if text else cell


# -- Markdown ------------------------------------------------------------------------------------


def _markdown_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    align: list[Align] = ["right" if c in NUMERIC else "left" for c in columns]
    return markdown_table([LABELS.get(c, c) for c in columns], _with_gaps(columns, rows), align)


def _markdown_document(document: Document | None) -> Verbatim:
    """A document in a Markdown cell: its title in bold, then the start of its text."""
    if document is None:
        return Verbatim(f"*{markdown_text(NOT_IN_CORPUS)}*")
    title = markdown_text(snippet(document.title, TITLE))
    text = markdown_text(snippet(_body(document)))
    parts = [f"**{title}**" if title else "", text]
    return Verbatim(" ".join(p for p in parts if p) or f"*{markdown_text('(empty)')}*")


def _markdown_ranks(e: Explanation, texts: _Texts | None) -> list[str]:
    if texts is None or not e.rows:
        return _markdown_table(e.columns, e.rows)
    align: list[Align] = ["right" if c in NUMERIC else "left" for c in e.columns]
    gap = ["...", *[""] * len(e.columns)]
    body = [
        gap if cells is None else [*cells, _markdown_document(texts.document(row.get("doc")))]
        for cells, row in _rows_with(e.columns, e.rows)
    ]
    heads = [*(LABELS.get(c, c) for c in e.columns), "document"]
    return markdown_table(heads, body, [*align, "left"])


def _markdown_missed(e: Explanation, texts: _Texts) -> list[str]:
    missed = texts.missed_of(e)
    lines = ["", f"{markdown_text(_missed_heading(e))}:" + ("" if missed else " none")]
    if missed:
        lines.append("")
        lines += markdown_table(
            ["grade", "doc", "where", "document"],
            [
                [_cell("grade", m.grade), visible(m.doc), m.where, _markdown_document(m.document)]
                for m in missed
            ],
            ["right", "left", "left", "left"],
        )
    return lines


def _one_markdown(e: Explanation, texts: _Texts | None = None) -> str:
    where = "the grades given" if e.query is None else f"query {markdown_code(e.query)}"
    run = f" in run {markdown_code(e.run)}" if e.run is not None else ""
    lines = [f"### {markdown_code(e.metric)} for {where}{run} = {e.shown_value}", ""]
    if e.query_text is not None:
        lines += [f"Query text: {markdown_text(e.query_text)}", ""]
    lines += _markdown_ranks(e, texts)
    if e.notes:
        lines.append("")
        lines += [f"*{markdown_text(note)}*  " for note in e.notes]
        lines[-1] = lines[-1].rstrip()
    if e.ideal_rows:
        lines += ["", "Ideal ordering:", ""]
        lines += _markdown_table(e.ideal_columns, e.ideal_rows)
    lines += ["", "How the value follows:", ""]
    lines += [f"1. {markdown_text(step)}" for step in e.steps]
    if texts is not None:
        lines += _markdown_missed(e, texts)
    return "\n".join(lines) + "\n"


@renders("rankmeter.explanation.Explanations", "markdown")
def render_markdown(explanations: Explanation | Sequence[Explanation]) -> str:
    """A Markdown section each (heading, tables, notes, steps); several separated by a blank
    line. With the documents' texts, a ``document`` column (title in bold, the start of the
    text) and the relevant documents each metric missed."""
    texts = _texts(explanations)
    return "\n".join(_one_markdown(e, texts) for e in _listed(explanations))


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


def _html_document(document: Document | None) -> dict[str, Any]:
    """A document in an HTML cell: its title, the start of its text and, where that is not
    the whole text, the whole text (its lines) behind a ``<details>``."""
    if document is None:
        return {"missing": True}
    body = _body(document)
    short = snippet(body)
    whole = short == body
    return {
        "missing": False,
        "title": snippet(document.title, TITLE),
        "snippet": short,
        "lines": None if whole else document.text.splitlines(),
    }


def _html_ranks(e: Explanation, texts: _Texts | None) -> dict[str, Any]:
    table = _html_table(e.columns, e.rows, "explain-ranks")
    if texts is None or not e.rows:
        return table
    table["heads"].append("document")
    for cells, (_, row) in zip(table["rows"], _rows_with(e.columns, e.rows), strict=True):
        if cells is not None:
            cells.append({"document": _html_document(texts.document(row.get("doc")))})
    return table


def _html_missed(e: Explanation, texts: _Texts | None) -> dict[str, Any] | None:
    if texts is None:
        return None
    rows = [
        [
            {"text": _cell("grade", m.grade), "numeric": True},
            {"text": visible(m.doc), "numeric": False},
            {"text": m.where, "numeric": False},
            {"document": _html_document(m.document)},
        ]
        for m in texts.missed_of(e)
    ]
    return {
        "heading": _missed_heading(e),
        "table": {
            "kind": "explain-missed",
            "heads": ["grade", "doc", "where", "document"],
            "rows": rows,
        }
        if rows
        else None,
    }


def html_view(e: Explanation, ids: PageIds, texts: _Texts | None = None) -> dict[str, Any]:
    """What ``explanation.html.j2`` shows of one explanation, with its id claimed from
    ``ids`` (the page's); with the documents' texts (``texts``) a ``document`` column and
    the relevant documents its metric missed."""
    return {
        "id": ids.claim(e.anchor),
        "title": e.title,
        "query_text": e.query_text,
        "ranks": _html_ranks(e, texts),
        "notes": list(e.notes),
        "ideal": _html_table(e.ideal_columns, e.ideal_rows, "explain-ideal")
        if e.ideal_rows
        else None,
        "steps": list(e.steps),
        "missed": _html_missed(e, texts),
    }


@renders("rankmeter.explanation.Explanations", "html")
def render_html(
    explanations: Explanation | Sequence[Explanation], *, ids: PageIds | None = None
) -> str:
    """A ``<section class="rankmeter-explain">`` each, one after another; every id unique in
    the output (and in ``ids``, the page's, when the sections go into a larger page)."""
    from rankmeter.report._html import PageIds, render

    ids = PageIds() if ids is None else ids
    texts = _texts(explanations)
    views = [html_view(e, ids, texts) for e in _listed(explanations)]
    return render("explanations.html.j2", explanations=views)
