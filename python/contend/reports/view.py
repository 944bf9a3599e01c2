"""What the view of one document kind offers: the contract each module of
:mod:`contend.reports.views` fills in as its ``VIEW``.

``contend report`` and ``contend html`` find the view of a file by its
``schema`` field, ``contend plot KIND`` by the figure's name, ``compare`` and
``significance`` by :attr:`View.compare` (:mod:`contend.reports.registry`).
Every hook reports bad input as a ValueError naming the file or the option
(the commands print it as one line and exit with status 2).  A view module
imports matplotlib and the models (scipy) inside the hooks that need them, so
that the registry stays cheap to import: every analysis command builds the
parser that lists the plot kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable


class UsageError(ValueError):
    """Invalid command-line input (reported like a bad results file)."""


@dataclass(frozen=True)
class Plot:
    """One ``contend plot KIND``: ``draw(args)`` returns the figure from that
    command's namespace (it reads ``args.results`` itself); ``about`` says what
    it shows in ``contend plot --help``."""

    draw: Callable
    about: str


@dataclass(frozen=True)
class View:
    """One document kind.

    ``recognises(schema)``: whether a file whose ``schema`` field is ``schema``
    (None when the file has none or is unreadable) is of this kind.
    ``fallback``: the kind of every file no view recognises (its reader names
    the problem).  ``load(paths)``: the documents, in order, all or an error.
    ``report(path, args)``: ``contend report`` of the file at ``path`` in
    ``args.format`` (args: that command's namespace).  ``html(items, page)``:
    the HTML sections of ``items``, the page's (path, document) pairs of this
    kind; called for every view, with none too.  ``figures``: ``contend plot
    KIND`` -> its :class:`Plot`.  ``file_noun``: how the page header
    counts the files ("results", "model").  ``page_note``: a note for the page
    header when the page holds documents of this kind.  ``compare``: whether
    ``compare`` and ``significance`` read this kind.
    """

    kind: str
    recognises: Callable[[str | None], bool]
    load: Callable[[list], list]
    report: Callable
    html: Callable[[list, object], list]
    figures: Mapping[str, Plot] = field(default_factory=dict)
    fallback: bool = False
    file_noun: str = "results"
    page_note: str = ""
    compare: bool = False


def schema_is(*names: str) -> Callable[[str | None], bool]:
    """A ``recognises`` for documents whose ``schema`` is one of ``names``."""
    return lambda schema: schema in names


def one_file_plot(kind: str, load: Callable, figure: Callable, about: str) -> Plot:
    """A ``contend plot KIND`` of exactly one file, written by ``contend KIND``."""

    def draw(args):
        if len(args.results) != 1:
            raise UsageError(f"plot {kind} takes one results file of `contend {kind}`")
        return figure(load(args.results[0]))

    return Plot(draw, about)


def document_view(
    kind: str,
    schema: str,
    load: Callable,
    render: Callable,
    section: Callable,
    figure: Callable,
    figure_about: str,
) -> View:
    """The view of a kind whose file is one document, read by ``load(path)``,
    reported by ``render(doc, form, source=path)``, shown on the page by
    ``section(doc, source)`` and drawn by ``figure(doc)`` as ``contend plot
    KIND`` (``figure_about``: what the figure shows)."""
    return View(
        kind,
        recognises=schema_is(schema),
        load=lambda paths: [load(p) for p in paths],
        report=lambda path, args: render(load(path), args.format, source=path),
        html=lambda items, page: [section(doc, str(path)) for path, doc in items],
        figures={kind: one_file_plot(kind, load, figure, figure_about)},
    )
