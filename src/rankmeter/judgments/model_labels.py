"""A pool labelled by a model, as ``rankmeter label`` does it: a Python labeler
(``module:function``), the packaged MiniLM model calibrated on human labels, or a model behind
an OpenAI-compatible chat endpoint, every option checked before the pool is read.

:func:`label_with_model` returns :class:`ModelLabels`: the qrels and what made them (the
fitted thresholds, the endpoint's requests), for a summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    from rankmeter.data import Qrels
    from rankmeter.judgments.chat_labeler import ChatLabeler
    from rankmeter.judgments.embedding_labeler import EmbeddingLabeler

__all__ = ["ModelLabels", "Progress", "check_default_scale", "default_prompt", "label_with_model"]


class Progress(Protocol):
    """What reports labelling progress: ``start(label)`` as each pool item begins."""

    def start(self, label: str) -> None: ...


@dataclass(frozen=True)
class ModelLabels:
    """The qrels a model gave a pool and what gave them: ``labeler`` (the ``module:function``
    given, ``"minilm"``, or the endpoint's model name), ``fitted`` (MiniLM's calibrated
    labeler) or ``chat`` (the endpoint's labeler, closed, with its request counts)."""

    qrels: Qrels
    labeler: str
    fitted: EmbeddingLabeler | None = None
    chat: ChatLabeler | None = None


def check_default_scale(scale: str) -> tuple[int, int]:
    """``scale`` (``LOW-HIGH``) for the default chat prompt, which describes 0-3 only: the
    bounds, or a :class:`PolicyError` saying how to use another scale."""
    from rankmeter.data.labels import parse_scale
    from rankmeter.judgments.chat_labeler import DEFAULT_SCALE

    bounds = parse_scale(scale)
    if bounds != DEFAULT_SCALE:
        low, high = DEFAULT_SCALE
        raise PolicyError(
            f"--scale {scale}: the prompt sent to --endpoint models describes the grades "
            f"{low}-{high} only (give --scale {low}-{high}; for another scale, "
            "rankmeter.judgments.ChatLabeler takes a prompt of your own in Python)"
        )
    return bounds


def default_prompt(scale: str = "0-3") -> str:
    """The messages the default chat prompt sends, the scale filled in and the texts'
    placeholders left: ``[system]``, its text, ``[user]``, the prompt.

    >>> default_prompt().splitlines()[0]
    '[system]'
    """
    from rankmeter.judgments.chat_labeler import DEFAULT_PROMPT, DEFAULT_SYSTEM

    low, high = check_default_scale(scale)
    user = DEFAULT_PROMPT.replace("{low}", str(low)).replace("{high}", str(high))
    return f"[system]\n{DEFAULT_SYSTEM}\n\n[user]\n{user}"


def label_with_model(
    pool: Any,
    queries: Any,
    corpus: Any,
    *,
    labeler: str | Callable[[str, str], Any] | None = None,
    endpoint: str | None = None,
    scale: str = "0-3",
    model: str | None = None,
    api_key_env: str | None = None,
    cache: str | None = None,
    workers: int = 4,
    timeout: float = 60.0,
    calibrate: Any = None,
    calibrate_queries: Any = None,
    min_kappa: float | None = None,
    progress: Callable[[int], AbstractContextManager[Progress]] | None = None,
) -> ModelLabels:
    """Label every item of ``pool`` (a pool file, ``-`` for stdin) with one model.

    Exactly one of ``labeler`` (a callable ``(query_text, doc_text) -> grade``, or
    ``"module:function"`` naming one; or ``"minilm"``, the packaged embedding model with thresholds fitted on the human
    qrels ``calibrate``, on ``calibrate_queries`` only if given, refusing below ``min_kappa``,
    default 0.4) and ``endpoint`` (an OpenAI-compatible server's URL serving ``model``, asked
    with the default prompt, ``workers`` requests at a time, each within ``timeout`` seconds,
    grades kept in ``cache``). ``progress(n)``: a context manager over the ``n`` items (its
    ``start`` called as each begins). Every option is checked before the pool is read.
    """
    if (labeler is None) == (endpoint is None):
        raise PolicyError("give exactly one of --labeler module:function and --endpoint URL")
    if labeler != "minilm" and (
        calibrate is not None or calibrate_queries is not None or min_kappa is not None
    ):
        raise PolicyError(
            "--calibrate, --calibrate-queries and --min-kappa go with --labeler minilm"
        )
    steps = progress or (lambda total: nullcontext(None))  # type: ignore[arg-type,return-value]
    source = (
        "<stdin>"
        if pool == "-"
        else (os.fspath(pool) if isinstance(pool, (str, os.PathLike)) else None)
    )
    if labeler == "minilm":
        return _minilm(
            pool, queries, corpus, scale, calibrate, calibrate_queries, min_kappa, steps, source
        )
    if endpoint is not None:
        return _endpoint(
            pool, queries, corpus, endpoint, model, api_key_env, cache, workers, timeout,
            scale, steps, source,
        )  # fmt: skip
    from rankmeter.io import read_pool
    from rankmeter.judgments.labelers import label_pool, load_labeler

    assert labeler is not None
    if isinstance(labeler, str):
        function, name = load_labeler(labeler), labeler
    elif callable(labeler):
        function, name = labeler, _callable_name(labeler)
    else:
        raise PolicyError(
            "labeler= must be a callable (query_text, doc_text) -> grade, 'module:function' or "
            f"'minilm', got {type(labeler).__name__}"
        )
    items = read_pool(pool)
    # One step per item: a model may take seconds each, and the bar says how far it is.
    with steps(len(items)) as bar:
        qrels = label_pool(
            items,
            queries,
            corpus,
            function,
            scale=scale,
            progress=None if bar is None else bar.start,
            source=source,
        )
    return ModelLabels(qrels, name)


def _callable_name(function: Callable[..., Any]) -> str:
    """A labeler passed as a callable, named as ``module:function`` names one."""
    module = getattr(function, "__module__", None)
    qualified = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{qualified}" if module else qualified


def _endpoint(
    pool: Any,
    queries: Any,
    corpus: Any,
    endpoint: str,
    model: str | None,
    api_key_env: str | None,
    cache: str | None,
    workers: int,
    timeout: float,
    scale: str,
    steps: Callable[[int], AbstractContextManager[Progress | None]],
    source: str | None,
) -> ModelLabels:
    """The pool labelled by a ChatLabeler, several requests at a time."""
    from rankmeter.io import read_pool
    from rankmeter.judgments.chat_labeler import ChatLabeler

    if model is None:
        raise PolicyError("--endpoint needs --model NAME, the model the server serves")
    check_default_scale(scale)
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise PolicyError(f"--api-key-env {api_key_env}: that environment variable is not set")
    # The URL and the key are checked here, before any file is read or request sent.
    chat = ChatLabeler(
        endpoint, model, api_key_env=api_key_env, scale=scale, cache=cache, timeout=timeout
    )
    try:
        items = read_pool(pool)
        with steps(len(items)) as bar:
            qrels = chat.label_pool(
                items,
                queries,
                corpus,
                workers=workers,
                progress=None if bar is None else bar.start,
                source=source,
            )
    finally:
        chat.close()
    return ModelLabels(qrels, model, chat=chat)


def _minilm(
    pool: Any,
    queries: Any,
    corpus: Any,
    scale: str,
    calibrate: Any,
    calibrate_queries: Any,
    min_kappa: float | None,
    steps: Callable[[int], AbstractContextManager[Progress | None]],
    source: str | None,
) -> ModelLabels:
    """MiniLM's thresholds fitted on the human-judged pool items, then the pool labelled (if
    they agree with the human labels enough)."""
    from rankmeter.io import read_pool
    from rankmeter.judgments.embedding_labeler import DEFAULT_MIN_KAPPA, EmbeddingLabeler

    if calibrate is None:
        raise PolicyError(
            "--labeler minilm needs --calibrate HUMAN_QRELS (its grade thresholds are fitted "
            "on the pool items those human labels judge)"
        )
    if "-" in (queries, corpus):
        raise PolicyError(
            "--labeler minilm reads --queries and --corpus twice (to calibrate, then to "
            "label): give files, not -"
        )
    items = read_pool(pool)
    fitted = EmbeddingLabeler.calibrated(
        calibrate,
        items,
        queries,
        corpus,
        scale=scale,
        queries_subset=calibrate_queries,
        min_kappa=DEFAULT_MIN_KAPPA if min_kappa is None else min_kappa,
    )
    with steps(len(items)) as bar:
        qrels = fitted.label(
            items, queries, corpus, progress=None if bar is None else bar.start, source=source
        )
    return ModelLabels(qrels, "minilm", fitted=fitted)
