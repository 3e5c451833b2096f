"""Two runs side by side (:class:`rankmeter.comparison.RunDiff`): ``rankmeter diff``.

- ``html``: one self-contained page (template ``templates/diff.html.j2``, styles
  ``templates/diff.css``, the filter script ``templates/diff.js``): per query both rankings
  side by side, each result's grade as a number on a colour (a legend says which), how it
  moved from A to B, the document's title and the start of its text on hover; the whole
  text once per document, in a ``<details>`` of the list at the end that its id links to (the
  script shows it in the row instead, as text); the queries ordered by the change, the largest loss first, with a box that filters them by id
  or text and shows only losses or gains. The page loads nothing: a Content-Security-Policy
  allows the one inline script by its hash, and without scripts the page reads whole (the
  filter box then stays hidden). Every id, name and text goes through the one HTML escaper.
- ``text``, ``markdown``: the per-query changes and each query's moved documents, without the
  documents' texts.
- ``json``: :meth:`RunDiff.to_dict` (the shape :data:`rankmeter.comparison.DIFF_SHAPE` names).

:func:`query_anchor` is the id of a query's section on the page, for pages that link to it
(the comparison report's worst queries).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.resources
import math
from collections.abc import Sequence
from typing import Any

from rankmeter._escape import markdown_code, markdown_text, visible
from rankmeter.comparison import DiffRow, QueryDiff, RunDiff
from rankmeter.report._html import render as render_template
from rankmeter.report._html import safe
from rankmeter.report._json import json_text
from rankmeter.report._markdown import code, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._text import num, signed, text_table
from rankmeter.report.explanation import snippet

__all__ = ["HOVER_CHARS", "TEXT_CHARS", "query_anchor", "render_diff_html"]

#: Characters of a document's text shown on hover (its title first).
HOVER_CHARS = 200
#: Characters of a document's text in the documents' list; longer texts are cut, saying so.
TEXT_CHARS = 20_000
#: Characters beside a document's id in a ranking: its title, else the start of its text.
LABEL_CHARS = 100
#: Characters of a query's text in the overview table.
QUERY_CHARS = 160

TEMPLATE = "diff.html.j2"

_MOVE_TEXT = {"up": "▲ {by}", "down": "▼ {by}", "same": "=", "new": "new", "dropped": "dropped"}


def query_anchor(query: str) -> str:
    """The id of ``query``'s section on the diff page: ``q-`` and the id with every character
    but ASCII letters and digits written as ``_xx`` (its UTF-8 bytes), so that different ids
    never share an anchor.

    >>> query_anchor("q1"), query_anchor("a b/é"), query_anchor("a_20b")
    ('q-q1', 'q-a_20b_2f_c3_a9', 'q-a_5f20b')
    """
    return "q-" + _encoded(query)


def _encoded(text: str) -> str:
    out = []
    for char in text:
        if char.isascii() and char.isalnum():
            out.append(char)
        else:
            out.extend(f"_{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


@functools.cache
def _asset(name: str) -> str:
    files = importlib.resources.files("rankmeter.report").joinpath("templates", name)
    return files.read_text(encoding="utf-8")


def _kind(diff: RunDiff, delta: float) -> str:
    """``loss``, ``gain`` or ``tie`` of B against A, by the metric's direction."""
    gain = -delta if diff.better == "lower" else delta
    return "loss" if gain < 0 else "gain" if gain > 0 else "tie"


def _grade(grade: float | None) -> tuple[str, str, str]:
    """What a grade shows: its number, its CSS class, its words."""
    if grade is None:
        return "–", "g-none", "not judged"
    shown = f"{grade:g}"
    if grade <= 0:
        css = "g-0"
    elif grade < 2:
        css = "g-1"
    elif grade < 3:
        css = "g-2"
    else:
        css = "g-3"
    return shown, css, f"grade {shown}"


def _move_label(row: DiffRow, side: str, other: str) -> str:
    if row.move == "new":
        return f"not in {other}"
    if row.move == "dropped":
        return f"not in {other}"
    where = f"rank {row.other_rank} in {other}"
    if row.move == "same":
        return f"same rank ({where})"
    ranks = "rank" if row.by == 1 else "ranks"
    return f"{row.move} {row.by} {ranks} from A to B ({where})"


def _document(diff: RunDiff, doc: str) -> dict[str, str] | None:
    """A shown document's title, text (cut at :data:`TEXT_CHARS`), what hovering shows and
    its anchor; None when the corpus does not have it."""
    found = diff.documents.get(doc)
    if found is None:
        return None
    text = found.text
    if len(text) > TEXT_CHARS:
        text = f"{text[:TEXT_CHARS]}… ({len(found.text) - TEXT_CHARS:,} more characters)"
    start = found.text[:HOVER_CHARS] + ("…" if len(found.text) > HOVER_CHARS else "")
    hover = f"{found.title} — {start}" if found.title else start
    return {
        "doc": doc,
        "anchor": "d-" + _encoded(doc),
        "title": _short(found.title, TEXT_CHARS),
        # Beside the id in a ranking: the title, or for a document without one (MEDLINE,
        # MS MARCO's passages) the start of its text, so that the row is not a bare id.
        "label": snippet(found.title or found.text, LABEL_CHARS),
        "text": text,
        "hover": hover,
    }


def _documents(diff: RunDiff) -> list[dict[str, str]]:
    """Every shown document the corpus has, once, in the order it first appears."""
    seen: dict[str, None] = {}
    for q in diff.queries:
        for row in (*q.a, *q.b):
            seen.setdefault(row.doc)
    return [d for doc in seen if (d := _document(diff, doc)) is not None]


def _side(diff: RunDiff, q: QueryDiff, key: str) -> dict[str, Any]:
    rows, name, other = (
        (q.a, diff.run_a, diff.run_b) if key == "a" else (q.b, diff.run_b, diff.run_a)
    )
    shown = []
    for row in rows:
        grade, css, words = _grade(row.grade)
        shown.append(
            {
                "rank": row.rank,
                "doc": row.doc,
                "grade": grade,
                "grade_class": css,
                "grade_label": words,
                "move": row.move,
                "by": row.by,
                "move_text": _MOVE_TEXT[row.move].format(by=row.by),
                "move_label": _move_label(row, key, other),
                "document": _document(diff, row.doc),
            }
        )
    return {"key": key, "name": name, "rows": shown}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def headline(diff: RunDiff) -> str:
    """One line: the means, their change and the wins, ties and losses."""
    n = len(diff.queries)
    return (
        f"Mean {diff.metric} over {n} {'query' if n == 1 else 'queries'}: {diff.run_a} "
        f"{num(diff.mean_a)}, {diff.run_b} {num(diff.mean_b)} "
        f"(Δ {signed(diff.mean_delta)}); {diff.run_b} gained on {diff.wins}, tied "
        f"{diff.ties}, lost {diff.losses}. The top {diff.depth} results of each run are shown."
    )


def render_diff_html(diff: RunDiff) -> str:
    """The diff as one self-contained HTML page (the same diff, the same bytes)."""
    script = _asset("diff.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    queries = [
        {
            "query": q.query,
            "anchor": query_anchor(q.query),
            "text": q.text or "",
            "short_text": _short(q.text or "", QUERY_CHARS),
            "value_a": num(q.value_a),
            "value_b": num(q.value_b),
            "delta": signed(q.delta),
            "delta_raw": repr(float(q.delta)) if math.isfinite(q.delta) else "0",
            "kind": _kind(diff, q.delta),
            "moved": q.moved,
            "sides": [_side(diff, q, "a"), _side(diff, q, "b")],
        }
        for q in diff.queries
    ]
    return render_template(
        TEMPLATE,
        title=f"rankmeter diff: {diff.run_b} against {diff.run_a} on {diff.metric}",
        run_a=diff.run_a,
        run_b=diff.run_b,
        metric=diff.metric,
        headline=headline(diff),
        notes=list(diff.notes),
        grade_legend=[
            ("g-3", "3", "grade 3 or more"),
            ("g-2", "2", "grade 2"),
            ("g-1", "1", "grade 1 (or between 0 and 2)"),
            ("g-0", "0", "grade 0 or below: judged not relevant"),
            ("g-none", "–", "not judged"),
        ],
        move_legend=[
            ("up", "▲ 3", "B ranks it 3 places higher than A"),
            ("down", "▼ 3", "B ranks it 3 places lower than A"),
            ("same", "=", "the same rank in both"),
            ("new", "new", "in B, not in A at all"),
            ("dropped", "dropped", "in A, not in B at all"),
        ],
        order_text=(
            f"Queries are ordered by Δ = {diff.run_b} − {diff.run_a} on {diff.metric}, the "
            "largest loss first. Each grade is printed on its colour; hover over a document id "
            "for its title and the start of its text, click it for the whole text."
        ),
        overview_caption=(
            f"{len(queries)} queries, the largest loss first; moved: how many of "
            f"{diff.run_b}'s top {diff.depth} are new or at another rank than in {diff.run_a}."
        ),
        queries=queries,
        documents=_documents(diff),
        stylesheet=safe(_asset("report.css")),
        diff_css=safe(_asset("diff.css")),
        script=safe(script),
        script_hash=f"sha256-{digest}",
    )


def _moved_lines(q: QueryDiff) -> list[str]:
    """``doc`` moves of one query, B's shown rows that moved and A's rows B dropped."""
    out = []
    for row in q.b:
        if row.move == "new":
            out.append(f"{row.doc} new at {row.rank}")
        elif row.move != "same":
            out.append(f"{row.doc} {row.other_rank}→{row.rank}")
    out.extend(f"{row.doc} dropped from {row.rank}" for row in q.a if row.move == "dropped")
    return out


def _named_side(name: str, side: str) -> str:
    """``name (A)``; a run given twice is named so already (``bm25 (A)``), once."""
    mark = f" ({side})"
    return name if name.endswith(mark) else name + mark


def _grade_text(grade: float | None) -> str:
    return "–" if grade is None else f"{grade:g}"


def _row_cells(row: DiffRow | None) -> list[str]:
    if row is None:
        return ["", "", ""]
    return [row.doc, _grade_text(row.grade), _MOVE_TEXT[row.move].format(by=row.by)]


def _pairs(q: QueryDiff) -> list[tuple[DiffRow | None, DiffRow | None]]:
    n = max(len(q.a), len(q.b))
    return [(q.a[i] if i < len(q.a) else None, q.b[i] if i < len(q.b) else None) for i in range(n)]


@renders(RunDiff, "text")
def render_text(diff: RunDiff) -> str:
    """The diff as plain text: the headline, notes, then per query (the largest loss first)
    its values and both rankings side by side with grades and moves."""
    lines = [
        f"rankmeter diff: {_named_side(diff.run_b, 'B')} against {_named_side(diff.run_a, 'A')} on "
        f"{diff.metric}",
        headline(diff),
        *(f"note: {note}" for note in diff.notes),
        "",
        *text_table(
            ["query", "A", "B", "Δ", "moved"],
            [
                [q.query, num(q.value_a), num(q.value_b), signed(q.delta), str(q.moved)]
                for q in diff.queries
            ],
            right={1, 2, 3, 4},
        ),
    ]
    for q in diff.queries:
        title = f"{q.query}: A {num(q.value_a)}, B {num(q.value_b)}, Δ {signed(q.delta)}"
        lines += ["", title + (f"  {_short(q.text, QUERY_CHARS)}" if q.text else "")]
        rows = [[str(i + 1), *_row_cells(a), *_row_cells(b)] for i, (a, b) in enumerate(_pairs(q))]
        lines += (
            [
                "  " + line
                for line in text_table(
                    ["rank", "A doc", "grade", "move", "B doc", "grade", "move"],
                    rows,
                    right={0, 2, 5},
                )
            ]
            if rows
            else ["  no results in either run"]
        )
    return "\n".join(visible(line) for line in lines) + "\n"


@renders(RunDiff, "markdown")
def render_markdown(diff: RunDiff) -> str:
    """The diff as Markdown: the queries by change (with their moved documents), then each
    query's rankings side by side."""
    out = [
        f"# {markdown_text(diff.run_b)} against {markdown_text(diff.run_a)} on "
        f"{markdown_text(diff.metric)}",
        "",
        markdown_text(headline(diff)),
        "",
        *(f"- {markdown_text(note)}" for note in diff.notes),
        *([""] if diff.notes else []),
        *markdown_table(
            ["#", "query", "text", "A", "B", "Δ", "moved in B's top " + str(diff.depth)],
            [
                [
                    str(i),
                    code(q.query),
                    _short(q.text or "", QUERY_CHARS),
                    num(q.value_a),
                    num(q.value_b),
                    signed(q.delta),
                    "; ".join(_moved_lines(q)),
                ]
                for i, q in enumerate(diff.queries, start=1)
            ],
            ["right", None, None, "right", "right", "right", None],
        ),
    ]
    for q in diff.queries:
        out += [
            "",
            f"## {markdown_code(q.query)}"
            + (f" {markdown_text(_short(q.text, QUERY_CHARS))}" if q.text else ""),
            "",
            f"A {num(q.value_a)}, B {num(q.value_b)}, Δ {signed(q.delta)}",
            "",
        ]
        pairs = _pairs(q)
        if not pairs:
            out.append("No results in either run.")
            continue
        out += markdown_table(
            ["rank", f"A: {diff.run_a}", "grade", "move", f"B: {diff.run_b}", "grade", "move"],
            [
                [
                    str(i),
                    *(_md_cells(a)),
                    *(_md_cells(b)),
                ]
                for i, (a, b) in enumerate(pairs, start=1)
            ],
            ["right", None, "right", None, None, "right", None],
        )
    return "\n".join(out) + "\n"


def _md_cells(row: DiffRow | None) -> Sequence[str]:
    if row is None:
        return ["", "", ""]
    doc, grade, move = _row_cells(row)
    return [code(doc), grade, move]


@renders(RunDiff, "json")
def render_json(diff: RunDiff) -> str:
    """:meth:`RunDiff.to_dict` as one JSON document (no document texts)."""
    return json_text(diff.to_dict())


@renders(RunDiff, "html")
def _page(diff: RunDiff) -> str:
    return render_diff_html(diff)
