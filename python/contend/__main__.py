"""`python -m contend COMMAND ...`: the analysis commands (report, compare, ...)."""

import sys

from .cli import main

sys.exit(main())
