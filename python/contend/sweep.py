"""`contend sweep`: kept at this name for :mod:`contend.cli`, which adds its
subcommands; the sweep itself is :mod:`contend.studies.sweep`."""

from .studies.sweep import *
from .studies.sweep import add_parser  # noqa: F401
