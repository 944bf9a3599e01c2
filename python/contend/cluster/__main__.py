"""``python3 -m contend.cluster`` runs the ``contend cluster`` command line."""

from .cli import main

main()
