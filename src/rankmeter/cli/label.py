"""`rankmeter label --pool P --queries Q --corpus C --labeler module:function -o QRELS`: grade
every item of a pool with a labeler, written as TREC qrels."""

from __future__ import annotations

from typing import Annotated

import typer

from rankmeter.cli._common import QuietOption, check_output, keep_inputs

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
    keep_inputs(
        output, {"--pool": pool, "--queries": queries, "--corpus": corpus, "--cache": cache}
    )
    import sys

    from rankmeter.errors import PolicyError
    from rankmeter.judgments.model_labels import label_with_model
    from rankmeter.report import Steps, render
    from rankmeter.report.judging import model_labels_lines

    if [pool, queries, corpus].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    labelled = label_with_model(
        pool, queries, corpus, labeler=labeler, endpoint=endpoint, scale=scale, model=model,
        api_key_env=api_key_env, cache=cache, workers=workers, timeout=timeout,
        calibrate=calibrate, calibrate_queries=calibrate_queries, min_kappa=min_kappa,
        progress=lambda total: Steps(total=total, enabled=False if quiet else None),
    )  # fmt: skip
    render(labelled, "trec", output)
    for line in model_labels_lines(labelled):
        print(line, file=sys.stderr if output == "-" else sys.stdout)


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


def _print_prompt(scale: str) -> None:
    from rankmeter.judgments.model_labels import default_prompt

    print(default_prompt(scale))
    raise typer.Exit()


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(label)
