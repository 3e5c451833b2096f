"""``compare --corpus`` with a format that shows no diff pages (issue 24's trial: the corpus was
read and the runs diffed, then the diffs dropped without a word): the corpus is not read, and
one note on stderr says it is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._cli_support import CLI, NO_JUDGED_WARNING


@pytest.fixture
def broken_corpus(tmp_path: Path) -> Path:
    """A corpus that fails when read: reading it is the work a format without pages skips."""
    path = tmp_path / "corpus.jsonl"
    path.write_text("not json\n")
    return path


@pytest.mark.parametrize("output_format", ["table", "markdown", "json", "latex"])
def test_a_format_without_pages_skips_the_corpus_with_a_note(
    cli: CLI, files: dict[str, Path], broken_corpus: Path, output_format: str
) -> None:
    done = cli(
        "compare", files["qrels"], files["a"], files["b"], "--corpus", broken_corpus,
        "-f", output_format, *NO_JUDGED_WARNING,
    )  # fmt: skip
    assert done.code == 0, done.err
    note = (
        f"note: --corpus makes the side-by-side pages of -f html; ignored with -f {output_format}"
    )
    assert done.err.splitlines().count(note) == 1, done.err
    assert done.out


def test_html_reads_the_corpus(cli: CLI, files: dict[str, Path], broken_corpus: Path) -> None:
    """The same command with -f html reads it (and names its bad line): the skip is the
    format's, not a corpus never read."""
    report = files["a"].parent / "report.html"
    done = cli(
        "compare", files["qrels"], files["a"], files["b"], "--corpus", broken_corpus,
        "-f", "html", "-o", report,
    )  # fmt: skip
    assert done.code == 1, done.err
    assert f"{broken_corpus}:1: not valid JSON" in done.err
    assert "ignored" not in done.err


def test_the_library_says_the_same(files: dict[str, Path], broken_corpus: Path) -> None:
    from rankmeter.comparison import compare_files

    runs = [str(files["a"]), str(files["b"])]
    done = compare_files(
        files["qrels"], runs, ["P@1"], corpus=broken_corpus, output_format="json", resamples=1000
    )
    assert done.diffs == ()
    assert done.goal_notes[-1] == (
        "corpus= makes the side-by-side pages of the HTML report; ignored with output_format='json'"
    )
    made = compare_files(files["qrels"], runs, ["P@1"], resamples=1000, output_format="json")
    assert not any("corpus" in note for note in made.goal_notes)
