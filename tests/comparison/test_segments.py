"""Segments: tested against the baseline, flagged when significantly worse."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter import compare

from ._helpers import collection


def test_segments_flag_the_segment_that_got_worse() -> None:
    qrels = {f"q{i}": {"r": 1} for i in range(80)}
    base = {f"q{i}": {"r": 2.0, "n": 1.0} for i in range(80)}
    # The new system breaks the tail queries (q40..q79) and keeps the head ones.
    new = {f"q{i}": ({"r": 2.0, "n": 1.0} if i < 40 else {"n": 2.0, "r": 1.0}) for i in range(80)}
    segments = {
        "freq": {f"q{i}": ("head" if i < 40 else "tail") for i in range(80)},
        "user": {f"q{i}": "new" for i in range(5)},  # too small to flag
    }
    result = compare(
        qrels, {"base": base, "new": new}, ["RR"], segments=segments, min_segment=20, resamples=2000
    )
    rows = {s.segment: s for s in result.segments}
    assert set(rows) == {"freq=head", "freq=tail", "user=new"}
    assert rows["freq=tail"].flagged and rows["freq=tail"].difference == pytest.approx(-0.5)
    assert not rows["freq=head"].flagged and rows["freq=head"].difference == 0
    assert rows["user=new"].small and not rows["user=new"].flagged
    assert rows["user=new"].n == 5
    means = {(m.segment, m.system): m for m in result.segment_means}
    assert means[("freq=tail", "new")].mean == pytest.approx(0.5)
    assert means[("freq=tail", "base")].n == 40


def test_segments_from_a_file(tmp_path: Path) -> None:
    qrels, runs = collection(30)
    lines = ["query_id,user"] + [f"q{i},{'new' if i % 3 == 0 else 'old'}" for i in range(30)]
    (tmp_path / "segments.csv").write_text("\n".join(lines) + "\n")
    result = compare(
        qrels, runs, ["P@5"], segments=tmp_path / "segments.csv", min_segment=5, resamples=200
    )
    assert {s.segment for s in result.segments} == {"user=new", "user=old"}
    assert {s.n for s in result.segments} == {10, 20}
