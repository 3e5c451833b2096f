"""rankmeter.judgments.model_labels: `rankmeter label` as a Python call (a pool file labelled
by a module:function labeler, the options checked before the pool is read, the progress over
the items) and its summary lines (rankmeter.report.judging.model_labels_lines)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rankmeter.errors import PolicyError
from rankmeter.io.pool import PoolItem
from rankmeter.judgments.model_labels import (
    check_default_scale,
    default_prompt,
    label_with_model,
)
from rankmeter.report.judging import model_labels_lines
from rankmeter.report.pool import write_pool

POOL = (
    PoolItem("q1", "d1", {"bm25": 1}, 1, 1.0),
    PoolItem("q1", "d2", {"bm25": 2}, 2, 1.0),
    PoolItem("q2", "d2", {"bm25": 1}, 1, 1.0),
)
QUERIES = {"q1": "wing flutter", "q2": "heat transfer"}
CORPUS = {"d1": "flutter of a swept wing", "d2": "heat transfer in a boundary layer"}


@pytest.fixture
def pool_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "overlap_mod.py").write_text(
        "def grade(q, d):\n    return min(3, len(set(q.split()) & set(d.split())))\n"
    )
    monkeypatch.chdir(tmp_path)
    write_pool(list(POOL), tmp_path / "pool.jsonl")
    return tmp_path / "pool.jsonl"


class Recorder:
    def __init__(self) -> None:
        self.totals: list[int] = []
        self.labels: list[str] = []

    def start(self, label: str) -> None:
        self.labels.append(label)

    @contextmanager
    def __call__(self, total: int) -> Iterator[Recorder]:
        self.totals.append(total)
        yield self


def test_a_pool_file_is_labelled_by_a_module_function(pool_file: Path) -> None:
    progress = Recorder()
    labelled = label_with_model(
        str(pool_file), QUERIES, CORPUS, labeler="overlap_mod:grade", progress=progress
    )
    assert labelled.qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 2}}
    assert labelled.labeler == "overlap_mod:grade"
    assert labelled.fitted is None and labelled.chat is None
    assert progress.totals == [3] and len(progress.labels) == 3
    assert model_labels_lines(labelled) == ["3 items of 2 queries labelled by overlap_mod:grade"]
    # Without progress, the same labels.
    again = label_with_model(pool_file, QUERIES, CORPUS, labeler="overlap_mod:grade")
    assert again.qrels.to_dict() == labelled.qrels.to_dict()


def test_the_options_are_checked_before_the_pool_is_read(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-pool.jsonl")
    with pytest.raises(PolicyError, match="give exactly one of --labeler"):
        label_with_model(missing, QUERIES, CORPUS)
    with pytest.raises(PolicyError, match="give exactly one of --labeler"):
        label_with_model(missing, QUERIES, CORPUS, labeler="m:f", endpoint="http://x")
    with pytest.raises(PolicyError, match="go with --labeler minilm"):
        label_with_model(missing, QUERIES, CORPUS, labeler="m:f", calibrate="h.qrels")
    with pytest.raises(PolicyError, match="needs --calibrate HUMAN_QRELS"):
        label_with_model(missing, QUERIES, CORPUS, labeler="minilm")
    with pytest.raises(PolicyError, match="needs --model NAME"):
        label_with_model(missing, QUERIES, CORPUS, endpoint="http://127.0.0.1:9")
    with pytest.raises(PolicyError, match="describes the grades 0-3 only"):
        label_with_model(missing, QUERIES, CORPUS, endpoint="http://x", model="m", scale="1-5")


def test_the_default_prompt_fills_in_its_scale_only() -> None:
    text = default_prompt("0-3")
    assert text.startswith("[system]\n") and "\n\n[user]\n" in text
    assert "{low}" not in text and "{high}" not in text
    assert check_default_scale("0-3") == (0, 3)
    with pytest.raises(PolicyError, match=r"--scale 0-4: .* \(give --scale 0-3;"):
        default_prompt("0-4")


def test_a_callable_labeler_labels_as_its_module_function_does(pool_file: Path) -> None:
    def overlap(query: str, doc: str) -> int:
        return min(3, len(set(query.split()) & set(doc.split())))

    labelled = label_with_model(pool_file, QUERIES, CORPUS, labeler=overlap)
    assert labelled.qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 2}}
    assert labelled.labeler.endswith(
        ":test_a_callable_labeler_labels_as_its_module_function_does.<locals>.overlap"
    )
    with pytest.raises(PolicyError, match="labeler= must be a callable"):
        label_with_model(pool_file, QUERIES, CORPUS, labeler=5)  # type: ignore[arg-type]


def test_model_labels_render_as_the_trec_qrels_label_writes(
    pool_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rankmeter.io import trec_qrels_text
    from rankmeter.report import render

    labelled = label_with_model(pool_file, QUERIES, CORPUS, labeler="overlap_mod:grade")
    render(labelled, "trec", str(pool_file.parent / "labels.qrels"))
    assert (pool_file.parent / "labels.qrels").read_text() == trec_qrels_text(labelled.qrels)
