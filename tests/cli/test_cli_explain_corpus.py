"""`rankmeter explain --corpus`: the documents' titles and texts beside their ranks and the
relevant documents the run missed, in every format; without --corpus nothing changes; the
corpus's errors; Cranfield."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._cli_support import CLI

# The sample files' query 1 (tests/cli/_cli_support.py): a (2), b (1), d (unjudged), c (0)
# ranked; e (1) judged relevant and not in run a.
CORPUS = {
    "a": {"title": "Wings", "text": "flutter of wings in a heated airstream"},
    "b": {"title": "Shells | cones", "text": "buckling of `thin` shells"},
    "c": {"title": "", "text": "heat conduction"},
    "e": {"title": "Panels", "text": "panel flutter at mach 3"},
}  # d is not in the corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": k, **v}) + "\n" for k, v in CORPUS.items()))
    return path


def _args(files: dict[str, Path], corpus: Path, *more: object) -> list[object]:
    return ["explain", files["qrels"], files["a"], "--query", "1", "--corpus", corpus, *more]


def test_text_shows_titles_texts_and_the_missed(
    cli: CLI, files: dict[str, Path], corpus: Path
) -> None:
    done = cli(*_args(files, corpus, "-m", "P@2"))
    assert done.code == 0, done.err
    assert done.err == ""
    out = done.out
    assert out.startswith("P@2 for query '1' in run 'bm25' = 0.5000\n\n")
    assert "Wings" in out and "flutter of wings in a heated" in out  # folded at 80 columns
    assert "Shells | cones" in out
    assert "relevant documents the run missed (P@2 reads the top 2):" in out
    assert "not in the run" in out and "panel flutter at mach 3" in out
    assert "ranked 3, below the cutoff of 2" in out and "(not in the corpus)" in out
    assert "  (2 more results below rank 2 are cut off: P@2 looks at the top 2 only)" in out


def test_markdown_json_and_html(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    md = cli(*_args(files, corpus, "-m", "nDCG@3", "-f", "markdown"))
    assert md.code == 0, md.err
    assert "| rank | doc | score | grade | gain | discount | contribution | document |" in md.out
    assert (
        "| 1 | a | 3 | 2 | 2 | 1 | 2 | **Wings** flutter of wings in a heated airstream |" in md.out
    )
    assert "| 2 | d | 2 | unjudged | 0 | 1.585 | 0 | *(not in the corpus)* |" in md.out
    assert (
        "| 3 | b | 2 | 1 | 1 | 2 | 0.5 | **Shells \\| cones** buckling of \\`thin\\` shells |"
        in md.out
    )
    assert "| 1 | e | not in the run | **Panels** panel flutter at mach 3 |" in md.out
    data = json.loads(cli(*_args(files, corpus, "-m", "nDCG@3", "-f", "json")).out)
    entry = data["metrics"]["nDCG@3"]
    assert [(r["doc"], r["title"]) for r in entry["rows"]] == [
        ("a", "Wings"),
        ("d", None),
        ("b", "Shells | cones"),
    ]
    assert entry["missed"] == [
        {
            "doc": "e",
            "grade": 1,
            "rank": None,
            "where": "not in the run",
            "title": "Panels",
            "text": "panel flutter at mach 3",
        }
    ]
    assert data["corpus"] == str(corpus)
    out = tmp_path / "explain.html"
    done = cli(*_args(files, corpus, "-m", "nDCG@3", "-f", "html", "-o", out))
    assert done.code == 0 and done.out == "", done.err
    page = out.read_text()
    assert (
        '<td class="explain-doc"><strong>Wings</strong> <span class="snippet">flutter of wings in a heated airstream</span>'
        in page
    )
    assert '<table class="explain-missed">' in page


def test_without_a_corpus_the_output_is_unchanged(
    cli: CLI, files: dict[str, Path], corpus: Path
) -> None:
    for fmt in ("text", "markdown", "json", "html"):
        plain = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "P@2", "-f", fmt)
        texts = cli(*_args(files, corpus, "-m", "P@2", "-f", fmt))
        assert plain.code == texts.code == 0
        assert "Wings" not in plain.out and "Wings" in texts.out
    plain_json = json.loads(
        cli("explain", files["qrels"], files["a"], "--query", "1", "-f", "json").out
    )
    texts_json = json.loads(cli(*_args(files, corpus, "-f", "json")).out)
    assert set(texts_json) == set(plain_json) | {"corpus"}
    for name, entry in plain_json["metrics"].items():
        assert set(texts_json["metrics"][name]) == set(entry) | {"missed"}


def test_a_beir_folder_is_its_corpus(cli: CLI, files: dict[str, Path], corpus: Path) -> None:
    done = cli(*_args(files, corpus.parent, "-m", "P@1", "-f", "json"))
    assert done.code == 0, done.err
    assert json.loads(done.out)["metrics"]["P@1"]["rows"][0]["title"] == "Wings"


def test_terminal_escapes_in_a_document_are_shown_not_sent(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(
        json.dumps({"_id": "a", "title": "\x1b]0;pwned\x07T", "text": "\x1b[2Jgone\x9b"}) + "\n"
    )
    done = cli(*_args(files, hostile, "-m", "P@1"))
    assert done.code == 0, done.err
    assert "\x1b" not in done.out and "\x07" not in done.out and "\x9b" not in done.out
    assert "\\x1b]0;pwned\\x07T" in done.out and "\\x1b[2Jgone\\x9b" in done.out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"_id": "a", "text": "ok"}\n{"_id": "b" "text": 1}\n', r"corpus.jsonl:2: not valid JSON \(Expecting ',' delimiter\)"),
        (b'{"_id": "a", "text": "\xff"}\n', r"corpus.jsonl:1: not valid JSON \(not UTF-8\)"),
        (b'{"_id": "a", "title": ["x"]}\n', r"corpus.jsonl:1: title must be a string, not an array"),
        (b'{"_id": "a"}\n{"_id": "a"}\n', r"corpus.jsonl:2: _id 'a' appears twice"),
        (b"", r"corpus.jsonl: empty: no records"),
        # Valid JSON, but half of a UTF-16 pair is no character: no output could hold it.
        (b'{"_id": "a", "text": "x \\ud800 y"}\n', r"corpus.jsonl:1: text holds a lone surrogate \(\\ud800\)"),
    ],
)  # fmt: skip
def test_a_bad_corpus_is_one_error_line(
    cli: CLI, files: dict[str, Path], tmp_path: Path, content: bytes, message: str
) -> None:
    import re

    bad = tmp_path / "corpus.jsonl"
    bad.write_bytes(content)
    got = cli(*_args(files, bad)).assert_one_error_line(1)
    assert re.search(message, got), got


def test_corpus_errors_that_are_usage(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    missing = cli(*_args(files, tmp_path / "nothere.jsonl")).assert_one_error_line(1)
    assert missing.endswith("nothere.jsonl: no such file")
    grades = cli("explain", "--grades", "3,0", "--corpus", corpus).assert_one_error_line(2)
    assert grades.startswith("--corpus needs QRELS and RUN files; it does not go with --grades")
    stdin = cli(
        "explain", files["qrels"], "-", "--query", "1", "--corpus", "-"
    ).assert_one_error_line(2)
    assert stdin.startswith("only one input can be read from stdin ('-')")


def test_cranfield(cli: CLI, cranfield: Path, tmp_path: Path) -> None:
    """A real collection: BM25's ranking of Cranfield query 1 with the abstracts' titles, and
    the relevant abstracts it ranks below 10 or not at all."""
    from rankmeter.io import read_qrels
    from rankmeter.io.beir import load_beir

    run = tmp_path / "bm25.run"
    assert cli("bm25", cranfield, "--run-out", run, "-f", "json").code == 0
    done = cli(
        "explain", cranfield / "qrels.trec", run, "--query", "1", "-m", "nDCG@10",
        "--corpus", cranfield / "corpus.jsonl", "--queries", cranfield / "queries.jsonl",
        "-f", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["query_text"].startswith("what similarity laws must be obeyed")
    entry = data["metrics"]["nDCG@10"]
    collection = load_beir(cranfield)
    for row in entry["rows"]:
        document = collection.corpus[row["doc"]]
        assert (row["title"], row["text"]) == (document.title, document.text)
    judged = read_qrels(cranfield / "qrels.trec").to_dict()["1"]
    ranked = [line.split()[2] for line in run.read_text().splitlines() if line.split()[0] == "1"]
    top = set(ranked[:10])
    want = sorted(
        (d for d, g in judged.items() if g >= 1 and d not in top), key=lambda d: (-judged[d], d)
    )
    assert [m["doc"] for m in entry["missed"]] == want
    for m in entry["missed"]:
        assert m["rank"] == (ranked.index(m["doc"]) + 1 if m["doc"] in ranked else None)
        assert m["title"] == collection.corpus[m["doc"]].title
    text = cli(
        "explain", cranfield / "qrels.trec", run, "--query", "1", "-m", "nDCG@10",
        "--corpus", cranfield, "--queries", cranfield / "queries.jsonl",
    )  # fmt: skip
    assert text.code == 0, text.err
    assert "relevant documents the run missed (nDCG@10 reads the top 10):" in text.out


@pytest.mark.parametrize("target", ["qrels", "a", "corpus"])
def test_an_output_that_is_an_input_is_refused(
    cli: CLI, files: dict[str, Path], corpus: Path, target: str
) -> None:
    path = corpus if target == "corpus" else files[target]
    before = path.read_bytes()
    done = cli(*_args(files, corpus, "-f", "html", "-o", path))
    assert done.code == 2, done.err
    assert f"-o {path} is also an input" in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", ["explain", "diff"])
def test_a_folder_without_a_corpus_is_named_as_one(
    cli: CLI, files: dict[str, Path], tmp_path: Path, command: str
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    given = {"explain": [files["a"], "--query", "1"], "diff": [files["a"], files["b"]]}[command]
    done = cli(command, files["qrels"], *given, "--corpus", bare)
    assert done.code == 1, done.err
    assert done.err == (
        f"rankmeter: error: {bare}: a folder without corpus.jsonl or corpus.jsonl.gz; give the "
        "corpus file or a BEIR collection's folder\n"
    )
