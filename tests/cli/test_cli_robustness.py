"""Damaged files never give a traceback: a correct evaluation, or one error line (issue item 7)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankmeter.cli import main

from ._cli_support import evaluate_json


def _load_malformed() -> ModuleType:
    # The strategies live next to the reader tests; load them by path (tests/ is not a package).
    path = Path(__file__).resolve().parents[1] / "io" / "_malformed.py"
    spec = importlib.util.spec_from_file_location("_rankmeter_malformed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


malformed = _load_malformed()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    qrels_data=malformed.trec_file("qrels"),
    run_data=malformed.trec_file("run"),
    per_query=st.booleans(),
    fmt=st.sampled_from(["json", "json", "tsv", "trec", "table"]),
)
def test_cli_gives_an_evaluation_or_one_error_line(
    capsys: pytest.CaptureFixture[str],
    workdir: Path,
    qrels_data: bytes,
    run_data: bytes,
    per_query: bool,
    fmt: str,
) -> None:
    qrels_path = workdir / "qrels"
    run_path = workdir / "run"
    qrels_path.write_bytes(qrels_data)
    run_path.write_bytes(run_data)
    # (The Judged@k warning off: this test is about malformed inputs.)
    argv = ["evaluate", str(qrels_path), str(run_path), "-f", fmt, "--judged-below", "0"]
    argv += [arg for m in malformed.METRICS for arg in ("-m", m)] + (["-q"] if per_query else [])

    capsys.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()

    expected = malformed.expected_evaluation(
        qrels_data, run_data, malformed.METRICS, per_query=per_query
    )
    if expected is None:
        assert code == 1, (code, out, err)
        assert out == ""
        assert err.startswith("rankmeter: error: ") and err.endswith("\n"), err
        malformed.assert_one_line(err.removesuffix("\n"))
    else:
        # A damaged run may still evaluate with a partial query overlap or scores rising
        # with the rank: those warnings (issue 16), one line each, are all stderr may hold.
        data_warnings = [
            line for line in err.splitlines() if line.startswith("rankmeter: warning: run ")
        ]
        assert (code, err) == (0, "".join(f"{line}\n" for line in data_warnings)), err
        if fmt == "json":
            assert malformed.same(evaluate_json(out), expected)
        else:
            assert out.strip()
