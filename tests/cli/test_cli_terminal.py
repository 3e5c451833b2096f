"""Terminal escape injection: ids, names, texts and paths full of control sequences never reach
a terminal raw.

Human-facing outputs (tables, explain text, Markdown, LaTeX, HTML, error lines) always show
control characters as visible escapes; data formats (TSV, trec_eval lines, TREC runs) are
byte-exact in a file or a pipe and escaped at a terminal; JSON escapes them as JSON does.

Every command runs for real in a child process whose stdout and stderr are pseudo-terminals
(os.openpty), so that isatty() is true there, or pipes. One child runs a list of commands, to
keep the start-up cost of one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

OSC_TITLE = "\x1b]0;PWNED\x07"  # sets the terminal's title
OSC_CLIPBOARD = "\x1b]52;c;SGVsbG8=\x07"  # writes the clipboard
CSI = "\x1b[2J"  # clears the screen
C1_CSI = "\x9b6n"  # the same CSI as one C1 character: asks the terminal to answer
MARKUP = "[link=http://evil]x[/link][/y]"  # rich markup: a hyperlink, then a crash

Q1 = "q1" + OSC_TITLE
Q2 = "q2" + OSC_CLIPBOARD
Q3 = "q3" + CSI + C1_CSI
TAG_A = "bm25" + OSC_TITLE
TAG_B = "dense" + C1_CSI + MARKUP
DOC = "d1" + CSI

# What a terminal must never receive: C0 controls but newline, tab and carriage return (the
# terminal's own line ending), DEL, C1, the line separators and the bidi controls.
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# rich's own colours and styles are the only escape sequences allowed at a terminal.
STYLE = re.compile(r"\x1b\[[0-9;]*m")
END = "\n@@end-of-command@@\n"

CHILD = r"""
import hashlib, json, re, sys
import numpy as np
from rankmeter.vector import embed
from rankmeter.cli import main


class Stub:
    def encode(self, sentences, **_):
        out = np.zeros((len(sentences), 16), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                out[row, hashlib.md5(word.encode()).digest()[0] % 16] += 1.0
        return out


embed._load_folder = lambda folder: Stub()
for args in json.load(open(sys.argv[1], encoding="utf-8")):
    try:
        main(args)
    except SystemExit:
        pass
    for stream in (sys.stdout, sys.stderr):
        stream.write(END)
        stream.flush()
""".replace("END", repr(END))


def write_hostile_files(root: Path) -> dict[str, Path]:
    """Qrels, runs, query texts, segments, a BEIR collection and vectors, all hostile."""
    root.mkdir()
    files = {name: root / name for name in ("qrels.txt", "a.run", "b.run", "q.tsv", "seg.tsv")}
    files["qrels.txt"].write_text(
        f"{Q1} 0 {DOC} 1\n{Q1} 0 d2 0\n{Q2} 0 d2 1\n{Q3} 0 d3 1\n", encoding="utf-8"
    )
    files["a.run"].write_text(
        f"{Q1} Q0 {DOC} 1 3.0 {TAG_A}\n{Q1} Q0 d2 2 2.0 {TAG_A}\n"
        f"{Q2} Q0 d2 1 1.0 {TAG_A}\n{Q3} Q0 d9 1 1.0 {TAG_A}\n",
        encoding="utf-8",
    )
    files["b.run"].write_text(
        f"{Q1} Q0 d2 1 3.0 {TAG_B}\n{Q1} Q0 {DOC} 2 2.0 {TAG_B}\n{Q3} Q0 d3 1 1.0 {TAG_B}\n",
        encoding="utf-8",
    )
    files["q.tsv"].write_text(
        f"{Q1}\ttext {OSC_CLIPBOARD} \u2028 \u202eevil\n{Q2}\tsecond {CSI}\n", encoding="utf-8"
    )
    files["seg.tsv"].write_text(
        f"query_id\tkind\n{Q1}\tk{OSC_TITLE}\n{Q2}\tk{OSC_TITLE}\n{Q3}\tplain\n", encoding="utf-8"
    )
    beir = root / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": d, "title": "", "text": t}) + "\n"
            for d, t in ((DOC, "wing flutter"), ("d2", "heat transfer"), ("d3", "shock waves"))
        ),
        encoding="utf-8",
    )
    (beir / "queries.jsonl").write_text(
        json.dumps({"_id": Q1, "text": f"flutter {OSC_TITLE}"})
        + "\n"
        + json.dumps({"_id": Q2, "text": "heat"})
        + "\n",
        encoding="utf-8",
    )
    (beir / "qrels" / "test.tsv").write_text(
        f"query-id\tcorpus-id\tscore\n{Q1}\t{DOC}\t1\n{Q2}\td2\t1\n", encoding="utf-8"
    )
    files["beir"] = beir
    model = root / f"model{OSC_TITLE}"
    model.mkdir()
    (model / "config.json").write_text("{}")
    files["model"] = model
    rng = np.random.default_rng(0)
    files["corpus.npy"] = root / f"corpus{OSC_TITLE}.npy"
    files["queries.npy"] = root / f"queries{CSI}.npy"
    np.save(files["corpus.npy"], rng.random((50, 8), dtype=np.float32))
    np.save(files["queries.npy"], rng.random((5, 8), dtype=np.float32))
    files["missing"] = root / f"missing{OSC_TITLE}.txt"
    files["bad"] = root / f"bad{CSI}.run"
    files["bad"].write_text(f"{Q1} Q0 {DOC} 1 not-a-score{OSC_CLIPBOARD} x\n", encoding="utf-8")
    files["report"] = root / f"report{OSC_TITLE}.html"
    return files


def commands(f: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """Every command and output format, by a name for the failure messages."""
    q, a, b = str(f["qrels.txt"]), str(f["a.run"]), str(f["b.run"])
    texts = ["--queries", str(f["q.tsv"]), "--segments", str(f["seg.tsv"])]
    compare = [
        "compare",
        q,
        a,
        b,
        "-m",
        "P@1",
        "--resamples",
        "99",
        "--min-segment",
        "1",
        "--quiet",
    ]
    explain = ["explain", q, a, "--query", Q1, "-m", "nDCG@2", "-m", "AP"]
    found: dict[str, list[str]] = {
        f"evaluate {fmt}": ["evaluate", q, a, b, "-q", "-f", fmt, "--quiet"]
        for fmt in ("table", "json", "tsv", "trec")
    }
    for fmt in ("table", "json", "markdown", "latex", "html"):
        found[f"compare {fmt}"] = [*compare, *texts, "-f", fmt]
    for fmt in ("text", "markdown", "json", "html"):
        found[f"explain {fmt}"] = [*explain, "-f", fmt]
    found["fuse"] = ["fuse", a, b, "--name", f"fused{OSC_TITLE}"]
    for fmt in ("table", "json"):
        found[f"two-stage {fmt}"] = ["two-stage", q, a, b, "--pool", "2", "-f", fmt]
        found[f"bm25 {fmt}"] = ["bm25", str(f["beir"]), "--name", TAG_B, "-f", fmt, "--quiet"]
        found[f"embed-eval {fmt}"] = [
            "embed-eval", str(f["beir"]), "--model", str(f["model"]), "--no-cache", "-q",
            "-f", fmt, "--quiet",
        ]  # fmt: skip
    for fmt in ("table", "json", "markdown", "html"):
        found[f"ann-recall {fmt}"] = [
            "ann-recall", str(f["corpus.npy"]), str(f["queries.npy"]), "-i", "flat", "-k", "3",
            "-f", fmt,
        ]  # fmt: skip
    found["demo"] = ["demo", "--worst", "2", "--report", str(f["report"])]
    found["metrics"] = ["metrics"]
    found["error: goal"] = ["metrics", "--goal", f"x{OSC_TITLE}"]
    found["error: format"] = ["evaluate", q, a, "-f", f"tsv{CSI}"]
    found["error: missing file"] = ["evaluate", q, str(f["missing"])]
    found["error: bad line"] = ["evaluate", q, str(f["bad"]), "--quiet"]
    found["error: unknown query"] = ["explain", q, a, "--query", "zz" + OSC_TITLE]
    found["error: usage"] = ["compare", q, a, b, "--baseline", f"nope{OSC_CLIPBOARD}"]
    return found


def _drain(fd: int, sink: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed its side of the terminal
            return
        if not chunk:
            return
        sink.extend(chunk)


def run_commands(argvs: list[list[str]], where: Path, *, terminal: bool) -> list[tuple[str, str]]:
    """Run the commands in one child; (stdout, stderr) of each, as the terminal shows them."""
    script = where / "commands.json"
    script.write_text(json.dumps(argvs), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="200", LINES="50", RANKMETER_CACHE=str(where))
    argv = [sys.executable, "-c", CHILD, str(script)]
    if not terminal:
        done = subprocess.run(
            argv, capture_output=True, env=env, timeout=300, check=False, cwd=where
        )
        out, err = bytes(done.stdout), bytes(done.stderr)
    else:
        (out_master, out_slave), (err_master, err_slave) = os.openpty(), os.openpty()
        sinks = (bytearray(), bytearray())
        readers = [
            threading.Thread(target=_drain, args=(fd, sink), daemon=True)
            for fd, sink in zip((out_master, err_master), sinks, strict=True)
        ]
        for reader in readers:
            reader.start()
        try:
            child = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out_slave, stderr=err_slave,
                env=env, cwd=where,
            )  # fmt: skip
        finally:
            os.close(out_slave)
            os.close(err_slave)
        try:
            child.wait(timeout=300)
        finally:
            for reader in readers:
                reader.join(timeout=10)
            os.close(out_master)
            os.close(err_master)
        out, err = bytes(sinks[0]), bytes(sinks[1])
    end = END.encode() if not terminal else END.replace("\n", "\r\n").encode()
    outs, errs = out.split(end), err.split(end)
    assert len(outs) == len(argvs) + 1 and len(errs) == len(argvs) + 1, (out[-2000:], err[-2000:])
    return [
        (o.decode("utf-8", "replace"), e.decode("utf-8", "replace"))
        for o, e in zip(outs[:-1], errs[:-1], strict=True)
    ]


def raw_controls(text: str) -> list[str]:
    return sorted(set(FORBIDDEN.findall(STYLE.sub("", text))))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("bm25s", reason="bm25 needs the [bm25] extra (bm25s)")
    pytest.importorskip("faiss", reason="ann-recall needs the [ann] extra (faiss-cpu)")
    return write_hostile_files(tmp_path_factory.mktemp("hostile") / "files")


@pytest.fixture(scope="module")
def at_terminal(
    hostile: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, str]]:
    where = tmp_path_factory.mktemp("terminal")
    named = commands(hostile, where)
    return dict(zip(named, run_commands(list(named.values()), where, terminal=True), strict=True))


@pytest.fixture(scope="module")
def in_pipes(
    hostile: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, str]]:
    where = tmp_path_factory.mktemp("pipes")
    named = commands(hostile, where)
    return dict(zip(named, run_commands(list(named.values()), where, terminal=False), strict=True))


def test_nothing_raw_reaches_the_terminal(at_terminal: dict[str, tuple[str, str]]) -> None:
    leaks = {
        name: (raw_controls(out), raw_controls(err))
        for name, (out, err) in at_terminal.items()
        if raw_controls(out) or raw_controls(err)
    }
    assert not leaks, "\n".join(f"{name}: stdout {o}, stderr {e}" for name, (o, e) in leaks.items())


def test_every_command_ran(at_terminal: dict[str, tuple[str, str]]) -> None:
    for name, (out, err) in at_terminal.items():
        if name.startswith("error"):
            assert out == "" and err.startswith("rankmeter: error: "), (name, err)
            assert err.count("\n") == 1, (name, err)
        else:
            assert "internal error" not in err and out, (name, err)


def test_the_terminal_shows_visible_escapes(at_terminal: dict[str, tuple[str, str]]) -> None:
    shown = "\\x1b]0;PWNED\\x07"
    for name in ("evaluate table", "evaluate tsv", "evaluate trec", "compare table", "fuse"):
        assert shown in at_terminal[name][0], name
    assert "d1\\x1b[2J" in at_terminal["explain text"][0]  # a document id in the table
    assert "[link=http://evil]x[/link][/y]" in at_terminal["evaluate table"][0]
    assert "\\x1b]52;c;SGVsbG8=\\x07" in at_terminal["compare table"][0]  # the query text
    assert shown in at_terminal["error: missing file"][1]
    assert shown in at_terminal["demo"][0]


def test_human_formats_are_escaped_in_pipes_too(in_pipes: dict[str, tuple[str, str]]) -> None:
    for name, (out, err) in in_pipes.items():
        data = name.split()[-1] in ("tsv", "trec", "fuse")
        if not data:
            assert not raw_controls(out), (name, raw_controls(out))
        assert not raw_controls(err), (name, err)


def test_data_formats_are_byte_exact_in_pipes(in_pipes: dict[str, tuple[str, str]]) -> None:
    tsv = in_pipes["evaluate tsv"][0]
    assert f"{TAG_A}\t{Q1}\t" in tsv and f"{TAG_B}\t{Q3}\t" in tsv
    assert f"\t{Q1}\t" in in_pipes["evaluate trec"][0]
    fused = in_pipes["fuse"][0]
    assert f"{Q1} Q0 {DOC} " in fused and fused.rstrip().endswith(f"fused{OSC_TITLE}")
    for name in ("evaluate json", "compare json", "explain json", "ann-recall json"):
        out = in_pipes[name][0]
        assert not raw_controls(out), name
        assert "\\u001b" in out, name  # the ids are there, as JSON escapes
    first, second = json.loads(in_pipes["evaluate json"][0])
    assert first["run"] == TAG_A and second["run"] == TAG_B  # exactly the same data
    assert {Q1, Q2, Q3} == set(first["per_query"])


def test_json_escapes_c1_and_separators() -> None:
    from rankmeter._escape import json_safe

    text = json.dumps({"id": "a\x9b\x85\u2028\u2029\u202eb\x7f"}, ensure_ascii=False)
    safe = json_safe(text)
    assert not FORBIDDEN.search(safe)
    assert json.loads(safe) == json.loads(text)


def test_output_file_keeps_data_exact_and_escapes_reports(
    hostile: dict[str, Path], tmp_path: Path
) -> None:
    tsv, markdown = tmp_path / "out.tsv", tmp_path / "out.md"
    q, a, b = str(hostile["qrels.txt"]), str(hostile["a.run"]), str(hostile["b.run"])
    evaluate = ["evaluate", q, a, "-q", "-f", "tsv", "-o", str(tsv)]
    compare = ["compare", q, a, b, "-m", "P@1", "--resamples", "20", "-f", "markdown"]
    run_commands([evaluate, [*compare, "-o", str(markdown)]], tmp_path, terminal=True)
    assert f"{TAG_A}\t{Q1}\t" in tsv.read_text(encoding="utf-8")
    assert not raw_controls(markdown.read_text(encoding="utf-8"))


def test_progress_labels_are_escaped() -> None:
    import io

    from rich.console import Console

    from rankmeter.report import Steps

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    with Steps(total=1, enabled=True, delay=0.0, console=console) as steps:
        steps.start(f"reading {Q1}{MARKUP}")
        assert steps.shown.wait(60)  # the bar is drawn by a timer thread: wait for it, not a time
    shown = buffer.getvalue()  # rich's own cursor and line controls are there: look for ours
    assert OSC_TITLE not in shown and "\x1b]" not in shown and "\x07" not in shown
    assert "\\x1b]0;PWNED\\x07" in shown and MARKUP in shown
