"""Write files so that nothing is ever half-written: a temporary file renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TextIO


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".rankmeter-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
