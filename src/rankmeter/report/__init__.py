"""Every renderer: results as terminal tables (rich), JSON, TSV, trec_eval lines, Markdown,
LaTeX and HTML. Result objects hold data (``to_dict``); this package decides how they look.

- ``evaluation``: EvalResult as JSON, TSV, trec_eval ``-q`` lines, terminal tables (with a
  goal's reasons); ``comparison``: a Comparison as a terminal table, Markdown, LaTeX, JSON;
  ``html``: the comparison page; ``explanation``: explanations as text, Markdown, HTML;
  ``metrics``: the metric catalogue and the goals; ``pipeline``: two-stage evaluations;
  ``demo``: the demo's narrated text.
- Shared: ``_html`` (Jinja2 templates in ``templates/`` with autoescape, the one stylesheet,
  page ids), ``_svg`` (plots), ``_markdown`` and ``_text`` (the one Markdown and plain-text table
  writers), ``_json`` (strict JSON), ``_rich`` (untrusted text in rich tables). Escaping per
  format lives in :mod:`rankmeter._escape`.

One renderer per (result type, format), registered in its module with :func:`renders`;
:func:`render` renders a result in a format named by the user and writes it (escaped at a
terminal, byte-exact in files and pipes; files atomically): every command's output goes
through it. :func:`formats_of` names a result's formats.

Imported by the command line and by users, never by the library below it; heavy imports (rich,
Jinja2) happen inside the functions.

The package itself names how untrusted text (run names, ids, file names) is shown outside the
renderers: :func:`visible` for a line of text (an error message, a progress label) and
:func:`terminal_safe` for a data format written to a terminal (see :mod:`rankmeter._escape`).
Progress on stderr is :class:`Steps` (``progress``): a bar after a delay on a terminal, plain
lines in a log where asked.
"""

from __future__ import annotations

from rankmeter._escape import terminal_safe, visible
from rankmeter.report._registry import (
    Rendered,
    emit,
    formats_of,
    render,
    render_rich,
    renderer,
    renders,
)
from rankmeter.report.progress import Steps

__all__ = [
    "Rendered",
    "Steps",
    "emit",
    "formats_of",
    "render",
    "render_rich",
    "renderer",
    "renders",
    "terminal_safe",
    "visible",
]
