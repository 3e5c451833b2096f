"""The compiled run scanner (rankmeter.data.scan) against Arrow's CSV reader.

The streaming reader hands each piece of a run to the scanner first; what the scanner takes
must come out exactly as Arrow's reader reads it (the same strings, the same doubles, -0.0
included), and whatever it does not take it must refuse (None), so that the piece goes the
usual way. Random pieces in the common layout, scores written every way numbers are written,
and pieces with each thing the scanner refuses.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.csv as csv
import pytest

from rankmeter.data import _compiled
from rankmeter.data.scan import scan_run_piece
from rankmeter.io.trec import RUN_LAYOUT, arrow_csv_options

pytestmark = pytest.mark.skipif(
    _compiled.NATIVE is None,
    reason="the C extension rankmeter.data._native was not built here (no C compiler when "
    "installing, or RANKMETER_PURE=1): runs are read by Arrow only",
)


def by_arrow(data: bytes) -> pa.Table | None:
    try:
        return csv.read_csv(pa.BufferReader(data), **arrow_csv_options(RUN_LAYOUT))
    except (pa.ArrowException, UnicodeDecodeError):
        return None


def same_bits(left: pa.Table, right: pa.Table) -> bool:
    """Equal tables, scores compared bit for bit (so -0.0 differs from 0.0)."""
    if left.column_names != right.column_names or not left.select(["qid", "docid"]).equals(
        right.select(["qid", "docid"])
    ):
        return False
    a = left.column("score").to_numpy()
    b = right.column("score").to_numpy()
    return bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))


def score_texts(rng: np.random.Generator, n: int) -> list[str]:
    """Scores as runs write them: repr, fixed and scientific notation, integers, leading
    zeros, negative zero, more digits than a double holds, tiny and huge exponents."""
    out = []
    for _ in range(n):
        kind = int(rng.integers(0, 12))
        value = float(rng.normal() * 10.0 ** int(rng.integers(-8, 9)))
        if kind == 0:
            out.append(repr(value))
        elif kind == 1:
            out.append(f"{value:.{int(rng.integers(0, 17))}f}")
        elif kind == 2:
            out.append(f"{value:.{int(rng.integers(0, 17))}e}")
        elif kind == 3:
            out.append(f"{value:.{int(rng.integers(1, 18))}E}")
        elif kind == 4:
            out.append(str(int(rng.integers(-(10**12), 10**12))))
        elif kind == 5:
            out.append("-0" if rng.random() < 0.5 else "-0.000")
        elif kind == 6:
            out.append("".join(rng.choice(list("0123456789"), size=int(rng.integers(18, 30)))))
        elif kind == 7:
            digits = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 25))))
            out.append(f"0.{digits}")
        elif kind == 8:
            # near the ends of a double's range, subnormals too
            out.append(f"{rng.integers(1, 10)}e{rng.integers(-322, 308)}")
        elif kind == 9:
            out.append(f"00{abs(value):.3f}")
        elif kind == 10:
            # a random double's exact neighbours: the last bit decides the rounding
            bits = struct.unpack("<Q", struct.pack("<d", abs(value)))[0] + int(rng.integers(-2, 3))
            out.append(repr(struct.unpack("<d", struct.pack("<Q", bits))[0]))
        else:
            out.append(f"{value:.{int(rng.integers(15, 25))}g}")
    return out


def random_piece(rng: np.random.Generator, n: int) -> bytes:
    ids = "abcxyzABC0123456789_-.:/"
    lines = []
    scores = score_texts(rng, n)
    for i in range(n):
        qid = "".join(rng.choice(list(ids), size=int(rng.integers(1, 8))))
        doc = "".join(rng.choice(list(ids), size=int(rng.integers(1, 24))))
        lines.append(f"{qid} Q0 {doc} {i + 1} {scores[i]} tag{i % 3}")
        if rng.random() < 0.02:
            lines.append("")  # an empty line: skipped by both
    text = "\n".join(lines)
    if rng.random() < 0.7:
        text += "\n"
    return text.encode()


@pytest.mark.parametrize("seed", range(25))
def test_random_pieces_read_as_arrow_reads_them(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = random_piece(rng, 400)
    scanned = scan_run_piece(data)
    arrow = by_arrow(data)
    assert arrow is not None and scanned is not None
    assert same_bits(scanned, arrow)


def test_every_score_form_alone() -> None:
    """One score per piece, so that none hides behind another's refusal."""
    rng = np.random.default_rng(99)
    taken = 0
    for text in score_texts(rng, 3000):
        data = f"1 Q0 d 1 {text} t\n".encode()
        scanned = scan_run_piece(data)
        arrow = by_arrow(data)
        if scanned is None:
            continue
        taken += 1
        assert arrow is not None, text
        assert same_bits(scanned, arrow), (text, scanned.column("score"), arrow.column("score"))
    assert taken > 2950  # what it leaves: a number beyond a double's range


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 d 1 0.5 t\r\n",  # CR LF
        b"1\tQ0 d 1 0.5 t\n",  # a tab
        b"1 Q0 d 1 0.5 t # a comment\n",
        b"1 Q0  d 1 0.5 t\n",  # a doubled blank
        b" 1 Q0 d 1 0.5 t\n",  # a leading blank
        b"1 Q0 d 1 0.5 t \n",  # a trailing blank
        b"1 Q0 d 1 0.5\n",  # five fields
        b"1 Q0 d 1 0.5 t extra\n",  # seven
        b"1 Q0 d\xc3\xa9 1 0.5 t\n",  # non-ASCII
        b"\xef\xbb\xbf1 Q0 d 1 0.5 t\n",  # a byte-order mark
        b"1 Q0 d 1 +0.5 t\n",
        b"1 Q0 d 1 .5 t\n",
        b"1 Q0 d 1 5. t\n",
        b"1 Q0 d 1 inf t\n",
        b"1 Q0 d 1 nan t\n",
        b"1 Q0 d 1 1e400 t\n",  # beyond a double
        b"1 Q0 d 1 0x10 t\n",
        b"1 Q0 d 1 1,5 t\n",
        b"1 Q0 d 1 1e t\n",
        b"1 Q0 d\x00 1 0.5 t\n",
        b"1 Q0 d 1 0.5 t\x0b\n",
        b"   \n",
    ],
)
def test_refuses_what_it_does_not_read(data: bytes) -> None:
    assert scan_run_piece(data) is None


def test_empty_lines_and_a_last_line_without_newline() -> None:
    data = b"\n\nq1 Q0 a 1 3 t\n\nq1 Q0 b 2 2.5 t\nq2 Q0 a 1 -0 t"
    scanned = scan_run_piece(data)
    assert scanned is not None
    assert scanned.to_pydict() == {
        "qid": ["q1", "q1", "q2"],
        "docid": ["a", "b", "a"],
        "score": [3.0, 2.5, -0.0],
    }
    arrow = by_arrow(data)
    assert arrow is not None and same_bits(scanned, arrow)
    assert scan_run_piece(b"").num_rows == 0


def test_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_compiled, "NATIVE", None)
    assert scan_run_piece(b"1 Q0 d 1 0.5 t\n") is None
