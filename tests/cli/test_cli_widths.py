"""`compare` and `evaluate` in a real terminal of 60, 80 and 120 columns, and in a pipe (where
rich lays out for 80 columns): every name and number whole (tests/report/test_widths.py checks
the renderers at those widths)."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import numpy as np
import pytest

from rankmeter import Run
from rankmeter.io import write_trec_run

NAMES = ["bm25", "all-MiniLM-L6-v2", "hybrid-rrf"]
STYLE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("widths")
    rng = np.random.default_rng(5)
    lines = [f"q{q} 0 d{d} {rng.integers(0, 3)}\n" for q in range(30) for d in range(12)]
    (root / "qrels.txt").write_text("".join(lines))
    paths = {"qrels": root / "qrels.txt"}
    for name in NAMES:
        run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(12)} for q in range(30)}
        paths[name] = root / f"{name}.run"
        write_trec_run(Run.from_dict(run, name=name), paths[name])
    return paths


def _in_terminal(args: list[str], columns: int) -> str:
    """Run the command with stdout a pseudo-terminal of ``columns`` x 24; what it shows."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    sink = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                return
            if not chunk:
                return
            sink.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "rankmeter", *args],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.DEVNULL,
            env={**env, "TERM": "xterm-256color"},
        )
    finally:
        os.close(slave)
    try:
        assert child.wait(timeout=120) == 0
    finally:
        reader.join(timeout=10)
        os.close(master)
    return STYLE.sub("", sink.decode("utf-8").replace("\r\n", "\n"))


def _in_pipe(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "rankmeter", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout


def _commands(files: dict[str, Path]) -> dict[str, list[str]]:
    q, runs = str(files["qrels"]), [str(files[name]) for name in NAMES]
    metrics = ["nDCG(gain=exp)@10", "P(rel=2)@5", "R@1000", "AP", "RR@10", "bpref"]
    return {
        "compare 3": ["compare", q, *runs, "--resamples", "200", "--quiet"],
        "compare 2": ["compare", q, *runs[:2], "--resamples", "200", "--quiet"],
        "evaluate": ["evaluate", q, *runs, *(f"--metric={m}" for m in metrics), "--quiet"],
    }


def _assert_shows_everything(text: str, command: str, columns: int) -> None:
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= columns, text
    names = NAMES[:2] if command == "compare 2" else NAMES
    for name in names:
        assert name in text, text
    if command.startswith("compare"):
        for metric in ("nDCG@10", "P@10", "R@100", "RR", "AP"):
            # Every system's row against the baseline names the system and the metric.
            for name in names[1:]:
                assert re.search(rf"{re.escape(name)}\b.*\s{re.escape(metric)}\b", text), text
        assert len(re.findall(r"\d+/\d+/\d+", text)) == 5 * (len(names) - 1), text
        assert len(re.findall(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", text)) == 5 * (len(names) - 1)
    else:
        for metric in ("nDCG(gain=exp)@10", "P(rel=2)@5", "R@1000", "RR@10", "bpref"):
            assert metric in text, text


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("command", ["compare 3", "compare 2", "evaluate"])
def test_a_terminal_shows_every_value(files: dict[str, Path], command: str, columns: int) -> None:
    text = _in_terminal(_commands(files)[command], columns)
    _assert_shows_everything(text, command, columns)


@pytest.mark.parametrize("command", ["compare 3", "compare 2", "evaluate"])
def test_a_pipe_shows_every_value(files: dict[str, Path], command: str) -> None:
    text = _in_pipe(_commands(files)[command])
    _assert_shows_everything(text, command, 80)  # rich's width when not at a terminal
