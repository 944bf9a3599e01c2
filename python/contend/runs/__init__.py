"""contend.runs: the run layer of the Python harnesses."""
