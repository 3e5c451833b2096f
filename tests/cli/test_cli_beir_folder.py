"""A BEIR collection's folder given where a qrels or run file is read (``rankmeter evaluate
medline/ run``) is named as one, with what to give instead (issue 24's trial: "is a
directory, expected a file" only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._cli_support import CLI


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "medline"
    (folder / "qrels").mkdir(parents=True)
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n")
    (folder / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    return folder


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "BEIR", "A"],
        ["evaluate", "BEIR", "A", "--per-query", "--engine", "process"],  # read by Typer
        ["compare", "BEIR", "A", "B"],
        ["check", "BEIR", "A"],
        ["explain", "BEIR", "A", "--query", "1"],
        ["diff", "BEIR", "A", "B"],
    ],
    ids=["evaluate", "evaluate (typer)", "compare", "check", "explain", "diff"],
)
def test_a_beir_folder_as_qrels_names_its_qrels_file(
    cli: CLI, files: dict[str, Path], beir: Path, command: list[str]
) -> None:
    given = {"BEIR": str(beir) + "/", "A": str(files["a"]), "B": str(files["b"])}
    done = cli(*[given.get(word, word) for word in command])
    assert done.code == 1, done.err
    expected = f"{beir}/: a BEIR folder; give its qrels file, e.g. {beir}/qrels/test.tsv"
    assert done.err == f"rankmeter: error: {expected}\n"


@pytest.mark.parametrize("stream", [[], ["--stream"]], ids=["read", "streamed"])
def test_a_beir_folder_as_a_run_points_to_bm25(
    cli: CLI, files: dict[str, Path], beir: Path, stream: list[str]
) -> None:
    done = cli("evaluate", files["qrels"], files["a"], beir, *stream)
    assert done.code == 1, done.err
    assert done.err == (
        f"rankmeter: error: {beir}: a BEIR folder, not a run; `rankmeter bm25 {beir}` makes a "
        "run from it\n"
    )


def test_the_first_qrels_file_when_there_is_no_test_split(
    cli: CLI, files: dict[str, Path], beir: Path
) -> None:
    (beir / "qrels" / "test.tsv").unlink()
    done = cli("evaluate", beir, files["a"])
    assert f"e.g. {beir}/qrels/dev.tsv" in done.err


def test_another_folder_is_a_directory(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    done = cli("evaluate", tmp_path, files["a"])
    assert done.err == f"rankmeter: error: {tmp_path}: is a directory, expected a file\n"
