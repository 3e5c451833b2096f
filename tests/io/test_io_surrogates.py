"""Valid JSON with a lone surrogate (``"\\ud800"``, half of a UTF-16 pair: no character) is one
error line naming the file and the line, in every JSON reader, never an internal error when
the text is later written or turned into Arrow (issue 24: a query text made explain and diff
end in exit 70)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rankmeter.errors import FormatError

GOOD = {
    "queries.jsonl": '{"_id": "1", "text": "first"}',
    "qrels.jsonl": '{"query_id": "1", "doc_id": "a", "relevance": 1}',
    "run.jsonl": '{"query_id": "1", "doc_id": "a", "score": 1.0}',
    "labels.jsonl": '{"rater": "r1", "query_id": "1", "doc_id": "a", "label": 1}',
    "pool.jsonl": (
        '{"query_id": "1", "doc_id": "a", "runs": {"r": 1}, "best_rank": 1, '
        '"inclusion_probability": 1.0}'
    ),
    "log.jsonl": '{"session_id": "s", "user_id": "u", "request_id": "r", "event_ts": 1}',
    "corpus.jsonl": '{"_id": "a", "text": "a text"}',
}


def _read(name: str) -> Callable[[Path], Any]:
    from rankmeter import io
    from rankmeter.io.annotations import read_queries
    from rankmeter.io.logs import read_log_text

    readers: dict[str, Callable[[Path], Any]] = {
        "queries.jsonl": read_queries,
        "qrels.jsonl": io.read_qrels,
        "run.jsonl": io.read_run,
        "labels.jsonl": io.read_labels,
        "pool.jsonl": io.read_pool,
        "log.jsonl": lambda path: read_log_text(path, "jsonl", ["user_id"]),
        "corpus.jsonl": io.read_corpus,
    }
    return readers[name]


@pytest.mark.parametrize("half", ["\\ud800", "\\udfff"])
@pytest.mark.parametrize("where", ["value", "key"])
@pytest.mark.parametrize("name", GOOD)
def test_a_lone_surrogate_is_one_line_naming_file_and_line(
    tmp_path: Path, name: str, where: str, half: str
) -> None:
    good = GOOD[name]
    if where == "key":
        if name == "corpus.jsonl":
            pytest.skip("the corpus reader reads _id, title and text only: another key is not read")
        bad = good.replace('{"', '{"x' + half + '": 0, "', 1)
    else:
        value = next(text for text in ('"1"', '"a"', '"u"') if text in good)
        bad = good.replace(value, f'"1{half}"', 1)
    path = tmp_path / name
    path.write_text(f"{good}\n{bad}\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        _read(name)(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: "), message
    assert f"lone surrogate ({half})" in message and "\n" not in message


@pytest.mark.parametrize("name", GOOD)
def test_a_pair_of_surrogates_is_a_character(tmp_path: Path, name: str) -> None:
    """ "\\ud83d\\ude00" is one character (U+1F600): no error."""
    path = tmp_path / name
    good = GOOD[name]
    path.write_text(good.replace('"a"', '"a\\ud83d\\ude00"') + "\n", encoding="utf-8")
    _read(name)(path)


def test_an_ann_results_file_with_a_lone_surrogate_is_named(tmp_path: Path) -> None:
    """ann-results reads whole JSON files: the file is named."""
    from rankmeter.vector.ann.results import load_results

    path = tmp_path / "flat.json"
    path.write_text('{"schema": "rankmeter.ann-benchmark/1", "index": "\\ud800"}')
    with pytest.raises(FormatError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == (
        f"{path}: not a JSON results file (the file holds a lone surrogate (\\ud800): half of "
        "a UTF-16 pair, not a character)"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "qrels.txt", "a.run", "--query", "1", "--queries", "queries.jsonl"],
        ["diff", "qrels.txt", "a.run", "a.run", "--queries", "queries.jsonl"],
        ["diff", "qrels.txt", "a.run", "a.run", "--queries", "queries.jsonl", "-f", "html"],
    ],
    ids=["explain", "diff", "diff html"],
)
def test_explain_and_diff_name_the_query_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    """The trial's case: a query text with a lone surrogate ended explain and diff in exit 70."""
    from rankmeter.cli import main

    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_text("1 0 a 1\n")
    Path("a.run").write_text("1 Q0 a 1 1.0 r\n")
    Path("queries.jsonl").write_text('{"_id": "1", "text": "x"}\n{"_id": "2", "text": "\\ud800"}\n')
    with pytest.raises(SystemExit) as ended:
        main(args)
    err = capsys.readouterr().err
    assert ended.value.code == 1, err
    assert err.startswith("rankmeter: error: queries.jsonl:2: the line holds a lone surrogate")
    assert err.count("\n") == 1
