"""Embeddings cached on disk: one ``.npy`` per (model, kind, texts), written atomically.

A file is named by hashes of what produced it: the model's identity and the exact texts
embedded, so a changed model, corpus or query set never reads a stale file. A file that cannot
be read, or whose shape, dtype or values are not what the texts call for, is ignored (and
rewritten), never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.errors import PolicyError

__all__ = ["EmbeddingCache", "cache_of", "default_cache_dir", "texts_key"]

# Bumped when the layout or the meaning of a cached file changes.
FORMAT_VERSION = "2"

Embeddings = npt.NDArray[np.float32]


def default_cache_dir() -> Path:
    """``$RANKMETER_CACHE/embeddings``, else ``$XDG_CACHE_HOME/rankmeter/embeddings``, else
    ``~/.cache/rankmeter/embeddings``."""
    root = os.environ.get("RANKMETER_CACHE")
    if root:
        return Path(root).expanduser() / "embeddings"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "rankmeter" / "embeddings"


def texts_key(texts: Sequence[str]) -> str:
    """A hash of the texts in order (each length-prefixed, so no two lists share one)."""
    digest = hashlib.sha256(f"texts {len(texts)}\n".encode())
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class EmbeddingCache:
    """A folder of cached embedding matrices.

    Parameters
    ----------
    folder : where the files live (created on first write)
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder).expanduser()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.folder)!r})"

    def path(self, model_key: str, kind: str, texts: str) -> Path:
        """The file for ``kind`` (``"corpus"`` or ``"queries"``) embeddings of these texts."""
        return self.folder / f"v{FORMAT_VERSION}-{model_key[:32]}" / f"{kind}-{texts[:32]}.npy"

    def load(
        self,
        path: Path,
        rows: int,
        check: Callable[[Embeddings], bool] | None = None,
    ) -> Embeddings | None:
        """The cached matrix, or None when absent or not trustworthy.

        Trusted only when it is a 2-D float32 array with ``rows`` rows and a positive width,
        all finite, and ``check`` (if given) accepts it.
        """
        try:
            array = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError):
            return None  # truncated or not an .npy file at all: recompute
        if not isinstance(array, np.ndarray) or array.dtype != np.float32:
            return None
        if array.ndim != 2 or array.shape[0] != rows or array.shape[1] == 0:
            return None
        if not np.isfinite(array).all():
            return None
        if check is not None and not check(array):
            return None
        return array

    def save(self, path: Path, array: Embeddings) -> None:
        """Write atomically (a temporary file renamed into place). A cache that cannot be
        written is a warning, not a failure: the embeddings are still returned."""
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".rankmeter-", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, np.ascontiguousarray(array, dtype=np.float32))
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            warnings.warn(
                f"rankmeter: cannot write the embedding cache {path}: {exc.strerror or exc}",
                RuntimeWarning,
                stacklevel=3,
            )
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def cache_of(cache: Any) -> EmbeddingCache | None:
    """The cache a ``cache=`` argument names: True the default folder, a folder, or None for
    False/None (no cache)."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return EmbeddingCache(default_cache_dir())
    if isinstance(cache, (str, os.PathLike)):
        return EmbeddingCache(cache)
    raise PolicyError(f"cache={cache!r}: give a folder, True (the default folder) or False")
