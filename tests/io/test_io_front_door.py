"""rankmeter.io is the one front door: any input becomes Qrels/Run through as_qrels/as_run, the
data classes read nothing themselves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import rankmeter
import rankmeter.io
from rankmeter import FormatError, PolicyError, Qrels, Run
from rankmeter.io import as_qrels, as_run, load_runs

QRELS = {"q1": {"d1": 1, "d2": 0}}
RESULTS = {"q1": {"d1": 0.5, "d2": 0.9}}


def test_the_front_door_is_exported_lazily_from_rankmeter() -> None:
    assert rankmeter.as_qrels is as_qrels and rankmeter.as_run is as_run
    assert {"as_qrels", "as_run"} <= set(rankmeter.__all__)
    code = "import sys, rankmeter; print('rankmeter.io' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_kind_of_input_gives_the_same_objects(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 0.5 sys\nq1 Q0 d2 2 0.9 sys\n")
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [0.5, 0.9]})
    runs = [as_run(RESULTS), as_run(path), as_run(frame), as_run(pa.Table.from_pandas(frame))]
    assert {tuple(r) for r in runs} == {(("q1", "d2", 0.9), ("q1", "d1", 0.5))}
    assert [r.name for r in runs] == ["run", "sys", "run", "run"]
    loaded = as_qrels(QRELS)
    assert as_qrels(loaded) is loaded
    assert as_run(runs[0], name="other").name == "other"
    assert as_run(runs[0], ties="input").ties == "input"


def test_bad_inputs_are_named() -> None:
    with pytest.raises(FormatError, match=r"^<qrels>: cannot use a int as qrels; give a path"):
        as_qrels(3)
    with pytest.raises(FormatError, match=r"^<run>: cannot use a list as a run; give a path"):
        as_run([1, 2])
    with pytest.raises(PolicyError, match=r"^no runs given$"):
        load_runs([])


def test_load_runs_names_every_run_apart(tmp_path: Path) -> None:
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    for p in (a, b):
        p.write_text("q1 Q0 d1 1 0.5 same\n")
    assert [r.name for r in load_runs([a, b])] == [str(a), str(b)]
    assert [r.name for r in load_runs([RESULTS, RESULTS])] == ["run#1", "run#2"]
    assert [r.name for r in load_runs({"x": RESULTS, "y": a})] == ["x", "y"]


def test_data_classes_read_nothing() -> None:
    # Reading belongs to rankmeter.io; the data classes build from columns and dicts only.
    for cls in (Qrels, Run):
        readers = {"from_file", "from_pandas", "from_polars", "from_arrow", "load"} & set(dir(cls))
        assert not readers, f"{cls.__name__} still reads: {sorted(readers)}"
