"""rankmeter._escape: the one rule for showing untrusted text."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from rankmeter._escape import (
    html_text,
    json_safe,
    markdown_fence,
    markdown_text,
    terminal_safe,
    visible,
)

CONTROLS = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)])) + "\u2028\u2029\u202e\u2066"


def test_visible_escapes_every_control_character_as_repr_does() -> None:
    shown = visible(CONTROLS)
    assert shown.isprintable() and shown.isascii()
    for char in CONTROLS:
        assert visible(char) == repr(char)[1:-1]
    assert visible(visible(CONTROLS)) == shown  # idempotent: escaping twice changes nothing


@pytest.mark.parametrize("text", ["plain", "Müller 检索 😀", "C:\\runs\\a.txt", "tab-free [x]"])
def test_visible_leaves_printable_text_alone(text: str) -> None:
    assert visible(text) == text


def test_json_safe_keeps_the_data() -> None:
    document = json.dumps({"id": CONTROLS, "k": ["a\x9bb"]}, ensure_ascii=False, indent=2)
    safe = json_safe(document)
    assert json.loads(safe) == json.loads(document)
    assert visible(safe.replace("\n", "")) == safe.replace("\n", "")


def test_markdown_text_escapes_what_markdown_reads() -> None:
    assert markdown_text("a|b\nc") == "a\\|b\\\\nc"
    assert markdown_text("&lt; <b> `x` *y* [z](u) #") == (
        "\\&lt; \\<b\\> \\`x\\` \\*y\\* \\[z\\](u) \\#"
    )


def test_markdown_fence_is_longer_than_any_backtick_run() -> None:
    fence, *body, end = markdown_fence(["a ```` b", "\x1b"])
    assert fence == end == "`````"
    assert body == ["a ```` b", "\\x1b"]


def test_terminal_safe_keeps_files_and_pipes_exact(tmp_path: Path) -> None:
    text = "q1\x1b]0;t\x07\tx\n"
    assert terminal_safe(text, str(tmp_path / "out.tsv")) == text
    assert terminal_safe(text, os.devnull) == text  # a device, but not a terminal
    # pytest captures stdout: a pipe or a file, not a terminal.
    assert not sys.stdout.isatty()
    assert terminal_safe(text, None) == text


def test_terminal_safe_escapes_at_a_terminal() -> None:
    master, slave = os.openpty()
    try:
        escaped = terminal_safe("q1\x1b]0;t\x07\tx\x9b\n", os.ttyname(slave))
    finally:
        os.close(master)
        os.close(slave)
    assert escaped == "q1\\x1b]0;t\\x07\tx\\x9b\n"  # the layout (tabs, newlines) is kept


def test_html_text_escapes_markup_quotes_and_controls() -> None:
    from html import unescape

    text = "<script>a & 'b' \"c\"</script>" + CONTROLS
    escaped = html_text(text)
    assert not set("<>\"'") & set(escaped)
    assert unescape(escaped) == visible(text)
    assert html_text(3) == "3"
