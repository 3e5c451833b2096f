"""Write files so that nothing is ever half-written: a temporary file renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TextIO

from rankmeter.errors import FormatError


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Yield a text handle whose contents replace ``path`` only when the block succeeds.

    A failure to create, write or rename the file raises :class:`FormatError` naming the path;
    the temporary file is removed and an existing file at ``path`` is left untouched.
    """
    target = os.fspath(path)
    if os.path.isdir(target):
        raise FormatError(target, "is a directory; give a file name to write to")
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankmeter-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
        raise


def _mode_for(target: str) -> int:
    """The permissions of the file being replaced, or the default for a new file (umask)."""
    try:
        return os.stat(target).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
