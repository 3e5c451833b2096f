"""compare(segments=, queries=): a file whose ids match none of the compared queries is an
error (segments) or a note (texts); one that matches only some says how many."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter import compare
from rankmeter.errors import FormatError

N = 12


def _runs() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(N)}
    base = {f"q{i}": {"a": 2.0, "x": 1.0} for i in range(N)}
    new = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(N)}
    return qrels, {"base": base, "new": new}


def _compare(**kwargs: object) -> tuple[str, ...]:
    qrels, runs = _runs()
    return compare(qrels, runs, ["P@2"], resamples=100, **kwargs).notes  # type: ignore[arg-type]


def test_a_segments_file_matching_no_compared_query_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "segments.tsv"
    # The usual slip: ids written without the collection's prefix.
    path.write_text("query_id\tfreq\n" + "".join(f"{i}\thead\n" for i in range(N)))
    with pytest.raises(FormatError) as caught:
        _compare(segments=path)
    assert str(caught.value) == (
        f"{path}: none of its 12 query ids is among the 12 compared queries (its ids start "
        "'0', '1', '2', ...; the compared queries start 'q0', 'q1', 'q10', ...); check that the "
        "file belongs to these qrels and runs"
    )
    with pytest.raises(FormatError, match=r"^<segments>: none of its 2 query ids is among"):
        _compare(segments={"freq": {"0": "head", "1": "tail"}})


def test_a_segments_file_matching_some_queries_says_how_many(tmp_path: Path) -> None:
    path = tmp_path / "segments.csv"
    rows = [f"q{i},head" for i in range(8)] + ["Q9,tail", "q99,tail", "10,tail"]
    path.write_text("query_id,freq\n" + "\n".join(rows) + "\n")
    notes = _compare(segments=path)
    assert (
        f"segments file {path}: 8 of 12 compared queries have a segment; 3 ids in the file "
        "match no compared query (e.g. 'Q9', 'q99', '10')"
    ) in notes
    # Every compared query with a segment, and extra ids in the file: said too.
    segments = {"freq": {f"q{i}": "head" for i in range(N)} | {"other": "tail"}}
    assert (
        "segments: 12 of 12 compared queries have a segment; 1 id in the segments matches no "
        "compared query (e.g. 'other')"
    ) in _compare(segments=segments)
    # Some compared queries without a segment, no extra ids.
    assert "segments: 2 of 12 compared queries have a segment" in _compare(
        segments={"freq": {"q0": "head", "q1": "tail"}}
    )


def test_segments_covering_exactly_the_compared_queries_need_no_note() -> None:
    segments = {
        "freq": {f"q{i}": "head" for i in range(6)},
        "u": {f"q{i}": "x" for i in range(6, N)},
    }
    assert not [n for n in _compare(segments=segments) if "segment" in n]


def test_query_texts_matching_no_compared_query_are_a_note(tmp_path: Path) -> None:
    path = tmp_path / "queries.tsv"
    path.write_text("".join(f"{i}\ttext {i}\n" for i in range(5)))
    assert (
        f"query texts file {path}: none of its 5 query ids is among the 12 compared queries "
        "(its ids start '0', '1', '2', ...; the compared queries start 'q0', 'q1', 'q10', ...), "
        "so no texts are shown"
    ) in _compare(queries=path)
    assert any(
        n.startswith("query texts: none of its 1 query id is") for n in _compare(queries={"z": "t"})
    )
    # Texts are decoration: some missing is no note.
    assert not [n for n in _compare(queries={"q0": "first"}) if "query texts" in n]
