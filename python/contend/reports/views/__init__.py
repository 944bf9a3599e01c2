"""One view per document kind; each module defines ``VIEW`` (:class:`contend.reports.view.View`)
and is listed once in :mod:`contend.reports.registry`."""
