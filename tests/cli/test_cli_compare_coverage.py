"""`compare --segments/--queries` with files that match none or only some of the compared
queries: one error line, or a note in every format that shows notes."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from ._cli_support import CLI
from .test_cli_compare import write_collection


@pytest.fixture
def collection(tmp_path: Path) -> dict[str, Path]:
    return write_collection(tmp_path, n=30)


def _compare(cli: CLI, paths: dict[str, Path], *extra: str | Path) -> tuple[int, str, str]:
    result = cli(
        "compare", paths["qrels"], paths["base"], paths["new"], "-m", "P@5",
        "--resamples", "100", *extra,
    )  # fmt: skip
    return result.code, result.out, _without_overlap_warning(result.err)


def _without_overlap_warning(err: str) -> str:
    """stderr less the one warning every compare of this collection gives (issue 16): the
    "new" run answers no results for query 0, which compare scores 0."""
    lines = err.splitlines(keepends=True)
    warned = [line for line in lines if "matches the qrels' queries only in part" in line]
    assert len(warned) == 1 and "run 'dense'" in warned[0], err
    assert "judged queries without results score 0" in warned[0]
    return "".join(line for line in lines if line not in warned)


def test_segments_matching_no_compared_query_are_one_error_line(
    cli: CLI, collection: dict[str, Path], tmp_path: Path
) -> None:
    segments = tmp_path / "other-collection.tsv"
    segments.write_text("query_id\tfreq\n" + "".join(f"Q-{q}\thead\n" for q in range(50)))
    result = cli(
        "compare", collection["qrels"], collection["base"], collection["new"],
        "--resamples", "100", "--segments", segments,
    )  # fmt: skip
    assert result.assert_one_error_line(1) == (
        f"{segments}: none of its 50 query ids is among the 30 compared queries (its ids start "
        "'Q-0', 'Q-1', 'Q-2', ...; the compared queries start '0', '1', '2', ...); check that "
        "the file belongs to these qrels and runs"
    )


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "html"])
def test_segments_matching_some_queries_are_a_note_in_every_format(
    cli: CLI, collection: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    segments = tmp_path / "part.tsv"
    rows = [f"{q}\t{'head' if q < 10 else 'tail'}" for q in range(20)] + ["x1\thead", "x2\ttail"]
    segments.write_text("query_id\tfreq\n" + "\n".join(rows) + "\n")
    code, out, err = _compare(cli, collection, "--segments", segments, "-f", fmt)
    assert (code, err) == (0, "")
    note = (
        f"segments file {segments}: 20 of 30 compared queries have a segment; 2 ids in the "
        "file match no compared query (e.g. 'x1', 'x2')"
    )
    if fmt == "json":
        assert note in json.loads(out)["notes"]
    elif fmt == "table":
        assert f"note: {note}" in " ".join(out.split())  # the table wraps long lines
    elif fmt == "html":
        assert note in html.unescape(out)
    else:  # Markdown shows the note as text: its underscores and quotes escaped
        from rankmeter._escape import markdown_text

        assert markdown_text(note) in out


def test_query_texts_matching_no_compared_query_are_a_note(
    cli: CLI, collection: dict[str, Path], tmp_path: Path
) -> None:
    texts = tmp_path / "texts.tsv"
    texts.write_text("".join(f"T{q}\ttext {q}\n" for q in range(4)))
    code, out, err = _compare(cli, collection, "--queries", texts, "-f", "json")
    assert (code, err) == (0, "")
    notes = [n for n in json.loads(out)["notes"] if "detectable at" not in n]  # power's last
    assert notes[-1] == (
        f"query texts file {texts}: none of its 4 query ids is among the 30 compared queries "
        "(its ids start 'T0', 'T1', 'T2', ...; the compared queries start '0', '1', '2', ...), "
        "so no texts are shown"
    )
    code, out, err = _compare(cli, collection, "--queries", collection["queries"], "-f", "json")
    assert (code, err) == (0, "") and not any("query texts" in n for n in json.loads(out)["notes"])
