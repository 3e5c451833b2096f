"""Hypothesis strategies for damaged TREC files, and a plain reference reader to judge them.

The reference reader is the file format written out as simply as possible: lines split on
``\\n``, ``\\r\\n`` or ``\\r``; fields split on ASCII whitespace; blank lines skipped; comments
as trec_eval reads them (qrels: a line starting with ``#``; runs: a line whose first non-blank
character is ``#``); a qrels line has four fields, a run line at least six (those after the tag
are ignored); the run's tag is the sixth field of its first data line; ids must be UTF-8; the
number follows the grammar ``[+-]? (digits [. digits] | . digits) ([eE] [+-]? digits)? | inf |
infinity | nan``; a run score may be infinite but not NaN; a grade must be finite; a query-doc
pair may appear once. It says either "bad" or what the file holds.
"""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import strategies as st

QUERY_IDS = ["1", "2", "007", "7", "q1", "dé", "日本", "a\u00a0b", "\u200fx", "\u202eq", "d\x00"]
DOC_IDS = [
    "d1",
    "D-9",
    "010",
    "10",
    "é",
    "\u200f",
    "x\u00a0y",
    "\U0001f600",
    "\ufeffd",
    "CR#93E-1860",
]
WEIRD_NUMBERS = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e308",
    "-1e308",
    "1e309",
    "-1e400",
    "4.9e-324",
    "1e-400",
    "-0",
    ".5",
    "1.",
    "1e",
    "abc",
    "0x10",
    "1_0",
    "+",
    "\u22121",
    "１",
    "",
]
STRAY = [
    b"\xff",
    b"\x00",
    b"\x80",
    b"\xc3",
    b"\xe2\x80",
    b"\t",
    b"\r",
    b"\n",
    b" ",
    b"\x0b",
    b"\x0c",
    b"\xc2\xa0",
    "\u200f".encode(),
    "\u202e".encode(),
    b"\x1f\x8b",
    b"\xef\xbb\xbf",
    b"{",
    b",",
]
BOM = b"\xef\xbb\xbf"

finite_scores = st.floats(allow_nan=False, allow_infinity=False).map(repr)
scores = st.one_of(finite_scores, st.sampled_from(["1", "0.5", "2", "2", "-3"]))
grades = st.sampled_from(["0", "1", "2", "3", "-1", "1.5"])


@st.composite
def mutated(draw: st.DrawFn, line: bytes, intact: int = 6) -> bytes:
    """The line, or (one time in ``intact + 8``) the line damaged in one of six ways or
    commented out (a TREC comment, which a CSV or JSON reader reads as text)."""
    choice = draw(st.integers(0, intact + 7)) - intact + 6
    if choice <= 5:
        return line
    if choice == 12:
        return b"#" + line  # as many fields as a data line: skipped, never read as data
    if choice == 13:
        return draw(st.sampled_from([b" ", b"\t", b" \t "])) + b"# " + line
    at = draw(st.integers(0, len(line)))
    if choice == 6:
        return line[:at]
    if choice == 7:
        return line[:at] + draw(st.sampled_from(STRAY)) + line[at:]
    if choice == 8:
        return draw(st.sampled_from([b"", b"  ", b" \t ", b"\x0b", b"\r"]))
    if choice == 9:
        return line[:at] + b"x" * draw(st.sampled_from([5_000, 70_000])) + line[at:]
    if choice == 10:
        return b" " + line.split(b" ", 1)[-1]  # an empty first field
    return line + b" extra"


@st.composite
def trec_file(draw: st.DrawFn, kind: str) -> bytes:
    lines = []
    for i in range(draw(st.integers(0, 10))):
        q = draw(st.sampled_from(QUERY_IDS[:4]) | st.sampled_from(QUERY_IDS))
        d = draw(st.sampled_from(DOC_IDS)) if draw(st.integers(0, 5)) == 0 else f"d{i}"
        weird = draw(st.integers(0, 24)) == 0
        if kind == "qrels":
            value = draw(st.sampled_from(WEIRD_NUMBERS) if weird else grades)
            fields = [q, "0", d, value]
        else:
            value = draw(st.sampled_from(WEIRD_NUMBERS) if weird else scores)
            fields = [q, "Q0", d, str(i + 1), value, draw(st.sampled_from(["tag", "run-1"]))]
        sep = draw(st.sampled_from([" ", " ", "\t", "  ", " \t"]))
        lines.append(draw(mutated(sep.join(fields).encode("utf-8"), intact=60)))
    eol = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    data = eol.join(lines) + draw(st.sampled_from([eol, b""]))
    if draw(st.integers(0, 9)) == 0:
        data = BOM + data
    return data


_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)


class Bad(Exception):
    """The reference reader refuses the file."""


def reference_read(data: bytes, kind: str) -> tuple[dict[str, dict[str, float]], str | None]:
    """``({query: {doc: value}}, run tag)`` or :class:`Bad`."""
    if data.startswith(b"\x1f\x8b"):
        raise Bad("gzip")
    if data.startswith(BOM):
        data = data[len(BOM) :]
    width = 4 if kind == "qrels" else 6
    value_at = 3 if kind == "qrels" else 4
    out: dict[str, dict[str, float]] = {}
    tag = None
    for line in data.splitlines():
        fields = line.split()
        if not fields:
            continue
        if line.startswith(b"#") or (kind == "run" and fields[0].startswith(b"#")):
            continue  # a comment
        if len(fields) < width or (kind == "qrels" and len(fields) > width):
            raise Bad("columns")
        token = fields[value_at].decode("ascii", errors="replace")
        if not _NUMBER.fullmatch(token):
            raise Bad("number")
        try:
            q = fields[0].decode("utf-8")
            d = fields[2].decode("utf-8")
            if kind == "run":
                this_tag = fields[5].decode("utf-8")
                tag = this_tag if tag is None else tag
        except UnicodeDecodeError:
            raise Bad("utf-8") from None
        value = float(token)
        if math.isnan(value) or (kind == "qrels" and math.isinf(value)):
            raise Bad("value")
        if d in out.setdefault(q, {}):
            raise Bad("duplicate")
        out[q][d] = value
    if not out:
        raise Bad("empty")
    return out, tag


def same(a: Any, b: Any) -> bool:
    """Equality of JSON-like values where NaN equals NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b) and type(a) is type(b)
