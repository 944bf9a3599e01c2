"""The reproduction report (``bench/fidelity``): each claim of the papers
contend reproduces, the commands that measure ours at several seeds, how a
value is read from their files and the verdict rule.  :mod:`.registry` lists
the claims, :mod:`.runner` runs them and writes the ``contend-fidelity``
document (:mod:`.document`), ``contend report``/``html`` show it
(:mod:`contend.reports.views.fidelity`)."""
