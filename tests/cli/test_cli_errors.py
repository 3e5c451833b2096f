"""CLI errors: one line on stderr starting "rankmeter: error:", nothing on stdout, exit 1 or 2."""

from __future__ import annotations

import gzip
import os
import re
import stat
from pathlib import Path

import pytest

from ._cli_support import CLI, QRELS, RUN_A, run_process

# (id, qrels bytes or None for the good one, run bytes or None, run file name, exit, regex).
# The regex is matched after "rankmeter: error: "; {qrels} and {run} stand for the paths.
DATA_ERRORS = [
    (
        "duplicate doc in a run",
        None,
        b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n",
        "run.txt",
        r"{run}:3: duplicate result for query '1', doc 'a' .*: '1 Q0 a 3 1 t'$",
    ),
    (
        "duplicate doc in the qrels",
        b"1 0 a 1\n1 0 a 0\n",
        None,
        "run.txt",
        r"{qrels}:2: duplicate judgment for query '1', doc 'a' .*: '1 0 a 0'$",
    ),
    (
        "wrong column count in a run",
        None,
        b"1 Q0 a 1 3 t\n1 Q0 b 2 2\n",
        "run.txt",
        r"{run}:2: expected 6 columns \(qid Q0 docid rank score tag\) in a TREC run file, "
        r"found 5: '1 Q0 b 2 2'$",
    ),
    (
        "wrong column count in the qrels",
        b"1 0 a 1 extra\n",
        None,
        "run.txt",
        r"{qrels}:1: expected 4 columns \(qid iter docid grade\) in a TREC qrels file, found 5: "
        r"'1 0 a 1 extra'$",
    ),
    (
        "non-numeric score",
        None,
        b"1 Q0 a 1 3 t\r\n1 Q0 b 2 two t\r\n",
        "run.txt",
        r"{run}:2: score must be a number, not 'two': '1 Q0 b 2 two t'$",
    ),
    (
        "non-numeric grade",
        b"1 0 a 1\n1 0 b high\n",
        None,
        "run.txt",
        r"{qrels}:2: grade must be a number, not 'high': '1 0 b high'$",
    ),
    (
        "NaN score",
        None,
        b"1 Q0 a 1 nan t\n",
        "run.txt",
        r"{run}:1: score must be a number \(NaN is not allowed\): '1 Q0 a 1 nan t'$",
    ),
    (
        "inf grade",
        b"1 0 a 1\n1 0 b -inf\n",
        None,
        "run.txt",
        r"{qrels}:2: relevance grade must be a finite number: '1 0 b -inf'$",
    ),
    ("empty qrels", b"", None, "run.txt", r"{qrels}: file is empty$"),
    ("empty run", None, b"\n\n", "run.txt", r"{run}: file is empty$"),
    (
        "no common queries",
        None,
        b"8 Q0 a 1 1 other\n9 Q0 a 1 1 other\n",
        "run.txt",
        r"run 'other' \({run}\) has no query in common with the qrels \({qrels}\): run queries "
        r"start 8, 9, qrels queries start 1, 2, 3, \.\.\.; check that the files belong together$",
    ),
    (
        "CSV without a score column",
        None,
        b"query_id,doc_id,rank\n1,a,1\n",
        "run.csv",
        r"{run}: no score column: found columns \['query_id', 'doc_id', 'rank'\], expected one of "
        r"\['score', 'sim', 'similarity'\]$",
    ),
    (
        "bad JSONL line",
        None,
        b'{"qid": "1", "docid": "a", "score": 1}\n{"qid": "1", "docid": "b", "score": }\n',
        "run.jsonl",
        r"{run}:2: not valid JSON \(Expecting value\): "
        r"'\{\"qid\": \"1\", \"docid\": \"b\", \"score\": \}'$",
    ),
    (
        "damaged gzip",
        None,
        gzip.compress(RUN_A.encode())[:-12],
        "run.txt.gz",
        r"{run}: damaged gzip data \(.+\)$",
    ),
    (
        "invalid UTF-8",
        None,
        b"1 Q0 \xff 1 1 t\n",
        "run.txt",
        r"{run}:1: docid is not valid UTF-8: '1 Q0 \ufffd 1 1 t'$",
    ),
]


@pytest.mark.parametrize(
    ("qrels_data", "run_data", "run_name", "pattern"),
    [case[1:] for case in DATA_ERRORS],
    ids=[case[0] for case in DATA_ERRORS],
)
def test_data_errors_exit_1_with_one_line(
    cli: CLI,
    tmp_path: Path,
    qrels_data: bytes | None,
    run_data: bytes | None,
    run_name: str,
    pattern: str,
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(QRELS.encode() if qrels_data is None else qrels_data)
    run = tmp_path / run_name
    run.write_bytes(RUN_A.encode() if run_data is None else run_data)
    message = cli("evaluate", qrels, run, "-f", "json").assert_one_error_line(1)
    expected = pattern.replace("{qrels}", re.escape(str(qrels))).replace(
        "{run}", re.escape(str(run))
    )
    assert re.match(expected, message), message


def test_missing_file(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    missing = tmp_path / "no-such.run"
    message = cli("evaluate", files["qrels"], missing).assert_one_error_line(1)
    assert message == f"{missing}: no such file"
    message = cli("evaluate", tmp_path, files["a"]).assert_one_error_line(1)
    assert message == f"{tmp_path}: is a directory, expected a file"


# (id, extra arguments, regex for the message); all exit 2.
USAGE_ERRORS = [
    (
        "unknown metric",
        ["-m", "nDGC@10"],
        r"unknown metric 'nDGC@10'; did you mean nDCG@10\? Valid metrics: .*P@k.*",
    ),
    ("unknown metric, no neighbour", ["-m", "zzz"], r"unknown metric 'zzz'.*Valid metrics: "),
    (
        "a metric rankmeter lacks",  # issue 22, item 22: not "did you mean RR@10?"
        ["-m", "RBO@10"],
        r"metric 'RBO@10' is not supported yet: rankmeter does not compute RBO \(rank-biased "
        r"overlap of two rankings; .*\)\. Supported metrics: P@k, R@k, nDCG@k, .*RR@k",
    ),
    ("cutoff of 0", ["-m", "P@0"], r"'P@0': the cutoff must be a positive integer, got 0$"),
    ("negative cutoff", ["-m", "nDCG@-3"], r"the cutoff must be a positive integer, got '-3'$"),
    (  # issue 22 trial, item 3: these were "internal error: OverflowError" (exit 70)
        "cutoff beyond int64",
        ["-m", "P@99999999999999999999"],
        r"^'P@99999999999999999999': the cutoff must be a positive integer up to 2,147,483,647,"
        r" got 99999999999999999999$",
    ),
    ("cutoff of 2**63", ["-m", "P@9223372036854775808"], r"up to 2,147,483,647, got 922337"),
    (
        "bad metric parameter",
        ["-m", "nDCG(gain=cubic)@10"],
        r"gain='cubic' must be one of 'linear', 'exp'$",
    ),
    (
        "bad --format",
        ["--format", "xml"],
        r"Invalid value for '--format' / '-f': .*'xml' is not one of 'table', 'json', 'tsv', "
        r"'trec'.* \(see 'rankmeter evaluate --help'\)$",
    ),
    ("bad --ties", ["--ties", "random"], r"Invalid value for '--ties'"),
    ("bad --rel", ["--rel", "high"], r"Invalid value for '--rel' / '-l'"),
    ("infinite --rel", ["--rel", "inf"], r"rel=inf must be a finite number"),
    ("bad --run-format", ["--run-format", "xml"], r"Invalid value for '--run-format'"),
    ("unknown option", ["--fast"], r"No such option: --fast"),
]


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [case[1:] for case in USAGE_ERRORS],
    ids=[case[0] for case in USAGE_ERRORS],
)
def test_usage_errors_exit_2_with_one_line(
    cli: CLI, files: dict[str, Path], extra: list[str], pattern: str
) -> None:
    message = cli("evaluate", files["qrels"], files["a"], *extra).assert_one_error_line(2)
    assert re.search(pattern, message), message


def test_missing_run_argument_is_a_usage_error(cli: CLI, files: dict[str, Path]) -> None:
    message = cli("evaluate", files["qrels"]).assert_one_error_line(2)
    assert "Missing argument 'RUNS...'" in message or "Missing argument 'runs'" in message


def test_stdin_used_twice(cli: CLI) -> None:
    message = cli("evaluate", "-", "-", "-m", "P@1").assert_one_error_line(2)
    assert message == "only one input can be read from stdin ('-')"


def test_usage_errors_are_found_before_reading_data(cli: CLI, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    message = cli("evaluate", missing, missing, "-m", "P@0").assert_one_error_line(2)
    assert "cutoff" in message


@pytest.mark.parametrize(
    ("args", "code", "pattern"),
    [
        (["{qrels}", "{bad}"], 1, r"^rankmeter: error: {bad}:2: score must be a number"),
        (["{qrels}", "{good}", "-m", "MAPP"], 2, r"^rankmeter: error: unknown metric 'MAPP'"),
        (["-", "-"], 2, r"^rankmeter: error: only one input can be read from stdin"),
    ],
)
def test_errors_in_a_real_process(tmp_path: Path, args: list[str], code: int, pattern: str) -> None:
    paths = {"qrels": tmp_path / "q.txt", "good": tmp_path / "a.run", "bad": tmp_path / "b.run"}
    paths["qrels"].write_text(QRELS)
    paths["good"].write_text(RUN_A)
    paths["bad"].write_text("1 Q0 a 1 3 t\n1 Q0 b 2 ? t\n")
    argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in args]
    result = run_process(["evaluate", *argv, "-f", "json"], stdin=b"1 0 a 1\n")
    result.assert_one_error_line(code)
    expected = pattern.format(**{k: re.escape(str(v)) for k, v in paths.items()})
    assert re.match(expected, result.err), result.err


def test_bad_data_on_stdin_is_named_stdin(files: dict[str, Path]) -> None:
    result = run_process(["evaluate", "-", files["a"]], stdin=b"1 0 a 1\n1 0 b\n")
    message = result.assert_one_error_line(1)
    assert message.startswith("<stdin>:2: expected 4 columns")


# -- -o writes atomically ------------------------------------------------------------------------
def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".rankmeter-"))


@pytest.mark.parametrize("fmt", ["json", "tsv", "trec", "table"])
def test_failed_evaluation_leaves_the_output_file_alone(
    cli: CLI, files: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    existing = out_dir / "existing.txt"
    existing.write_text("keep me\n")
    fresh = out_dir / "fresh.txt"
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("1 Q0 a 1 1 t\n1 Q0 a 2 0 t\n")
    for target in (existing, fresh):
        result = cli("evaluate", files["qrels"], bad_run, "-f", fmt, "-o", target)
        result.assert_one_error_line(1)
        result = cli("evaluate", files["qrels"], files["a"], "-m", "P@0", "-f", fmt, "-o", target)
        result.assert_one_error_line(2)
    assert existing.read_text() == "keep me\n"
    assert not fresh.exists()
    assert _leftovers(out_dir) == []


def test_unwritable_output_is_one_line(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "out.json"
    message = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", target)
    assert message.assert_one_error_line(1) == f"{target}: cannot write: No such file or directory"
    message = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", tmp_path)
    assert message.assert_one_error_line(1) == (
        f"{tmp_path}: is a directory; give a file name to write to"
    )
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path.parent) == []


def test_successful_output_replaces_the_file(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "result.json"
    target.write_text("old\n")
    result = cli("evaluate", files["qrels"], files["a"], "-m", "P@2", "-f", "json", "-o", target)
    assert (result.code, result.out, result.err) == (0, "", "")
    assert target.read_text().startswith('{\n  "metrics"')
    assert _leftovers(tmp_path) == []


def test_output_file_gets_ordinary_permissions(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        assert cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", fresh).code == 0
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # not mkstemp's private 0600
        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o640)
        assert cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", kept).code == 0
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(umask)


@pytest.mark.parametrize("command", [[], ["evaluate"], ["compare"]])
def test_no_arguments_print_the_help_and_nothing_else(cli: CLI, command: list[str]) -> None:
    result = cli(*command)
    assert result.code == 2
    assert "Usage" in result.out and "--help" in result.out
    assert result.err == ""


@pytest.mark.parametrize("name", ["qrels.csv", "qrels.tsv"])
def test_an_empty_table_file_is_named(cli: CLI, tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("")
    (tmp_path / "run.txt").write_text(RUN_A)
    result = cli("evaluate", tmp_path / name, tmp_path / "run.txt")
    assert f"{tmp_path / name}: file is empty" in result.assert_one_error_line(1)


def test_an_empty_segments_file_is_named(cli: CLI, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_A.replace("bm25", "other"))
    (tmp_path / "segments.tsv").write_text("")
    result = cli(
        "compare", tmp_path / "qrels.txt", tmp_path / "a.run", tmp_path / "b.run",
        "--segments", tmp_path / "segments.tsv", "--resamples", "20",
    )  # fmt: skip
    assert "segments.tsv: file is empty" in result.assert_one_error_line(1)


def test_a_bug_is_still_one_line(
    cli: CLI, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import rankmeter.evaluation

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something\nwent wrong")

    monkeypatch.setattr(rankmeter.evaluation, "evaluate", broken)
    result = cli("evaluate", files["qrels"], files["a"])
    assert result.code == 70 and result.out == ""
    assert result.err == (
        "rankmeter: internal error: RuntimeError: something went wrong (a bug in rankmeter: "
        "please report it with the command; RANKMETER_DEBUG=1 shows the traceback)\n"
    )
    monkeypatch.setenv("RANKMETER_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli("evaluate", files["qrels"], files["a"])


def test_an_integer_option_beyond_int64_is_a_usage_error(cli: CLI, files: dict[str, Path]) -> None:
    """Issue 22 trial, item 3: `pool RUN --depth 99999999999999999999` was "internal error:
    OverflowError: Python int too large to convert to C long" (exit 70); every integer
    parameter without its own upper bound stops at int64 (rankmeter._validate.integer)."""
    out = files["a"].parent / "pool.out"
    big = "99999999999999999999"
    message = cli("pool", files["a"], "--depth", big, "-o", out).assert_one_error_line(2)
    assert message.startswith(
        f"depth={big} must be an integer from 1 to 9,223,372,036,854,775,807"
    ), message
    assert not out.exists()
