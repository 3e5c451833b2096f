"""embed-eval's option checks, its depth warning, its stored results and its output, from
Python: BenchmarkSettings.of_options, rankmeter.report.vector.shallow_line,
rankmeter.report.leaderboard.store_benchmark and the EmbedBenchmark renderers."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.errors import PolicyError
from rankmeter.report import render
from rankmeter.report.leaderboard import store_benchmark
from rankmeter.report.vector import shallow_line
from rankmeter.vector import RUN_DEPTH
from rankmeter.vector.benchmark import BenchmarkSettings, embed_benchmark
from rankmeter.vector.leaderboard import read_entries


class Words:
    """Bag of words hashed into 16 buckets (``shift`` rotates them: another model)."""

    def __init__(self, name: str, shift: int = 0) -> None:
        self.name = name
        self.shift = shift

    def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
        out = np.zeros((len(sentences), 16), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                out[row, hashlib.md5(word.encode()).digest()[0] % 16] += 1.0
        return np.roll(out, self.shift, axis=1) + 0.25


@pytest.fixture
def aero(tmp_path: Path) -> Path:
    folder = tmp_path / "aero"
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "wing flutter", "d2": "shock waves", "d3": "heat transfer"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    queries = {"1": "flutter of wings", "2": "oblique shock"}
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t1\n")
    return folder


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"collections": ["c"], "files": ("q", None, None)}, "give a collection folder or --qrels"),
        ({"files": ("q", "t", None)}, "--qrels, --queries and --corpus go together"),
        ({}, r"give a collection folder \(or --qrels, --queries and --corpus\)"),
        ({"collections": ["c"], "preset": "mteb", "metrics": ["AP"]}, "--preset mteb chooses"),
        ({"collections": ["a", "b"], "name": "x"}, "^--name names one run"),
        ({"collections": ["a"], "models": ["m", "n"], "run_out": "r"}, "^--run-out names one"),
        ({"collections": ["a"], "retrievers": ["bm25"], "per_query": True}, "^--per-query shows"),
    ],
)
def test_options_that_do_not_go_together(given: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        BenchmarkSettings.of_options(given.pop("preset", None), **given)


def test_settings_of_the_options_are_the_settings_of() -> None:
    settings = BenchmarkSettings.of_options(collections=["c"], k=None, metrics=[], index="flat")
    assert settings == BenchmarkSettings.of(k=RUN_DEPTH, index="flat")
    assert BenchmarkSettings.of_options(files=("q", "t", "c"), k=5).k == 5
    mteb = BenchmarkSettings.of_options("mteb", collections=["c"], name="one", per_query=True)
    assert mteb == BenchmarkSettings.of("mteb")


def test_the_depth_warning_names_the_metrics_read_past_k() -> None:
    assert shallow_line(BenchmarkSettings(metrics=("nDCG@10", "RR"), k=10)) is None
    line = shallow_line(BenchmarkSettings(metrics=("nDCG@10", "R@100", "P@20"), k=5))
    assert line == (
        "warning: -k 5 retrieves fewer results per query than nDCG@10, R@100, P@20 read: they "
        "measure the top 5 only (give -k 100 to measure them whole)"
    )


def test_a_benchmark_is_stored_and_rendered_as_the_command_does(
    aero: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = BenchmarkSettings(metrics=("nDCG@10", "RR"), k=3)
    one = embed_benchmark([aero], [Words("plain")], settings, cache=False)
    two = embed_benchmark([aero], [Words("plain"), Words("shifted", 3)], settings, cache=False)
    folder = tmp_path / "results"
    paths = store_benchmark(two, str(folder))
    assert len(paths) == 2 and all(p.parent == folder for p in paths)
    assert capsys.readouterr().err == f"stored 2 results in {folder}\n"
    store_benchmark(one, folder, quiet=True)
    assert capsys.readouterr().err == ""
    assert len(read_entries(folder)) == 2  # the rerun of plain replaced its own file
    render(one, "json", None, per_query=True)
    single = json.loads(capsys.readouterr().out)
    assert single == json.loads(json.dumps(one.results[0].to_dict(per_query=True)))
    render(two, "json", None)
    board = json.loads(capsys.readouterr().out)
    assert board == json.loads(json.dumps(two.leaderboard().to_dict()))
