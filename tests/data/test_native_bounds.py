"""The compiled loops refuse arguments that do not fit their buffers, instead of reading or
writing past them.

rankmeter's own callers pass consistent buffers; these calls are the ones a caller's bug (or
a size computed with an overflow) would make. Each runs in a child process, since before the
checks a call could crash the interpreter: the buffers are placed next to a page that may not
be read (``mprotect``), so a read past a buffer's end, or before its start, is a segmentation
fault and not a silent read of whatever lies there.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from rankmeter.data import _compiled

pytestmark = [
    pytest.mark.skipif(
        _compiled.NATIVE is None,
        reason="the C extension rankmeter.data._native was not built here (no C compiler when "
        "installing, or RANKMETER_PURE=1)",
    ),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through libc"),
]

# Buffers that end at (or start at) a page that may not be touched.
GUARDED = textwrap.dedent(
    """
    import ctypes, mmap, sys
    import numpy as np
    from rankmeter.data import _native

    PAGE = mmap.PAGESIZE
    _kept = []

    def _pages():
        area = mmap.mmap(-1, 3 * PAGE)
        _kept.append(area)
        base = ctypes.addressof(ctypes.c_char.from_buffer(area))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        for page in (0, 2):  # PROT_NONE before and after the middle page
            assert libc.mprotect(base + page * PAGE, PAGE, 0) == 0
        return memoryview(area)

    def at_end(data):
        # data's bytes, the last of them just before an unreadable page
        view = _pages()
        stop = 2 * PAGE
        view[stop - len(data) : stop] = data
        return view[stop - len(data) : stop]

    def at_start(data):
        # data's bytes, the first of them just after an unreadable page
        view = _pages()
        view[PAGE : PAGE + len(data)] = data
        return view[PAGE : PAGE + len(data)]

    def call(function, *args):
        try:
            function(*args)
        except ValueError as error:
            print("ValueError:", error)
        else:
            print("accepted")
    """
)


def run_guarded(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", GUARDED + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"crashed (exit {done.returncode}): {done.stderr[-500:]}"
    return done.stdout.strip()


def test_hash_strings_refuses_a_count_that_overflows() -> None:
    # first + n + 1 and n * 8 overflowed: the size checks passed and the loop read offsets
    # (and wrote hashes) past their buffers.
    out = run_guarded(
        """
        offsets = at_end(np.zeros(2, np.int32).tobytes())
        call(_native.hash_strings, offsets, False, 0, sys.maxsize, b"ab", np.empty(1, np.uint64))
        call(_native.hash_strings, offsets, False, 2**62, 1, b"ab", np.empty(1, np.uint64))
        """
    )
    assert out.splitlines() == ["ValueError: offsets: 8 bytes, more needed"] * 2


def test_dictionary_codes_refuses_a_count_that_overflows() -> None:
    out = run_guarded(
        """
        offsets = at_end(np.zeros(2, np.int32).tobytes())
        out = np.empty(1, np.int64)
        call(_native.dictionary_codes, offsets, False, 0, sys.maxsize, b"ab",
             np.zeros(1, np.uint64), out, out.copy())
        """
    )
    assert out == "ValueError: offsets: 8 bytes, more needed"


def test_find_keys_refuses_segments_that_are_not_whole_offsets() -> None:
    # A segments buffer of 1 to 15 bytes made the segment count -1 or 0: the loop read
    # segment offsets past the buffer's end (and before its start).
    out = run_guarded(
        """
        probes = np.zeros(2, np.uint64)
        for size in (4, 12):
            segments = at_end(np.array([0, 2], np.int64).tobytes()[:size])
            call(_native.find_keys, b"", 60, b"", b"", probes, probes, segments,
                 np.zeros(1, np.uint64), b"\\x00", b"", np.empty(2, np.int64),
                 np.empty(2, np.int64))
        """
    )
    assert out.splitlines() == [
        "ValueError: segments: 4 bytes, not whole int64 offsets (at least 2)",
        "ValueError: segments: 12 bytes, not whole int64 offsets (at least 2)",
    ]


def test_find_keys_with_no_keys_reads_no_key_order() -> None:
    # A shared slot (negative) in a table over no keys: the binary search fell back to
    # order[-1], the 8 bytes before the order buffer.
    out = run_guarded(
        """
        table = np.full(1 << 4, -1, np.int32)
        order = at_start(b"")
        probes = np.zeros(2, np.uint64)
        call(_native.find_keys, table, 60, b"", order, b"", probes, b"", b"", b"", b"",
             np.empty(2, np.int64), np.empty(2, np.int64))
        """
    )
    assert out == "ValueError: inconsistent key table or segments"
