"""A database file made read-only for a test, in a read-only folder (so that SQLite cannot make
its WAL's side files beside it either), also where the tests run as root (who writes any file
whatever its mode bits: there the immutable attribute, chattr +i, does it)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only_file(path: Path) -> Iterator[None]:
    """``path`` and its folder read-only for this process; skips where that is not possible."""
    targets = [path, path.parent]
    path.chmod(0o444)
    path.parent.chmod(0o555)
    immutable = False
    try:
        if os.geteuid() == 0:
            done = subprocess.run(
                ["chattr", "+i", *map(str, targets)], capture_output=True, check=False
            )
            immutable = True
            if done.returncode != 0:
                pytest.skip(f"running as root and chattr +i failed: {done.stderr.decode().strip()}")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", *map(str, reversed(targets))], check=False)
        path.parent.chmod(0o755)
        path.chmod(0o644)
