"""The registered views, one per document kind, and how the commands find one.

``contend report`` and ``contend html`` read a file's ``schema`` field and
take the first view that recognises it (else the fallback view, whose reader
names what is wrong with the file); ``contend plot KIND`` takes the view that
draws KIND; ``compare`` and ``significance`` read the kind that compares.
Order matters: it is the order of an HTML page's sections and of the plot
kinds.  Adding a document kind: a module in :mod:`contend.reports.views`
defining ``VIEW`` (:class:`contend.reports.view.View`), and its line here.
"""

from __future__ import annotations

from .. import infile
from .html import Page, render_page
from .view import Plot, View
from .views import fidelity, jobs, mitigate, model, pairs, results, study

VIEWS = (
    results.VIEW, jobs.VIEW, mitigate.VIEW, study.VIEW, pairs.VIEW, model.VIEW, fidelity.VIEW,
)  # fmt: skip


def schema_of(path) -> str | None:
    """The ``schema`` field of a JSON file (gzip allowed), None when the file is
    unreadable or has none (the fallback view's reader then says why)."""
    try:
        doc = infile.load_json(path)
    except ValueError:
        return None
    return doc.get("schema") if isinstance(doc, dict) else None


def view_for(path) -> View:
    """The view of the file at ``path``, by its ``schema`` field."""
    schema = schema_of(path)
    for view in VIEWS:
        if view.recognises(schema):
            return view
    return next(view for view in VIEWS if view.fallback)


def plot_kinds() -> tuple:
    """The kinds of ``contend plot``, in the order of the views."""
    return tuple(kind for view in VIEWS for kind in view.figures)


def plot_of(kind: str) -> Plot:
    """The :class:`contend.reports.view.Plot` of ``contend plot KIND``."""
    return next(view.figures[kind] for view in VIEWS if kind in view.figures)


def plot_help() -> str:
    """What each plot kind shows, for ``contend plot --help``."""
    return "; ".join(f"{kind}: {plot_of(kind).about}" for kind in plot_kinds()) + "."


def comparable() -> View:
    """The view of the files ``compare`` and ``significance`` read."""
    return next(view for view in VIEWS if view.compare)


def html_page(paths, page: Page | None = None) -> str:
    """The HTML page of the files at ``paths``: each goes to its view; all are
    read before anything is drawn (a bad file stops the page at once)."""
    kinds = [view_for(p) for p in paths]
    groups = []
    for view in VIEWS:
        mine = [p for p, kind in zip(paths, kinds) if kind is view]
        groups.append((view, list(zip(mine, view.load(mine) if mine else []))))
    return render_page(groups, page or Page())
