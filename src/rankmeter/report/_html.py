"""How rankmeter writes HTML: Jinja2 templates with autoescape, one stylesheet, one escaper, and
the ids of a page decided in one place.

- The templates live in ``templates/`` (package data), the styles in ``templates/report.css``,
  inlined into every self-contained page by the shell ``page.html.j2``.
- Autoescape is on, and every value a template inserts goes through the one HTML escaper,
  :func:`rankmeter._escape.html_text` (control characters visible, quotes escaped). Only markup
  the renderer made itself (a macro's output, an SVG plot from :mod:`rankmeter.report._svg`)
  is marked safe.
- :class:`PageIds` gives out the ids of one page: it starts with the ids the template writes
  itself (:func:`template_ids`), then gives out every other one (explanation anchors, plot
  ids); the first to ask for a name gets it, later ones ``name-2``, ``name-3``, ..., so ids
  are unique by construction and nothing is renamed after rendering.

Jinja2 is imported on first use, so that importing the report modules stays light.

A renderer of another page (such as report/ann.py) uses the same shell: a template that
``{% extends "page.html.j2" %}`` and fills ``{% block main %}``, rendered with
:func:`render` (``title=`` sets the page title); :func:`page_head` gives the shell's head alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rankmeter._escape import html_text

if TYPE_CHECKING:
    import jinja2
    import markupsafe

__all__ = ["PageIds", "page_head", "render", "safe", "template_ids"]


class PageIds:
    """The ids of one page, each given out once.

    >>> ids = PageIds(reserved=["summary"])
    >>> ids.claim("explain-q1"), ids.claim("explain-q1"), ids.claim("explain-q1")
    ('explain-q1', 'explain-q1-2', 'explain-q1-3')
    >>> ids.claim("summary")
    'summary-2'
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._used: set[str] = set(reserved)

    def claim(self, name: str) -> str:
        """``name`` if no element of the page has it yet, else ``name-k`` with the smallest
        free k >= 2."""
        given = name
        k = 2
        while given in self._used:
            given = f"{name}-{k}"
            k += 1
        self._used.add(given)
        return given


def safe(markup: str) -> markupsafe.Markup:
    """Markup the renderer made itself (an SVG plot), inserted as it is."""
    import markupsafe

    return markupsafe.Markup(markup)


def _escaped(value: Any) -> Any:
    """Jinja2's finalize: every inserted value through the one escaper, unless it is markup
    made by the renderer (a macro's output, :func:`safe`)."""
    import markupsafe

    if hasattr(value, "__html__"):
        return value
    return markupsafe.Markup(html_text(value))


@functools.cache
def environment() -> jinja2.Environment:
    """The one template environment (autoescape on, strict about undefined names)."""
    import importlib.resources

    import jinja2
    import markupsafe

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rankmeter.report", "templates"),
        autoescape=True,
        finalize=_escaped,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    css = importlib.resources.files("rankmeter.report").joinpath("templates", "report.css")
    env.globals["stylesheet"] = markupsafe.Markup(css.read_text(encoding="utf-8"))
    return env


_LITERAL_ID = re.compile(r'(?<![\w-])id="([^"{}]+)"')


@functools.cache
def template_ids(template: str) -> frozenset[str]:
    """The ids a template writes itself (``id="settings"``), for :class:`PageIds` to reserve
    before it gives out any other."""
    env = environment()
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, template)
    return frozenset(_LITERAL_ID.findall(source))


def render(template: str, **context: Any) -> str:
    """The template rendered with ``context``."""
    return str(environment().get_template(template).render(**context))


def page_head(title: str) -> str:
    """The start of a self-contained page, up to ``</head>``: charset, a Content-Security-Policy
    that forbids loading anything, the title and the shared stylesheet."""
    return render("head.html.j2", title=title).removesuffix("\n")
