"""Moved to :mod:`contend.reports.views.mitigate`; this name stays while the
harness (:mod:`contend.mitigate`) imports its report from here."""

from .reports.views.mitigate import render_mitigate  # noqa: F401
