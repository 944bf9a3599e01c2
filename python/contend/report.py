"""``python -m contend.report RESULTS``: the same as ``contend report RESULTS``
(the command line is :mod:`contend.cli`; the views are in :mod:`contend.reports.views`)."""

import sys

from .cli import main_report

if __name__ == "__main__":
    sys.exit(main_report())
