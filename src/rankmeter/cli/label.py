"""`rankmeter label --pool P --queries Q --corpus C --labeler module:function -o QRELS`: grade
every item of a pool with a labeler, written as TREC qrels."""

from __future__ import annotations

from typing import Annotated

import typer

from rankmeter.cli._common import QuietOption, check_output, emit

# -o as every command declares it (checked before any work), but required: the qrels are the
# command's product.
LabelOutputOption = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Write the model's labels here as TREC qrels (atomically); - for stdout.",
        callback=check_output,
    ),
]


def label(
    pool: Annotated[str, typer.Option("--pool", help="The pool file (from rankmeter pool).")],
    queries: Annotated[
        str,
        typer.Option(help="Query texts: BEIR queries.jsonl, qid<TAB>text, or a table."),
    ],
    corpus: Annotated[str, typer.Option(help="The documents: BEIR corpus.jsonl.")],
    output: LabelOutputOption,
    labeler: Annotated[
        str | None,
        typer.Option(
            help="module:function, a callable (query_text, doc_text) -> grade; the current "
            "directory is searched first. minilm: the packaged MiniLM embedding model, "
            "cosine cut into grades fitted on --calibrate."
        ),
    ] = None,
    scale: Annotated[
        str,
        typer.Option(
            help="The grades the labeler may give (--endpoint: 0-3, the grades its prompt "
            "describes).",
            is_eager=True,
            callback=_scale_for_show_prompt,
        ),
    ] = "0-3",
    quiet: QuietOption = False,
    # A model behind an OpenAI-compatible chat endpoint, instead of --labeler.
    endpoint: Annotated[
        str | None,
        typer.Option(
            help="Instead of --labeler: an OpenAI-compatible server's URL (vLLM, llama.cpp, "
            "Ollama), asked at /v1/chat/completions."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="With --endpoint: the model name the server serves.")
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="With --endpoint: the environment variable holding the API key (default "
            "RANKMETER_API_KEY, then OPENAI_API_KEY)."
        ),
    ] = None,
    cache: Annotated[
        str | None,
        typer.Option(
            help="With --endpoint: an SQLite file of grades given; nothing is asked twice."
        ),
    ] = None,
    workers: Annotated[int, typer.Option(help="With --endpoint: requests in flight at once.")] = 4,
    timeout: Annotated[
        float,
        typer.Option(
            help="With --endpoint: seconds one request may take in all (connecting, sending, "
            "the whole reply); one that runs out is tried again, up to 3 times."
        ),
    ] = 60.0,
    show_prompt: Annotated[
        bool,
        typer.Option(
            "--show-prompt",
            help="Print the prompt sent to --endpoint models and exit.",
            is_eager=True,
            callback=_show_prompt,
        ),
    ] = False,
    calibrate: Annotated[
        str | None,
        typer.Option(
            "--calibrate",
            help="Human qrels (--labeler minilm, required): the thresholds are fitted on the "
            "pool items they judge.",
        ),
    ] = None,
    calibrate_queries: Annotated[
        str | None,
        typer.Option(
            "--calibrate-queries",
            help="Fit on these queries' human labels only: a file of query ids (one a line) "
            "or 'half' (every other query, the rest left to audit).",
        ),
    ] = None,
    min_kappa: Annotated[
        float | None,
        typer.Option(
            "--min-kappa",
            help="--labeler minilm: label only if the fit reaches this quadratic weighted "
            "kappa on the calibration items (default 0.4, moderate agreement); -1 labels "
            "whatever the agreement.",
        ),
    ] = None,
) -> None:
    """Label a pool with a model: every (query, doc) item graded by the labeler, the grades
    written as TREC qrels (check them against human labels with rankmeter audit-labels)."""
    import sys

    from rankmeter.cli._progress import Steps
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_pool, trec_qrels_text
    from rankmeter.judgments import label_pool, load_labeler
    from rankmeter.report import terminal_safe

    if [pool, queries, corpus].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if (labeler is None) == (endpoint is None):
        raise PolicyError("give exactly one of --labeler module:function and --endpoint URL")
    if labeler != "minilm" and (
        calibrate is not None or calibrate_queries is not None or min_kappa is not None
    ):
        raise PolicyError(
            "--calibrate, --calibrate-queries and --min-kappa go with --labeler minilm"
        )
    if labeler == "minilm":
        _label_minilm(
            pool, queries, corpus, output, scale, quiet, calibrate, calibrate_queries, min_kappa
        )
        return
    if endpoint is not None:
        _label_with_endpoint(
            pool, queries, corpus, output, endpoint, model, api_key_env, cache, workers,
            timeout, scale, quiet,
        )  # fmt: skip
        return
    assert labeler is not None
    function = load_labeler(labeler)
    items = read_pool(pool)
    # One step per item: a model may take seconds each, and the bar says how far it is.
    with Steps(total=len(items), enabled=False if quiet else None) as steps:
        qrels = label_pool(
            items,
            queries,
            corpus,
            function,
            scale=scale,
            progress=steps.start,
            source="<stdin>" if pool == "-" else pool,
        )
    text = trec_qrels_text(qrels)
    emit(terminal_safe(text, output), output)
    print(
        f"{len(qrels)} items of {qrels.n_queries} queries labelled by {labeler}",
        file=sys.stderr if output == "-" else sys.stdout,
    )


def _show_prompt(ctx: typer.Context, value: bool) -> None:
    """--show-prompt: the messages a --endpoint model is sent, the scale filled in and the
    texts' placeholders left. --scale and --show-prompt are both eager: whichever of the two
    is processed second prints (--scale's value is known only once it is processed)."""
    if value:
        if "scale" in ctx.params:
            _print_prompt(ctx.params["scale"])
        ctx.meta["rankmeter.show_prompt"] = True


def _scale_for_show_prompt(ctx: typer.Context, value: str) -> str:
    if ctx.meta.get("rankmeter.show_prompt"):
        _print_prompt(value)
    return value


def _check_endpoint_scale(scale: str) -> tuple[int, int]:
    """--scale for --endpoint: the default prompt's own, 0-3, as the command takes no prompt."""
    from rankmeter.data.labels import parse_scale
    from rankmeter.errors import PolicyError
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


def _print_prompt(scale: str) -> None:
    from rankmeter.judgments.chat_labeler import DEFAULT_PROMPT, DEFAULT_SYSTEM

    low, high = _check_endpoint_scale(scale)
    user = DEFAULT_PROMPT.replace("{low}", str(low)).replace("{high}", str(high))
    print(f"[system]\n{DEFAULT_SYSTEM}\n\n[user]\n{user}")
    raise typer.Exit()


def _label_with_endpoint(
    pool: str,
    queries: str,
    corpus: str,
    output: str,
    endpoint: str,
    model: str | None,
    api_key_env: str | None,
    cache: str | None,
    workers: int,
    timeout: float,
    scale: str,
    quiet: bool,
) -> None:
    """--endpoint: label the pool with a ChatLabeler, several requests at a time."""
    import os
    import sys

    from rankmeter.cli._progress import Steps
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_pool, trec_qrels_text
    from rankmeter.judgments import ChatLabeler
    from rankmeter.report import terminal_safe, visible

    if model is None:
        raise PolicyError("--endpoint needs --model NAME, the model the server serves")
    _check_endpoint_scale(scale)
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise PolicyError(f"--api-key-env {api_key_env}: that environment variable is not set")
    # The URL and the key are checked here, before any file is read or request sent.
    labeler = ChatLabeler(
        endpoint, model, api_key_env=api_key_env, scale=scale, cache=cache, timeout=timeout
    )
    try:
        items = read_pool(pool)
        with Steps(total=len(items), enabled=False if quiet else None) as steps:
            qrels = labeler.label_pool(
                items,
                queries,
                corpus,
                workers=workers,
                progress=steps.start,
                source="<stdin>" if pool == "-" else pool,
            )
    finally:
        labeler.close()
    emit(terminal_safe(trec_qrels_text(qrels), output), output)
    print(
        f"{len(qrels)} items of {qrels.n_queries} queries labelled by "
        f"{visible(model)} at {visible(labeler.url)} ({labeler.requests} requests, "
        f"{labeler.cached} from the cache)",
        file=sys.stderr if output == "-" else sys.stdout,
    )


def _label_minilm(
    pool: str,
    queries: str,
    corpus: str,
    output: str,
    scale: str,
    quiet: bool,
    calibrate: str | None,
    calibrate_queries: str | None,
    min_kappa: float | None,
) -> None:
    """--labeler minilm: fit the thresholds on the human-judged pool items, then label (if
    they agree with the human labels enough)."""
    import sys

    from rankmeter.cli._progress import Steps
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_pool, trec_qrels_text
    from rankmeter.judgments import EmbeddingLabeler
    from rankmeter.judgments.embedding_labeler import DEFAULT_MIN_KAPPA
    from rankmeter.report import terminal_safe

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
    source = "<stdin>" if pool == "-" else pool
    fitted = EmbeddingLabeler.calibrated(
        calibrate,
        items,
        queries,
        corpus,
        scale=scale,
        queries_subset=calibrate_queries,
        min_kappa=DEFAULT_MIN_KAPPA if min_kappa is None else min_kappa,
    )
    with Steps(total=len(items), enabled=False if quiet else None) as steps:
        qrels = fitted.label(items, queries, corpus, progress=steps.start, source=source)
    emit(terminal_safe(trec_qrels_text(qrels), output), output)
    low = fitted.scale[0]
    cuts = ", ".join(f"{low + i + 1} from {c:.4f}" for i, c in enumerate(fitted.thresholds))
    summary = sys.stderr if output == "-" else sys.stdout
    print(
        f"minilm thresholds fitted on {fitted.n_calibration} human-labelled items of "
        f"{len(fitted.calibration_queries)} queries (quadratic weighted kappa "
        f"{fitted.calibration_kappa:.3f}): cosine grade {cuts}",
        file=summary,
    )
    print(f"{len(qrels)} items of {qrels.n_queries} queries labelled by minilm", file=summary)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(label)
