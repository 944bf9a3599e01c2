"""``contend locate``: which links are slow, inferred from all-pairs measurements
(``contend pairs``) and the routing's paths (``contend topology paths``).

* :mod:`.measurements`: reading a ``contend-pairs`` results file;
* :mod:`.infer`: per-link slowdown by non-negative least squares, links the
  measurements cannot separate, bootstrap confidence;
* :mod:`.cli`: the command (paths from the C binary, the table, the JSON).
"""
