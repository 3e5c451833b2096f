"""How the command ends when the world around it does: a full or closed standard output, an
impossible --resamples, no memory, Ctrl-C at any moment (even during the imports), SIGTERM and a
reader that goes away. Each ends with its own line, never "internal error" or a traceback.

These run the real command in subprocesses, as ``python -m rankmeter`` (the same entry point as
the installed ``rankmeter`` script), each bounded in time.
"""

from __future__ import annotations

import os
import random
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rankmeter.errors import PolicyError

from ._cli_support import CLI, without_sample_warnings, without_sample_warnings_bytes

ROOT = Path(__file__).resolve().parents[2]
ENTRY = [sys.executable, "-m", "rankmeter"]
# The installed script: `from rankmeter.__main__ import main; sys.exit(main())`.
SCRIPT = [sys.executable, "-c", "import sys; from rankmeter.__main__ import main; sys.exit(main())"]
FULL = "/dev/full"
has_dev_full = pytest.mark.skipif(
    not (os.path.exists(FULL) and stat.S_ISCHR(os.stat(FULL).st_mode)), reason="no /dev/full"
)


def _run(
    args: list[str | os.PathLike[str]], stdout: Any = subprocess.PIPE, **kwargs: Any
) -> tuple[int, bytes, str]:
    done = subprocess.run(
        [*ENTRY, *map(os.fspath, args)],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
        **kwargs,
    )
    return done.returncode, done.stdout or b"", without_sample_warnings(done.stderr.decode())


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs over 400 queries: enough output to overflow a pipe, enough work to interrupt."""
    folder = tmp_path_factory.mktemp("big")
    rng = random.Random(7)
    qrels, runs = [], {"a": [], "b": []}
    for q in range(400):
        for d in range(30):
            if d % 3 == 0:
                qrels.append(f"q{q} 0 d{d} {rng.randint(0, 2)}\n")
            for name, lines in runs.items():
                lines.append(f"q{q} Q0 d{d} {d + 1} {rng.random():.6f} {name}\n")
    paths = {"qrels": folder / "qrels.txt", "a": folder / "a.run", "b": folder / "b.run"}
    paths["qrels"].write_text("".join(qrels))
    for name in ("a", "b"):
        paths[name].write_text("".join(runs[name]))
    return paths


def test_the_installed_script_is_the_light_entry_point() -> None:
    project = (ROOT / "pyproject.toml").read_text()
    scripts = re.search(r"^\[project\.scripts\]\n(.*?)\n\n", project, re.M | re.S)
    assert scripts is not None and scripts.group(1) == 'rankmeter = "rankmeter.__main__:main"'


def test_python_dash_m_runs_the_command(files: dict[str, Path]) -> None:
    code, out, err = _run(["evaluate", files["qrels"], files["a"], "-m", "P@2", "-f", "json"])
    assert (code, err) == (0, "") and b'"P@2"' in out


# -- standard output that cannot take the output -------------------------------------------------
@has_dev_full
@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "{qrels}", "{a}", "-f", "json"],
        ["evaluate", "{qrels}", "{a}"],  # the rich table
        ["compare", "{qrels}", "{a}", "{b}", "--resamples", "50", "-f", "markdown"],
        ["metrics"],
        ["--help"],
    ],
    ids=["json", "table", "compare", "metrics", "help"],
)
def test_a_full_standard_output_is_one_line(files: dict[str, Path], args: list[str]) -> None:
    filled = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    with open(FULL, "w") as full:
        code, _, err = _run(filled, stdout=full)
    assert (code, err) == (
        1,
        "rankmeter: error: cannot write to standard output: No space left on device\n",
    )


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_closed_standard_output_is_one_line(
    files: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    args = ["evaluate", files["qrels"], files["a"], "-f", fmt]
    code, _, err = _run(args, stdout=None, preexec_fn=lambda: os.close(1))
    assert (code, err) == (1, "rankmeter: error: cannot write to standard output: it is closed\n")
    # With -o the closed standard output is never needed.
    out = tmp_path / "out.txt"
    code, _, err = _run([*args, "-o", out], stdout=None, preexec_fn=lambda: os.close(1))
    assert (code, err) == (0, "") and out.stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "{qrels}", "{a}", "-f", "json"],
        ["evaluate", "{qrels}", "{a}"],  # the rich table
        ["evaluate", "{qrels}", "{a}", "-f", "json", "-o", "{out}"],
        ["compare", "{qrels}", "{a}", "{b}", "--resamples", "50", "-f", "json"],
        ["bm25", "{beir}", "-f", "json"],
    ],
    ids=["json", "table", "output", "compare", "bm25"],
)
def test_a_closed_standard_error_changes_nothing_but_the_diagnostics(
    files: dict[str, Path], tmp_path: Path, args: list[str]
) -> None:
    """`rankmeter evaluate q r -f json 2>&- > out.json`: the progress bar looked at the missing
    stderr, and the "internal error" line it caused went to stdout, into the output."""
    if args[0] == "bm25":
        pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")
    from .test_cli_bm25 import tiny_beir

    paths = {**files, "out": tmp_path / "out.json", "beir": tiny_beir(tmp_path / "beir")}
    filled = [a.format(**{k: str(v) for k, v in paths.items()}) for a in args]
    closed = subprocess.run(
        [*ENTRY, *filled],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        preexec_fn=lambda: os.close(2),
        timeout=120,
        check=False,
    )
    code, out, _ = _run(filled)
    assert (closed.returncode, without_sample_warnings_bytes(closed.stderr)) == (
        0,
        b"",
    )  # (the pipe is closed in the child)
    assert code == 0
    if "-o" in args:
        assert closed.stdout == b"" and paths["out"].stat().st_size > 0
    else:
        assert closed.stdout == out and b"internal error" not in closed.stdout


def test_an_error_with_standard_error_closed_is_the_exit_status_only(
    files: dict[str, Path],
) -> None:
    done = subprocess.run(
        [*ENTRY, "evaluate", os.fspath(files["qrels"]), "absent.run", "-f", "json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        preexec_fn=lambda: os.close(2),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, b"")


@pytest.mark.parametrize("where", ["run", "qrels"])
def test_a_closed_standard_input_is_one_line(files: dict[str, Path], where: str) -> None:
    args = [files["qrels"], "-"] if where == "run" else ["-", files["a"]]
    done = subprocess.run(
        [*ENTRY, "evaluate", *map(os.fspath, args)],
        stdin=None,
        capture_output=True,
        preexec_fn=lambda: os.close(0),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        1,
        b"",
        "rankmeter: error: <stdin>: standard input is closed\n",
    )


def test_a_reader_that_goes_away_ends_quietly(big: dict[str, Path]) -> None:
    """`rankmeter evaluate ... | head -1`: exit 0, nothing on stderr."""
    process = subprocess.Popen(
        [*ENTRY, "evaluate", big["qrels"], big["a"], big["b"], "-q", "-f", "tsv", "--quiet"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    err = without_sample_warnings(process.stderr.read().decode())
    assert process.wait(timeout=120) == 0
    assert first.startswith(b"run\tquery_id") and err == ""


# -- impossible work -----------------------------------------------------------------------------
def test_too_many_resamples_are_refused_up_front(cli: CLI, files: dict[str, Path]) -> None:
    started = time.monotonic()
    result = cli("compare", files["qrels"], files["a"], files["b"], "--resamples", "1000000000")
    message = result.assert_one_error_line(2)
    assert message == (
        "resamples=1000000000 must be an integer from 20 to 10,000,000 (randomizations and "
        "bootstrap resamples; fewer cannot give a p-value below 0.05): bootstrap intervals keep "
        "every resample (7.5 GiB per system and metric at this count), and the time grows with "
        "resamples times queries (about 1 s per million resamples and 100 queries); 10,000 (the "
        "default) already resolves p-values to 0.0001"
    )
    assert time.monotonic() - started < 30


def test_too_many_resamples_are_refused_by_the_library() -> None:
    from rankmeter.stats import MAX_RESAMPLES, bootstrap_intervals, paired_pvalues

    assert MAX_RESAMPLES == 10_000_000
    for call in (
        lambda: paired_pvalues([0.1, 0.2], resamples=MAX_RESAMPLES + 1),
        lambda: bootstrap_intervals([0.1, 0.2], resamples=MAX_RESAMPLES + 1),
    ):
        with pytest.raises(
            PolicyError,
            match=r"^resamples=10000001 must be an integer from 1 to 10,000,000 \(.*\): ",
        ):
            call()


def test_running_out_of_memory_is_one_line(
    cli: CLI, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import rankmeter.evaluation

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 104. GiB for an array with shape (1000000000, 14)")

    monkeypatch.setattr(rankmeter.evaluation, "evaluate", exhausted)
    result = cli("evaluate", files["qrels"], files["a"])
    assert result.assert_one_error_line(1) == (
        "out of memory (Unable to allocate 104. GiB for an array with shape (1000000000, 14)): "
        "try a smaller input, fewer runs or metrics, or fewer --resamples"
    )


@pytest.mark.parametrize(
    ("sig", "said"), [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")]
)
def test_a_signal_wrapped_by_python_is_still_a_signal(
    cli: CLI, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, sig: int, said: str
) -> None:
    # Seen in CI: Ctrl-C while pydantic's classes were being created; Python 3.11 wraps what a
    # descriptor's __set_name__ raises in a RuntimeError, which was reported as a bug (exit 70).
    import rankmeter.cli
    import rankmeter.evaluation

    def interrupted(*args: object, **kwargs: object) -> None:
        try:
            raise rankmeter.cli.Stopped(sig)
        except rankmeter.cli.Stopped as stop:
            raise RuntimeError(
                "Error calling __set_name__ on 'cached_property' instance 'data' in "
                "'LazyLocalNamespace'"
            ) from stop

    monkeypatch.setattr(rankmeter.evaluation, "evaluate", interrupted)
    result = cli("evaluate", files["qrels"], files["a"])
    assert (result.code, result.out, result.err) == (128 + sig, "", f"rankmeter: {said}\n")


# -- signals -------------------------------------------------------------------------------------
def _as_at_a_terminal() -> None:
    """SIGINT and SIGTERM as a command typed at a terminal gets them: the tests may run in a
    background job, which a shell starts with SIGINT ignored (and an ignored signal stays
    ignored, see test_a_signal_the_caller_ignores_stays_ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _interrupt(command: list[str | os.PathLike[str]], delay: float, sig: int) -> tuple[int, str]:
    process = subprocess.Popen(
        list(map(os.fspath, command)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_as_at_a_terminal,
    )
    time.sleep(delay)
    process.send_signal(sig)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, err.decode()


#: rankmeter's entry point, with one line on stdout ("working") when the command reads its first
#: input: the sign that start-up, the signal handlers and the imports are behind it and the
#: work has begun, so a test signals it then instead of after a guessed sleep. The command's
#: own output goes to -o, so that line is alone on stdout.
WORKING_LINE = """
import sys
import rankmeter.io

real_as_qrels = rankmeter.io.as_qrels

def as_qrels(*args, **kwargs):
    sys.stdout.write("working\\n")
    sys.stdout.flush()
    return real_as_qrels(*args, **kwargs)

rankmeter.io.as_qrels = as_qrels
sys.argv = ["rankmeter", *sys.argv[1:]]
from rankmeter.__main__ import main
sys.exit(main())
"""


def _started(args: list[Any], **options: Any) -> subprocess.Popen[bytes]:
    """``rankmeter ARGS`` in a subprocess that says "working" on stdout when its work begins."""
    return subprocess.Popen(
        [sys.executable, "-c", WORKING_LINE, *map(os.fspath, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **options,
    )


def _wait_until_working(process: subprocess.Popen[bytes]) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the line (or the end: then it is b"")
    assert line == b"working\n", (line, process.poll())


DELAYS = [0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]
# Frames that run before rankmeter's entry point takes over SIGINT: Python's start-up (the
# frozen modules, the standard library, `.pth` lines in <string>) and the package's __init__.
PYTHON_START = re.compile(
    r'  File "(<frozen [a-z_.]+>|<string>|[^"]*/lib/python3\.\d+/(?!site-packages/)[^"]*\.py'
    r'|[^"]*/rankmeter/(__init__|errors)\.py)"'
)


# The site module runs the `.pth` files of site-packages at start-up (setuptools'
# _distutils_hack, editable installs): code there is still Python's start-up.
SITE = re.compile(r'  File "(<frozen site>|[^"]*/lib/python3\.\d+/site\.py)"')
# What those `.pth` files install stays in Python's start-up: setuptools' _distutils_hack and an
# editable install's finder sit on sys.meta_path and run at every later import, runpy's too.
PTH_HOOK = re.compile(
    r'  File "[^"]*/site-packages/(_distutils_hack/[^"]*|__editable__[^"/]*)\.py"'
)
RANKMETER_CODE = re.compile(r'  File "[^"]*/rankmeter/(?!(__init__|errors)\.py")')


def _during_python_start(err: str) -> bool:
    """Python's own report of an interrupt before any of rankmeter's command code ran: a
    KeyboardInterrupt traceback (possibly after "Could not import runpy module" or a fatal
    "Failed to import the site module") whose every frame is Python's start-up: the
    interpreter's own modules, or whatever the site module runs from `.pth` files."""
    frames = [line for line in err.splitlines() if line.startswith('  File "')]
    in_site = False
    for frame in frames:
        in_site = in_site or bool(SITE.match(frame))
        if RANKMETER_CODE.match(frame):
            return False
        if not (PYTHON_START.match(frame) or PTH_HOOK.match(frame) or in_site):
            return False
    return "Traceback (most recent call last):\n" in err and err.endswith("KeyboardInterrupt\n")


# Seen in CI: Ctrl-C while runpy imports its modules, inside setuptools' meta path finder.
_RUNPY_IN_PTH_HOOK = """Could not import runpy module
Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
  File "<frozen runpy>", line 15, in <module>
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py", line 6, in <module>
    from collections import deque
  File "<frozen importlib._bootstrap>", line 1078, in _find_spec
  File "/x/.venv/lib/python3.11/site-packages/_distutils_hack/__init__.py", line 107, in find_spec
    method_name = 'spec_for_{fullname}'.format(**locals())
KeyboardInterrupt
"""


def test_what_counts_as_python_s_own_start() -> None:
    assert _during_python_start(_RUNPY_IN_PTH_HOOK)
    in_command = _RUNPY_IN_PTH_HOOK.replace(
        "_distutils_hack/__init__.py", "rankmeter/cli/__init__.py"
    )
    assert not _during_python_start(in_command)
    in_a_library = _RUNPY_IN_PTH_HOOK.replace("_distutils_hack/__init__.py", "numpy/__init__.py")
    assert not _during_python_start(in_a_library)
    assert not _during_python_start(_RUNPY_IN_PTH_HOOK.replace("KeyboardInterrupt", "ValueError"))


@pytest.mark.parametrize("entry", [ENTRY, SCRIPT], ids=["python -m", "script"])
def test_ctrl_c_at_any_moment_is_one_line(
    big: dict[str, Path], tmp_path: Path, entry: list[str]
) -> None:
    out = tmp_path / "report.json"
    out.write_text("old\n")
    command = [
        *entry, "compare", big["qrels"], big["a"], big["b"], "--resamples", "200000",
        "-f", "json", "-o", out,
    ]  # fmt: skip
    seen = set()
    for delay in DELAYS:
        code, err = _interrupt(command, delay, signal.SIGINT)
        assert "Exception ignored" not in err, (delay, err)
        if code == 130:
            assert err == "rankmeter: interrupted\n", (delay, err)
        elif code == 0:
            assert err == "", (delay, err)  # it had finished
        else:
            # Killed before Python installed any handler (no output), or interrupted during
            # Python's own start-up, which reports it itself (exit 1 or -SIGINT).
            assert code in (1, -signal.SIGINT), (delay, code, err)
            assert err == "" or _during_python_start(err), (delay, err)
        seen.add(code)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"], delay
    assert 130 in seen
    assert out.read_text() == "old\n" or out.read_text().startswith("{")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_the_caller_ignores_stays_ignored(
    big: dict[str, Path], tmp_path: Path, sig: int
) -> None:
    # A shell runs a script's background jobs (`cmd &`) with SIGINT ignored, and `trap '' INT`
    # ignores it on purpose: Ctrl-C meant for the foreground must not end them.
    out = tmp_path / "report.json"
    command = [
        *ENTRY, "compare", big["qrels"], big["a"], big["b"], "--resamples", "20000",
        "-f", "json", "-o", out,
    ]  # fmt: skip
    process = _started(command[len(ENTRY) :], preexec_fn=lambda: signal.signal(sig, signal.SIG_IGN))
    try:
        process.send_signal(sig)  # during Python's start
        _wait_until_working(process)
        process.send_signal(sig)  # and during the work
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert (process.returncode, err.decode()) == (0, "")
    assert out.read_text().startswith("{")


def test_sigterm_cleans_up_and_ends_with_one_line(big: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    command = [
        *ENTRY, "compare", big["qrels"], big["a"], big["b"], "--resamples", "200000",
        "-f", "json", "-o", out,
    ]  # fmt: skip
    for _ in range(2):
        process = _started(command[len(ENTRY) :], preexec_fn=_as_at_a_terminal)
        try:
            _wait_until_working(process)  # the work has begun: not a guess at how long that takes
            process.send_signal(signal.SIGTERM)
            _, raw = process.communicate(timeout=60)
        finally:
            process.kill()
        code, err = process.returncode, raw.decode()
        assert "Traceback" not in err, err
        assert (code, err) in {(-signal.SIGTERM, ""), (143, "rankmeter: terminated\n")}
        assert list(tmp_path.iterdir()) == []


# A signal that arrives while the output file is being written: the command unwinds, the
# temporary file is removed, the old file stays. (The signal is sent from inside the write, in
# a subprocess, so that the moment is certain.)
SIGNAL_DURING_WRITE = """
import os, signal, sys, tempfile
real_mkstemp = tempfile.mkstemp

def mkstemp_then_signal(*args, **kwargs):
    made = real_mkstemp(*args, **kwargs)
    os.kill(os.getpid(), signal.{name})
    return made

tempfile.mkstemp = mkstemp_then_signal
from rankmeter.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(
    ("name", "code", "line"),
    [("SIGINT", 130, "rankmeter: interrupted\n"), ("SIGTERM", 143, "rankmeter: terminated\n")],
)
def test_a_signal_during_the_write_leaves_the_old_file(
    files: dict[str, Path], tmp_path: Path, name: str, code: int, line: str
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "result.json"
    out.write_text("old\n")
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_DURING_WRITE.format(name=name),
         "evaluate", files["qrels"], files["a"], "-f", "json", "-o", out],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False,
        preexec_fn=_as_at_a_terminal,
    )  # fmt: skip
    assert (done.returncode, done.stderr.decode()) == (code, line)
    assert [p.name for p in out_dir.iterdir()] == ["result.json"]
    assert out.read_text() == "old\n"


# -- the end: no interpreter teardown after the command has finished --------------------------
ENDS_WITHOUT_TEARDOWN = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
sys.argv = ["rankmeter", *sys.argv[1:]]
from rankmeter.__main__ import main
main()
"""


@pytest.mark.parametrize(("extra", "code"), [([], 0), (["-m", "P@x"], 2)], ids=["ok", "usage"])
def test_the_command_ends_without_python_s_teardown(
    files: dict[str, Path], extra: list[str], code: int
) -> None:
    """Arrow's thread pool can abort the process in Python's module teardown after a command
    that succeeded (`terminate called without an active exception`, exit 134, seen under
    load): the entry point ends the process itself once the output is flushed, so atexit
    handlers and the teardown do not run, and the status is the command's."""
    done = subprocess.run(
        [sys.executable, "-c", ENDS_WITHOUT_TEARDOWN, "evaluate", files["qrels"], files["a"],
         "-f", "json", *extra],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert b"teardown ran" not in done.stderr
    if code == 0:
        assert done.stdout.rstrip().endswith(b"}")
        assert without_sample_warnings_bytes(done.stderr) == b""
    else:
        assert done.stdout == b"" and done.stderr.count(b"\n") == 1
