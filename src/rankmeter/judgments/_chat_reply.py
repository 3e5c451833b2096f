"""What a model's reply gives: the grade (:func:`parse_grade`: only its tail searched, its
``<think>`` blocks left out) and, for an error that shows the reply, a short quoted excerpt."""

from __future__ import annotations

import re

from rankmeter._escape import visible

# "##final score: 2", "Final Score = **2**", "final_score: 2.0": the last one counts (a
# model that reasons first may name a tentative score before its final one). No two
# quantifiers here can match the same character, so a search is linear in the text.
_FINAL = re.compile(r"final[ \t_-]*score[\s*#:=\"'`(\[]*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
# A reply that is only a number, once stripped: "2", "**3**", "(1).".
_BARE = re.compile(r"[*#\"'`(\[]*(-?\d+(?:\.\d+)?)[*\"'`)\]]*\.?")
#: How much of a reply is searched for the grade: its last characters (after trailing
#: whitespace). The prompt asks for the grade on the last line; a model that runs on for
#: pages after it, or repeats newlines until it is cut off, is not searched through.
PARSED_TAIL = 4000
_THINK_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)
_BARE_LENGTH = 40
_EXCERPT = 80
# A word of an excerpt, at most one character longer than an excerpt: a reply of megabytes
# without whitespace is never copied whole to show its start.
_WORD = re.compile(rf"\S{{1,{_EXCERPT + 1}}}")
_OBJECT_START = re.compile(rb"[ \t\r\n]*\{")


def _excerpt(text: str) -> str:
    """A short, quoted, escaped piece of untrusted text for an error message. Only as much
    of ``text`` is read as the excerpt needs: a reply of megabytes is not split into words."""
    if len(text) > _EXCERPT:
        words = []
        size = 0
        for word in _WORD.finditer(text):
            words.append(word.group())
            size += len(word.group()) + 1
            if size > _EXCERPT:
                break
        text = " ".join(words)
    if len(text) > _EXCERPT:
        text = text[: _EXCERPT - 1] + "…"
    return "'" + visible(text).replace("'", "\\'") + "'"


def parse_grade(reply: str, low: int, high: int) -> int | None:
    """The grade a reply gives on the scale ``low``-``high``, or None when it gives none.

    >>> parse_grade("The passage answers it.\\n##final score: 2", 0, 3)
    2
    >>> parse_grade("Final Score = **3**", 0, 3), parse_grade(" 1 ", 0, 3)
    (3, 1)
    >>> parse_grade("##final score: 7", 0, 3) is None, parse_grade("relevant", 0, 3) is None
    (True, True)
    """
    # Linear and bounded whatever the reply holds: trailing whitespace stripped, then only the
    # last PARSED_TAIL characters are looked at, with the model's <think> blocks left out.
    text = _outside_thinking(reply.rstrip()[-PARSED_TAIL:])
    found = _FINAL.findall(text)
    if found:
        value = found[-1]
    else:
        text = text.strip()
        bare = _BARE.fullmatch(text) if len(text) <= _BARE_LENGTH else None
        if bare is None:
            return None
        value = bare.group(1)
    number = float(value)
    if not number.is_integer() or not low <= number <= high:
        return None
    return int(number)


def _outside_thinking(text: str) -> str:
    """``text`` without its ``<think>...</think>`` blocks (each from an opening tag to the
    first closing one after it), and without what precedes a first closing tag whose opening
    fell before the text: one pass over the tags."""
    parts = []
    position = 0
    opened: int | None = None
    for number, tag in enumerate(_THINK_TAG.finditer(text)):
        if not tag.group(1):  # <think>
            if opened is None:
                opened = tag.start()
        elif opened is not None:
            parts.append(text[position:opened])
            position, opened = tag.end(), None
        elif number == 0:
            position = tag.end()
    parts.append(text[position:])
    return " ".join(parts)
