"""compare's LaTeX table: every piece of text escaped, and the table compiles in a real pdflatex.

The compile tests need pdflatex and booktabs (Debian: texlive-latex-base and
texlive-latex-recommended, which .ci/run installs); without them they are skipped, saying why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

import rankmeter
from rankmeter._escape import latex_text, visible
from rankmeter.report.comparison import render_latex

# Names a hostile (or unlucky) user gives runs: every LaTeX special character, HTML, terminal
# control sequences, text pdflatex has no glyph for.
HOSTILE_NAMES = (
    "a_b & 50% #1 $x$ {y} ~ ^ \\ < > |",
    "<script>alert(1)</script>",
    "Ünïcødé 检索 β ✓ 😀",
    "q\x1b]0;pwned\x07 \x9b2J \u2028 \u202eevil",
    "say \"hi\" -- ``quoted'' !` ?`",
    "[-5pt]* a row that starts with [",  # \\ and \midrule would take [-5pt] as an argument
)


def _missing_tex() -> str | None:
    if shutil.which("pdflatex") is None:
        return "pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended)"
    found = subprocess.run(
        ["kpsewhich", "booktabs.sty"], capture_output=True, text=True, check=False
    )
    if not found.stdout.strip():
        return "booktabs.sty is not installed (Debian: texlive-latex-recommended)"
    return None


needs_tex = pytest.mark.skipif(_missing_tex() is not None, reason=str(_missing_tex()))

# \tracingoutput writes every character of the page to the log, with its font: what was
# typeset can be read back without a PDF parser.
DOCUMENT = r"""\documentclass{article}
\usepackage{booktabs}
\showboxbreadth=\maxdimen \showboxdepth=\maxdimen \tracingoutput=1 \tracingonline=0
\begin{document}
%s
\end{document}
"""


def compile_latex(table: str, where: Path) -> str:
    """Compile the table in a minimal document; fail with pdflatex's error. Returns the log."""
    (where / "table.tex").write_text(DOCUMENT % table, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-halt-on-error", "-interaction=nonstopmode", "-no-shell-escape", "table.tex"],
        cwd=where,
        capture_output=True,
        timeout=120,
        check=False,
    )
    log = (where / "table.log").read_text(encoding="latin-1")
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert done.returncode == 0 and (where / "table.pdf").exists(), errors or log[-2000:]
    return log


# Glyphs as the log names them (font, character) -> what a reader sees. In OT1 text fonts
# < > | " \\ { print as ¡ ¿ — ” “ –; the symbol fonts hold the right ones.
_GLYPHS = {
    ("OMS", "j"): "|",
    ("OMS", "n"): "\\",
    ("OMS", "f"): "{",
    ("OMS", "g"): "}",
    ("OT1", "<"): "¡",
    ("OT1", ">"): "¿",
    ("OT1", "|"): "—",
    ("OT1", '"'): "”",
    ("OT1", "\\"): "“",
    ("OT1", "{"): "–",
    ("OT1", "`"): "‘",
    ("OT1", "^^P"): "i",  # dotless i and j, under an accent
    ("OT1", "^^Q"): "j",
}
_CHAR = re.compile(r"^\.+\\(\w+)/(\w+)/\S+ (\S+)(?: \(ligature (.*)\))?$", re.M)


def typeset_text(log: str) -> tuple[str, list[str]]:
    """The characters of the page in order (spaces and accents left out), and the ligatures
    other than ff, fi, fl that joined characters into another glyph."""
    chars, ligatures = [], []
    for encoding, family, char, ligature in _CHAR.findall(log):
        if ligature and not ligature.isalpha():
            ligatures.append(ligature)
        glyph = _GLYPHS.get((encoding, char), char)
        if glyph.startswith("^^") and len(glyph) > 1:
            continue  # an accent or a letter outside ASCII: left out on both sides
        chars.append(glyph)
        if family == "cmtt" and char == '"':
            chars[-1] = '"'
    return "".join(chars), ligatures


def expected_text(name: str) -> str:
    """The name as the page should show it: its visible form, without spaces, the underscore
    (a rule, not a character) and what is outside ASCII (accents are separate glyphs)."""
    decomposed = unicodedata.normalize("NFD", visible(name))
    return "".join(c for c in decomposed if c.isascii() and not c.isspace() and c != "_")


def comparison(names: list[str], **options: object) -> rankmeter.Comparison:
    """A real comparison of one run per name (the first is the baseline) on three queries."""
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d1": 1}}
    runs = {
        name: {
            "q1": {"d1": 1.0 + i, "d2": 2.0},
            "q2": {"d3": 1.0, "d9": 0.5 * i},
            "q3": {"d1": float(i % 2)},
        }
        for i, name in enumerate(names)
    }
    return rankmeter.compare(qrels, runs, ["P@1", "AP"], resamples=99, **options)


def _uncommented(latex: str) -> list[str]:
    """The lines after the leading comment, with escaped percent signs taken out."""
    return [line.replace("\\%", "") for line in latex.splitlines()[1:]]


def test_no_bare_percent_starts_a_comment() -> None:
    # The caption said "its 95% percentile interval": the rest of the caption was a comment.
    latex = render_latex(comparison(["base", "new"], level=0.95))
    assert "95\\% " in latex
    assert latex.splitlines()[0].startswith("% requires")
    assert not [line for line in _uncommented(latex) if "%" in line]


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a<b>c|d", r"a\textless{}b\textgreater{}c\textbar{}d"),
        ('say "hi"', r'say \texttt{"}hi\texttt{"}'),
        ("bm25--rm3", "bm25-{}-rm3"),
        ("a``b''c", "a\\textasciigrave{}\\textasciigrave{}b'{}'c"),
        ("q\x1b]0;pwned\x07", r"q\textbackslash{}x1b{]}0;pwned\textbackslash{}x07"),
        ("[-5pt]*", "{[}-5pt{]}{*}"),
        ("Müller–Lyer €5", "Müller–Lyer €5"),
        ("检索 β", r"\textbackslash{}u68c0\textbackslash{}u7d22 \textbackslash{}u03b2"),
    ],
)
def test_escape_gives_the_right_glyphs(text: str, escaped: str) -> None:
    # In LaTeX's default OT1 encoding < > | print as ¡ ¿ —, " as ”, -- as –; control
    # characters are invalid input, and characters pdflatex has no glyph for stop it.
    assert latex_text(text) == escaped


def test_every_name_in_the_table_is_escaped() -> None:
    latex = render_latex(comparison(list(HOSTILE_NAMES)))
    for name in HOSTILE_NAMES:
        assert latex_text(name) in latex
    assert r"a\_b \& 50\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{} " in latex
    assert r"\textbackslash{} \textless{} \textgreater{} \textbar{}" in latex
    assert "<script>" not in latex
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u202e]", latex)


@needs_tex
@pytest.mark.parametrize(
    "names",
    [
        ["base", "new"],
        list(HOSTILE_NAMES),
        list(reversed(HOSTILE_NAMES)),
    ],
    ids=["plain", "hostile", "hostile-baseline"],
)
def test_table_compiles(names: list[str], tmp_path: Path) -> None:
    latex = render_latex(comparison(names, level=0.95, correction="bh"))
    log = compile_latex(latex, tmp_path)
    assert "Missing character" not in log, re.findall(r"Missing character.*", log)
    shown, ligatures = typeset_text(log)
    for name in names:
        assert expected_text(name) in shown, (name, shown)
    assert "95%" in shown
    assert not ligatures


@needs_tex
@pytest.mark.parametrize(
    "options",
    [
        # (the bootstrap test is refused on these 3 queries: issue 13)
        {"level": 0.9, "test": "randomization", "interval": "percentile"},
        {"level": 0.999, "test": "t", "correction": "bonferroni", "alpha": 0.01},
        {"test": "wilcoxon", "correction": "none"},
        {"test": "sign"},
    ],
)
def test_every_caption_compiles(options: dict[str, object], tmp_path: Path) -> None:
    compile_latex(render_latex(comparison(["b_1", "n%2"], **options)), tmp_path)


@needs_tex
def test_cli_latex_compiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rankmeter.cli import main

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    runs = []
    for i, tag in enumerate(["base_1%", "new&<x>|\x1b]0;t\x07", "ünï_检索"]):
        path = tmp_path / f"run{i}.txt"
        path.write_text(
            "".join(
                f"{q} Q0 {d} 1 {1.0 + i} {tag}\n" for q, d in (("1", "a"), ("2", "z"), ("3", "c"))
            )
        )
        runs.append(path)
    args = ["compare", str(qrels), *map(str, runs), "-m", "P@1", "--resamples", "99", "-f", "latex"]
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    assert done.value.code == 0, captured.err
    work = tmp_path / "tex"
    work.mkdir()
    compile_latex(captured.out, work)


def test_one_query_shows_dashes_and_the_singular() -> None:
    # One query: no interval can be computed; LaTeX printed [+nan, +nan] where every other
    # format prints –, and "Mean over 1 queries".
    one = rankmeter.compare(
        {"q1": {"d1": 1}}, {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 1.0}}}, ["P@1"]
    )
    latex = render_latex(one)
    assert "nan" not in latex.lower()
    assert "[–, –]" in latex
    assert "Mean over 1 query." in latex
    assert "Mean over 3 queries." in render_latex(comparison(["a", "b"]))


def _noted(tmp_path: Path) -> rankmeter.Comparison:
    """A comparison with notes: segments that cover some queries (from a file whose name
    LaTeX must escape), a judged query no run answered, a test not recommended."""
    segments = tmp_path / "seg_50%#1.tsv"
    segments.write_text("query_id\tkind\nq1\tshort\nq2\tlong\nq7\tlong\n")
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d1": 1}, "q4": {"d5": 1}}
    runs = {
        name: {"q1": {"d1": 1.0 + i, "d2": 2.0}, "q2": {"d3": 1.0, "d9": 0.5 * i}, "q3": {}}
        for i, name in enumerate(["base", "new"])
    }
    runs["new"]["q3"] = {"d1": 1.0}
    return rankmeter.compare(
        qrels, runs, ["P@1"], resamples=99, segments=segments, test="wilcoxon", min_segment=1
    )


def test_the_notes_are_in_the_latex(tmp_path: Path) -> None:
    noted = _noted(tmp_path)
    assert len(noted.notes) == 4, noted.notes  # precondition (the last: the power sentence)
    latex = render_latex(noted)
    for note in noted.notes:
        assert latex_text(note) in latex, (note, latex)
    body = latex[latex.index("\\end{tabular}") : latex.index("\\end{table}")]
    assert "\\footnotesize" in body and "seg\\_50\\%\\#1.tsv" in body
    assert not [line for line in _uncommented(latex) if "%" in line]


@needs_tex
def test_one_query_and_notes_compile(tmp_path: Path) -> None:
    one = rankmeter.compare(
        {"q1": {"d1": 1}}, {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 1.0}}}, ["P@1"]
    )
    (tmp_path / "one").mkdir()
    compile_latex(render_latex(one), tmp_path / "one")
    noted = _noted(tmp_path)
    (tmp_path / "noted").mkdir()
    log = compile_latex(render_latex(noted), tmp_path / "noted")
    shown, _ = typeset_text(log)
    for note in noted.notes:  # ("ff", "fi", "fl" are one glyph each, left out on both sides)
        assert _unligated(expected_text(note)) in _unligated(shown), (note, shown)


def _unligated(text: str) -> str:
    return re.sub("ffi|ffl|ff|fi|fl", "", text)
