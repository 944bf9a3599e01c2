"""Moved to :mod:`contend.reports.views.study`; this name stays while the
harness (:mod:`contend.study`) imports its report from here."""

from .reports.views.study import render_study  # noqa: F401
