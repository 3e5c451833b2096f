"""`-o` and every file writer: only regular files are replaced; pipes, devices and descriptors
are written in place, symbolic links are followed, read-only files are refused.

Every node these tests write to is created in the test's own temporary directory (device nodes
with the numbers of /dev/null and /dev/full, which discard or refuse what is written): a broken
writer can then only replace a node of its own, never a system file.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from rankmeter.data import Run
from rankmeter.errors import FormatError
from rankmeter.io import read_run, write_trec_run
from rankmeter.io._atomic import atomic_write

from ._cli_support import CLI, without_sample_warnings_bytes

AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="creating device nodes needs root")


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".rankmeter-"))


def _device(path: Path, major: int, minor: int, kind: int = stat.S_IFCHR) -> Path:
    os.mknod(path, kind | 0o666, os.makedev(major, minor))
    return path


def _evaluate_json(cli: CLI, files: dict[str, Path], target: Path | str) -> tuple[int, str, str]:
    result = cli("evaluate", files["qrels"], files["a"], "-m", "P@2", "-f", "json", "-o", target)
    return result.code, result.out, result.err


# -- FIFOs --------------------------------------------------------------------------------------
def test_a_fifo_reader_receives_the_output_and_the_fifo_stays(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    # The reading end is opened first (without blocking), as `cat results.fifo &` would be.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert _evaluate_json(cli, files, fifo) == (0, "", "")
        received = b""
        while chunk := _read_available(reader):
            received += chunk
    finally:
        os.close(reader)
    assert json.loads(received)["metrics"]["P@2"] > 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


def _read_available(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def test_a_blocking_fifo_reader_gets_a_whole_run(tmp_path: Path) -> None:
    """The writers of runs (fuse, bm25, embed-eval --run-out) go through the same code."""
    fifo = tmp_path / "fused.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:  # blocks until the writer opens the FIFO
            received.append(handle.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    run = Run.from_dict({"q1": {"a": 2.0, "b": 1.0}}, name="fused")
    write_trec_run(run, fifo)
    thread.join(timeout=10)  # a replaced FIFO leaves the reader waiting
    assert received == [b"q1 Q0 a 1 2.0 fused\nq1 Q0 b 2 1.0 fused\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# -- character devices ----------------------------------------------------------------------------
@needs_root
def test_a_character_device_is_written_in_place(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    null = _device(tmp_path / "null", 1, 3)  # the numbers of /dev/null
    assert _evaluate_json(cli, files, null) == (0, "", "")
    info = os.lstat(null)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert _leftovers(tmp_path) == []


@needs_root
def test_a_full_device_is_one_error_line(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    full = _device(tmp_path / "full", 1, 7)  # the numbers of /dev/full
    result = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", full)
    assert result.assert_one_error_line(1) == f"{full}: cannot write: No space left on device"
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert _leftovers(tmp_path) == []


@needs_root
def test_a_device_is_opened_for_writing_without_truncation(tmp_path: Path) -> None:
    null = _device(tmp_path / "null", 1, 3)
    with atomic_write(null) as handle:
        flags = _open_flags(handle.fileno())
    assert flags & os.O_ACCMODE == os.O_WRONLY
    assert not flags & (os.O_TRUNC | os.O_CREAT)


def _open_flags(fd: int) -> int:
    with open(f"/proc/self/fdinfo/{fd}") as info:
        for line in info:
            if line.startswith("flags:"):
                return int(line.split()[1], 8)
    raise AssertionError("no flags in fdinfo")


# -- descriptors: /dev/stdout, /dev/fd/N ----------------------------------------------------------
def _process(args: list[str], stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", "from rankmeter.cli import main; main()", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", ["/dev/fd/1", "/proc/self/fd/1"])
def test_a_descriptor_path_writes_to_that_descriptor(files: dict[str, Path], name: str) -> None:
    done = _process(["evaluate", str(files["qrels"]), str(files["a"]), "-f", "json", "-o", name])
    assert (done.returncode, without_sample_warnings_bytes(done.stderr)) == (0, b"")
    assert "nDCG@10" in json.loads(done.stdout)["metrics"]


def test_dev_stdout_is_written_through_the_open_descriptor(
    files: dict[str, Path], tmp_path: Path
) -> None:
    from rankmeter.io._atomic import _descriptor

    # Checked here first, so that a broken writer is caught before it could replace the node.
    assert _descriptor("/dev/stdout") == 1 and _descriptor("/dev/stderr") == 2
    link = tmp_path / "out-link"
    link.symlink_to("/dev/stdout")
    assert _descriptor(str(link)) == 1
    out = tmp_path / "appended.txt"
    out.write_text("before\n")
    # `>> file`: the text goes after what is there, through the shell's own open descriptor.
    with open(out, "ab") as handle:
        args = ["evaluate", str(files["qrels"]), str(files["a"]), "-f", "json", "-o"]
        done = _process([*args, "/dev/stdout"], stdout=handle)
        assert (done.returncode, without_sample_warnings_bytes(done.stderr)) == (0, b"")
        done = _process([*args, str(link)], stdout=handle)
        assert (done.returncode, without_sample_warnings_bytes(done.stderr)) == (0, b"")
    text = out.read_text()
    assert text.startswith("before\n{") and text.count('"metrics"') == 2
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.path.islink("/dev/stdout")


def test_a_closed_descriptor_is_one_error_line(cli: CLI, files: dict[str, Path]) -> None:
    unused = os.open(os.devnull, os.O_RDONLY)
    os.close(unused)  # a descriptor number that is surely closed now
    result = cli("evaluate", files["qrels"], files["a"], "-o", f"/dev/fd/{unused}")
    assert result.assert_one_error_line(1) == f"/dev/fd/{unused}: cannot write: Bad file descriptor"


# -- symbolic links -------------------------------------------------------------------------------
def test_a_symlink_stays_a_link_and_its_target_gets_the_output(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "results.json"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    chained = tmp_path / "chained.json"
    chained.symlink_to("latest.json")  # relative, and a link to a link
    for name in (link, chained):
        target.write_text("old\n")
        assert _evaluate_json(cli, files, name) == (0, "", "")
        assert name.is_symlink()
        assert os.readlink(link) == str(target)
        assert json.loads(target.read_text())["metrics"]["P@2"] > 0
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == [] and _leftovers(real_dir) == []


def test_a_symlink_to_a_device_writes_the_device(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    link = tmp_path / "discard"
    link.symlink_to(os.devnull)
    assert _evaluate_json(cli, files, link) == (0, "", "")
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert _leftovers(tmp_path) == []


def test_a_dangling_symlink_creates_the_file_it_points_to(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    link = tmp_path / "next.json"
    link.symlink_to("made/by-link.json")
    result = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", link)
    assert result.assert_one_error_line(1) == f"{link}: cannot write: No such file or directory"
    (tmp_path / "made").mkdir()
    assert _evaluate_json(cli, files, link) == (0, "", "")
    assert link.is_symlink()
    assert json.loads((tmp_path / "made" / "by-link.json").read_text())["metrics"]["P@2"] > 0


def test_a_symlink_loop_is_one_error_line(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    result = cli("evaluate", files["qrels"], files["a"], "-o", loop)
    assert result.assert_one_error_line(1) == (
        f"{loop}: cannot write: Too many levels of symbolic links"
    )
    assert loop.is_symlink()


# -- read-only and other refusals ----------------------------------------------------------------
def test_a_read_only_file_is_refused(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    locked = tmp_path / "locked.json"
    locked.write_text("keep me\n")
    locked.chmod(0o444)
    link = tmp_path / "to-locked.json"
    link.symlink_to(locked)
    for name in (locked, link):
        result = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-o", name)
        assert result.assert_one_error_line(1) == (
            f"{name}: is read-only (mode 0444); rankmeter does not replace it: make it writable "
            "(chmod u+w) or write to another file"
        )
    assert locked.read_text() == "keep me\n" and stat.S_IMODE(locked.stat().st_mode) == 0o444
    with pytest.raises(FormatError, match=r"locked\.json: is read-only \(mode 0444\)"):
        write_trec_run(Run.from_dict({"q": {"d": 1.0}}), locked)
    assert _leftovers(tmp_path) == []


def test_a_socket_is_refused(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        result = cli("evaluate", files["qrels"], files["a"], "-o", path)
        assert result.assert_one_error_line(1) == (
            f"{path}: is a socket; rankmeter writes only to files, pipes (FIFOs) and character "
            "devices such as /dev/null"
        )
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


@needs_root
def test_a_block_device_is_refused(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    # Major 240 is reserved for local use: no driver answers it, should anything open it.
    disk = _device(tmp_path / "disk", 240, 0, stat.S_IFBLK)
    result = cli("evaluate", files["qrels"], files["a"], "-o", disk)
    assert "is a block device; rankmeter writes only to files" in result.assert_one_error_line(1)
    assert stat.S_ISBLK(os.lstat(disk).st_mode)


# -- replaced regular files keep what they had ---------------------------------------------------
@needs_root
def test_a_replaced_file_keeps_its_owner_and_mode(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    owned = tmp_path / "theirs.json"
    owned.write_text("old\n")
    os.chown(owned, 4321, 4322)
    owned.chmod(0o664)
    assert _evaluate_json(cli, files, owned) == (0, "", "")
    info = owned.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o664)
    assert json.loads(owned.read_text())["metrics"]["P@2"] > 0


def test_write_trec_run_follows_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "run.txt"
    target.write_text("old\n")
    link = tmp_path / "current.run"
    link.symlink_to(target.name)
    write_trec_run(Run.from_dict({"q1": {"a": 1.0}}, name="x"), link)
    assert link.is_symlink() and read_run(target).name == "x"
