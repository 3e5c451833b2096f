"""The tables of evaluate, compare and check at 60, 80 and 120 columns, piped with COLUMNS set
(issue 16, section 3): what users see is compared with a snapshot in ``snapshots/``, and every
row label and metric name (``all-MiniLM-L6-v2``, ``RR(rel=3)@10``, ``nDCG(gain=exp)@10``) is
shown whole: nothing dropped, cut with "…" or wider than the terminal.

A snapshot is rewritten only on purpose, when what users see is meant to change: run these
tests with ``RANKMETER_UPDATE_SNAPSHOTS=1`` and review the difference.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import numpy as np
import pytest

from ._cli_support import CLI

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
WIDTHS = (60, 80, 120)
NAMES = ["bm25", "all-MiniLM-L6-v2", "hybrid-rrf"]
METRICS = ["nDCG(gain=exp)@10", "RR(rel=3)@10", "P(rel=2)@5", "R@100", "AP"]


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("snapshots")
    rng = np.random.default_rng(16)
    qrels = [f"q{q} 0 d{d} {rng.integers(0, 4)}\n" for q in range(24) for d in range(15)]
    (root / "qrels.txt").write_text("".join(qrels))
    paths = {"qrels": root / "qrels.txt"}
    for index, name in enumerate(NAMES):
        lines = []
        for q in range(24):
            scores = rng.random(15) + index * 0.02 * np.arange(15)[::-1]
            ranked = sorted(range(15), key=lambda d: -scores[d])
            lines += [
                f"q{q} Q0 d{d} {r + 1} {scores[d]:.6f} tag{index}\n" for r, d in enumerate(ranked)
            ]
        paths[name] = root / f"run{index}.trec"
        paths[name].write_text("".join(lines))
    return paths


def _args(command: str, files: dict[str, Path]) -> list[str]:
    # The runs are named on the command line: their tags (tag0 ...) are not the names shown.
    # Relative paths (the test runs in their directory): the output names them.
    runs = [f"{name}={files[name].name}" for name in NAMES]
    metrics = [f"--metric={m}" for m in METRICS]
    qrels = files["qrels"].name
    if command == "evaluate":
        return ["evaluate", qrels, *runs, *metrics, "--quiet"]
    if command == "compare":
        return ["compare", qrels, *runs, *metrics, "--resamples", "200", "--quiet"]
    return ["check", qrels, *runs, "-m", "RR(rel=3)@10", "-m", "nDCG@10"]


def _assert_whole(text: str, width: int, command: str) -> None:
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= width, text
    lines = text.splitlines()
    for name in NAMES:
        assert any(
            re.search(rf"(^|[\s│┃·]){re.escape(name)}([\s│┃:·]|$)", line) for line in lines
        ), (
            name,
            text,
        )
    labels = ["RR(rel=3)@10", "nDCG@10"] if command == "check" else METRICS
    for label in labels:
        assert any(
            re.search(rf"(^|[\s│┃·]){re.escape(label)}([\s│┃:]|$)", line) for line in lines
        ), (
            label,
            text,
        )
    if command == "compare":
        # Every system's rows against the baseline name the system and the metric together.
        for name in NAMES[1:]:
            for label in METRICS:
                pattern = rf"{re.escape(name)}\b.*\s{re.escape(label)}(\s|$)"
                assert any(re.search(pattern, line) for line in lines), (name, label, text)
        assert len(re.findall(r"\d+/\d+/\d+", text)) == len(METRICS) * (len(NAMES) - 1), text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", ["evaluate", "compare", "check"])
def test_tables_match_their_snapshot_and_keep_every_label(
    cli: CLI,
    collection: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    width: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.chdir(collection["qrels"].parent)
    result = cli(*_args(command, collection))
    assert result.code == 0, result.err
    text = result.out
    _assert_whole(text, width, command)
    snapshot = SNAPSHOTS / f"{command}-{width}.txt"
    if os.environ.get("RANKMETER_UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text(text)
    expected = snapshot.read_text()
    assert text == expected, "".join(
        difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "snapshot", "now")
    )
