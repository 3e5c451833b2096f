"""Every command reads inputs that are not regular files, each once (issue 9, item 3.10).

The real command runs in bash, as a user types it: process substitutions ``<(zcat run.gz)``
(``/dev/fd/N``), FIFOs, ``/dev/stdin``, ``/dev/null``. A command that hangs is killed after a
time limit and fails the test; before the fix a FIFO hung, and the others ended in
``internal error: OSError [Errno 22]`` or a false "file is empty".
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ._cli_support import QRELS, RUN_A, RUN_B, Result, without_sample_warnings

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

LIMIT = 60  # seconds
RANKMETER = f"{shlex.quote(sys.executable)} -c 'from rankmeter.cli import main; main()' \"$@\""
QUERIES = "1\tfirst query\n2\tsecond query\n007\tbond\n"
SEGMENTS = "query_id,user\n1,new\n2,old\n007,new\n"


def bash(script: str, folder: Path) -> Result:
    """Run ``script`` in bash in ``folder``, where ``rankmeter`` runs this checkout's CLI."""
    process = subprocess.Popen(
        ["bash", "-c", f"rankmeter() {{ {RANKMETER}; }}\n{script}"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: killed whole if it hangs
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        out, err = process.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"hangs: no answer in {LIMIT} s from: {script}")
    raw = err.decode("utf-8")
    return Result(process.returncode, out.decode("utf-8"), without_sample_warnings(raw), raw)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_bytes(RUN_B.encode())
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(RUN_A.encode()))
    (tmp_path / "queries.tsv").write_text(QUERIES)
    (tmp_path / "segments.csv").write_text(SEGMENTS)
    return tmp_path


def evaluated(result: Result) -> dict[str, float]:
    assert (result.code, result.err) == (0, ""), result.err
    metrics: dict[str, float] = json.loads(result.out)["metrics"]
    return metrics


EVALUATE = "rankmeter evaluate qrels {run} -m P@1 -m RR -f json"
RUN_INPUTS = {
    "process substitution": "<(cat a.run)",
    "process substitution of zcat": "<(zcat a.run.gz)",
    "process substitution of gzip bytes": "<(cat a.run.gz)",
    "/dev/stdin, a pipe": "/dev/stdin < <(cat a.run)",
    "/dev/stdin, a file": "/dev/stdin < a.run",
    "-, a pipe": "- < <(cat a.run.gz)",
}


@pytest.mark.parametrize("stream", ["", "--stream", "--no-stream"])
@pytest.mark.parametrize("given", list(RUN_INPUTS))
def test_evaluate_reads_a_run_from(folder: Path, given: str, stream: str) -> None:
    if given.startswith("-") and stream == "--stream":
        pytest.skip("streaming reads a file, not standard input (its own error)")
    expected = evaluated(bash(EVALUATE.format(run="a.run"), folder))
    result = bash(EVALUATE.format(run=RUN_INPUTS[given]) + f" {stream}", folder)
    assert evaluated(result) == expected


@pytest.mark.parametrize("stream", ["", "--stream"])
def test_evaluate_reads_a_fifo(folder: Path, stream: str) -> None:
    expected = evaluated(bash(EVALUATE.format(run="a.run"), folder))
    script = "mkfifo run.fifo\n(cat a.run.gz > run.fifo &)\n" + EVALUATE.format(run="run.fifo")
    assert evaluated(bash(f"{script} {stream}", folder)) == expected


def test_evaluate_reads_qrels_from_a_process_substitution(folder: Path) -> None:
    expected = evaluated(bash(EVALUATE.format(run="a.run"), folder))
    script = "rankmeter evaluate <(cat qrels) a.run -m P@1 -m RR -f json"
    assert evaluated(bash(script, folder)) == expected


def test_compare_reads_every_input_from_process_substitutions(folder: Path) -> None:
    # --answered-only: the queries some run answered, all of which have a segment, so that no
    # coverage note names the segments file (its name differs between the two command lines).
    common = "-m P@1 --resamples 50 --min-segment 1 -f json --answered-only"
    plain = bash(
        f"rankmeter compare qrels a.run b.run {common} "
        "--queries queries.tsv --segments segments.csv",
        folder,
    )
    piped = bash(
        f"rankmeter compare <(cat qrels) <(cat a.run) <(gzip -c b.run) {common} "
        "--queries <(cat queries.tsv) --segments <(cat segments.csv)",
        folder,
    )
    assert (piped.code, piped.err) == (0, ""), piped.err
    assert plain.code == 0, plain.err
    mine, theirs = json.loads(piped.out), json.loads(plain.out)
    # The data warnings name each run's file, which differs between the two command lines by
    # design (/dev/fd/N against a.run); everything else is the same.
    for document in (mine, theirs):
        for warning in document["data_warnings"]:
            source = warning.pop("source")
            warning["message"] = warning["message"].replace(f"({source})", "(FILE)")
    assert mine == theirs
    assert "bond" in piped.out  # the texts were read (b loses on 007), not an empty file
    assert {s["segment"] for s in mine["segments"]} == {"user=new", "user=old"}


def test_explain_fuse_and_two_stage_read_process_substitutions(folder: Path) -> None:
    explain = bash("rankmeter explain <(cat qrels) <(cat a.run) --query 1 -m RR", folder)
    assert (explain.code, explain.err) == (0, ""), explain.err
    assert "RR for query '1' in run 'bm25'" in explain.out
    fuse = bash("rankmeter fuse <(cat a.run) <(zcat a.run.gz) <(cat b.run)", folder)
    # The sample runs differ in depth (4 results a query against 2): fuse says so, and only that.
    assert fuse.code == 0, fuse.err
    assert fuse.err.startswith("rankmeter: warning: fusing runs of different depths")
    assert fuse.err.count("\n") == 1, fuse.err
    assert fuse.out.startswith("1 Q0 ")
    two = bash("rankmeter two-stage qrels <(cat a.run) <(cat b.run) --pool 2 -m P@1", folder)
    assert (two.code, two.err) == (0, ""), two.err
    assert "reranked" in two.out


COMMANDS_ON_DEV_NULL = {
    "evaluate run": "rankmeter evaluate qrels /dev/null",
    "evaluate run, streamed": "rankmeter evaluate qrels /dev/null --stream",
    "evaluate qrels": "rankmeter evaluate /dev/null a.run",
    "compare": "rankmeter compare qrels a.run /dev/null",
    "explain": "rankmeter explain qrels /dev/null --query 1",
    "fuse": "rankmeter fuse a.run /dev/null",
    "two-stage": "rankmeter two-stage qrels /dev/null b.run",
    "an empty process substitution": "rankmeter evaluate qrels <(true)",
}


@pytest.mark.parametrize("command", list(COMMANDS_ON_DEV_NULL))
def test_dev_null_is_an_empty_file(folder: Path, command: str) -> None:
    result = bash(COMMANDS_ON_DEV_NULL[command], folder)
    message = result.assert_one_error_line(1)
    assert message.endswith(": file is empty"), message
    assert message.startswith(("/dev/null", "/dev/fd/", "/proc/self/fd/")), message


@pytest.mark.parametrize("option", ["--queries", "--segments"])
def test_empty_queries_or_segments_from_a_pipe_are_refused_by_name(
    folder: Path, option: str
) -> None:
    result = bash(f"rankmeter compare qrels a.run b.run -m P@1 {option} <(true)", folder)
    message = result.assert_one_error_line(1)
    assert message.startswith("/dev/fd/") and "empty" in message, message
